/*
 * The contract between every step's main.c (plain C) and its kernel.cu.
 * Every kernel.cu defines gemm_launch with C linkage, under this name.
 */
#ifndef GEMM_H
#define GEMM_H

#ifdef __cplusplus
extern "C" {
#endif

/* C = alpha * A x B + beta * C, all row-major and densely packed, all device pointers:
 *   A is M x K, B is K x N, C is M x N (float).
 *   A and B hold float in steps 1-4 and IEEE-754 binary16 (half) from step 5 on.
 * Any M, N, K >= 1 must give the right answer. When beta == 0, C is not read
 * (the BLAS convention), so C may hold anything, NaN included.
 * Launches asynchronously on the default stream; the caller checks errors. */
void gemm_launch(int M, int N, int K, float alpha, const void *A,
                 const void *B, float beta, float *C);

#ifdef __cplusplus
}
#endif

#endif
