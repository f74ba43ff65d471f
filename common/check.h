/*
 * Inputs and the correctness check, in plain C with no GPU: seeded random
 * fill, the CPU reference accumulated in double, and the comparisons.
 */
#ifndef CHECK_H
#define CHECK_H

#include <stddef.h>
#include <stdint.h>

/* How the GPU adds the products up, which sets how far a correct result may
 * be from the exact one (check.c says how far):
 *   SUM_ROUNDED    one float rounding per addition: FFMA (steps 01-04, and
 *                  cuBLAS SGEMM);
 *   SUM_TRUNCATED  the tensor cores (from step 05 on, and cuBLAS GemmEx):
 *                  they add a run of 16 products exactly and truncate the
 *                  sum into the float accumulator;
 *   SUM_FP8        the tensor cores on FP8 (step 16, and cuBLASLt): each
 *                  run of 32 products goes into an accumulator that keeps
 *                  13 bits below its largest term, and every 128 products
 *                  that sum is scaled and added to a float. */
enum summation { SUM_ROUNDED, SUM_TRUNCATED, SUM_FP8 };

/* The host's view of one problem: exactly the values the GPU sees. */
struct gemm_data {
    int M, N, K;
    float alpha, beta;
    const float *A;  /* M x K */
    const float *B;  /* K x N */
    const float *C0; /* M x N, C before the run; NULL when beta == 0 */
    enum summation sum;
    /* FP8 (gemm.h's gemm_fp8_launch): A and B hold e4m3 values, and C's sum
     * runs over blocks of 128 of K, each scaled by sa[b * M + i] * sb[(j /
     * 128) * ceil(K / 128) + b]; the norms and the reference take the scaled
     * values. NULL otherwise. */
    const float *sa, *sb;
};

struct check_result {
    int pass;
    long long nonfinite;   /* NaN or Inf elements in the output */
    long long ref_count;   /* elements compared with the CPU reference */
    double ref_worst;      /* worst |error| / tolerance among them */
    double ref_worst_err;  /* that element's |error| */
    long long blas_count;  /* elements compared with cuBLAS (0: not done) */
    double blas_worst;     /* worst |difference| / tolerance among them */
    long long changed;     /* elements whose bits differ in a second run */
    double unquantized;    /* FP8: r.m.s. of (C - the product before quantizing) over that
                            * product's r.m.s., on a sample: information, not a verdict */
};

/* Fills x with seeded uniform values in [-1, 1). With round_to_half they are
 * rounded to binary16, so x holds exactly what a half input carries. */
void fill_random(float *x, size_t n, uint64_t *state, int round_to_half);
/* The same for FP8's inputs (a rows x cols row-major x), each block of
 * block_rows x 128 then times its own magnitude, 2^e with e uniform in
 * [-3, 3): as a model's activations and weights differ from block to block,
 * so that each block's scale differs from its neighbours' and a kernel that
 * applies the wrong one shows. */
void fill_blocks(float *x, int rows, int cols, int block_rows, uint64_t *state);
/* FP8's inputs, as the harness and the library's tests make them: A (M x K)
 * and B (N x K) in blocks of different sizes (fill_blocks) into a_raw and
 * b_raw, quantized as gemm.h's FP8 call takes them into qa and qb with
 * their scales sa and sb (fp8.h, quantize_blocks); a gets A's e4m3 values
 * as floats, b B's transposed (K x N, as the check reads B). */
void fp8_inputs(int M, int N, int K, uint64_t *state, float *a_raw, float *b_raw, uint8_t *qa, uint8_t *qb,
                float *sa, float *sb, float *a, float *b);

/* Above this many multiply-adds the CPU reference takes a sample and the
 * whole output is compared with cuBLAS instead: a full double-precision
 * reference at 4096^3 would take minutes. */
#define FULL_REFERENCE_MAX_MACS (1LL << 26)

/* The sample of an n-long side (rows of C, or columns) when the reference is
 * not computed in full. Edges: both sides of every multiple of EDGE, and the
 * first and last index. Every tile of every step, block, warp or mma tile,
 * is a multiple of EDGE wide, so every place where two tiles meet is in it.
 * Few: the first and last two and SAMPLE_RANDOM seeded random ones. The
 * check compares edge rows x few columns and few rows x edge columns: every
 * tile edge of C, in both directions, for about the cost of the old 128-wide
 * edges' full cross product. Both sorted, without repeats; idx needs room
 * for n indices (sample_edges) or SAMPLE_FEW_MAX (sample_few). Return the
 * count. */
enum { EDGE = 8, SAMPLE_RANDOM = 12, SAMPLE_FEW_MAX = 4 + SAMPLE_RANDOM };
int sample_edges(int n, int *idx);
int sample_few(int n, uint64_t seed, int *idx);

/* Per-element tolerance, see check.c for why. a_norm[i] is the 2-norm of row
 * i of A and b_norm[j] of column j of B (compute_norms fills them); for FP8
 * also each block of 128 of K's, after them: a_norm[M + b * M + i] and
 * b_norm[N + b * N + j]. norms_size says how many doubles each takes: n (M
 * for A, N for B), or n (ceil(K / 128) + 1) for FP8. */
size_t norms_size(const struct gemm_data *d, int n);
/* The tolerance's factor for sums of K products (check.c says why). */
double tolerance_factor(enum summation sum, double K);
void compute_norms(const struct gemm_data *d, double *a_norm, double *b_norm);
double tolerance(const struct gemm_data *d, const double *a_norm, const double *b_norm,
                 int i, int j);

/* The K from which this check can no longer tell a result that misses a run
 * of 8 consecutive products (one k-tile of step 04) from rounding, for the
 * inputs fill_random makes: from there the tolerance is larger than such a
 * run typically is. check.c works it out. */
long long check_power_limit(enum summation sum);

/* Counts the elements of again (a second run on the same data) whose bits
 * differ from got's into r->changed: a GEMM that adds in a fixed order gives
 * the same bits every time, and one that does not is hard to debug and to
 * trust. */
void count_changed(const struct gemm_data *d, const float *got, const float *again,
                   struct check_result *r);

/* Counts NaN/Inf anywhere in got into r->nonfinite. */
void count_nonfinite(const struct gemm_data *d, const float *got, struct check_result *r);

/* Compares got with the double-precision reference on rows x cols, with the
 * norms from compute_norms. Adds to r->ref_count and keeps the worst of
 * r->ref_worst, so several calls make one check. */
void check_reference(const struct gemm_data *d, const double *a_norm, const double *b_norm,
                     const float *got, const int *rows, int nrows, const int *cols, int ncols,
                     struct check_result *r);

/* Compares every element of got with other (cuBLAS's output on the same
 * data), with the same tolerance. Fills the blas_* fields of *r. */
void check_other(const struct gemm_data *d, const double *a_norm, const double *b_norm,
                 const float *got, const float *other, struct check_result *r);

/* pass = no NaN/Inf, the same bits in a second run, and every compared
 * element within tolerance. */
void check_verdict(struct check_result *r);

#endif
