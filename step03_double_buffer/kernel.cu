/*
 * step03_double_buffer: two tiles in shared memory, one barrier per tile.
 *
 * What changed: shared memory holds STAGES = 2 tiles of each operand, a ring
 * indexed by t % STAGES. While the block computes on tile t, each thread's
 * elements of tile t + 1 are on their way from global memory into registers;
 * after its multiply-adds it stores them into the other stage, which is free:
 * its last readers finished before the barrier that ended tile t - 1.
 *
 * Why it is faster: one barrier per tile instead of two, and the global loads
 * of the next tile overlap the compute on this one instead of stalling.
 *
 * What limits it now: every multiply-add still reads two floats from shared
 * memory, and the shared-memory pipe is nearly always busy: hiding latency
 * cannot fix that; step 04 reads less.
 *
 * Launch: a 1-D grid with one block of BN x BM threads per BM x BN tile of C.
 *
 * Measured: 9.73 TFLOPS, 19.0% of cuBLAS SGEMM, 1.16x step 02
 * (scripts/run_all.sh, NVIDIA H200, CUDA 13.0, 4096^3, 2026-12-02).
 */
#include "gemm.h"
#include "launch.cuh"

// The most elements A, B or C may hold (gemm.h): the kernel offsets them in 32-bit ints.
extern "C" const long long gemm_max_elements = GEMM_MAX_ELEMENTS_32;

constexpr int BM = 32; // rows of C per block
constexpr int BN = 32; // columns of C per block: one warp spans them, so B and C accesses coalesce
constexpr int BK = 32; // depth of the shared tiles
constexpr int STAGES = 2; // tiles in shared memory: one computed on, one being filled
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
    __shared__ float As[STAGES][BM][BK];
    __shared__ float Bs[STAGES][BK][BN];

    // Blocks are numbered row by row over the tiles of C on a 1-D grid: a
    // 2-D grid allows only 65535 block rows, too few for a tall C.
    const int tiles_n = (N + BN - 1) / BN;
    const int m0 = blockIdx.x / tiles_n * BM, n0 = blockIdx.x % tiles_n * BN;
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = m0 + ty, col = n0 + tx;
    const int tiles_k = (K + BK - 1) / BK;

    // ---- load tiles: the first one into stage 0
    As[0][ty][tx] = load_or_zero(A, M, K, row, tx);
    Bs[0][ty][tx] = load_or_zero(B, K, N, ty, col);
    __syncthreads();

    // Threads past the edge of C stay: they help load tiles and must reach
    // every barrier.
    float acc = 0.0f;
    for (int t = 0; t < tiles_k; ++t) {
        // ---- load tiles: global -> registers for tile t + 1, issued now so
        // the loads are in flight during the compute (past the last tile
        // they read nothing and give zeros)
        const int k0 = (t + 1) * BK;
        const float a_next = load_or_zero(A, M, K, row, k0 + tx);
        const float b_next = load_or_zero(B, K, N, k0 + ty, col);

        // ---- compute: BK multiply-adds from tile t's stage
        for (int k = 0; k < BK; ++k)
            acc += As[t % STAGES][ty][k] * Bs[t % STAGES][k][tx];

        // ---- load tiles: registers -> the stage of tile t + 1
        As[(t + 1) % STAGES][ty][tx] = a_next;
        Bs[(t + 1) % STAGES][ty][tx] = b_next;
        __syncthreads(); // tile t + 1 is complete, and nobody reads tile t any more
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
