#include "fp8.h"

#include <math.h>
#include <string.h>

uint8_t float_to_e4m3(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    const uint8_t sign = (uint8_t)((x >> 24) & 0x80u);
    if (isnan(f))
        return sign | 0x7fu;
    const float a = fabsf(f);
    if (a >= E4M3_MAX) /* satfinite: beyond the largest finite, the largest */
        return sign | 0x7eu;
    /* Below 2^-6 the step is 2^-9 (subnormals); above, 2^(e-3) in [2^e, 2^(e+1)).
     * Scaled to that step, the value is exact in float; rint rounds half to even. */
    int e;
    frexpf(a, &e); /* a = m * 2^e, m in [0.5, 1): a in [2^(e-1), 2^e) */
    const int step = e - 1 < -6 ? -9 : e - 1 - 3;
    const float n = rintf(ldexpf(a, -step)); /* a in steps, rounded: up to 16 */
    const float r = ldexpf(n, step);
    if (r == 0)
        return sign;
    int re;
    frexpf(r, &re);
    if (re - 1 < -6) /* subnormal: 0.mmm * 2^-6 */
        return sign | (uint8_t)n;
    const int mant = (int)ldexpf(r, -(re - 1) + 3) - 8; /* r = (8 + mant) * 2^(re-1-3) */
    return sign | (uint8_t)((re - 1 + 7) << 3) | (uint8_t)mant;
}

float e4m3_to_float(uint8_t q)
{
    const int exp = (q >> 3) & 0xf, mant = q & 7;
    float v;
    if (exp == 0xf && mant == 7)
        v = NAN;
    else if (exp == 0)
        v = ldexpf((float)mant, -9);
    else
        v = ldexpf((float)(8 + mant), exp - 7 - 3);
    return (q & 0x80u) ? -v : v;
}

void quantize_blocks(const float *x, int rows, int cols, int block_rows, int by_column, uint8_t *q,
                     float *scales)
{
    const int col_blocks = (cols + 127) / 128, row_blocks = (rows + block_rows - 1) / block_rows;
    for (int r0 = 0; r0 < rows; r0 += block_rows)
        for (int cb = 0; cb < col_blocks; cb++) {
            const int r1 = r0 + block_rows < rows ? r0 + block_rows : rows;
            const int c0 = cb * 128, c1 = c0 + 128 < cols ? c0 + 128 : cols;
            float amax = 0;
            for (int r = r0; r < r1; r++)
                for (int c = c0; c < c1; c++)
                    amax = fmaxf(amax, fabsf(x[(size_t)r * cols + c]));
            const float scale = amax > 0 ? amax / E4M3_MAX : 1.0f;
            const size_t rb = (size_t)(r0 / block_rows);
            scales[by_column ? cb * row_blocks + rb : rb * col_blocks + cb] = scale;
            for (int r = r0; r < r1; r++)
                for (int c = c0; c < c1; c++)
                    q[(size_t)r * cols + c] = float_to_e4m3(x[(size_t)r * cols + c] / scale);
        }
}
