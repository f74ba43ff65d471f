/*
 * Unit tests of the harness's plain-C parts: half conversion, the CPU
 * reference, the checker and the option parser. No GPU needed. Prints one
 * "PASS name" or "FAIL name: why" line per test and a closing "unit tests:
 * N passed, N failed"; scripts/test.sh counts them, and fails a run that dies
 * before the summary.
 */
#include "check.h"
#include "fp8.h"
#include "half.h"
#include "options.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int passes, failures;

/* The limit of a step from 09 on (gemm.h), which options.c checks. */
const long long gemm_max_elements = GEMM_MAX_ELEMENTS_64;

static void result(const char *name, int ok, const char *why)
{
    if (ok) {
        printf("PASS %s\n", name);
        passes++;
    } else {
        printf("FAIL %s: %s\n", name, why);
        failures++;
    }
}

static float float_of(uint32_t x)
{
    float f;
    memcpy(&f, &x, sizeof f);
    return f;
}

/* ---- half conversion ---- */

/* The value of a half from its fields, by the definition of binary16. */
static double half_value(uint16_t h)
{
    const int sign = h >> 15, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
    const double mag = exp == 0 ? ldexp(mant, -24) : ldexp(1024 + mant, exp - 25);
    return sign ? -mag : mag;
}

static void test_half_all_values(void)
{
    char why[128] = "";
    for (uint32_t h = 0; h < 65536 && !why[0]; h++) {
        const float f = half_to_float((uint16_t)h);
        const int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
        if (exp == 0x1f && mant) {
            if (!isnan(f) || !isnan(half_to_float(float_to_half(f))))
                snprintf(why, sizeof why, "NaN 0x%04x does not stay NaN", h);
        } else if (exp == 0x1f) {
            if (!isinf(f) || float_to_half(f) != h)
                snprintf(why, sizeof why, "Inf 0x%04x does not round-trip", h);
        } else if ((double)f != half_value((uint16_t)h)) {
            snprintf(why, sizeof why, "0x%04x -> %.9g, want %.9g", h, f, half_value((uint16_t)h));
        } else if (float_to_half(f) != h) {
            snprintf(why, sizeof why, "0x%04x -> %.9g -> 0x%04x", h, f, float_to_half(f));
        }
    }
    result("half: all 65536 values convert exactly and round-trip", !why[0], why);
}

/* Between two neighbouring finite halves: the midpoint goes to the one with
 * an even mantissa, anything off the midpoint to the nearer one. */
static void test_half_rounding_ties(void)
{
    char why[160] = "";
    for (uint32_t h = 0; h < 0x7bff && !why[0]; h++) {
        const uint16_t lo = (uint16_t)h, hi = (uint16_t)(h + 1);
        const float a = half_to_float(lo), b = half_to_float(hi);
        const float mid = (float)(((double)a + b) / 2); /* exact in float */
        const uint16_t even = (lo & 1) ? hi : lo;
        for (int s = 0; s < 2 && !why[0]; s++) {
            const float sign = s ? -1.0f : 1.0f;
            const uint16_t sb = s ? 0x8000 : 0;
            const float below = nextafterf(mid, 0.0f), above = nextafterf(mid, INFINITY);
            if (float_to_half(sign * mid) != (even | sb))
                snprintf(why, sizeof why, "tie %.9g -> 0x%04x, want 0x%04x", sign * mid,
                         float_to_half(sign * mid), even | sb);
            else if (float_to_half(sign * below) != (lo | sb))
                snprintf(why, sizeof why, "%.9g -> 0x%04x, want 0x%04x", sign * below,
                         float_to_half(sign * below), lo | sb);
            else if (float_to_half(sign * above) != (hi | sb))
                snprintf(why, sizeof why, "%.9g -> 0x%04x, want 0x%04x", sign * above,
                         float_to_half(sign * above), hi | sb);
        }
    }
    result("half: ties round to even, all other values to nearest", !why[0], why);
}

static void test_half_edges(void)
{
    const struct { float in; uint16_t want; } cases[] = {
        { 0.0f, 0x0000 },        { -0.0f, 0x8000 },       { 1.0f, 0x3c00 },
        { 65504.0f, 0x7bff },    /* the largest half */
        { 65519.99f, 0x7bff },   /* just under the midpoint to 2^16: stays finite */
        { 65520.0f, 0x7c00 },    /* the midpoint: rounds to even, which is Inf */
        { 1e10f, 0x7c00 },       { -1e10f, 0xfc00 },
        { 0x1p-24f, 0x0001 },    /* the smallest subnormal */
        { 0x1p-25f, 0x0000 },    /* half of it: a tie, to even zero */
        { 0x1.8p-25f, 0x0001 },  /* over half: up */
        { 0x1p-26f, 0x0000 },    { 0x1p-14f, 0x0400 }, /* the smallest normal */
        { 0x1.ff8p-15f, 0x03ff }, /* the largest subnormal */
        { 0x1.ffcp-15f, 0x0400 }, /* midway to the smallest normal: to even, up */
        { INFINITY, 0x7c00 },    { -INFINITY, 0xfc00 },
    };
    char why[128] = "";
    for (size_t i = 0; i < sizeof cases / sizeof cases[0] && !why[0]; i++)
        if (float_to_half(cases[i].in) != cases[i].want)
            snprintf(why, sizeof why, "%a -> 0x%04x, want 0x%04x", cases[i].in,
                     float_to_half(cases[i].in), cases[i].want);
    if (!why[0] && !isnan(half_to_float(float_to_half(NAN))))
        snprintf(why, sizeof why, "NaN does not stay NaN");
    result("half: zeros, overflow, subnormals, Inf and NaN", !why[0], why);
}

#ifdef __FLT16_MAX__
__extension__ typedef _Float16 compiler_half;

/* The compiler's own _Float16 conversion as an independent oracle, on a
 * stride through all 2^32 float bit patterns. */
static void test_half_against_compiler(void)
{
    char why[128] = "";
    for (uint64_t x = 0; x < (1ull << 32) && !why[0]; x += 4099) {
        const float f = float_of((uint32_t)x);
        const compiler_half ref = (compiler_half)f;
        uint16_t want;
        memcpy(&want, &ref, sizeof want);
        const uint16_t got = float_to_half(f);
        if (isnan(f) ? !isnan(half_to_float(got)) : got != want)
            snprintf(why, sizeof why, "bits 0x%08x -> 0x%04x, compiler says 0x%04x",
                     (uint32_t)x, got, want);
    }
    result("half: agrees with the compiler's _Float16 on 1M float patterns", !why[0], why);
}
#endif

/* ---- FP8 e4m3 conversion and the quantizer ---- */

/* The value of an e4m3 code from its fields, by the definition of E4M3FN. */
static double e4m3_value(int q)
{
    const int sign = q >> 7, exp = (q >> 3) & 0xf, mant = q & 7;
    const double mag = exp == 0 ? ldexp(mant, -9) : ldexp(8 + mant, exp - 10);
    return sign ? -mag : mag;
}

static void test_e4m3_all_codes(void)
{
    char why[128] = "";
    for (int q = 0; q < 256 && !why[0]; q++) {
        const float f = e4m3_to_float((uint8_t)q);
        if ((q & 0x7f) == 0x7f) {
            if (!isnan(f) || (float_to_e4m3(f) & 0x7f) != 0x7f)
                snprintf(why, sizeof why, "NaN 0x%02x does not stay NaN", q);
        } else if ((double)f != e4m3_value(q)) {
            snprintf(why, sizeof why, "0x%02x decodes to %g, not %g", q, f, e4m3_value(q));
        } else if (float_to_e4m3(f) != q) {
            snprintf(why, sizeof why, "0x%02x -> %g -> 0x%02x", q, f, float_to_e4m3(f));
        }
    }
    result("e4m3: every code decodes by definition and encodes back", !why[0], why);
}

/* Between two neighbouring finite codes: the nearer one; halfway, the one with
 * an even mantissa; past 448, 448 (satfinite); Inf too. */
static void test_e4m3_rounding(void)
{
    char why[160] = "";
    for (int q = 0; q < 0x7e && !why[0]; q++) {
        const double lo = e4m3_value(q), hi = e4m3_value(q + 1), mid = (lo + hi) / 2;
        const int even = (q & 1) ? q + 1 : q;
        const struct { double x; int want; } cases[] = {
            { mid, even }, { lo + (hi - lo) / 4, q }, { hi - (hi - lo) / 4, q + 1 },
            { -mid, even | 0x80 }, { -(lo + (hi - lo) / 4), q | 0x80 } };
        for (size_t i = 0; i < sizeof cases / sizeof cases[0] && !why[0]; i++) {
            const int got = float_to_e4m3((float)cases[i].x);
            if (got != cases[i].want)
                snprintf(why, sizeof why, "%.9g -> 0x%02x, want 0x%02x", cases[i].x, got, cases[i].want);
        }
    }
    const struct { float x; int want; } edges[] = {
        { 448, 0x7e }, { 464, 0x7e }, { 1e6f, 0x7e }, { INFINITY, 0x7e }, { -INFINITY, 0xfe },
        { 0x1p-10f, 0x00 }, { 0x1.01p-10f, 0x01 }, { -0.0f, 0x80 }, { 1e-30f, 0x00 } };
    for (size_t i = 0; i < sizeof edges / sizeof edges[0] && !why[0]; i++)
        if (float_to_e4m3(edges[i].x) != edges[i].want)
            snprintf(why, sizeof why, "%g -> 0x%02x, want 0x%02x", edges[i].x, float_to_e4m3(edges[i].x),
                     edges[i].want);
    result("e4m3: rounds to nearest even, saturates at 448", !why[0], why);
}

/* Each block's largest |x| becomes 448 exactly, every value is within half an
 * e4m3 step of x / scale, and the scales sit block row by block row, or
 * column by column. */
static void test_quantize_blocks(void)
{
    enum { R = 300, C = 330 };
    static float x[R * C];
    static uint8_t q[R * C];
    float scales[3 * 3];
    uint64_t state = 7;
    fill_random(x, R * C, &state, 0);
    for (int c = 128; c < 256; c++) /* a block of zeros: scale 1, q 0 */
        for (int r = 128; r < 256; r++)
            x[r * C + c] = 0;
    char why[160] = "";
    for (int layout = 0; layout < 4 && !why[0]; layout++) {
        const int block_rows = layout / 2 ? 128 : 1, by_column = layout % 2;
        const int nrb = (R + block_rows - 1) / block_rows;
        float *s = block_rows == 1 ? malloc(sizeof(float) * R * 3) : scales;
        quantize_blocks(x, R, C, block_rows, by_column, q, s);
        for (int rb = 0; rb < nrb && !why[0]; rb++)
            for (int cb = 0; cb < 3 && !why[0]; cb++) {
                const float scale = s[by_column ? cb * nrb + rb : rb * 3 + cb];
                float amax = 0, qmax = 0;
                for (int r = rb * block_rows; r < R && r < (rb + 1) * block_rows; r++)
                    for (int c = cb * 128; c < C && c < (cb + 1) * 128; c++) {
                        const double v = x[r * C + c] / scale, back = e4m3_to_float(q[r * C + c]);
                        const double step = fabs(v) < 0x1p-6 ? 0x1p-9 : ldexp(1, ilogb(v) - 3);
                        amax = fmaxf(amax, fabsf(x[r * C + c]));
                        qmax = fmaxf(qmax, fabsf((float)back));
                        if (fabs(back - v) > step / 2)
                            snprintf(why, sizeof why, "block rows %d: x %g / scale %g -> %g", block_rows,
                                     x[r * C + c], scale, back);
                    }
                if (!why[0] && (amax > 0 ? (qmax != 448 || scale != amax / 448) : scale != 1))
                    snprintf(why, sizeof why, "block rows %d%s, block (%d, %d): largest |q| %g, scale %g, amax %g",
                             block_rows, by_column ? " by column" : "", rb, cb, qmax, scale, amax);
            }
        if (block_rows == 1)
            free(s);
    }
    result("quantize_blocks: 1 x 128 and 128 x 128 blocks, scales by row and by column, the largest 448, each value "
           "within half a step", !why[0],
           why);
}

/* ---- reference and checker ---- */

/* A 2 x 3 x 2 problem small enough to do by hand. */
static const float A23[] = { 1, 2, -1, 0.5f, 3, 4 };    /* 2 x 3 */
static const float B32[] = { 1, -2, 0, 1, 2, 0.25f };   /* 3 x 2 */
static const float C22[] = { 10, 20, 30, 40 };
/* A x B = [1*1+2*0-1*2, 1*-2+2*1-1*.25; .5*1+3*0+4*2, .5*-2+3*1+4*.25] */
static const double AB[] = { -1, -0.25, 8.5, 3 };

static struct check_result check_full(const struct gemm_data *d, const float *got)
{
    int *rows = malloc(sizeof(int) * d->M), *cols = malloc(sizeof(int) * d->N);
    double *a_norm = malloc(sizeof(double) * norms_size(d, d->M)), *b_norm = malloc(sizeof(double) * norms_size(d, d->N));
    struct check_result r = { 0 };
    for (int i = 0; i < d->M; i++)
        rows[i] = i;
    for (int j = 0; j < d->N; j++)
        cols[j] = j;
    count_nonfinite(d, got, &r);
    compute_norms(d, a_norm, b_norm);
    check_reference(d, a_norm, b_norm, got, rows, d->M, cols, d->N, &r);
    check_verdict(&r);
    free(rows);
    free(cols);
    free(a_norm);
    free(b_norm);
    return r;
}

static void test_reference_by_hand(void)
{
    const struct gemm_data d = { 2, 2, 3, 2.0f, -0.5f, A23, B32, C22, SUM_ROUNDED, NULL, NULL };
    float got[4];
    for (int e = 0; e < 4; e++)
        got[e] = (float)(2.0 * AB[e] - 0.5 * C22[e]);
    const struct check_result r = check_full(&d, got);
    result("check: the reference matches a product done by hand", r.pass && r.ref_worst == 0.0,
           "an exact result did not pass exactly");
}

static void test_checker_catches(void)
{
    const struct gemm_data d = { 2, 2, 3, 1.0f, 0.0f, A23, B32, NULL, SUM_ROUNDED, NULL, NULL }; /* beta == 0 */
    float good[4];
    for (int e = 0; e < 4; e++)
        good[e] = (float)AB[e];
    result("check: a correct result with beta == 0 passes, C0 unused", check_full(&d, good).pass,
           "rejected");

    float bad[4];
    memcpy(bad, good, sizeof bad);
    bad[3] = NAN;
    struct check_result r = check_full(&d, bad);
    result("check: catches NaN", !r.pass && r.nonfinite == 1, "NaN passed");

    memcpy(bad, good, sizeof bad);
    bad[0] = INFINITY;
    r = check_full(&d, bad);
    result("check: catches Inf", !r.pass && r.nonfinite == 1, "Inf passed");

    /* A large shape's reference is a sample: a NaN outside it must still
     * fail, through the count of every element, not the comparison. */
    memcpy(bad, good, sizeof bad);
    bad[3] = NAN;
    {
        const int rows[1] = { 0 }, cols[1] = { 0 };
        double a_norm[2], b_norm[2];
        compute_norms(&d, a_norm, b_norm);
        r = (struct check_result){ 0 };
        count_nonfinite(&d, bad, &r);
        check_reference(&d, a_norm, b_norm, bad, rows, 1, cols, 1, &r);
        check_verdict(&r);
    }
    result("check: catches NaN outside the sampled elements", !r.pass && r.ref_count == 1,
           "NaN outside the sample passed");

    /* 1e-4 relative is far above float rounding at K = 3, far below any bug. */
    memcpy(bad, good, sizeof bad);
    bad[2] = good[2] * (1.0f + 1e-4f);
    r = check_full(&d, bad);
    result("check: catches one element off by 1e-4 relative", !r.pass && r.ref_worst > 1.0,
           "mismatch passed");

    memcpy(bad, good, sizeof bad);
    bad[1] = nextafterf(good[1], 0.0f);
    r = check_full(&d, bad);
    result("check: accepts a one-ulp difference", r.pass, "a rounding difference failed");

    const float other[4] = { good[0], good[1], good[2], good[3] + 0.01f };
    double a_norm[2], b_norm[2];
    compute_norms(&d, a_norm, b_norm);
    r = (struct check_result){ 0 };
    check_other(&d, a_norm, b_norm, good, other, &r);
    check_verdict(&r);
    result("check: the comparison with cuBLAS's output catches a mismatch",
           !r.pass && r.blas_count == 4, "mismatch passed");

    /* A second run must give the same bits: one ulp apart (inside the
     * tolerance) fails, and so does -0 against 0. */
    float again[4];
    memcpy(again, good, sizeof again);
    r = check_full(&d, good);
    count_changed(&d, good, again, &r);
    check_verdict(&r);
    result("check: a second run with the same bits passes", r.pass && r.changed == 0, "rejected");
    again[1] = nextafterf(good[1], 0.0f);
    count_changed(&d, good, again, &r);
    check_verdict(&r);
    result("check: catches a second run one ulp apart", !r.pass && r.changed == 1, "passed");
    const float zero[4] = { 0.0f, 0.0f, 0.0f, 0.0f }, minus_zero[4] = { -0.0f, 0.0f, 0.0f, 0.0f };
    r = (struct check_result){ 0 };
    count_changed(&d, zero, minus_zero, &r);
    check_verdict(&r);
    result("check: catches -0 against 0 in a second run", !r.pass && r.changed == 1, "passed");
}

/* A missing product, the typical tiling bug, must exceed the tolerance at a
 * realistic size (K = 4096, random inputs as the steps use). */
static void test_tolerance_catches_missing_product(void)
{
    enum { K = 4096 };
    float *a = malloc(sizeof(float) * K), *b = malloc(sizeof(float) * K);
    uint64_t state = 7;
    fill_random(a, K, &state, 0);
    fill_random(b, K, &state, 0);
    const struct gemm_data d = { 1, 1, K, 1.0f, 0.0f, a, b, NULL, SUM_ROUNDED, NULL, NULL };
    double sum = 0.0, an, bn;
    for (int k = 0; k < K; k++)
        sum += (double)a[k] * b[k];
    compute_norms(&d, &an, &bn);
    const double tol = tolerance(&d, &an, &bn, 0, 0);
    int caught = 0;
    for (int k = 0; k < K; k++)
        caught += fabs((double)a[k] * b[k]) > tol;
    free(a);
    free(b);
    char why[96];
    snprintf(why, sizeof why, "only %d of %d single missing products exceed the tolerance",
             caught, K);
    result("check: at K = 4096 most single missing products exceed the tolerance",
           caught > K * 8 / 10 && sum != 0.0, why);
}

static void test_samples(void)
{
    int idx[1000];
    int n = sample_edges(1000, idx);
    int ok = n > 0 && idx[0] == 0 && idx[n - 1] == 999;
    for (int i = 1; i < n; i++)
        ok = ok && idx[i] > idx[i - 1];
    /* Every step's tiles, down to mma.sync's 8-column ones, are multiples of
     * 8 wide: the sample must hold both sides of every multiple of 8, and no
     * more than that and the corners. */
    const int smallest_tile = 8;
    for (int t = smallest_tile; t < 1000; t += smallest_tile) {
        int have = 0;
        for (int i = 0; i < n; i++)
            have += idx[i] == t - 1 || idx[i] == t;
        ok = ok && have == 2;
    }
    ok = ok && n == 2 * (999 / smallest_tile) + 2;
    n = sample_few(1000, 3, idx);
    ok = ok && n <= SAMPLE_FEW_MAX && idx[0] == 0 && idx[1] == 1 && idx[n - 1] == 999;
    ok = ok && sample_edges(1, idx) == 1 && idx[0] == 0 && sample_few(1, 3, idx) == 1;
    result("check: samples hold the corners and both sides of every multiple of 8", ok,
           "bad sample");
}

/* The tolerance's formula, written out: 8 u (|alpha| ||a_i|| ||b_j|| +
 * |beta c_ij|) for rounded sums, (8 + sqrt(K) / 4) u (...) for truncated ones,
 * with a negative alpha and a non-zero beta; and its scale: an error just
 * inside it passes, just outside fails, for both models. */
static void test_tolerance_formula(void)
{
    /* ||a|| = 3, ||b|| = sqrt(0.125), a.b = -0.75; alpha = -2, beta = 0.5,
     * c = -3: the exact result is 1.5 - 1.5 = 0, so that a float holds the
     * result plus a small fraction of the tolerance without rounding it. */
    static const float a[4] = { 1, 2, 2, 0 }, b[4] = { -0.25f, -0.25f, 0, 0 }, c[1] = { -3 };
    const double u = 0x1p-24, scale = 2.0 * 3.0 * sqrt(0.125) + 0.5 * 3.0;
    const double want[2] = { 8.0 * u * scale, (8.0 + sqrt(4.0) / 4.0) * u * scale };
    for (int m = 0; m < 2; m++) {
        const enum summation sum = m ? SUM_TRUNCATED : SUM_ROUNDED;
        const char *model = m ? "tensor-core" : "float";
        const struct gemm_data d = { 1, 1, 4, -2.0f, 0.5f, a, b, c, sum, NULL, NULL };
        double a_norm[1], b_norm[1];
        compute_norms(&d, a_norm, b_norm);
        const double tol = tolerance(&d, a_norm, b_norm, 0, 0);
        char name[128];
        snprintf(name, sizeof name, "check: the %s tolerance with alpha < 0 and beta != 0 is as derived", model);
        result(name, fabs(tol - want[m]) <= 1e-12 * want[m], "another formula");
        for (int side = -1; side <= 1; side += 2) {
            const float inside = (float)(side * 0.95 * want[m]), outside = (float)(side * 1.05 * want[m]);
            snprintf(name, sizeof name, "check: %s sums: an error of 0.95 of the tolerance passes, 1.05 fails (%s)",
                     model, side < 0 ? "below" : "above");
            result(name, check_full(&d, &inside).pass && !check_full(&d, &outside).pass, "wrong scale");
        }
    }
}

/* The result of one row of A times N columns of B as the GPU adds it up:
 * rounded (one float rounding per multiply-add, like FFMA: C's fmaf), or
 * truncated (the tensor cores: 16 exact products at a time, the sum cut
 * toward zero into a float). Products k in [skip, skip + 8) are left out
 * when skip >= 0: the bug of a lost k-tile. */
static void gpu_like_sum(const float *a, const float *b, int N, int K, enum summation sum,
                         int skip, float *out)
{
    for (int j = 0; j < N; j++) {
        float acc = 0.0f;
        double run = 0.0; /* exact: 16 products of halves fit a double */
        for (int k = 0; k < K; k++) {
            const int lost = skip >= 0 && k >= skip && k < skip + 8;
            if (sum == SUM_ROUNDED) {
                if (!lost)
                    acc = fmaf(a[k], b[(size_t)k * N + j], acc);
                continue;
            }
            if (!lost)
                run += (double)a[k] * b[(size_t)k * N + j];
            if (k % 16 == 15 || k == K - 1) {
                const double exact = (double)acc + run;
                float f = (float)exact;
                if (fabs((double)f) > fabs(exact))
                    f = nextafterf(f, 0.0f);
                acc = f;
                run = 0.0;
            }
        }
        out[j] = acc;
    }
}

/* The checker's power over K (issue: it must not go blind as K grows): a
 * GPU-like sum passes and one that loses 8 consecutive products fails, up to
 * check_power_limit; past it the report says so. */
static void test_check_over_k(void)
{
    enum { N = 16 };
    const int ks[] = { 1 << 12, 1 << 16, 1 << 20 };
    const enum summation sums[] = { SUM_ROUNDED, SUM_TRUNCATED };
    const char *const names[] = { "rounded (float)", "truncated (tensor-core)" };
    for (int si = 0; si < 2; si++)
        for (int ki = 0; ki < 3; ki++) {
            const int K = ks[ki];
            float *a = malloc(sizeof(float) * K), *b = malloc(sizeof(float) * (size_t)K * N);
            uint64_t state = 11;
            fill_random(a, K, &state, sums[si] == SUM_TRUNCATED);
            fill_random(b, (size_t)K * N, &state, sums[si] == SUM_TRUNCATED);
            const struct gemm_data d = { 1, N, K, 1.0f, 0.0f, a, b, NULL, sums[si], NULL, NULL };
            float got[N];
            char name[160], why[96];

            gpu_like_sum(a, b, N, K, sums[si], -1, got);
            struct check_result r = check_full(&d, got);
            snprintf(name, sizeof name, "check: K = 2^%d, a correct %s sum passes", 12 + 4 * ki,
                     names[si]);
            snprintf(why, sizeof why, "worst error %.3g of tolerance", r.ref_worst);
            result(name, r.pass, why);

            gpu_like_sum(a, b, N, K, sums[si], K / 2, got);
            r = check_full(&d, got);
            const int blind = K >= check_power_limit(sums[si]);
            snprintf(name, sizeof name, "check: K = 2^%d, a %s sum missing 8 products %s",
                     12 + 4 * ki, names[si], blind ? "is past the check's power" : "fails");
            snprintf(why, sizeof why, "worst error %.3g of tolerance", r.ref_worst);
            /* Past the limit the check may or may not see it, and the report
             * says so: here that is tensor-core sums at K = 2^20. */
            result(name, blind ? sums[si] == SUM_TRUNCATED && K == 1 << 20 : !r.pass, why);
            free(a);
            free(b);
        }
    const long long lr = check_power_limit(SUM_ROUNDED), lt = check_power_limit(SUM_TRUNCATED);
    char why[96];
    snprintf(why, sizeof why, "limits %lld (rounded) and %lld (truncated)", lr, lt);
    result("check: its power ends near K = 2^22 for float sums, 2^18 for tensor-core sums",
           lr > (1 << 21) && lr < (1 << 23) && lt > (1 << 17) && lt < (1 << 19), why);
}

/* Row i of C as FP8's tensor cores add it (check.c, the factor): per block of
 * 128 of K, runs of 32 products and the block's sum so far, each term cut
 * toward zero 13 bits below the largest; then scaled and added to a float.
 * Products k in [skip, skip + 32) are left out when skip >= 0 (a lost
 * wgmma); with wrong_scale each column takes the scale of the other block of
 * 128 columns (scales read for the wrong columns). */
static void fp8_sum(const struct gemm_data *d, int i, int skip, int wrong_scale, float *out)
{
    const int K = d->K, N = d->N, KB = (K + 127) / 128, NB = (N + 127) / 128;
    for (int j = 0; j < N; j++) {
        float acc = 0.0f;
        for (int b = 0; b < KB; b++) {
            double sum = 0.0; /* the block's sum so far, as the tensor cores keep it */
            for (int k0 = b * 128; k0 < K && k0 < b * 128 + 128; k0 += 32) {
                double term[33], largest = fabs(sum);
                int terms = 0;
                term[terms++] = sum;
                for (int k = k0; k < K && k < k0 + 32; k++) {
                    if (skip >= 0 && k >= skip && k < skip + 32)
                        continue;
                    term[terms] = (double)d->A[(size_t)i * K + k] * d->B[(size_t)k * N + j];
                    largest = fmax(largest, fabs(term[terms++]));
                }
                if (largest == 0.0)
                    continue;
                const double cut = ldexp(1.0, ilogb(largest) - 13);
                sum = 0.0;
                for (int t = 0; t < terms; t++)
                    sum += trunc(term[t] / cut) * cut;
            }
            const int nb = wrong_scale ? (j / 128 + 1) % NB : j / 128;
            acc = fmaf((float)sum, d->sa[(size_t)b * d->M + i] * d->sb[(size_t)nb * KB + b], acc);
        }
        out[(size_t)i * N + j] = acc;
    }
}

/* The FP8 check: the reference takes each block's scales, the tolerance is
 * as derived, a sum as FP8's tensor cores make it passes, and one that loses
 * a run of 32 products, or scales a block with another's scale, fails; at K
 * of 100 (one part block), 4096 and 65536, on 2 rows and 192 columns (two
 * blocks of B, the second part), blocks of different sizes (fill_blocks).
 * The lost run is in a large block: one in a block 2^-12 the size of the
 * element's largest is below its rounding. */
static void test_check_fp8(void)
{
    enum { M = 2, N = 192 };
    const int ks[] = { 100, 4096, 65536 };
    for (int ki = 0; ki < 3; ki++) {
        const int K = ks[ki], KB = (K + 127) / 128;
        float *x = malloc(sizeof(float) * (size_t)(M + N) * K), *A = malloc(sizeof(float) * M * K);
        float *B = malloc(sizeof(float) * (size_t)K * N), *sa = malloc(sizeof(float) * KB * M);
        float *sb = malloc(sizeof(float) * KB * 2), got[M * N];
        uint8_t *q = malloc((size_t)(M + N) * K);
        uint64_t state = 5;
        fill_blocks(x, M, K, 1, &state);
        fill_blocks(x + M * K, N, K, 128, &state);
        quantize_blocks(x, M, K, 1, 1, q, sa);                       /* A: 1 x 128, by column */
        quantize_blocks(x + M * K, N, K, 128, 0, q + M * K, sb);     /* B (N x K): 128 x 128, by row */
        for (int e = 0; e < M * K; e++)
            A[e] = e4m3_to_float(q[e]);
        for (int j = 0; j < N; j++)
            for (int k = 0; k < K; k++)
                B[(size_t)k * N + j] = e4m3_to_float(q[M * K + (size_t)j * K + k]);
        const struct gemm_data d = { M, N, K, 1.0f, 0.0f, A, B, NULL, SUM_FP8, sa, sb };
        char name[160], why[128];

        /* The tolerance of element (1, 130), as derived: its scaled norms, and its blocks'. */
        double na = 0, nb = 0, blocks = 0;
        for (int b = 0; b < KB; b++) {
            double ab = 0, bb = 0;
            for (int k = b * 128; k < K && k < b * 128 + 128; k++) {
                const double a = (double)A[K + k] * sa[b * M + 1], w = (double)B[(size_t)k * N + 130] * sb[KB + b];
                ab += a * a, bb += w * w;
            }
            na += ab, nb += bb, blocks += ab * bb;
        }
        double *a_norm = malloc(sizeof(double) * norms_size(&d, M)), *b_norm = malloc(sizeof(double) * norms_size(&d, N));
        compute_norms(&d, a_norm, b_norm);
        const double want = 8.0 * 0x1p-24 * sqrt(na) * sqrt(nb) + 24.0 * 0x1p-13 / sqrt(128.0) * sqrt(blocks);
        const double tol = tolerance(&d, a_norm, b_norm, 1, 130);
        free(a_norm), free(b_norm);
        snprintf(name, sizeof name, "check: K = %d, the FP8 tolerance is as derived, on the scaled values", K);
        snprintf(why, sizeof why, "%.6g, not %.6g", tol, want);
        result(name, fabs(tol - want) <= 1e-12 * want, why);

        for (int i = 0; i < M; i++)
            fp8_sum(&d, i, -1, 0, got);
        struct check_result r = check_full(&d, got);
        snprintf(name, sizeof name, "check: K = %d, an FP8 tensor-core sum passes", K);
        snprintf(why, sizeof why, "worst error %.3g of tolerance", r.ref_worst);
        result(name, r.pass, why);

        int big = 0; /* the run lost: in the block of K where element (0, 0)'s scales are largest */
        for (int b = 1; b < KB; b++)
            big = sa[b * M] * sb[b] > sa[big * M] * sb[big] ? b : big;
        for (int i = 0; i < M; i++)
            fp8_sum(&d, i, big * 128 + (K - big * 128 > 32 ? 32 : 0), 0, got);
        r = check_full(&d, got);
        snprintf(name, sizeof name, "check: K = %d, an FP8 sum missing 32 products fails", K);
        snprintf(why, sizeof why, "worst error %.3g of tolerance", r.ref_worst);
        result(name, !r.pass, why);

        for (int i = 0; i < M; i++)
            fp8_sum(&d, i, -1, 1, got);
        r = check_full(&d, got);
        snprintf(name, sizeof name, "check: K = %d, an FP8 sum with B's scales of the wrong columns fails", K);
        snprintf(why, sizeof why, "worst error %.3g of tolerance", r.ref_worst);
        result(name, !r.pass, why);
        free(x), free(A), free(B), free(sa), free(sb), free(q);
    }
}

static void test_fill_random(void)
{
    float x[1000], y[1000];
    uint64_t s1 = 42, s2 = 42;
    fill_random(x, 1000, &s1, 0);
    fill_random(y, 1000, &s2, 1);
    int ok = 1, zeros = 0;
    for (int i = 0; i < 1000; i++) {
        ok = ok && x[i] >= -1.0f && x[i] < 1.0f && y[i] == half_to_float(float_to_half(x[i]));
        zeros += x[i] == 0.0f;
    }
    result("check: random inputs are seeded, in [-1, 1), not zero, half-exact when asked",
           ok && zeros == 0 && x[0] != x[1], "bad values");
}

/* ---- options ---- */

static const struct step FP32_STEP = { "prog", INPUT_FP32, "sm_75" };

static int parse_argv(int argc, char **argv, struct options *opt)
{
    /* The messages themselves are checked by scripts/test.sh. */
    fflush(stdout);
    fflush(stderr);
    const int out = dup(1), err = dup(2), null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    const int rc = parse_options(argc, argv, &FP32_STEP, opt);
    fflush(stdout);
    fflush(stderr);
    dup2(out, 1);
    dup2(err, 2);
    close(null);
    close(out);
    close(err);
    return rc;
}

/* Parses "prog" plus line split at spaces. */
static int parse(const char *line, struct options *opt)
{
    char buf[256];
    char *argv[32];
    int argc = 0;
    snprintf(buf, sizeof buf, "prog %s", line);
    for (char *tok = strtok(buf, " "); tok && argc < 31; tok = strtok(NULL, " "))
        argv[argc++] = tok;
    argv[argc] = NULL;
    return parse_argv(argc, argv, opt);
}

static void test_options(void)
{
    struct options o;
    int rc = parse("", &o);
    result("options: defaults are 4096^3, alpha 1, beta 0, checked",
           rc == -1 && o.M == 4096 && o.N == 4096 && o.K == 4096 && o.alpha == 1.0f &&
               o.beta == 0.0f && o.check && o.iters >= 20,
           "wrong defaults");

    result("options: no offset by default", rc == -1 && o.offset == 0, "offset set");
    result("options: no launches reported by default", rc == -1 && !o.launches, "launches set");
    result("options: warm runs and no host times by default", rc == -1 && !o.cold && !o.host, "cold or host set");

    rc = parse("-m 7 -n 9 -k 11 --alpha -1.5 --beta=0.25 --iters 3 --warmup 0 --seed 5 --offset 3 "
               "--no-check --launches --cold --host", &o);
    result("options: every option parses, --opt=value too",
           rc == -1 && o.M == 7 && o.N == 9 && o.K == 11 && o.alpha == -1.5f &&
               o.beta == 0.25f && o.iters == 3 && o.warmup == 0 && o.seed == 5 && o.offset == 3 &&
               !o.check && o.launches && o.cold && o.host,
           "wrong values");
    /* The step's gemm_max_elements: 2^36 from step 09, past 32-bit offsets;
     * one more row is refused. */
    result("options: the element limit is the step's (gemm.h's 2^36), past 32-bit offsets",
           GEMM_MAX_ELEMENTS_64 == 1LL << 36 && parse("-m 16400 -n 131072 -k 64", &o) == -1 &&
               parse("-m 64 -n 1 -k 1073741824", &o) == -1 && parse("-m 65 -n 1 -k 1073741824", &o) == 2 &&
               parse("-m 1 -n 65 -k 1073741824", &o) == 2 && parse("-m 1073741824 -n 65 -k 1", &o) == 2,
           "a matrix past 2^36 elements accepted, or one within refused");
    rc = parse("--offset 1024", &o);
    result("options: --offset takes up to MAX_OFFSET", rc == -1 && o.offset == MAX_OFFSET, "refused");

    rc = parse("-s 33", &o);
    result("options: -s sets M, N and K", rc == -1 && o.M == 33 && o.N == 33 && o.K == 33,
           "wrong sizes");
    result("options: --help exits 0", parse("--help", &o) == 0, "wrong exit code");
    result("options: -h wins wherever it stands",
           parse("-h --bogus", &o) == 0 && parse("--bogus -h", &o) == 0, "wrong exit code");

    rc = parse("-m +12 --alpha 1e-40 --beta -.5e+1", &o);
    result("options: a leading +, subnormal floats and exponents are decimal numbers too",
           rc == -1 && o.M == 12 && o.alpha > 0.0f && o.alpha < 1e-38f && o.beta == -5.0f,
           "refused or misread");

    char m[] = "-m", v1[] = " 12", v2[] = "12 ", prog[] = "prog";
    char *spaced1[] = { prog, m, v1, NULL }, *spaced2[] = { prog, m, v2, NULL };
    result("options: spaces around a number are refused, before and after",
           parse_argv(3, spaced1, &o) == 2 && parse_argv(3, spaced2, &o) == 2, "accepted");

    static const char *const BAD[] = {
        "-m 0",       "-m abc",     "-m 99999999", "--bogus",     "-n -5",
        "-k",         "-m 12x",     "--alpha nan", "--beta inf",  "--alpha 1e99",
        "--iters 0",  "--warmup -1", "extra",      "-s 2000000000", "-m 1048576 -k 65537",
        "-m 0x10",    "--alpha 0x1p3", "--alpha 1e39", "--beta .", "--alpha 1e", "--seed 1.5",
        "-m 1e3",     "--offset -1", "--offset 1025", "--offset", "--cold=1", "--host=yes",
        "--cold 1",   "--hosts",
    };
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        char name[96];
        snprintf(name, sizeof name, "options: rejects '%s' with exit code 2", BAD[i]);
        result(name, parse(BAD[i], &o) == 2, "accepted");
    }
}

int main(void)
{
    /* A line at a time, so that what was printed reaches the log even when a
     * test crashes. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    test_half_all_values();
    test_half_rounding_ties();
    test_half_edges();
#ifdef __FLT16_MAX__
    test_half_against_compiler();
#endif
    test_e4m3_all_codes();
    test_e4m3_rounding();
    test_quantize_blocks();
    test_reference_by_hand();
    test_checker_catches();
    test_tolerance_catches_missing_product();
    test_samples();
    test_tolerance_formula();
    test_check_over_k();
    test_check_fp8();
    test_fill_random();
    test_options();
    printf("unit tests: %d passed, %d failed\n", passes, failures);
    return failures ? 1 : 0;
}
