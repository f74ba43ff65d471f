#include "check.h"

#include "fp8.h"
#include "half.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* splitmix64: tiny, well mixed, and the same sequence on every platform. */
static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void fill_random(float *x, size_t n, uint64_t *state, int round_to_half)
{
    for (size_t i = 0; i < n; i++) {
        /* 24 random bits: exact in a float, uniform on [-1, 1). */
        const float v = (float)(next_random(state) >> 40) * 0x1p-23f - 1.0f;
        x[i] = round_to_half ? half_to_float(float_to_half(v)) : v;
    }
}

void fill_blocks(float *x, int rows, int cols, int block_rows, uint64_t *state)
{
    fill_random(x, (size_t)rows * cols, state, 0);
    for (int r0 = 0; r0 < rows; r0 += block_rows)
        for (int c0 = 0; c0 < cols; c0 += 128) {
            const float size = exp2f((float)(next_random(state) >> 40) * 0x1p-24f * 6.0f - 3.0f);
            for (int r = r0; r < rows && r < r0 + block_rows; r++)
                for (int c = c0; c < cols && c < c0 + 128; c++)
                    x[(size_t)r * cols + c] *= size;
        }
}

void fp8_inputs(int M, int N, int K, uint64_t *state, float *a_raw, float *b_raw, uint8_t *qa, uint8_t *qb,
                float *sa, float *sb, float *a, float *b)
{
    fill_blocks(a_raw, M, K, 1, state);
    fill_blocks(b_raw, N, K, 128, state);
    quantize_blocks(a_raw, M, K, 1, 1, qa, sa);
    quantize_blocks(b_raw, N, K, 128, 0, qb, sb);
    for (size_t e = 0; e < (size_t)M * K; e++)
        a[e] = e4m3_to_float(qa[e]);
    for (int j = 0; j < N; j++)
        for (int k = 0; k < K; k++)
            b[(size_t)k * N + j] = e4m3_to_float(qb[(size_t)j * K + k]);
}

static int cmp_int(const void *a, const void *b)
{
    const int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Sorts idx[0..count) and drops repeats; returns the new count. */
static int sort_unique(int *idx, int count)
{
    qsort(idx, (size_t)count, sizeof *idx, cmp_int);
    int unique = 0;
    for (int i = 0; i < count; i++)
        if (unique == 0 || idx[i] != idx[unique - 1])
            idx[unique++] = idx[i];
    return unique;
}

int sample_edges(int n, int *idx)
{
    int count = 0;
    idx[count++] = 0;
    for (int t = EDGE; t < n; t += EDGE) {
        idx[count++] = t - 1;
        idx[count++] = t;
    }
    idx[count++] = n - 1;
    return sort_unique(idx, count);
}

int sample_few(int n, uint64_t seed, int *idx)
{
    int count = 0;
    const int corners[] = { 0, 1, n - 2, n - 1 };
    for (int e = 0; e < 4; e++)
        if (corners[e] >= 0 && corners[e] < n)
            idx[count++] = corners[e];
    for (int r = 0; r < SAMPLE_RANDOM && r < n; r++)
        idx[count++] = (int)(next_random(&seed) % (uint64_t)n);
    return sort_unique(idx, count);
}

/* FP8's scale of A's element (i, k) and of B's (k, j) (check.h); 1 otherwise. */
static double scale_a(const struct gemm_data *d, int i, int k)
{
    return d->sa ? d->sa[(size_t)(k / 128) * d->M + i] : 1.0;
}

static double scale_b(const struct gemm_data *d, int k, int j)
{
    return d->sb ? d->sb[(size_t)(j / 128) * ((d->K + 127) / 128) + k / 128] : 1.0;
}

size_t norms_size(const struct gemm_data *d, int n)
{
    return (size_t)n * (d->sa ? (size_t)(d->K + 127) / 128 + 1 : 1);
}

/* The 2-norms of A's rows and B's columns, and for FP8 of each block's (check.h). */
void compute_norms(const struct gemm_data *d, double *a_norm, double *b_norm)
{
    const int M = d->M, N = d->N, blocks = d->sa ? (d->K + 127) / 128 : 0;
    for (size_t e = 0; e < norms_size(d, M); e++)
        a_norm[e] = 0.0;
    for (size_t e = 0; e < norms_size(d, N); e++)
        b_norm[e] = 0.0;
    for (int i = 0; i < M; i++)
        for (int k = 0; k < d->K; k++) {
            const double a = d->A[(size_t)i * d->K + k] * scale_a(d, i, k);
            a_norm[i] += a * a;
            if (blocks)
                a_norm[M + (size_t)(k / 128) * M + i] += a * a;
        }
    for (int k = 0; k < d->K; k++)
        for (int j = 0; j < N; j++) {
            const double b = d->B[(size_t)k * N + j] * scale_b(d, k, j);
            b_norm[j] += b * b;
            if (blocks)
                b_norm[N + (size_t)(k / 128) * N + j] += b * b;
        }
    for (size_t e = 0; e < norms_size(d, M); e++)
        a_norm[e] = sqrt(a_norm[e]);
    for (size_t e = 0; e < norms_size(d, N); e++)
        b_norm[e] = sqrt(b_norm[e]);
}

/* The tolerance is u times a factor times the scale |alpha| ||a_i|| ||b_j|| +
 * |beta c_ij|, u = 2^-24 (float's unit roundoff). The factor is worked out
 * for the inputs fill_random makes, independent and uniform on [-1, 1): the
 * products p_k = a_ik b_kj have random signs.
 *
 * Rounded sums. Each addition rounds the running sum s_k, by at most
 * u |s_k| and evenly within that, so the errors are independent with a
 * standard deviation of at most u |s_k| / sqrt(3), and the total error's is
 * at most u sqrt(sum_k s_k^2 / 3). With random signs s_k^2 averages k times
 * the mean square product, so sum_k s_k^2 comes to about
 * ||a_i||^2 ||b_j||^2 / 2: the error's standard deviation is at most
 * u ||a_i|| ||b_j|| / sqrt(6), 0.41 u ||a|| ||b||, at any K (the norms carry
 * K: ||a_i|| ||b_j|| is about K / 3). The largest of 2^36 elements (the most
 * a run has) is about 7.1 standard deviations, and comparing two kernels
 * adds two errors (x sqrt 2): 4.1 u ||a|| ||b||. The factor is 8. Measured on
 * an H200: 1.3 against this reference and 3.5 against cuBLAS SGEMM, at K
 * from 2^12 to 2^20.
 *
 * Truncated sums. The tensor cores add 16 products exactly and cut the sum
 * to a float toward zero: an error of up to one ulp, half an ulp on average,
 * always toward zero, so it does not average out. Over the K / 16 additions
 * it comes to about u times the sum of the running sums, which for random
 * signs grows like K^1.5: a standard deviation of u ||a|| ||b|| sqrt(K) / 38.
 * A simulation of that rule and an H200 agree: 58 u ||a|| ||b|| at K = 2^20
 * for the largest of 400 elements, 0.057 sqrt(K). The largest of 2^31,
 * compared with another such kernel: 0.23 sqrt(K); of 2^36, 0.26 sqrt(K).
 * The factor gets sqrt(K) / 4 more, which with its 8 covers 2^36 elements
 * up to K = 640,000. Measured against cuBLAS GemmEx: 0.09 sqrt(K).
 *
 * FP8 sums, on the scaled values. A run of 32 products of e4m3 values
 * (exact: 4 significant bits each) and the accumulator are added aligned to
 * the largest term's exponent, each cut toward zero 13 bits below it
 * (results/h200/fp8.txt: a term 2^-13 of the largest counts, 2^-14
 * does not), and every 128 products that sum is scaled and added to a
 * float. Each cut is up to 2^-13 of the largest term, with the term's sign:
 * random signs cancel in part. That rule, simulated on uniform inputs
 * (fp8_sum in test_common.c), errs by 0.82 2^-13 ||a|| ||b|| / sqrt(K)
 * r.m.s. from K = 128 to 2^17, and at most 7.4 times that over 8192
 * elements, at K = 100 (runs of fewer terms: longer tails). Blocks of
 * different sizes (fill_blocks) err by their own sizes: 2^-13 / sqrt(128)
 * times the root of the sum over blocks b of (||a_b|| ||b_b||)^2, which for
 * blocks alike is ||a|| ||b|| / sqrt(K). For 2^36 elements and two kernels
 * compared the tolerance takes FP8_CUTS = 24 of that beside the float's 8
 * (tolerance_factor: for blocks alike).
 *
 * Each factor keeps 8 for the epilogue's roundings (alpha times the sum,
 * plus beta c) and for tiny K. The check treats the data as the harness
 * makes it: for inputs of one sign, or with structure, these are not bounds. */
#define FP8_CUTS 24.0

double tolerance_factor(enum summation sum, double K)
{
    if (sum == SUM_FP8)
        return 8.0 + (K > 0 ? 0x1p11 * FP8_CUTS / sqrt(K) : 0.0);
    return sum == SUM_TRUNCATED ? 8.0 + sqrt(K) / 4.0 : 8.0;
}

double tolerance(const struct gemm_data *d, const double *a_norm, const double *b_norm,
                 int i, int j)
{
    const double u = 0x1p-24;
    double scale = fabs((double)d->alpha) * a_norm[i] * b_norm[j];
    if (d->beta != 0.0f)
        scale += fabs((double)d->beta * d->C0[(size_t)i * d->N + j]);
    if (d->sum != SUM_FP8)
        return tolerance_factor(d->sum, d->K) * u * scale;
    double blocks = 0.0; /* FP8's cuts, block by block */
    for (int b = 0; b < (d->K + 127) / 128; b++) {
        const double t = a_norm[d->M + (size_t)b * d->M + i] * b_norm[d->N + (size_t)b * d->N + j];
        blocks += t * t;
    }
    return 8.0 * u * scale + FP8_CUTS * 0x1p-13 / sqrt(128.0) * fabs((double)d->alpha) * sqrt(blocks);
}

/* Where the check stops seeing a missing run of 8 products. Such a run is a
 * sum of 8 random products: mean square 8 / 9, median size 0.6745 sqrt(8/9)
 * = 0.64. The tolerance of a typical element is u factor(K) K / 3 (the norms'
 * product is about K / 3). Once that passes 0.64, most elements of a result
 * missing such a run would still pass. For rounded sums that is K = 2^22
 * (4.0 million); for truncated sums, whose own error grows faster, about
 * 2^18 (243 thousand). Near that K the check still sees a missing run in
 * some elements, and at a quarter of it in nearly all. */
long long check_power_limit(enum summation sum)
{
    const double u = 0x1p-24, run = 0.6745 * sqrt(8.0 / 9.0);
    long long lo = 1, hi = 1LL << 40; /* the smallest K whose typical tolerance reaches run */
    while (lo < hi) {
        const long long k = lo + (hi - lo) / 2;
        if (u * tolerance_factor(sum, (double)k) * (double)k / 3.0 >= run)
            hi = k;
        else
            lo = k + 1;
    }
    return lo;
}

/* |got - want| / tol, with an exact match required where tol is 0. */
static double ratio(double got, double want, double tol)
{
    const double err = fabs(got - want);
    if (err == 0.0)
        return 0.0;
    return tol > 0.0 ? err / tol : INFINITY;
}

static void *check_alloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "check: out of host memory (%.2f GiB more needed)\n",
                (double)bytes / (1u << 30));
        exit(2);
    }
    return p;
}

void count_changed(const struct gemm_data *d, const float *got, const float *again,
                   struct check_result *r)
{
    const size_t total = (size_t)d->M * d->N;
    r->changed = 0;
    for (size_t e = 0; e < total; e++)
        if (memcmp(&got[e], &again[e], sizeof *got) != 0)
            r->changed++;
}

void count_nonfinite(const struct gemm_data *d, const float *got, struct check_result *r)
{
    const size_t total = (size_t)d->M * d->N;
    r->nonfinite = 0;
    for (size_t e = 0; e < total; e++)
        if (!isfinite(got[e]))
            r->nonfinite++;
}

/* Columns are taken COL_BLOCK at a time: copied out of B into contiguous
 * rows first, so each element's sum runs along memory whether the columns
 * are all of B's or a few scattered ones. */
enum { COL_BLOCK = 16 };

void check_reference(const struct gemm_data *d, const double *a_norm, const double *b_norm,
                     const float *got, const int *rows, int nrows, const int *cols, int ncols,
                     struct check_result *r)
{
    const int K = d->K, block = d->sa ? 128 : K;
    float *bt = check_alloc(sizeof(float) * (size_t)COL_BLOCK * K);
    r->ref_count += (long long)nrows * ncols;
    for (int j0 = 0; j0 < ncols; j0 += COL_BLOCK) {
        const int nb = ncols - j0 < COL_BLOCK ? ncols - j0 : COL_BLOCK;
        for (int k = 0; k < K; k++)
            for (int jj = 0; jj < nb; jj++)
                bt[(size_t)jj * K + k] = d->B[(size_t)k * d->N + cols[j0 + jj]];
        for (int ii = 0; ii < nrows; ii++) {
            const int i = rows[ii];
            const float *a_row = d->A + (size_t)i * K;
            for (int jj = 0; jj < nb; jj++) {
                const int j = cols[j0 + jj];
                const float *b_col = bt + (size_t)jj * K;
                double acc = 0.0;
                for (int k0 = 0; k0 < K; k0 += block) { /* FP8: each block of K, scaled */
                    const int k1 = K - k0 < block ? K : k0 + block;
                    double part = 0.0;
                    for (int k = k0; k < k1; k++)
                        part += (double)a_row[k] * b_col[k];
                    acc += part * scale_a(d, i, k0) * scale_b(d, k0, j);
                }
                double want = (double)d->alpha * acc;
                if (d->beta != 0.0f)
                    want += (double)d->beta * d->C0[(size_t)i * d->N + j];
                const double g = got[(size_t)i * d->N + j];
                const double q = ratio(g, want, tolerance(d, a_norm, b_norm, i, j));
                if (!(q <= r->ref_worst)) { /* NaN compares false: it is kept */
                    r->ref_worst = q;
                    r->ref_worst_err = fabs(g - want);
                }
            }
        }
    }
    free(bt);
}

void check_other(const struct gemm_data *d, const double *a_norm, const double *b_norm,
                 const float *got, const float *other, struct check_result *r)
{
    r->blas_count = (long long)d->M * d->N;
    r->blas_worst = 0.0;
    for (int i = 0; i < d->M; i++)
        for (int j = 0; j < d->N; j++) {
            const size_t e = (size_t)i * d->N + j;
            const double q = ratio(got[e], other[e], tolerance(d, a_norm, b_norm, i, j));
            if (!(q <= r->blas_worst))
                r->blas_worst = q;
        }
}

void check_verdict(struct check_result *r)
{
    r->pass = r->nonfinite == 0 && r->changed == 0 && r->ref_worst <= 1.0 &&
              (r->blas_count == 0 || r->blas_worst <= 1.0);
}
