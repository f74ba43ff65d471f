#include "half.h"

#include <string.h>

uint16_t float_to_half(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    const uint32_t sign = (x >> 16) & 0x8000u;
    const uint32_t exp = (x >> 23) & 0xffu;
    const uint32_t mant = x & 0x7fffffu;

    if (exp == 0xffu) /* Inf stays Inf; NaN stays a (quiet) NaN */
        return (uint16_t)(sign | 0x7c00u | (mant ? 0x200u | (mant >> 13) : 0u));

    const int e = (int)exp - 127 + 15; /* the half's biased exponent */
    if (e >= 31)
        return (uint16_t)(sign | 0x7c00u);

    if (e <= 0) {
        /* A half subnormal is q * 2^-24; with the implicit bit restored the
         * float is m * 2^(exp-150), so q = m >> (14 - e), rounded. Below
         * e = -10 even the largest m is under half of 2^-24: zero. */
        if (e < -10)
            return (uint16_t)sign;
        const uint32_t m = mant | 0x800000u;
        const int shift = 14 - e;
        uint32_t q = m >> shift;
        const uint32_t rem = m & ((1u << shift) - 1u);
        const uint32_t halfway = 1u << (shift - 1);
        if (rem > halfway || (rem == halfway && (q & 1u)))
            q++; /* may carry into the smallest normal, which encodes right */
        return (uint16_t)(sign | q);
    }

    uint32_t h = sign | ((uint32_t)e << 10) | (mant >> 13);
    const uint32_t rem = mant & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u)))
        h++; /* a carry out of the mantissa bumps the exponent, up to Inf */
    return (uint16_t)h;
}

float half_to_float(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    uint32_t x;

    if (exp == 0x1fu) {
        x = sign | 0x7f800000u | (mant << 13);
    } else if (exp != 0) {
        x = sign | ((exp + 127 - 15) << 23) | (mant << 13);
    } else if (mant == 0) {
        x = sign;
    } else {
        /* Subnormal half: normalise, since every one is a normal float. */
        exp = 127 - 15 + 1;
        while (!(mant & 0x400u)) {
            mant <<= 1;
            exp--;
        }
        x = sign | (exp << 23) | ((mant & 0x3ffu) << 13);
    }
    float f;
    memcpy(&f, &x, sizeof f);
    return f;
}
