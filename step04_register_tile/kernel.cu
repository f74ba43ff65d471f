/*
 * step04_register_tile: each thread computes a TM x TN block of C from
 * registers, as outer products.
 *
 * What changed: a block computes a BM x BN tile of C, each warp a WM x WN
 * part of it, each thread TM x TN elements. For every k of a tile a thread
 * reads TM floats of A and TN of B from shared memory into registers and does
 * all TM * TN multiply-adds between them: an outer product, 64 FMAs for 16
 * floats read instead of 1 for 2. A is stored transposed (As[k][m]) so that
 * both operands are read along a row, as float4; a thread's 8 rows (and
 * columns) are two strips of 4, WM / 2 (WN / 2) apart, so that the lanes of a
 * warp read 128 consecutive bytes and shared memory serves them in one pass.
 * The second idea: 16-byte (float4) loads and stores, global and shared,
 * when K and N are multiples of 4; the launcher picks that kernel (VEC) or
 * the one with step 03's scalar, bounds-checked load_or_zero and store.
 * Tried with the scalar kernel only, at 4096^3:
 * Measured (scripts/try.sh 04 scalar, NVIDIA H200, CUDA 13.0, 2026-11-23):
 * tried 39.58 TFLOPS (77.1% of cuBLAS), as is 46.44 (90.4%).
 *
 * Why it is faster: the FMA units, not shared memory, now set the pace.
 *
 * What limits it now: the FP32 units themselves: this is about a tenth
 * behind cuBLAS SGEMM, and both stay well under the FMA ceiling (the roof
 * column of scripts/run_all.sh). The next steps change the units: tensor
 * cores.
 *
 * Launch: a 1-D grid with one block of THREADS threads per BM x BN tile of C.
 * Warps sit (BM / WM) x (BN / WN) over the tile, lanes (WM / TM) x (WN / TN)
 * over the warp tile.
 *
 * Measured: 46.28 TFLOPS, 90.4% of cuBLAS SGEMM, 4.76x step 03
 * (scripts/run_all.sh, NVIDIA H200, CUDA 13.0, 4096^3, 2026-12-02).
 */
#include "gemm.h"
#include "launch.cuh"

#include <stdint.h>

// The most elements A, B or C may hold (gemm.h): the kernel offsets them in 32-bit ints.
extern "C" const long long gemm_max_elements = GEMM_MAX_ELEMENTS_32;

constexpr int BM = 128; // rows of C per block
constexpr int BN = 128; // columns of C per block
constexpr int BK = 8;   // depth of the shared tiles
constexpr int STAGES = 2; // tiles in shared memory: one computed on, one being filled
constexpr int WM = 64;  // rows of C per warp
constexpr int WN = 32;  // columns of C per warp
constexpr int TM = 8;   // rows of C per thread
constexpr int TN = 8;   // columns of C per thread

constexpr int WARP_SIZE = 32;
constexpr int PIECE = 4; // elements per 16-byte piece: a float4

constexpr int WARPS_N = BN / WN;
constexpr int THREADS = WARP_SIZE * (BM / WM) * WARPS_N;
constexpr int LANES_N = WN / TN;                       // lanes across a warp tile
constexpr int AS_LD = BM + PIECE;                      // padded row of the transposed A tile
constexpr int A_CHUNKS = BK / PIECE, B_CHUNKS = BN / PIECE; // pieces per tile row
constexpr int A_LOADS = BM * BK / PIECE / THREADS;     // pieces of A's tile per thread
constexpr int B_LOADS = BK * BN / PIECE / THREADS;     // pieces of B's tile per thread

static_assert(BM % WM == 0 && BN % WN == 0, "warp tiles cover the block tile");
static_assert((WM / TM) * (WN / TN) == WARP_SIZE, "a warp's lanes cover its warp tile");
static_assert(TM == 2 * PIECE && TN == 2 * PIECE, "a thread's rows and columns are two strips");
static_assert(A_LOADS * PIECE * THREADS == BM * BK && B_LOADS * PIECE * THREADS == BK * BN,
              "each thread loads whole pieces of each tile");
static_assert(THREADS % A_CHUNKS == 0 && THREADS % B_CHUNKS == 0,
              "a thread's pieces of a tile sit in one column of pieces");

// Element (r, c) of the rows x cols matrix X, or 0 outside it.
__device__ float load_or_zero(const float *X, int rows, int cols, int r, int c)
{
    return r < rows && c < cols ? X[r * cols + c] : 0.0f;
}

// Four consecutive elements (r, c..c+3) of the rows x cols matrix X, zero
// outside it. VEC: one 16-byte load; needs cols % 4 == 0 and an aligned X,
// so that c..c+3 are all inside or all outside.
template <bool VEC>
__device__ float4 load4(const float *X, int rows, int cols, int r, int c)
{
    if constexpr (VEC) {
        return r < rows && c < cols ? *reinterpret_cast<const float4 *>(&X[r * cols + c])
                                    : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    } else {
        return make_float4(load_or_zero(X, rows, cols, r, c), load_or_zero(X, rows, cols, r, c + 1),
                           load_or_zero(X, rows, cols, r, c + 2), load_or_zero(X, rows, cols, r, c + 3));
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
__device__ void load_tile(float4 (&x)[LOADS], const float *X, int rows, int cols, int r0, int c0)
{
    const int r = threadIdx.x / CHUNKS, c = threadIdx.x % CHUNKS;
#pragma unroll
    for (int i = 0; i < LOADS; ++i)
        x[i] = load4<VEC>(X, rows, cols, r0 + r + i * (THREADS / CHUNKS), c0 + c * PIECE);
}

// ---- load tiles, second half: registers -> shared, A transposed
__device__ void store_tiles(float (*As)[AS_LD], float (*Bs)[BN], const float4 (&a)[A_LOADS],
                            const float4 (&b)[B_LOADS])
{
    const int ar = threadIdx.x / A_CHUNKS, ac = threadIdx.x % A_CHUNKS;
    const int br = threadIdx.x / B_CHUNKS, bc = threadIdx.x % B_CHUNKS;
#pragma unroll
    for (int i = 0; i < A_LOADS; ++i) {
        const int m = ar + i * (THREADS / A_CHUNKS), k = ac * PIECE;
        As[k + 0][m] = a[i].x;
        As[k + 1][m] = a[i].y;
        As[k + 2][m] = a[i].z;
        As[k + 3][m] = a[i].w;
    }
#pragma unroll
    for (int i = 0; i < B_LOADS; ++i)
        *reinterpret_cast<float4 *>(&Bs[br + i * (THREADS / B_CHUNKS)][bc * PIECE]) = b[i];
}

template <bool VEC>
__global__ void __launch_bounds__(THREADS, 2)
gemm_kernel(int M, int N, int K, float alpha, const float *__restrict__ A,
            const float *__restrict__ B, float beta, float *__restrict__ C)
{
    __shared__ __align__(16) float As[STAGES][BK][AS_LD];
    __shared__ __align__(16) float Bs[STAGES][BK][BN];

    // Blocks are numbered row by row over the tiles of C on a 1-D grid: a
    // 2-D grid allows only 65535 block rows, too few for a tall C.
    const int tiles_n = (N + BN - 1) / BN;
    const int m0 = blockIdx.x / tiles_n * BM, n0 = blockIdx.x % tiles_n * BN;
    const int warp = threadIdx.x / WARP_SIZE, lane = threadIdx.x % WARP_SIZE;
    const int wm = warp / WARPS_N * WM, wn = warp % WARPS_N * WN; // warp tile in the block tile
    const int tm = lane / LANES_N * PIECE, tn = lane % LANES_N * PIECE; // first strip in the warp tile
    const int tiles_k = (K + BK - 1) / BK;

    // ---- load tiles: the first one into stage 0
    float4 a_next[A_LOADS], b_next[B_LOADS];
    load_tile<VEC, A_CHUNKS>(a_next, A, M, K, m0, 0);
    load_tile<VEC, B_CHUNKS>(b_next, B, K, N, 0, n0);
    store_tiles(As[0], Bs[0], a_next, b_next);
    __syncthreads();

    // Threads past the edge of C stay: they help load tiles and must reach
    // every barrier.
    float acc[TM][TN] = {};
    for (int t = 0; t < tiles_k; ++t) {
        // ---- load tiles: global -> registers for tile t + 1, issued now so
        // the loads are in flight during the compute (past the last tile
        // they read nothing and give zeros)
        const int k0 = (t + 1) * BK;
        load_tile<VEC, A_CHUNKS>(a_next, A, M, K, m0, k0);
        load_tile<VEC, B_CHUNKS>(b_next, B, K, N, k0, n0);

        // ---- compute: one outer product per k, from registers
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            const float4 a0 = *reinterpret_cast<const float4 *>(&As[t % STAGES][k][wm + tm]);
            const float4 a1 = *reinterpret_cast<const float4 *>(&As[t % STAGES][k][wm + WM / 2 + tm]);
            const float4 b0 = *reinterpret_cast<const float4 *>(&Bs[t % STAGES][k][wn + tn]);
            const float4 b1 = *reinterpret_cast<const float4 *>(&Bs[t % STAGES][k][wn + WN / 2 + tn]);
            const float a[TM] = { a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w };
            const float b[TN] = { b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w };
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j)
                    acc[i][j] += a[i] * b[j];
        }

        // ---- load tiles: registers -> the stage of tile t + 1
        store_tiles(As[(t + 1) % STAGES], Bs[(t + 1) % STAGES], a_next, b_next);
        __syncthreads(); // tile t + 1 is complete, and nobody reads tile t any more
    }

    // ---- epilogue: alpha, beta, store (with beta == 0, C is not read)
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; j += PIECE)
            store<VEC>(C, M, N, m0 + wm + i / PIECE * (WM / 2) + tm + i % PIECE,
                       n0 + wn + j / PIECE * (WN / 2) + tn,
                       make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]), alpha, beta);
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
    kernel<<<tiles, THREADS, 0, stream>>>(M, N, K, alpha, (const float *)A, (const float *)B, beta, C);
    return cudaGetLastError();
}
