/*
 * The contract between every step's main.c (plain C) and its kernel.cu.
 * Every kernel.cu defines gemm_launch with C linkage, under this name.
 */
#ifndef GEMM_H
#define GEMM_H

#include <cuda_runtime_api.h> /* cudaStream_t */

/* The largest problem a step takes: M, N and K at most GEMM_MAX_SIDE, and
 * A, B and C at most gemm_max_elements elements each, which each step's
 * kernel.cu sets (below). Through step 08 the kernels offset a matrix with
 * 32-bit ints, row * ld + col: GEMM_MAX_ELEMENTS_32. From step 09, TMA reads
 * A and B by their coordinates and the epilogue offsets C in 64 bits:
 * GEMM_MAX_ELEMENTS_64 (256 GiB of float C). In both, a tile's rows and
 * columns run at most a tile past M, N or K, and a grid has fewer than 2^31
 * tiles. */
#define GEMM_MAX_SIDE (1 << 30)
#define GEMM_MAX_ELEMENTS_32 2147483647LL
#define GEMM_MAX_ELEMENTS_64 (1LL << 36)

#ifdef __cplusplus
extern "C" {
#endif

/* C = alpha * A x B + beta * C, all row-major and densely packed, all device pointers:
 *   A is M x K, B is K x N, C is M x N (float).
 *   A and B hold float in steps 1-4 and IEEE-754 binary16 (half) from step 5 on
 *   (step 16 takes FP8 with scales instead: gemm_fp8_launch, below).
 * Any sizes from 0 to the limits above, any alpha and beta, pointers at any
 * address their element's size divides. As BLAS does: with M or N = 0 there
 * is nothing to do, and nothing is read; with K = 0 or alpha = 0, C = beta *
 * C, and A and B are not read (so NaN in them does not reach C); when beta
 * == 0, C is not read, so it may hold anything, NaN included.
 *
 * Queues all its work (copies, kernels, memory) on `stream`, and on no other,
 * and returns without waiting for it: the caller orders it after the work
 * that writes A, B and C, and may capture it into a CUDA graph. Stream 0 is
 * the default stream, as everywhere in CUDA.
 *
 * Returns 0 (cudaSuccess), or the cudaError_t that stopped it, with C
 * untouched: an error an earlier CUDA call of this thread left unread (it is
 * returned, and nothing is done); cudaErrorInvalidValue for sizes out of
 * range; cudaErrorMemoryAllocation where the GPU has too little memory for a
 * copy or a workspace the call needs; else a launch's error. A fault inside a
 * kernel shows later, where the caller next waits for the stream, as in CUDA.
 *
 * A library call: it never ends the process, and keeps nothing from one call
 * to the next that another call could see, so several host threads may call
 * it at once, on one stream or several, and it works across
 * cudaDeviceReset. What it looks up once per device and CUDA context (driver
 * entry points, kernel attributes, how many blocks fit) never changes while
 * the context lives. A kernel of its own never waits for a block that may
 * not have started, so it finishes however many SMs other work holds. The
 * memory a call needs comes from a memory pool of the library's own, one per
 * device and context, in stream order, and goes back to it the same way,
 * after the kernels that use it; the device's default pool and its settings
 * are the program's, never touched.
 *
 * The same call (the same sizes, alpha, beta and data, with A, B and C at
 * addresses of the same remainder mod 128 bytes) gives the same bits on the
 * same GPU with the same number of SMs and of clusters that fit at once,
 * whatever else runs beside it: the launch plan of steps 11 and up depends on
 * those counts, which MPS or a partitioned GPU can change. */
/* The most elements A, B or C may hold in this step's gemm_launch. */
extern const long long gemm_max_elements;

int gemm_launch(int M, int N, int K, float alpha, const void *A,
                const void *B, float beta, float *C, cudaStream_t stream);

/* The FP8 step's call (step 16), instead of gemm_launch: A and B in FP8
 * e4m3 (OCP E4M3FN: 3 mantissa bits, largest finite 448), each run of 128
 * along K with a float scale:
 *
 *   C = alpha * sum over k-blocks b of
 *           (sa[b][m] * sb[n / 128][b] * sum over k in b of A[m][k] B[n][k])
 *       + beta * C
 *
 *   A is M x K, row-major, with one scale per row and k-block of 128:
 *     sa, ceil(K / 128) x M floats, sa[b * M + m] (a k-block's M scales together);
 *   B is N x K, row-major (each column of C's K weights together, K-major as
 *     FP8's tensor cores read both operands), with one scale per 128 x 128
 *     block: sb, ceil(N / 128) x ceil(K / 128) floats, sb[(n / 128) * KB + b];
 *   C is M x N float, row-major, as in gemm_launch.
 *
 * These are DeepSeek-V3's scales: A (activations) in 1 x 128 runs, B
 * (weights) in 128 x 128 blocks, stored as DeepGEMM and cuBLASLt
 * (CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F, ..._BLK128x128_32F) read them.
 * Where K or N is not a multiple of 128, the last block is the part left,
 * scaled by its own scale as a whole block is. Any M, N and K from 0 to the
 * limits above; A, B, sa, sb and C at addresses their element's size divides.
 * Everything else as gemm_launch: BLAS's rules for M, N, K = 0, alpha = 0
 * and beta = 0 (sa and sb not read where A and B are not), the stream, the
 * errors, the library's rules and the same bits for the same call. */
int gemm_fp8_launch(int M, int N, int K, float alpha, const void *A, const float *sa,
                    const void *B, const float *sb, float beta, float *C, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
