/*
 * Inputs and the correctness check, in plain C with no GPU: seeded random
 * fill, the CPU reference accumulated in double, and the comparisons.
 */
#ifndef CHECK_H
#define CHECK_H

#include <stddef.h>
#include <stdint.h>

/* The host's view of one problem: exactly the values the GPU sees. */
struct gemm_data {
    int M, N, K;
    float alpha, beta;
    const float *A;  /* M x K */
    const float *B;  /* K x N */
    const float *C0; /* M x N, C before the run; NULL when beta == 0 */
};

struct check_result {
    int pass;
    long long nonfinite;   /* NaN or Inf elements in the output */
    long long ref_count;   /* elements compared with the CPU reference */
    double ref_worst;      /* worst |error| / tolerance among them */
    double ref_worst_err;  /* that element's |error| */
    long long blas_count;  /* elements compared with cuBLAS (0: not done) */
    double blas_worst;     /* worst |difference| / tolerance among them */
};

/* Fills x with seeded uniform values in [-1, 1). With round_to_half they are
 * rounded to binary16, so x holds exactly what a half input carries. */
void fill_random(float *x, size_t n, uint64_t *state, int round_to_half);

/* Above this many multiply-adds the CPU reference takes a sample and the
 * whole output is compared with cuBLAS instead: a full double-precision
 * reference at 4096^3 would take minutes. */
#define FULL_REFERENCE_MAX_MACS (1LL << 26)

/* Picks the rows (or columns) of an n-long side to compare with the CPU
 * reference: all of them when full, else the first and last two, both sides
 * of every multiple of 128 (where every step's tiles meet) and a few seeded
 * random ones, sorted and without repeats. idx needs room for
 * sample_capacity(n, full). Returns the count. */
int sample_capacity(int n, int full);
int sample_indices(int n, int full, uint64_t seed, int *idx);

/* Per-element tolerance, see check.c for why. a_norm[i] is the 2-norm of row
 * i of A and b_norm[j] of column j of B (compute_norms fills them). */
void compute_norms(const struct gemm_data *d, double *a_norm, double *b_norm);
double tolerance(const struct gemm_data *d, const double *a_norm, const double *b_norm,
                 int i, int j);

/* Counts NaN/Inf in got, then compares got with the double-precision reference
 * on rows x cols, with the norms from compute_norms. Fills the nonfinite and
 * ref_* fields of *r. */
void check_reference(const struct gemm_data *d, const double *a_norm, const double *b_norm,
                     const float *got, const int *rows, int nrows, const int *cols, int ncols,
                     struct check_result *r);

/* Compares every element of got with other (cuBLAS's output on the same
 * data), with the same tolerance. Fills the blas_* fields of *r. */
void check_other(const struct gemm_data *d, const double *a_norm, const double *b_norm,
                 const float *got, const float *other, struct check_result *r);

/* pass = no NaN/Inf and every compared element within tolerance. */
void check_verdict(struct check_result *r);

#endif
