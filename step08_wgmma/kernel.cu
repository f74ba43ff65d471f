/*
 * step08_wgmma: Hopper's warpgroup MMA, fed by step 07's cp.async ring.
 *
 * What changed: ldmatrix and mma.sync give way to one instruction. A
 * warpgroup (4 consecutive warps, 128 threads) issues
 * wgmma.mma_async.m64n256k16: 64 rows of A times 256 columns of B into
 * 128 float accumulators per thread, both operands read by the tensor cores
 * straight from shared memory through two 64-bit matrix descriptors:
 *
 *   bits  0-13  start address >> 4       bits 32-45  stride byte offset >> 4
 *   bits 16-29  leading byte offset >> 4  bits 62-63  swizzle (1: 128 bytes)
 *
 * The tiles must sit in shared memory as the descriptor's swizzle mode
 * says. In the 128-byte mode, 8 rows of one 128-byte line (8 pieces) make a
 * 1024-byte swizzle atom, piece c of row r stored at c ^ (r % 8): step 07's
 * swizzle for rows of 8 pieces. A's rows (BK = 64 halves) are one line; B's
 * rows (256 halves) are cut into BN / 64 columns of lines, stored one after
 * another. A is K-major: the stride offset steps 8 rows, and the next
 * 16-deep slice starts 32 bytes on. B is N-major, read transposed: the
 * leading offset steps to the next column of lines, the stride 8 k-rows, and
 * the next slice starts 16 rows on.
 *
 * The copies stay step 07's cp.async, but the tensor cores read shared
 * memory through the async proxy, which does not see the generic proxy's
 * writes in order: each thread fences its landed copies
 * (fence.proxy.async) before the barrier. And wgmma is asynchronous:
 * wgmma.fence orders the accumulators before it, commit_group closes a
 * tile's four wgmma into a group, and wait_group 1 waits for all but the
 * newest. So tile t's group runs while the threads wait for tile t + 1, and
 * a stage is refilled once the group that read it, two tiles back, is done:
 *
 *   k-tile:  t-1        t          t+1        t+2 (copies issued now,
 *   stage:   (t-1) % 4  t % 4      (t+1) % 4  into the stage t-2 left)
 *            wgmma may  wgmma      in flight
 *            still run  issued
 *
 * The tile shape follows wgmma: two warpgroups of 64 rows, 256 columns
 * (the widest wgmma, reading each slice of A once per 256 columns), BK = 64
 * so that a row of A is one line, and 4 stages of 48 KB (5 do not fit).
 *
 * Why it is faster: one wgmma does the work of 128 mma.sync with no
 * ldmatrix: no registers hold fragments, and the warps are free to copy
 * while the tensor cores multiply.
 *
 * What limits it now: every thread copies and waits: the copies' address
 * arithmetic, the wait and the block-wide barrier sit between one tile's
 * wgmma and the next. Step 09 hands the copies to TMA.
 *
 * The build prints ptxas's note C7519 ("warpgroup.arrive is injected ... to
 * allow use of registers in GMMA") twice, for gemm_kernel<false>, the kernel
 * for rows not 16-byte aligned, whose copies pass through registers: there
 * ptxas needs registers the wgmma are using, and waits for the warpgroup
 * before it takes them (two more WARPGROUP.ARRIVE in make sass). A note, not
 * a warning: that path waits a little more, the aligned one not at all.
 *
 * Launch: a 1-D grid with one block of THREADS threads (two warpgroups, one
 * per 64 rows) per BM x BN tile of C, STAGES * STAGE_BYTES of dynamic shared
 * memory.
 *
 * Measured: 582.76 TFLOPS, 108.2% of cuBLAS GemmEx, 1.42x step 07
 * (scripts/run_all.sh, NVIDIA H200, CUDA 13.0, 4096^3, 2026-12-02).
 */
#include "gemm.h"
#include "launch.cuh"

#include <cuda_fp16.h>
#include <stdint.h>

// The most elements A, B or C may hold (gemm.h): the kernel offsets them in 32-bit ints.
extern "C" const long long gemm_max_elements = GEMM_MAX_ELEMENTS_32;

constexpr int BM = 128; // rows of C per block
constexpr int BN = 256; // columns of C per block
constexpr int BK = 64;  // depth of the shared tiles: one 128-byte line of halves per row
constexpr int STAGES = 4; // tiles in shared memory
constexpr int GROUP_M = 8; // tile rows in one group of the block order
constexpr int WGMMA_M = 64, WGMMA_N = BN, WGMMA_K = 16; // wgmma.m64n256k16
constexpr int MMA_M = 16, MMA_N = 8; // a warp's accumulators come in mma.sync's 16 x 8 tiles

constexpr int WARP_SIZE = 32;
constexpr int WARPGROUP = 4 * WARP_SIZE; // the threads that issue one wgmma
constexpr int PIECE = 8; // elements per 16-byte piece: 8 halves
constexpr int LINE_PIECES = 8; // pieces per 128-byte line of shared-memory banks
constexpr int QUAD = 4; // lanes that share a row of an mma fragment

constexpr int THREADS = BM / WGMMA_M * WARPGROUP;
constexpr int FN = WGMMA_N / MMA_N;                    // 16 x 8 tiles per warp
constexpr int LINE_N = LINE_PIECES * PIECE;            // halves per line: B's columns in one column of lines
constexpr int A_CHUNKS = BK / PIECE, B_CHUNKS = BN / PIECE; // pieces per tile row
constexpr int A_LOADS = BM * BK / PIECE / THREADS;     // pieces of A's tile per thread
constexpr int B_LOADS = BK * BN / PIECE / THREADS;     // pieces of B's tile per thread
constexpr int KSLICES = BK / WGMMA_K;                  // wgmma per k-tile
constexpr int STAGE_BYTES = (BM * BK + BK * BN) * (int)sizeof(__half); // a tile of A and one of B
constexpr int SWIZZLE_ATOM = LINE_PIECES * LINE_PIECES * 16; // 8 rows of a line: tiles start on one

static_assert(BK == LINE_N && BN % LINE_N == 0 && BM % WGMMA_M == 0,
              "a row of A's tile is one line, a row of B's whole lines; warpgroups cover the tile");
static_assert(A_LOADS * PIECE * THREADS == BM * BK && B_LOADS * PIECE * THREADS == BK * BN,
              "each thread loads whole pieces of each tile");
static_assert(THREADS % A_CHUNKS == 0 && THREADS % B_CHUNKS == 0,
              "a thread's pieces of a tile sit in one column of pieces");
static_assert(BM * BK % (SWIZZLE_ATOM / 2) == 0 && STAGE_BYTES % SWIZZLE_ATOM == 0, "tiles start on atoms");

// Where, in halves, piece c of row r goes: wgmma's 128-byte swizzle. Rows
// of several lines (B's) are cut into columns of lines, BK rows each, one
// after another; in a line, piece c sits at c XOR (r % 8), as in step 07.
__device__ int swizzle(int r, int c)
{
    return ((c / LINE_PIECES * BK + r) * LINE_PIECES + (c % LINE_PIECES ^ r % LINE_PIECES)) * PIECE;
}

// The descriptor of a matrix in shared memory (see the header). A K-major
// swizzled operand has no leading offset: the PTX ISA takes it as 1 (16 bytes).
constexpr int A_LEADING = 16;
__device__ uint64_t descriptor(const __half *p, int leading_bytes, int stride_bytes)
{
    const uint32_t addr = (uint32_t)__cvta_generic_to_shared(p);
    return (uint64_t)((addr & 0x3FFFF) >> 4) | (uint64_t)(leading_bytes >> 4) << 16 |
           (uint64_t)(stride_bytes >> 4) << 32 | 1ull << 62;
}

// Waits until at most PENDING of this warpgroup's wgmma groups are in flight.
template <int PENDING>
__device__ void wgmma_wait(float (&d)[FN][4])
{
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" : : "n"(PENDING) : "memory");
    // The accumulators are the wgmma's until here: tell the compiler so.
#pragma unroll
    for (int j = 0; j < FN; ++j)
#pragma unroll
        for (int i = 0; i < 4; ++i)
            asm volatile("" : "+f"(d[j][i]) : : "memory");
}

// The four accumulators of 16 x 8 tile j, as asm operands.
#define D4(j) "+f"(d[j][0]), "+f"(d[j][1]), "+f"(d[j][2]), "+f"(d[j][3])

// d += a * b, issued by the whole warpgroup: A 64 x 16 (K-major), B 16 x 256
// (N-major, read transposed: the last 1), D 64 x 256 float (kept: the first 1).
__device__ void wgmma_64x256x16(float (&d)[FN][4], uint64_t a, uint64_t b)
{
    asm volatile("wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {"
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, "
                 "%21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, "
                 "%40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, "
                 "%59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, "
                 "%78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, "
                 "%97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, "
                 "%113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
                 "}, %128, %129, 1, 1, 1, 0, 1;\n"
                 : D4(0), D4(1), D4(2), D4(3), D4(4), D4(5), D4(6), D4(7),
                   D4(8), D4(9), D4(10), D4(11), D4(12), D4(13), D4(14), D4(15),
                   D4(16), D4(17), D4(18), D4(19), D4(20), D4(21), D4(22), D4(23),
                   D4(24), D4(25), D4(26), D4(27), D4(28), D4(29), D4(30), D4(31)
                 : "l"(a), "l"(b));
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
        copy8<VEC>(&Xs[swizzle(ri, c)], X, rows, cols, r0 + ri, c0 + c * PIECE);
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

template <bool VEC>
__global__ void __launch_bounds__(THREADS, 1)
gemm_kernel(int M, int N, int K, float alpha, const __half *__restrict__ A,
            const __half *__restrict__ B, float beta, float *__restrict__ C)
{
    extern __shared__ __align__(SWIZZLE_ATOM) unsigned char smem[];
    __half (*As)[BM * BK] = reinterpret_cast<__half (*)[BM * BK]>(smem);
    __half (*Bs)[BK * BN] = reinterpret_cast<__half (*)[BK * BN]>(smem + STAGES * sizeof *As);

    // Blocks are numbered row by row over the tiles of C on a 1-D grid: a
    // 2-D grid allows only 65535 block rows, too few for a tall C.
    const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
    int m0, n0;
    tile_origin(blockIdx.x, tiles_m, tiles_n, m0, n0);
    const int warp = threadIdx.x / WARP_SIZE, lane = threadIdx.x % WARP_SIZE;
    const int wg = threadIdx.x / WARPGROUP, wm = warp * MMA_M; // the warpgroup; the warp's rows of D
    const int tiles_k = (K + BK - 1) / BK;

    // ---- load tiles: the first STAGES - 2 tiles on their way, a group each
    // (empty groups past the end of K keep the counting simple)
#pragma unroll
    for (int s = 0; s < STAGES - 2; ++s) {
        if (s < tiles_k) {
            load_tile<VEC, A_CHUNKS, A_LOADS>(As[s], A, M, K, m0, s * BK);
            load_tile<VEC, B_CHUNKS, B_LOADS>(Bs[s], B, K, N, s * BK, n0);
        }
        cp_async_commit();
    }

    // Threads past the edge of C stay: they help load tiles and must reach
    // every barrier.
    float acc[FN][4] = {};
    for (int t = 0; t < tiles_k; ++t) {
        const int t_copy = t + STAGES - 2; // the k-tile whose copies this iteration issues

        // Tile t must have landed (the newest STAGES - 3 groups may be in
        // flight) and be fenced for the tensor cores; the barrier makes that
        // so for every thread, and frees the stage tile t - 2's wgmma read.
        cp_async_wait<STAGES - 3>();
        asm volatile("fence.proxy.async.shared::cta;\n" : : : "memory");
        __syncthreads();

        // ---- compute: a wgmma per WGMMA_K-deep slice, the tile's in one group
        asm volatile("wgmma.fence.sync.aligned;\n" : : : "memory"); // acc is ready for wgmma
#pragma unroll
        for (int s = 0; s < KSLICES; ++s) {
            wgmma_64x256x16(acc,
                            descriptor(&As[t % STAGES][wg * WGMMA_M * BK + s * WGMMA_K], A_LEADING, SWIZZLE_ATOM),
                            descriptor(&Bs[t % STAGES][s * WGMMA_K * LINE_N], BK * LINE_N * (int)sizeof(__half),
                                       SWIZZLE_ATOM));

            // ---- load tiles: tile t_copy, A in the first slice and B in the
            // last, after the slice's wgmma, so that the copies fill gaps
            // between the wgmma (past K they fill zeros no one reads)
            if (s == 0)
                load_tile<VEC, A_CHUNKS, A_LOADS>(As[t_copy % STAGES], A, M, K, m0, t_copy * BK);
            if (s == KSLICES - 1) {
                load_tile<VEC, B_CHUNKS, B_LOADS>(Bs[t_copy % STAGES], B, K, N, t_copy * BK, n0);
                cp_async_commit();
            }
        }
        asm volatile("wgmma.commit_group.sync.aligned;\n" : : : "memory");
        wgmma_wait<1>(acc); // tile t - 1's group is done; tile t's may still run
    }
    wgmma_wait<0>(acc);

    // The last copies (zeros past the end of K) must not land in shared
    // memory after the block has left it.
    cp_async_wait<0>();

    // ---- epilogue: alpha, beta, store (with beta == 0, C is not read),
    // straight from the accumulators: rows g and g + MMA_M / 2 of each mma
    // tile, two neighbouring floats per row
    const int g = lane / QUAD, tc = lane % QUAD * 2;
#pragma unroll
    for (int j = 0; j < FN; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h)
            store<VEC>(C, M, N, m0 + wm + h * (MMA_M / 2) + g, n0 + j * MMA_N + tc,
                       make_float2(acc[j][2 * h], acc[j][2 * h + 1]), alpha, beta);
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
    // A block may use more than 48 KB of shared memory only if asked; an
    // error here makes the launch fail, which the caller sees.
    const int smem = STAGES * STAGE_BYTES;
    cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    kernel<<<tiles, THREADS, smem, stream>>>(M, N, K, alpha, (const __half *)A, (const __half *)B, beta, C);
    return cudaGetLastError();
}
