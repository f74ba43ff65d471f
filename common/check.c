#include "check.h"

#include "half.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

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

int sample_capacity(int n, int full)
{
    return full ? n : 4 + 2 * (n / 128) + 16;
}

static int cmp_int(const void *a, const void *b)
{
    const int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

int sample_indices(int n, int full, uint64_t seed, int *idx)
{
    int count = 0;
    if (full) {
        for (int i = 0; i < n; i++)
            idx[count++] = i;
        return count;
    }
    const int edges[] = { 0, 1, n - 2, n - 1 };
    for (int e = 0; e < 4; e++)
        if (edges[e] >= 0 && edges[e] < n)
            idx[count++] = edges[e];
    for (int t = 128; t < n; t += 128) {
        idx[count++] = t - 1;
        idx[count++] = t;
    }
    for (int r = 0; r < 16; r++)
        idx[count++] = (int)(next_random(&seed) % (uint64_t)n);

    qsort(idx, (size_t)count, sizeof *idx, cmp_int);
    int unique = 0;
    for (int i = 0; i < count; i++)
        if (unique == 0 || idx[i] != idx[unique - 1])
            idx[unique++] = idx[i];
    return unique;
}

void compute_norms(const struct gemm_data *d, double *a_norm, double *b_norm)
{
    for (int i = 0; i < d->M; i++) {
        double s = 0.0;
        for (int k = 0; k < d->K; k++) {
            const double a = d->A[(size_t)i * d->K + k];
            s += a * a;
        }
        a_norm[i] = sqrt(s);
    }
    for (int j = 0; j < d->N; j++)
        b_norm[j] = 0.0;
    for (int k = 0; k < d->K; k++)
        for (int j = 0; j < d->N; j++) {
            const double b = d->B[(size_t)k * d->N + j];
            b_norm[j] += b * b;
        }
    for (int j = 0; j < d->N; j++)
        b_norm[j] = sqrt(b_norm[j]);
}

/* Tolerance for element (i, j). Summing K products in float, rounding errors
 * of random sign grow like sqrt(K) * u * sum_k |a_ik b_kj| (u = 2^-24, the
 * unit roundoff; the probabilistic bound of Higham and Mary), while the
 * worst-case bound K * u * sum |a b| is so loose that a missing product could
 * hide under it. We allow (4 sqrt(K) + 8) u times the scale, the 8 covering
 * the alpha/beta epilogue and tiny K. The scale bounds sum |a_ik b_kj| by
 * ||a_i|| ||b_j|| (Cauchy-Schwarz), which costs O(MK + KN) instead of O(MNK),
 * and adds |beta c_ij|. The same bound holds for tensor-core steps: half
 * products are exact in float, and the sum is float. */
double tolerance(const struct gemm_data *d, const double *a_norm, const double *b_norm,
                 int i, int j)
{
    const double u = 0x1p-24;
    double scale = fabs((double)d->alpha) * a_norm[i] * b_norm[j];
    if (d->beta != 0.0f)
        scale += fabs((double)d->beta * d->C0[(size_t)i * d->N + j]);
    return (4.0 * sqrt((double)d->K) + 8.0) * u * scale;
}

/* |got - want| / tol, with an exact match required where tol is 0. */
static double ratio(double got, double want, double tol)
{
    const double err = fabs(got - want);
    if (err == 0.0)
        return 0.0;
    return tol > 0.0 ? err / tol : INFINITY;
}

void check_reference(const struct gemm_data *d, const double *a_norm, const double *b_norm,
                     const float *got, const int *rows, int nrows, const int *cols, int ncols,
                     struct check_result *r)
{
    const size_t total = (size_t)d->M * d->N;
    r->nonfinite = 0;
    for (size_t e = 0; e < total; e++)
        if (!isfinite(got[e]))
            r->nonfinite++;

    double *acc = malloc(sizeof(double) * (size_t)ncols);
    if (!acc) {
        fprintf(stderr, "check: out of host memory\n");
        exit(1);
    }

    r->ref_count = (long long)nrows * ncols;
    r->ref_worst = 0.0;
    r->ref_worst_err = 0.0;
    for (int ii = 0; ii < nrows; ii++) {
        const int i = rows[ii];
        /* k outer, j inner: B is read along its rows, which is what keeps a
         * full reference fast. */
        for (int jj = 0; jj < ncols; jj++)
            acc[jj] = 0.0;
        for (int k = 0; k < d->K; k++) {
            const double a = d->A[(size_t)i * d->K + k];
            const float *b_row = d->B + (size_t)k * d->N;
            for (int jj = 0; jj < ncols; jj++)
                acc[jj] += a * b_row[cols[jj]];
        }
        for (int jj = 0; jj < ncols; jj++) {
            const int j = cols[jj];
            double want = (double)d->alpha * acc[jj];
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
    free(acc);
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
    r->pass = r->nonfinite == 0 && r->ref_worst <= 1.0 &&
              (r->blas_count == 0 || r->blas_worst <= 1.0);
}
