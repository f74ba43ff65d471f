/*
 * step02_shared: square tiles of A and B staged in shared memory.
 *
 * What changed: the block works through K one BK-wide slice at a time. For
 * each slice every thread copies one element of A's tile and one of B's into
 * shared memory, the block waits at a barrier, and every thread runs its BK
 * multiply-adds out of shared memory. Tiles are zero-filled past the edges
 * of A and B, so the compute loop needs no bounds checks.
 *
 * Why it is faster: a block fetches each float of its tiles from the memory
 * system once and reuses it BN (or BM) times from shared memory, next to the
 * cores. As[ty][k] is one address for the whole warp (a broadcast) and
 * Bs[k][tx] is 32 consecutive floats (one per bank): no bank conflicts.
 *
 * What limits it now: each multiply-add still needs two loads, from shared
 * memory now, and the block stops at two barriers per tile.
 *
 * Launch: a 1-D grid with one block of BN x BM threads per BM x BN tile of C.
 *
 * Measured: 8.39 TFLOPS, 16.4% of cuBLAS SGEMM, 1.37x step 01
 * (scripts/run_all.sh, NVIDIA H200, CUDA 13.0, 4096^3, 2026-12-02).
 */
#include "gemm.h"
#include "launch.cuh"

// The most elements A, B or C may hold (gemm.h): the kernel offsets them in 32-bit ints.
extern "C" const long long gemm_max_elements = GEMM_MAX_ELEMENTS_32;

constexpr int BM = 32; // rows of C per block
constexpr int BN = 32; // columns of C per block: one warp spans them, so B and C accesses coalesce
constexpr int BK = 32; // depth of the shared tiles
static_assert(BM == BK && BN == BK, "square tiles: each thread copies one element of each");

// Element (r, c) of the rows x cols matrix X, or 0 outside it.
__device__ float load_or_zero(const float *X, int rows, int cols, int r, int c)
{
    return r < rows && c < cols ? X[r * cols + c] : 0.0f;
}

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
    __shared__ float As[BM][BK];
    __shared__ float Bs[BK][BN];

    // Blocks are numbered row by row over the tiles of C on a 1-D grid: a
    // 2-D grid allows only 65535 block rows, too few for a tall C.
    const int tiles_n = (N + BN - 1) / BN;
    const int m0 = blockIdx.x / tiles_n * BM, n0 = blockIdx.x % tiles_n * BN;
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = m0 + ty, col = n0 + tx;

    // Threads past the edge of C stay: they help load tiles and must reach
    // every barrier.
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += BK) {
        // ---- load tiles: global -> shared, one element of each per thread
        As[ty][tx] = load_or_zero(A, M, K, row, k0 + tx);
        Bs[ty][tx] = load_or_zero(B, K, N, k0 + ty, col);
        __syncthreads(); // the tiles are complete

        // ---- compute: BK multiply-adds from shared memory
        for (int k = 0; k < BK; ++k)
            acc += As[ty][k] * Bs[k][tx];
        __syncthreads(); // everyone is done before the next load overwrites the tiles
    }

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
