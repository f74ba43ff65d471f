/*
 * What every step's gemm_launch does before its product (gemm.h): it refuses
 * sizes out of range, and does itself what BLAS does where there is nothing
 * to multiply. The same in every step, so it lives here.
 */
#ifndef LAUNCH_CUH
#define LAUNCH_CUH

#include "gemm.h"
#include "timeline.cuh"

#include <cuda_runtime.h>

constexpr int SCALE_THREADS = 256, SCALE_BLOCKS_MOST = 65536;

// C = beta * C over its n elements, C not read when beta == 0: the product of
// an M x 0 and a 0 x N matrix.
__global__ void scale_kernel(float *C, long long n, float beta)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        C[i] = beta == 0.0f ? 0.0f : beta * C[i];
}

// gemm_launch's answer where it has no product to compute: an error for sizes
// out of range, success for M or N = 0, and success once C = beta * C is
// queued for K = 0. -1 where there is a product to compute.
static int no_product(int M, int N, int K, float beta, float *C)
{
    if (M < 0 || N < 0 || K < 0 || M > GEMM_MAX_SIDE || N > GEMM_MAX_SIDE || K > GEMM_MAX_SIDE ||
        (long long)M * K > GEMM_MAX_ELEMENTS || (long long)K * N > GEMM_MAX_ELEMENTS ||
        (long long)M * N > GEMM_MAX_ELEMENTS)
        return cudaErrorInvalidValue;
    if (M == 0 || N == 0)
        return cudaSuccess;
    if (K > 0)
        return -1;
    const long long n = (long long)M * N, blocks = (n + SCALE_THREADS - 1) / SCALE_THREADS;
    scale_kernel<<<(unsigned)(blocks < SCALE_BLOCKS_MOST ? blocks : SCALE_BLOCKS_MOST), SCALE_THREADS>>>(C, n, beta);
    return cudaGetLastError();
}

#endif
