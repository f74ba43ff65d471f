/*
 * step07_pipeline: a multi-stage cp.async pipeline, and the next fragments
 * loaded while the current ones multiply.
 *
 * What changed: `cp.async` copies 16 bytes from global straight into shared
 * memory, no registers involved, while the thread goes on. Shared memory
 * holds STAGES = 5 tiles (4 where a block cannot have 120 KB). Each thread
 * closes its copies of a tile with `cp.async.commit_group`; at the top of
 * each iteration `cp.async.wait_group STAGES - 3` and a barrier make sure
 * tile t + 1 has landed:
 *
 *   k-tile:  t         t+1       t+2        t+3        t+4 (copies issued now,
 *   stage:   t % 5     (t+1)%5   (t+2)%5    (t+3)%5    into the stage t-1 left)
 *            computing landed    in flight  in flight
 *
 * The copies are spread over the slices, after each slice's fragment loads,
 * so their address arithmetic fills the gaps between mma.sync. Three more
 * ideas ride along, each tried without:
 * - fragments double-buffered: the next slice's ldmatrix are issued before
 *   this slice's mma.sync. Tried with each slice's loaded just before its
 *   mma.sync, at 4096^3:
 *   Measured (scripts/try.sh 07 frags, NVIDIA H200, CUDA 13.0, 2026-11-23):
 *   tried 313.44 TFLOPS (44.4% of cuBLAS), as is 392.29 (59.5%).
 * - a 256 x 128 block tile, one block per SM: no registers are spent on
 *   staging, so a block can be twice step 06's. Tried with step 06's
 *   128 x 128, at 8192^3:
 *   Measured (scripts/try.sh 07 tile, NVIDIA H200, CUDA 13.0, 2026-11-23):
 *   tried 379.33 TFLOPS (57.6% of cuBLAS), as is 414.85 (60.0%).
 * - blocks numbered down columns of GROUP_M tile rows, so the blocks in
 *   flight share more of A and B in L2. Tried row by row, at 8192^3:
 *   Measured (scripts/try.sh 07 group, NVIDIA H200, CUDA 13.0, 2026-11-23):
 *   tried 397.38 TFLOPS (59.6% of cuBLAS), as is 406.97 (59.7%).
 *
 * Why it is faster: several tiles in flight hide global memory, and the
 * next fragments hide ldmatrix, so the tensor pipe is busy most of the time.
 *
 * What limits it now: mma.sync itself. cuBLAS reaches its speed with
 * Hopper's warpgroup instructions (wgmma, step 08).
 *
 * Launch: a 1-D grid with one block of THREADS threads per BM x BN tile of C,
 * STAGES * STAGE_BYTES of dynamic shared memory. Warps sit (BM / WM) x
 * (BN / WN) over the tile.
 *
 * Measured: 409.01 TFLOPS, 75.9% of cuBLAS GemmEx, 1.32x step 06
 * (scripts/run_all.sh, NVIDIA H200, CUDA 13.0, 4096^3, 2026-12-02).
 */
#include "gemm.h"
#include "launch.cuh"

#include <cuda_fp16.h>
#include <stdint.h>

// The most elements A, B or C may hold (gemm.h): the kernel offsets them in 32-bit ints.
extern "C" const long long gemm_max_elements = GEMM_MAX_ELEMENTS_32;

constexpr int BM = 256; // rows of C per block
constexpr int BN = 128; // columns of C per block
constexpr int BK = 32;  // depth of the shared tiles
// tiles in shared memory: gemm_launch picks STAGES = 5, or 4 where a block
// cannot have the shared memory for 5
constexpr int STAGES_MOST = 5, STAGES_FEWER = 4;
constexpr int WM = 64;  // rows of C per warp
constexpr int WN = 64;  // columns of C per warp
constexpr int GROUP_M = 8; // tile rows in one group of the block order
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
constexpr int KSLICES = BK / MMA_K;                    // fragment loads per k-tile
constexpr int STAGE_BYTES = (BM * BK + BK * BN) * (int)sizeof(__half); // a tile of A and one of B

static_assert(BM % WM == 0 && BN % WN == 0, "warp tiles cover the block tile");
static_assert(WM % MMA_M == 0 && WN % (2 * MMA_N) == 0 && BK % MMA_K == 0,
              "mma tiles cover the warp tile; B's are loaded in pairs");
static_assert(A_LOADS * PIECE * THREADS == BM * BK && B_LOADS * PIECE * THREADS == BK * BN,
              "each thread loads whole pieces of each tile");
static_assert(THREADS % A_CHUNKS == 0 && THREADS % B_CHUNKS == 0,
              "a thread's pieces of a tile sit in one column of pieces");
static_assert((A_CHUNKS & (A_CHUNKS - 1)) == 0 && (B_CHUNKS & (B_CHUNKS - 1)) == 0,
              "the swizzle's XOR keeps a piece inside its row: pieces per row are a power of 2");
static_assert(KSLICES % 2 == 0, "slices alternate between the fragment buffers across tiles");

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

// Copies 16 bytes from global to shared memory in the background. With
// src_bytes == 0 it reads nothing and writes 16 zero bytes.
__device__ void cp_async16(__half *dst, const __half *src, int src_bytes)
{
    const uint32_t addr = (uint32_t)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n"
                 :
                 : "r"(addr), "l"(__cvta_generic_to_global(src)), "r"(src_bytes));
}

// Closes this thread's copies issued since the last commit into a group.
__device__ void cp_async_commit()
{
    asm volatile("cp.async.commit_group;\n");
}

// Waits until at most PENDING of this thread's groups are still in flight.
template <int PENDING>
__device__ void cp_async_wait()
{
    asm volatile("cp.async.wait_group %0;\n" : : "n"(PENDING) : "memory");
}

// Eight consecutive halves (r, c..c+7) of the rows x cols matrix X, zero
// outside it, into the shared piece dst. VEC: one cp.async, which outside X
// reads nothing, from X + 0 (choosing the offset costs fewer registers than
// choosing a pointer); needs cols % 8 == 0 and an aligned X, so that c..c+7
// are all inside or all outside.
template <bool VEC>
__device__ void copy8(__half *dst, const __half *X, int rows, int cols, int r, int c)
{
    if constexpr (VEC) {
        const bool inside = r < rows && c < cols;
        cp_async16(dst, X + (inside ? (unsigned)(r * cols + c) : 0u), inside ? (int)sizeof(uint4) : 0);
    } else {
        uint32_t w[4] = {};
        if (r < rows)
#pragma unroll
            for (int i = 0; i < 8; ++i)
                if (c + i < cols)
                    w[i / 2] |= (uint32_t)__half_as_ushort(X[r * cols + c + i]) << (16 * (i % 2));
        *reinterpret_cast<uint4 *>(dst) = make_uint4(w[0], w[1], w[2], w[3]);
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

// ---- load tiles: this thread's pieces of the tile of X at (r0, c0), global
// -> shared, swizzled; they sit in one column of pieces, THREADS / CHUNKS rows
// apart. (The row is r0 + ri: as r0 + r + i * ..., the same sum, ptxas
// schedules the loop differently, and it measured 1-6% slower.)
template <bool VEC, int CHUNKS, int LOADS>
__device__ void load_tile(__half *Xs, const __half *X, int rows, int cols, int r0, int c0)
{
    const int r = threadIdx.x / CHUNKS, c = threadIdx.x % CHUNKS;
#pragma unroll
    for (int i = 0; i < LOADS; ++i) {
        const int ri = r + i * (THREADS / CHUNKS);
        copy8<VEC>(&Xs[swizzle<CHUNKS>(ri, c)], X, rows, cols, r0 + ri, c0 + c * PIECE);
    }
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

// The top-left element of tile number `tile` of C. A row of the numbering
// is GROUP_M tile rows, numbered down its columns, so that the tiles in
// flight share more of A and B in L2 (the last row may have fewer).
__device__ void tile_origin(int tile, int tiles_m, int tiles_n, int &m0, int &n0)
{
    const int first_row = tile / (GROUP_M * tiles_n) * GROUP_M;
    const int group_rows = min(tiles_m - first_row, GROUP_M);
    const int in_group = tile % (GROUP_M * tiles_n);
    m0 = (first_row + in_group % group_rows) * BM;
    n0 = in_group / group_rows * BN;
}

template <bool VEC, int STAGES>
__global__ void __launch_bounds__(THREADS, 1)
gemm_kernel(int M, int N, int K, float alpha, const __half *__restrict__ A,
            const __half *__restrict__ B, float beta, float *__restrict__ C)
{
    static_assert(STAGES >= 3, "tile t computing, tile t + 1 landed, at least one in flight");
    extern __shared__ __align__(128) unsigned char smem[];
    __half (*As)[BM * BK] = reinterpret_cast<__half (*)[BM * BK]>(smem);
    __half (*Bs)[BK * BN] = reinterpret_cast<__half (*)[BK * BN]>(smem + STAGES * sizeof *As);

    // Blocks are numbered row by row over the tiles of C on a 1-D grid: a
    // 2-D grid allows only 65535 block rows, too few for a tall C.
    const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
    int m0, n0;
    tile_origin(blockIdx.x, tiles_m, tiles_n, m0, n0);
    const int warp = threadIdx.x / WARP_SIZE, lane = threadIdx.x % WARP_SIZE;
    const int wm = warp / WARPS_N * WM, wn = warp % WARPS_N * WN; // warp tile in the block tile
    const int tiles_k = (K + BK - 1) / BK;

    // ---- load tiles: the first STAGES - 1 tiles on their way, a group each
    // (empty groups past the end of K keep the counting simple)
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < tiles_k) {
            load_tile<VEC, A_CHUNKS, A_LOADS>(As[s], A, M, K, m0, s * BK);
            load_tile<VEC, B_CHUNKS, B_LOADS>(Bs[s], B, K, N, s * BK, n0);
        }
        cp_async_commit();
    }
    cp_async_wait<STAGES - 2>();
    __syncthreads(); // tile 0 has landed, for every thread's copies

    // Threads past the edge of C stay: they help load tiles and must reach
    // every barrier.
    float acc[FM][FN][4] = {};
    uint32_t a[2][FM][4], b[2][FN][2]; // fragments: this slice's and the next one's
    load_fragments(a[0], b[0], As[0], Bs[0], wm, wn, 0);
    for (int t = 0; t < tiles_k; ++t) {
        const int t_copy = t + STAGES - 1; // the k-tile whose copies this iteration issues

        // Tile t + 1 must have landed (its first fragments load during this
        // iteration): of the groups committed, the newest STAGES - 3 may be
        // in flight. The barrier makes that so for every thread, and frees
        // the stage of tile t - 1 for the copies below.
        cp_async_wait<STAGES - 3>();
        __syncthreads();

        // ---- compute: per MMA_K-deep slice, FM fragments of A times FN of
        // B, with the next slice's fragments loading meanwhile
#pragma unroll
        for (int s = 0; s < KSLICES; ++s) {
            if (s + 1 < KSLICES)
                load_fragments(a[(s + 1) % 2], b[(s + 1) % 2], As[t % STAGES], Bs[t % STAGES], wm,
                               wn, (s + 1) * MMA_K);
            else if (t + 1 < tiles_k)
                load_fragments(a[0], b[0], As[(t + 1) % STAGES], Bs[(t + 1) % STAGES], wm, wn, 0);

            // ---- load tiles: tile t_copy, A in the first slice and B in the
            // last, after the fragment loads, so that the copies fill gaps
            // between the mma.sync (past K they fill zeros no one reads)
            if (s == 0)
                load_tile<VEC, A_CHUNKS, A_LOADS>(As[t_copy % STAGES], A, M, K, m0, t_copy * BK);
            if (s == KSLICES - 1) {
                load_tile<VEC, B_CHUNKS, B_LOADS>(Bs[t_copy % STAGES], B, K, N, t_copy * BK, n0);
                cp_async_commit();
            }
#pragma unroll
            for (int i = 0; i < FM; ++i)
#pragma unroll
                for (int j = 0; j < FN; ++j)
                    mma_16x8x16(acc[i][j], a[s % 2][i], b[s % 2][j]);
        }
    }

    // The last copies (zeros past the end of K) must not land in shared
    // memory after the block has left it.
    cp_async_wait<0>();

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
    // Five stages take 120 KB. A block may have 227 KB on compute capability
    // 9.0 and 163 KB on 8.0, but only 99 KB on 8.6 and 8.9: there, four.
    int device = 0, room = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&room, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
    const bool most = room >= STAGES_MOST * STAGE_BYTES;
    const auto kernel = vec ? (most ? gemm_kernel<true, STAGES_MOST> : gemm_kernel<true, STAGES_FEWER>)
                            : (most ? gemm_kernel<false, STAGES_MOST> : gemm_kernel<false, STAGES_FEWER>);
    const int smem = (most ? STAGES_MOST : STAGES_FEWER) * STAGE_BYTES;
    // A block may use more than 48 KB of shared memory only if asked; an
    // error here makes the launch fail, which the caller sees.
    cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    kernel<<<tiles, THREADS, smem, stream>>>(M, N, K, alpha, (const __half *)A, (const __half *)B, beta, C);
    return cudaGetLastError();
}
