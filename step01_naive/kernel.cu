/*
 * step01_naive: one thread per element of C.
 *
 * What changed: nothing yet; this is the baseline every later step is
 * measured against. Each thread walks one row of A and one column of B in
 * global memory and keeps its running sum in a register.
 *
 * Why it is faster: it is the baseline, but it does one thing right. A
 * warp's 32 threads take 32 neighbouring columns of C, so at every k they
 * read one float of A (a broadcast) and 32 consecutive floats of B (one
 * 128-byte line): every access is coalesced.
 *
 * What limits it now: every multiply-add needs two loads, so L1, not the FMA
 * units, sets the pace (make profile STEP=01: warps wait mostly for it).
 *
 * Launch: a 1-D grid with one block of BN x BM threads per BM x BN tile of C.
 *
 * Measured: 6.11 TFLOPS, 11.9% of cuBLAS SGEMM (scripts/run_all.sh, NVIDIA
 * H200, CUDA 13.0, 4096^3, 2026-12-02).
 */
#include "gemm.h"
#include "launch.cuh"

// The most elements A, B or C may hold (gemm.h): the kernel offsets them in 32-bit ints.
extern "C" const long long gemm_max_elements = GEMM_MAX_ELEMENTS_32;

constexpr int BM = 16; // rows of C per block
constexpr int BN = 32; // columns of C per block: one warp spans them, so B and C accesses coalesce

// C(r, c) = alpha * v + beta * C(r, c), inside C only; with beta == 0, C is
// not read.
__device__ void store(float *C, int M, int N, int r, int c, float v, float alpha, float beta)
{
    if (r >= M || c >= N)
        return;
    float *p = &C[r * N + c];
    *p = beta == 0.0f ? alpha * v : alpha * v + beta * *p;
}

__global__ void __launch_bounds__(BM * BN)
gemm_kernel(int M, int N, int K, float alpha, const float *__restrict__ A,
            const float *__restrict__ B, float beta, float *__restrict__ C)
{
    // Blocks are numbered row by row over the tiles of C on a 1-D grid: a
    // 2-D grid allows only 65535 block rows, too few for a tall C.
    const int tiles_n = (N + BN - 1) / BN;
    const int row = blockIdx.x / tiles_n * BM + threadIdx.y;
    const int col = blockIdx.x % tiles_n * BN + threadIdx.x;
    if (row >= M || col >= N)
        return;

    // ---- load tiles: none; the compute loop loads single elements of A and B
    // ---- compute: one multiply-add per k, straight from global memory
    float acc = 0.0f;
    for (int k = 0; k < K; ++k)
        acc += A[row * K + k] * B[k * N + col];

    // ---- epilogue: alpha, beta, store (with beta == 0, C is not read)
    store(C, M, N, row, col, acc, alpha, beta);
}

extern "C" int gemm_launch(int M, int N, int K, float alpha, const void *A,
                           const void *B, float beta, float *C, cudaStream_t stream)
{
    if (const int done = no_product(M, N, K, alpha, beta, C, stream); done >= 0)
        return done; // an earlier error, sizes out of range, or nothing to multiply (launch.cuh)
    const int tiles = ((M + BM - 1) / BM) * ((N + BN - 1) / BN);
    gemm_kernel<<<tiles, dim3(BN, BM), 0, stream>>>(M, N, K, alpha, (const float *)A,
                                         (const float *)B, beta, C);
    return cudaGetLastError();
}
