/*
 * step06_mma_ptx: the instructions under WMMA, ldmatrix and mma.sync, in
 * inline PTX, and a swizzled shared-memory layout.
 *
 * What changed: `ldmatrix.x4` loads four 8 x 8 matrices of halves, each lane
 * giving the address of one 16-byte row, into the registers the tensor cores
 * want; `mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32` adds a 16 x 16
 * piece of A times a 16 x 8 piece of B to 16 x 8 floats. Their layouts are
 * documented, with lane = 4 g + t:
 *
 *   A 16 x 16: a0 (row g,   k 0..7)  a2 (row g,   k 8..15)   B 16 x 8: b0 (k 0..7)
 *              a1 (row g+8, k 0..7)  a3 (row g+8, k 8..15)             b1 (k 8..15)
 *   C 16 x 8:  c0, c1 (row g, columns 2t, 2t+1); c2, c3 (row g+8, the same)
 *
 * so the epilogue works on the accumulators directly. B sits in shared
 * memory as K x N rows and is loaded with ldmatrix.trans. The padding gives
 * way to a swizzle: piece c of row r is stored at c XOR (r mod 8), so the 8
 * rows an ldmatrix reads lie in 8 different bank columns. The second idea: a
 * 16-byte load outside A or B reads a global block of zeros instead of
 * being skipped, so no register is cleared first. Tried with a cleared
 * register instead, at 4096^3:
 * Measured (scripts/try.sh 06 registers, NVIDIA H200, CUDA 13.0,
 * 2026-11-23): tried 280.24 TFLOPS (40.0% of cuBLAS), as is 291.96 (42.6%).
 *
 * Why it is faster: no bank conflicts, and no trip through shared memory in
 * the epilogue.
 *
 * What limits it now: a warp has nothing to do while its fragments load,
 * and a block stalls at every tile's barrier with one tile in flight.
 *
 * Launch: a 1-D grid with one block of THREADS threads per BM x BN tile of C.
 * Warps sit (BM / WM) x (BN / WN) over the tile.
 *
 * Measured: 309.36 TFLOPS, 55.7% of cuBLAS GemmEx, 1.04x step 05
 * (scripts/run_all.sh, NVIDIA H200, CUDA 13.0, 4096^3, 2026-12-02).
 */
#include "gemm.h"
#include "launch.cuh"

#include <cuda_fp16.h>
#include <stdint.h>

// The most elements A, B or C may hold (gemm.h): the kernel offsets them in 32-bit ints.
extern "C" const long long gemm_max_elements = GEMM_MAX_ELEMENTS_32;

constexpr int BM = 128; // rows of C per block
constexpr int BN = 128; // columns of C per block
constexpr int BK = 32;  // depth of the shared tiles
constexpr int STAGES = 2; // tiles in shared memory: one computed on, one being filled
constexpr int WM = 64;  // rows of C per warp
constexpr int WN = 64;  // columns of C per warp
constexpr int MMA_M = 16, MMA_N = 8, MMA_K = 16; // mma.sync.m16n8k16

constexpr int WARP_SIZE = 32;
constexpr int PIECE = 8; // elements per 16-byte piece: 8 halves
constexpr int LINE_PIECES = 8; // pieces per 128-byte line of shared-memory banks
constexpr int QUAD = 4; // lanes that share a row of an mma fragment

constexpr int WARPS_N = BN / WN;
constexpr int THREADS = WARP_SIZE * (BM / WM) * WARPS_N;
constexpr int FM = WM / MMA_M, FN = WN / MMA_N;        // mma tiles per warp tile
constexpr int A_CHUNKS = BK / PIECE, B_CHUNKS = BN / PIECE; // pieces per tile row
constexpr int A_LOADS = BM * BK / PIECE / THREADS;     // pieces of A's tile per thread
constexpr int B_LOADS = BK * BN / PIECE / THREADS;     // pieces of B's tile per thread

static_assert(BM % WM == 0 && BN % WN == 0, "warp tiles cover the block tile");
static_assert(WM % MMA_M == 0 && WN % (2 * MMA_N) == 0 && BK % MMA_K == 0,
              "mma tiles cover the warp tile; B's are loaded in pairs");
static_assert(A_LOADS * PIECE * THREADS == BM * BK && B_LOADS * PIECE * THREADS == BK * BN,
              "each thread loads whole pieces of each tile");
static_assert(THREADS % A_CHUNKS == 0 && THREADS % B_CHUNKS == 0,
              "a thread's pieces of a tile sit in one column of pieces");
static_assert((A_CHUNKS & (A_CHUNKS - 1)) == 0 && (B_CHUNKS & (B_CHUNKS - 1)) == 0,
              "the swizzle's XOR keeps a piece inside its row: pieces per row are a power of 2");

// Where, in halves, piece c of row r goes, in a tile of CHUNKS pieces per row:
// c XOR the number of the row's 128-byte line of banks (rows shorter than a
// line share one), so the 8 rows an ldmatrix reads lie in 8 bank columns.
template <int CHUNKS>
__device__ int swizzle(int r, int c)
{
    constexpr int ROWS_PER_LINE = CHUNKS >= LINE_PIECES ? 1 : LINE_PIECES / CHUNKS;
    constexpr int COLUMNS = CHUNKS >= LINE_PIECES ? LINE_PIECES : CHUNKS; // the XOR stays inside the row
    return (r * CHUNKS + (c ^ (r / ROWS_PER_LINE % COLUMNS))) * PIECE;
}

// Four 8 x 8 matrices of halves from shared memory; lane l gives the address
// of one row of matrix l / 8. TRANS hands them out transposed.
template <bool TRANS>
__device__ void ldmatrix_x4(uint32_t (&r)[4], const __half *p)
{
    const uint32_t addr = (uint32_t)__cvta_generic_to_shared(p);
    if constexpr (TRANS)
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
    else
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}

// d += a * b on the tensor cores: A 16 x 16, B 16 x 8, D 16 x 8 float.
__device__ void mma_16x8x16(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2])
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// Sixteen zero bytes in global memory, for the 16-byte loads outside a matrix.
__device__ const uint4 zeros = {};

// Eight consecutive halves (r, c..c+7) of the rows x cols matrix X, zero
// outside it. VEC: one 16-byte load, from zeros outside X, so that no register
// is cleared first (a clear waits for the store of the tile before); needs
// cols % 8 == 0 and an aligned X, so that c..c+7 are all inside or all outside.
template <bool VEC>
__device__ uint4 load8(const __half *X, int rows, int cols, int r, int c)
{
    if constexpr (VEC) {
        return *(r < rows && c < cols ? reinterpret_cast<const uint4 *>(&X[r * cols + c]) : &zeros);
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

// ---- load tiles, second half: registers -> shared, swizzled
__device__ void store_tiles(__half *As, __half *Bs, const uint4 (&a)[A_LOADS],
                            const uint4 (&b)[B_LOADS])
{
    const int ar = threadIdx.x / A_CHUNKS, ac = threadIdx.x % A_CHUNKS;
    const int br = threadIdx.x / B_CHUNKS, bc = threadIdx.x % B_CHUNKS;
#pragma unroll
    for (int i = 0; i < A_LOADS; ++i)
        *reinterpret_cast<uint4 *>(&As[swizzle<A_CHUNKS>(ar + i * (THREADS / A_CHUNKS), ac)]) = a[i];
#pragma unroll
    for (int i = 0; i < B_LOADS; ++i)
        *reinterpret_cast<uint4 *>(&Bs[swizzle<B_CHUNKS>(br + i * (THREADS / B_CHUNKS), bc)]) = b[i];
}

// The fragments of the warp tile at (wm, wn) for the MMA_K-deep slice at k:
// lane l points ldmatrix at row l % 16 and piece l / 16 of each 16 x 16
// piece of A (MMA_M x MMA_K) and of B (MMA_K x 2 MMA_N).
__device__ void load_fragments(uint32_t (&a)[FM][4], uint32_t (&b)[FN][2], const __half *As,
                               const __half *Bs, int wm, int wn, int k)
{
    const int lane = threadIdx.x % WARP_SIZE;
#pragma unroll
    for (int i = 0; i < FM; ++i)
        ldmatrix_x4<false>(a[i], &As[swizzle<A_CHUNKS>(wm + i * MMA_M + lane % MMA_M, k / PIECE + lane / MMA_M)]);
#pragma unroll
    for (int j = 0; j < FN; j += 2) {
        uint32_t r[4]; // k 0..7 and 8..15 of mma tile j, then of tile j + 1
        ldmatrix_x4<true>(r, &Bs[swizzle<B_CHUNKS>(k + lane % MMA_K, (wn + j * MMA_N) / PIECE + lane / MMA_K)]);
        b[j][0] = r[0];
        b[j][1] = r[1];
        b[j + 1][0] = r[2];
        b[j + 1][1] = r[3];
    }
}

template <bool VEC>
__global__ void __launch_bounds__(THREADS, 2)
gemm_kernel(int M, int N, int K, float alpha, const __half *__restrict__ A,
            const __half *__restrict__ B, float beta, float *__restrict__ C)
{
    __shared__ __align__(128) __half As[STAGES][BM * BK];
    __shared__ __align__(128) __half Bs[STAGES][BK * BN];

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
    float acc[FM][FN][4] = {};
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
            uint32_t a[FM][4], b[FN][2];
            load_fragments(a, b, As[t % STAGES], Bs[t % STAGES], wm, wn, k);
#pragma unroll
            for (int i = 0; i < FM; ++i)
#pragma unroll
                for (int j = 0; j < FN; ++j)
                    mma_16x8x16(acc[i][j], a[i], b[j]);
        }

        __syncthreads(); // tile t + 1 is complete, and nobody reads tile t any more
    }

    // ---- epilogue: alpha, beta, store (with beta == 0, C is not read),
    // straight from the accumulators: rows g and g + MMA_M / 2 of each mma
    // tile, two neighbouring floats per row
    const int g = lane / QUAD, tc = lane % QUAD * 2;
#pragma unroll
    for (int i = 0; i < FM; ++i)
#pragma unroll
        for (int j = 0; j < FN; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h)
                store<VEC>(C, M, N, m0 + wm + i * MMA_M + h * (MMA_M / 2) + g, n0 + wn + j * MMA_N + tc,
                           make_float2(acc[i][j][2 * h], acc[i][j][2 * h + 1]), alpha, beta);
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
