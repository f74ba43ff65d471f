/*
 * step05_wmma: tensor cores through WMMA fragments; A and B are now half.
 *
 * What changed: the inputs are IEEE half (main.c switched them), and the
 * multiply-adds move from the FP32 units to the tensor cores. With
 * nvcuda::wmma a warp loads a 16 x 16 fragment of A and one of B from shared
 * memory and adds their product to a 16 x 16 accumulator fragment of float.
 * The structure is step 04's one level up: each warp owns a WM x WN warp
 * tile, (WM / MMA_M) x (WN / MMA_N) accumulator fragments, so each fragment
 * of A it loads is used WN / MMA_N times. Shared rows are padded by a piece
 * (16 bytes) so the 16 rows a fragment load reads fall on different banks. The
 * epilogue goes through shared memory: WMMA does not say which thread holds
 * which element. The second idea: the loop is rotated. It starts with the
 * stores of tile t + 1, loaded during the last iteration, then asks for tile
 * t + 2, so every load has a whole iteration to arrive and no warp waits on
 * one with MMAs still to issue. Tried in step 04's order (load tile t + 1,
 * compute tile t, store tile t + 1), at 4096^3:
 * Measured (scripts/try.sh 05 unrotated, NVIDIA H200, CUDA 13.0,
 * 2026-11-23): tried 257.84 TFLOPS (35.7% of cuBLAS), as is 282.78 (40.4%).
 *
 * Why it is faster: one warp-wide 16 x 16 x 16 multiply is 4096
 * multiply-adds, where one warp-wide FFMA is 32.
 *
 * What limits it now: the tensor pipe is idle half of the time; warps wait
 * for shared memory (fragment loads, and bank conflicts WMMA's layout
 * leaves) and at the barrier.
 *
 * Launch: a 1-D grid with one block of THREADS threads per BM x BN tile of C.
 * Warps sit (BM / WM) x (BN / WN) over the tile.
 *
 * Measured: 298.78 TFLOPS, 54.6% of cuBLAS GemmEx, 6.46x step 04
 * (scripts/run_all.sh, NVIDIA H200, CUDA 13.0, 4096^3, 2026-12-02).
 */
#include "gemm.h"
#include "launch.cuh"

#include <cuda_fp16.h>
#include <mma.h>
#include <stdint.h>

using namespace nvcuda;

// The most elements A, B or C may hold (gemm.h): the kernel offsets them in 32-bit ints.
extern "C" const long long gemm_max_elements = GEMM_MAX_ELEMENTS_32;

constexpr int BM = 128; // rows of C per block
constexpr int BN = 128; // columns of C per block
constexpr int BK = 32;  // depth of the shared tiles
constexpr int STAGES = 2; // tiles in shared memory: one computed on, one being filled
constexpr int WM = 64;  // rows of C per warp
constexpr int WN = 64;  // columns of C per warp
constexpr int MMA_M = 16, MMA_N = 16, MMA_K = 16; // a WMMA fragment: m16n16k16

constexpr int WARP_SIZE = 32;
constexpr int PIECE = 8; // elements per 16-byte piece: 8 halves
constexpr int C_PIECE = 4; // floats of C per 16-byte piece

constexpr int WARPS_N = BN / WN;
constexpr int THREADS = WARP_SIZE * (BM / WM) * WARPS_N;
constexpr int FM = WM / MMA_M, FN = WN / MMA_N;        // mma tiles per warp tile
constexpr int AS_LD = BK + PIECE, BS_LD = BN + PIECE;  // shared rows, padded by a piece
constexpr int CS_LD = WN + C_PIECE;                    // the epilogue's float rows
constexpr int A_CHUNKS = BK / PIECE, B_CHUNKS = BN / PIECE; // pieces per tile row
constexpr int A_LOADS = BM * BK / PIECE / THREADS;     // pieces of A's tile per thread
constexpr int B_LOADS = BK * BN / PIECE / THREADS;     // pieces of B's tile per thread

static_assert(BM % WM == 0 && BN % WN == 0, "warp tiles cover the block tile");
static_assert(WM % MMA_M == 0 && WN % MMA_N == 0 && BK % MMA_K == 0, "mma tiles cover the warp tile");
static_assert(A_LOADS * PIECE * THREADS == BM * BK && B_LOADS * PIECE * THREADS == BK * BN,
              "each thread loads whole pieces of each tile");
static_assert(THREADS % A_CHUNKS == 0 && THREADS % B_CHUNKS == 0,
              "a thread's pieces of a tile sit in one column of pieces");
static_assert(MMA_M * WN / C_PIECE % WARP_SIZE == 0, "a warp's lanes share a strip's pieces evenly");
static_assert(THREADS / WARP_SIZE * MMA_M * CS_LD * sizeof(float) <=
                  STAGES * BM * AS_LD * sizeof(__half),
              "the epilogue's strips fit in the A tiles' shared memory");

// Eight consecutive halves (r, c..c+7) of the rows x cols matrix X, zero
// outside it. VEC: one 16-byte load; needs cols % 8 == 0 and an aligned X,
// so that c..c+7 are all inside or all outside.
template <bool VEC>
__device__ uint4 load8(const __half *X, int rows, int cols, int r, int c)
{
    if constexpr (VEC) {
        return r < rows && c < cols ? *reinterpret_cast<const uint4 *>(&X[r * cols + c])
                                    : make_uint4(0, 0, 0, 0);
    } else {
        uint32_t w[4] = {};
        if (r < rows)
#pragma unroll
            for (int i = 0; i < 8; ++i)
                if (c + i < cols)
                    w[i / 2] |= (uint32_t)__half_as_ushort(X[r * cols + c + i]) << (16 * (i % 2));
        return make_uint4(w[0], w[1], w[2], w[3]);
    }
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

// The same for the W floats of v (a float4 or a float2) at C(r, c..c+W-1).
// VEC: one W-float access; needs N % W == 0 and an aligned C, so that all W
// are inside or all outside.
template <bool VEC, typename V>
__device__ void store(float *C, int M, int N, int r, int c, V v, float alpha, float beta)
{
    constexpr int W = sizeof(V) / sizeof(float);
    float *x = reinterpret_cast<float *>(&v);
    if constexpr (VEC) {
        if (r >= M || c >= N)
            return;
        V *p = reinterpret_cast<V *>(&C[r * N + c]);
#pragma unroll
        for (int i = 0; i < W; ++i)
            x[i] *= alpha;
        if (beta != 0.0f) {
            const V old = *p;
#pragma unroll
            for (int i = 0; i < W; ++i)
                x[i] += beta * reinterpret_cast<const float *>(&old)[i];
        }
        *p = v;
    } else {
        for (int i = 0; i < W; ++i)
            store(C, M, N, r, c + i, x[i], alpha, beta);
    }
}

// ---- load tiles, first half: this thread's pieces of the tile of X at
// (r0, c0), global -> registers; they sit in one column of pieces, THREADS /
// CHUNKS rows apart
template <bool VEC, int CHUNKS, int LOADS>
__device__ void load_tile(uint4 (&x)[LOADS], const __half *X, int rows, int cols, int r0, int c0)
{
    const int r = threadIdx.x / CHUNKS, c = threadIdx.x % CHUNKS;
#pragma unroll
    for (int i = 0; i < LOADS; ++i)
        x[i] = load8<VEC>(X, rows, cols, r0 + r + i * (THREADS / CHUNKS), c0 + c * PIECE);
}

// ---- load tiles, second half: registers -> shared
__device__ void store_tiles(__half (*As)[AS_LD], __half (*Bs)[BS_LD], const uint4 (&a)[A_LOADS],
                            const uint4 (&b)[B_LOADS])
{
    const int ar = threadIdx.x / A_CHUNKS, ac = threadIdx.x % A_CHUNKS;
    const int br = threadIdx.x / B_CHUNKS, bc = threadIdx.x % B_CHUNKS;
#pragma unroll
    for (int i = 0; i < A_LOADS; ++i)
        *reinterpret_cast<uint4 *>(&As[ar + i * (THREADS / A_CHUNKS)][ac * PIECE]) = a[i];
#pragma unroll
    for (int i = 0; i < B_LOADS; ++i)
        *reinterpret_cast<uint4 *>(&Bs[br + i * (THREADS / B_CHUNKS)][bc * PIECE]) = b[i];
}

template <bool VEC>
__global__ void __launch_bounds__(THREADS, 2)
gemm_kernel(int M, int N, int K, float alpha, const __half *__restrict__ A,
            const __half *__restrict__ B, float beta, float *__restrict__ C)
{
    __shared__ __align__(128) __half As[STAGES][BM][AS_LD];
    __shared__ __align__(128) __half Bs[STAGES][BK][BS_LD];

    // Blocks are numbered row by row over the tiles of C on a 1-D grid: a
    // 2-D grid allows only 65535 block rows, too few for a tall C.
    const int tiles_n = (N + BN - 1) / BN;
    const int m0 = blockIdx.x / tiles_n * BM, n0 = blockIdx.x % tiles_n * BN;
    const int warp = threadIdx.x / WARP_SIZE, lane = threadIdx.x % WARP_SIZE;
    const int wm = warp / WARPS_N * WM, wn = warp % WARPS_N * WN; // warp tile in the block tile
    const int tiles_k = (K + BK - 1) / BK;

    // ---- load tiles: the first one into stage 0, the second into registers
    uint4 a_next[A_LOADS], b_next[B_LOADS];
    load_tile<VEC, A_CHUNKS>(a_next, A, M, K, m0, 0);
    load_tile<VEC, B_CHUNKS>(b_next, B, K, N, 0, n0);
    store_tiles(As[0], Bs[0], a_next, b_next);
    load_tile<VEC, A_CHUNKS>(a_next, A, M, K, m0, BK);
    load_tile<VEC, B_CHUNKS>(b_next, B, K, N, BK, n0);
    __syncthreads();

    // Threads past the edge of C stay: they help load tiles and must reach
    // every barrier.
    wmma::fragment<wmma::accumulator, MMA_M, MMA_N, MMA_K, float> acc[FM][FN];
#pragma unroll
    for (int i = 0; i < FM; ++i)
#pragma unroll
        for (int j = 0; j < FN; ++j)
            wmma::fill_fragment(acc[i][j], 0.0f);

    for (int t = 0; t < tiles_k; ++t) {
        // ---- load tiles: registers -> the stage of tile t + 1 (free since
        // the last barrier); then tile t + 2 into registers, with the whole
        // of this tile's compute to arrive in
        store_tiles(As[(t + 1) % STAGES], Bs[(t + 1) % STAGES], a_next, b_next);
        const int k0 = (t + 2) * BK;
        load_tile<VEC, A_CHUNKS>(a_next, A, M, K, m0, k0);
        load_tile<VEC, B_CHUNKS>(b_next, B, K, N, k0, n0);

        // ---- compute: per MMA_K-deep slice, FM fragments of A times FN of B
#pragma unroll
        for (int k = 0; k < BK; k += MMA_K) {
            wmma::fragment<wmma::matrix_a, MMA_M, MMA_N, MMA_K, __half, wmma::row_major> a[FM];
#pragma unroll
            for (int i = 0; i < FM; ++i)
                wmma::load_matrix_sync(a[i], &As[t % STAGES][wm + i * MMA_M][k], AS_LD);
#pragma unroll
            for (int j = 0; j < FN; ++j) {
                wmma::fragment<wmma::matrix_b, MMA_M, MMA_N, MMA_K, __half, wmma::row_major> b;
                wmma::load_matrix_sync(b, &Bs[t % STAGES][k][wn + j * MMA_N], BS_LD);
#pragma unroll
                for (int i = 0; i < FM; ++i)
                    wmma::mma_sync(acc[i][j], a[i], b, acc[i][j]);
            }
        }

        __syncthreads(); // tile t + 1 is complete, and nobody reads tile t any more
    }

    // ---- epilogue: alpha, beta, store (with beta == 0, C is not read), a
    // float4 per lane and row, through each warp's own MMA_M x WN strip of
    // shared memory (the A tiles are free after the last barrier)
    float (*Cs)[CS_LD] = reinterpret_cast<float (*)[CS_LD]>(&As[0][0][0]) + warp * MMA_M;
#pragma unroll
    for (int i = 0; i < FM; ++i) {
#pragma unroll
        for (int j = 0; j < FN; ++j)
            wmma::store_matrix_sync(&Cs[0][j * MMA_N], acc[i][j], CS_LD, wmma::mem_row_major);
        __syncwarp();
#pragma unroll
        for (int q = 0; q < MMA_M * WN / C_PIECE / WARP_SIZE; ++q) {
            const int e = lane + q * WARP_SIZE;
            const int r = e / (WN / C_PIECE), c = e % (WN / C_PIECE) * C_PIECE;
            const float4 v = *reinterpret_cast<const float4 *>(&Cs[r][c]);
            store<VEC>(C, M, N, m0 + wm + i * MMA_M + r, n0 + wn + c, v, alpha, beta);
        }
        __syncwarp(); // the strip is read before the next fragments overwrite it
    }
}

extern "C" int gemm_launch(int M, int N, int K, float alpha, const void *A,
                           const void *B, float beta, float *C, cudaStream_t stream)
{
    if (const int done = no_product(M, N, K, alpha, beta, C, stream); done >= 0)
        return done; // an earlier error, sizes out of range, or nothing to multiply (launch.cuh)
    const int tiles = ((M + BM - 1) / BM) * ((N + BN - 1) / BN);
    // 16-byte accesses need every row of A, B and C to start 16-byte aligned.
    const bool vec = K % PIECE == 0 && N % PIECE == 0 &&
                     ((uintptr_t)A | (uintptr_t)B | (uintptr_t)C) % 16 == 0;
    const auto kernel = vec ? gemm_kernel<true> : gemm_kernel<false>;
    kernel<<<tiles, THREADS, 0, stream>>>(M, N, K, alpha, (const __half *)A, (const __half *)B, beta, C);
    return cudaGetLastError();
}
