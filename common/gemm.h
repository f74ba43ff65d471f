/*
 * The contract between every step's main.c (plain C) and its kernel.cu.
 * Every kernel.cu defines gemm_launch with C linkage, under this name.
 */
#ifndef GEMM_H
#define GEMM_H

/* The largest problem any step takes: M, N and K at most GEMM_MAX_SIDE, and
 * A, B and C at most GEMM_MAX_ELEMENTS elements each. Every kernel indexes
 * with 32-bit ints: row * ld + col stays below the element count of its
 * matrix, and a tile's rows and columns run at most a tile past M, N or K. */
#define GEMM_MAX_SIDE (1 << 30)
#define GEMM_MAX_ELEMENTS 2147483647LL

#ifdef __cplusplus
extern "C" {
#endif

/* C = alpha * A x B + beta * C, all row-major and densely packed, all device pointers:
 *   A is M x K, B is K x N, C is M x N (float).
 *   A and B hold float in steps 1-4 and IEEE-754 binary16 (half) from step 5 on.
 * Any sizes from 0 to the limits above, any alpha and beta, pointers at any
 * address their element's size divides. As BLAS does: with M or N = 0 there
 * is nothing to do, and nothing is read; with K = 0, C = beta * C; when
 * beta == 0, C is not read, so it may hold anything, NaN included.
 *
 * Queues its work on the default stream and returns without waiting for it.
 * Returns 0 (cudaSuccess), or the cudaError_t that stopped it, with C
 * untouched: cudaErrorInvalidValue for sizes out of range;
 * cudaErrorMemoryAllocation where the GPU has too little memory for a copy
 * or a workspace the call needs; else a launch's error (which may be one an
 * earlier CUDA call of this thread left unread). A fault inside a kernel
 * shows later, where the caller next waits for the stream, as in CUDA.
 *
 * A library call: it never ends the process, keeps nothing from one call to
 * the next (so several host threads may call it at once, and it works across
 * cudaDeviceReset), and a kernel of its own never waits for a block that may
 * not have started, so it finishes however many SMs other work holds. The
 * memory a call needs comes from the device's default memory pool, in
 * stream order (cudaMallocAsync), and goes back to it the same way; the call
 * raises the pool's release threshold to the pool's use, so that the pool
 * keeps that memory for the next call instead of handing it to the driver.
 *
 * The same call (the same sizes, alpha, beta and data, with A, B and C at
 * addresses of the same remainder mod 128 bytes) on the same GPU gives the
 * same bits, whatever else runs beside it. */
int gemm_launch(int M, int N, int K, float alpha, const void *A,
                const void *B, float beta, float *C);

#ifdef __cplusplus
}
#endif

#endif
