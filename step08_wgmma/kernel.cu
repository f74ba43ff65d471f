/*
 * step08_wgmma: Hopper's own instructions. TMA copies tiles, mbarriers say
 * when they have landed, and wgmma multiplies a warpgroup's tile from shared
 * memory.
 *
 * What changed: three instructions replace step 07's three mechanisms.
 * - TMA: the host describes A and B once (cuTensorMapEncodeTiled, reached
 *   through the runtime's driver entry point). One thread then copies a
 *   whole tile with one cp.async.bulk.tensor: the copy engine computes every
 *   address, writes shared memory in the 128-byte swizzle (step 06's XOR:
 *   piece c of row r lands at c ^ (r % 8)), and fills what lies outside A or
 *   B with zeros, so edge tiles need no code.
 * - mbarrier: each stage has a barrier in shared memory. The thread that
 *   issues a stage's copies arms it with the bytes to expect
 *   (arrive.expect_tx); the copy engine counts them down, and the barrier
 *   completes a phase when all have landed. Everyone waits on the phase
 *   parity of the tile's round through the ring: tile t is in stage
 *   t % STAGES, on that stage's (t / STAGES)-th fill, parity (t / STAGES) % 2.
 *
 *     k-tile:  t        t+1      t+2      t+3 (copies issued in iteration t,
 *     stage:   t % 4    ...      ...      into the stage that tile t-1 left)
 *
 * - wgmma: a warpgroup (4 warps, 128 threads) issues
 *   wgmma.mma_async.m64n256k16: 64 rows of A times 256 columns of B, read
 *   straight from shared memory through two 64-bit matrix descriptors, into
 *   128 float accumulators per thread. A descriptor holds
 *
 *     bits  0-13  start address >> 4      bits 32-45  stride byte offset >> 4
 *     bits 16-29  leading byte offset >> 4 bits 62-63  swizzle (1: 128 bytes)
 *
 *   A is K-major (rows of 64 halves, 128 bytes): the stride offset steps 8
 *   rows (1024 bytes), and the next 16-deep slice starts 32 bytes on. B is
 *   N-major (k rows of n), read transposed; TMA lands it as BN / 64 boxes of
 *   BK x 64: the leading offset steps to the next box of 64 columns, the
 *   stride offset 8 k-rows, and the next slice starts 16 rows on.
 *   wgmma is asynchronous: wgmma.fence orders the accumulators before it,
 *   commit_group closes a tile's four wgmma into a group, and
 *   wait_group 1 waits for all but the newest group. So tile t's group runs
 *   while tile t-1's is known done; after a barrier, its stage is refilled.
 *
 * Why it is faster: a warpgroup's wgmma multiplies 64 x 256 x 16 per
 * instruction, with no ldmatrix: operands stream from shared memory into the
 * tensor cores, which wgmma keeps busy at twice mma.sync's rate. The copies
 * cost one thread one instruction per box.
 *
 * What limits it now: each warpgroup both waits for tiles and multiplies:
 * the wait, the block-wide barrier and the copies sit between one tile's
 * wgmma and the next (the barrier is the profiler's top stall). Step 09 gives
 * the copies to a warpgroup of their own.
 *
 * Launch: a 1-D grid with one block of THREADS threads (two warpgroups, one
 * per 64 rows) per BM x BN tile of C, SMEM_BYTES of dynamic shared memory.
 *
 * Measured: 700.08 TFLOPS, 95.0% of cuBLAS GemmEx, 1.48x step 07
 * (scripts/run_all.sh, NVIDIA H200, CUDA 13.0, 4096^3, 2026-11-22).
 */
#include "gemm.h"

#include <cuda.h>
#include <cuda_fp16.h>
#include <stdint.h>

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
constexpr int LINE_PIECES = 8; // pieces per 128-byte line: the swizzle's span
constexpr int QUAD = 4; // lanes that share a row of an mma fragment

constexpr int THREADS = BM / WGMMA_M * WARPGROUP;
constexpr int BOX_N = LINE_PIECES * PIECE;               // columns of B per TMA box
constexpr int A_BYTES = BM * BK * (int)sizeof(__half);   // one stage of A
constexpr int B_BYTES = BK * BN * (int)sizeof(__half);   // one stage of B
constexpr int SWIZZLE_ATOM = LINE_PIECES * LINE_PIECES * 16; // 8 rows of 128 bytes
constexpr int SMEM_BYTES = STAGES * (A_BYTES + B_BYTES) + SWIZZLE_ATOM; // the ring, and room to align it
constexpr int FN = WGMMA_N / MMA_N;                      // 16 x 8 tiles per warp

static_assert(BK == LINE_PIECES * PIECE, "a row of A's tile is one 128-byte swizzle line");
static_assert(BM % WGMMA_M == 0 && BN % BOX_N == 0, "warpgroups and boxes cover the tile");
static_assert(BK % WGMMA_K == 0, "whole wgmma slices per tile");
static_assert(WGMMA_M == WARPGROUP / WARP_SIZE * MMA_M, "each warp holds MMA_M rows of D");
static_assert(A_BYTES % SWIZZLE_ATOM == 0 && B_BYTES % SWIZZLE_ATOM == 0,
              "every stage starts on a swizzle atom");


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

__device__ uint32_t smem_addr(const void *p)
{
    return (uint32_t)__cvta_generic_to_shared(p);
}

// ---- mbarriers: a 64-bit word in shared memory that counts arrivals and
// expected bytes, and completes a phase when both reach zero.
__device__ void mbar_init(uint64_t *bar, int arrivals)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" : : "r"(smem_addr(bar)), "r"(arrivals));
}

// One arrival, and bytes still to come from the copy engine.
__device__ void mbar_arrive_expect(uint64_t *bar, int bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n"
                 : : "r"(smem_addr(bar)), "r"(bytes) : "memory");
}

__device__ void mbar_arrive(uint64_t *bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" : : "r"(smem_addr(bar)) : "memory");
}

// Waits until the phase with this parity has completed.
__device__ void mbar_wait(uint64_t *bar, int parity)
{
    asm volatile("{\n"
                 ".reg .pred done;\n"
                 "WAIT_%=:\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
                 "@!done bra WAIT_%=;\n"
                 "}\n"
                 : : "r"(smem_addr(bar)), "r"(parity) : "memory");
}

// ---- TMA: the box of the tensor map whose first element is (c0, c1)
// (innermost coordinate first) into shared memory; its bytes count down bar.
__device__ void tma_load(__half *dst, const CUtensorMap *map, int c0, int c1, uint64_t *bar)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3}], [%4];\n"
                 : : "r"(smem_addr(dst)), "l"(map), "r"(c0), "r"(c1), "r"(smem_addr(bar))
                 : "memory");
}

// ---- wgmma
// The descriptor of a matrix in shared memory (see the header). A K-major
// swizzled operand has no leading offset: the PTX ISA takes it as 1 (16 bytes).
constexpr int A_LEADING = 16;
__device__ uint64_t descriptor(const __half *p, int leading_bytes, int stride_bytes)
{
    return (uint64_t)((smem_addr(p) & 0x3FFFF) >> 4) | (uint64_t)(leading_bytes >> 4) << 16 |
           (uint64_t)(stride_bytes >> 4) << 32 | 1ull << 62;
}

__device__ void wgmma_fence()
{
    asm volatile("wgmma.fence.sync.aligned;\n" : : : "memory");
}

__device__ void wgmma_commit()
{
    asm volatile("wgmma.commit_group.sync.aligned;\n" : : : "memory");
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

// d += a * b on the tensor cores, issued by the whole warpgroup: A 64 x 16
// (K-major), B 16 x 256 (N-major, so transposed: the last 1), D 64 x 256 float.
__device__ void wgmma_64x256x16(float (&d)[FN][4], uint64_t a, uint64_t b)
{
    asm volatile("{\n"
                 ".reg .pred p;\n"
                 "setp.ne.b32 p, %130, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {"
                 "%0, %1, %2, %3, %4, %5, %6, %7, "
                 "%8, %9, %10, %11, %12, %13, %14, %15, "
                 "%16, %17, %18, %19, %20, %21, %22, %23, "
                 "%24, %25, %26, %27, %28, %29, %30, %31, "
                 "%32, %33, %34, %35, %36, %37, %38, %39, "
                 "%40, %41, %42, %43, %44, %45, %46, %47, "
                 "%48, %49, %50, %51, %52, %53, %54, %55, "
                 "%56, %57, %58, %59, %60, %61, %62, %63, "
                 "%64, %65, %66, %67, %68, %69, %70, %71, "
                 "%72, %73, %74, %75, %76, %77, %78, %79, "
                 "%80, %81, %82, %83, %84, %85, %86, %87, "
                 "%88, %89, %90, %91, %92, %93, %94, %95, "
                 "%96, %97, %98, %99, %100, %101, %102, %103, "
                 "%104, %105, %106, %107, %108, %109, %110, %111, "
                 "%112, %113, %114, %115, %116, %117, %118, %119, "
                 "%120, %121, %122, %123, %124, %125, %126, %127"
                 "}, %128, %129, p, 1, 1, 0, 1;\n"
                 "}\n"
                 : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]),
                   "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]),
                   "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]),
                   "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]),
                   "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]),
                   "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]),
                   "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]),
                   "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3]),
                   "+f"(d[8][0]), "+f"(d[8][1]), "+f"(d[8][2]), "+f"(d[8][3]),
                   "+f"(d[9][0]), "+f"(d[9][1]), "+f"(d[9][2]), "+f"(d[9][3]),
                   "+f"(d[10][0]), "+f"(d[10][1]), "+f"(d[10][2]), "+f"(d[10][3]),
                   "+f"(d[11][0]), "+f"(d[11][1]), "+f"(d[11][2]), "+f"(d[11][3]),
                   "+f"(d[12][0]), "+f"(d[12][1]), "+f"(d[12][2]), "+f"(d[12][3]),
                   "+f"(d[13][0]), "+f"(d[13][1]), "+f"(d[13][2]), "+f"(d[13][3]),
                   "+f"(d[14][0]), "+f"(d[14][1]), "+f"(d[14][2]), "+f"(d[14][3]),
                   "+f"(d[15][0]), "+f"(d[15][1]), "+f"(d[15][2]), "+f"(d[15][3]),
                   "+f"(d[16][0]), "+f"(d[16][1]), "+f"(d[16][2]), "+f"(d[16][3]),
                   "+f"(d[17][0]), "+f"(d[17][1]), "+f"(d[17][2]), "+f"(d[17][3]),
                   "+f"(d[18][0]), "+f"(d[18][1]), "+f"(d[18][2]), "+f"(d[18][3]),
                   "+f"(d[19][0]), "+f"(d[19][1]), "+f"(d[19][2]), "+f"(d[19][3]),
                   "+f"(d[20][0]), "+f"(d[20][1]), "+f"(d[20][2]), "+f"(d[20][3]),
                   "+f"(d[21][0]), "+f"(d[21][1]), "+f"(d[21][2]), "+f"(d[21][3]),
                   "+f"(d[22][0]), "+f"(d[22][1]), "+f"(d[22][2]), "+f"(d[22][3]),
                   "+f"(d[23][0]), "+f"(d[23][1]), "+f"(d[23][2]), "+f"(d[23][3]),
                   "+f"(d[24][0]), "+f"(d[24][1]), "+f"(d[24][2]), "+f"(d[24][3]),
                   "+f"(d[25][0]), "+f"(d[25][1]), "+f"(d[25][2]), "+f"(d[25][3]),
                   "+f"(d[26][0]), "+f"(d[26][1]), "+f"(d[26][2]), "+f"(d[26][3]),
                   "+f"(d[27][0]), "+f"(d[27][1]), "+f"(d[27][2]), "+f"(d[27][3]),
                   "+f"(d[28][0]), "+f"(d[28][1]), "+f"(d[28][2]), "+f"(d[28][3]),
                   "+f"(d[29][0]), "+f"(d[29][1]), "+f"(d[29][2]), "+f"(d[29][3]),
                   "+f"(d[30][0]), "+f"(d[30][1]), "+f"(d[30][2]), "+f"(d[30][3]),
                   "+f"(d[31][0]), "+f"(d[31][1]), "+f"(d[31][2]), "+f"(d[31][3])
                 : "l"(a), "l"(b), "r"(1));
}

// Eight consecutive halves (r, c..c+7) of the rows x cols matrix X, zero
// outside it, loaded one by one into the shared piece dst: the path for any
// shape.
__device__ void copy8(__half *dst, const __half *X, int rows, int cols, int r, int c)
{
    uint32_t w[4] = {};
    if (r < rows)
#pragma unroll
        for (int i = 0; i < 8; ++i)
            if (c + i < cols)
                w[i / 2] |= (uint32_t)__half_as_ushort(X[r * cols + c + i]) << (16 * (i % 2));
    *reinterpret_cast<uint4 *>(dst) = make_uint4(w[0], w[1], w[2], w[3]);
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

// ---- load tiles: tile k0 of A and B into one stage, completing on its
// barrier. VEC: one thread issues TMA copies (one box of A, BN / BOX_N of B)
// and arms the barrier with their bytes. Otherwise (rows TMA cannot take)
// every thread copies its pieces into the same swizzled layout itself,
// element by element; the tensor cores read shared memory through the async
// proxy, so the writes are fenced for it before each thread arrives.
template <bool VEC>
__device__ void load_tiles(__half *As, __half *Bs, uint64_t *bar, const CUtensorMap *map_a,
                           const CUtensorMap *map_b, const __half *A, const __half *B, int M,
                           int N, int K, int m0, int n0, int k0)
{
    if constexpr (VEC) {
        if (threadIdx.x == 0) {
            mbar_arrive_expect(bar, A_BYTES + B_BYTES);
            tma_load(As, map_a, k0, m0, bar);
#pragma unroll
            for (int j = 0; j < BN / BOX_N; ++j)
                tma_load(Bs + j * BK * BOX_N, map_b, n0 + j * BOX_N, k0, bar);
        }
    } else {
        const int ar = threadIdx.x / LINE_PIECES, ac = threadIdx.x % LINE_PIECES;
#pragma unroll
        for (int i = 0; i < BM * LINE_PIECES / THREADS; ++i) {
            const int r = ar + i * (THREADS / LINE_PIECES);
            copy8(&As[swizzle<LINE_PIECES>(r, ac)], A, M, K, m0 + r, k0 + ac * PIECE);
        }
        const int br = threadIdx.x / (BN / PIECE), bc = threadIdx.x % (BN / PIECE);
#pragma unroll
        for (int i = 0; i < BK * BN / PIECE / THREADS; ++i) {
            const int r = br + i * (THREADS / (BN / PIECE));
            copy8(&Bs[bc / LINE_PIECES * BK * BOX_N + swizzle<LINE_PIECES>(r, bc % LINE_PIECES)], B, K, N,
                  k0 + r, n0 + bc * PIECE);
        }
        asm volatile("fence.proxy.async.shared::cta;\n" : : : "memory");
        mbar_arrive(bar);
    }
}

template <bool VEC>
__global__ void __launch_bounds__(THREADS, 1)
gemm_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
            int M, int N, int K, float alpha, const __half *__restrict__ A,
            const __half *__restrict__ B, float beta, float *__restrict__ C)
{
    extern __shared__ unsigned char smem_raw[];
    __half *smem = reinterpret_cast<__half *>(
        (reinterpret_cast<uintptr_t>(smem_raw) + SWIZZLE_ATOM - 1) / SWIZZLE_ATOM * SWIZZLE_ATOM);
    __half (*As)[BM * BK] = reinterpret_cast<__half (*)[BM * BK]>(smem);
    __half (*Bs)[BK * BN] = reinterpret_cast<__half (*)[BK * BN]>(smem + STAGES * BM * BK);
    __shared__ uint64_t full[STAGES]; // stage s's tile has landed

    // Blocks are numbered row by row over the tiles of C on a 1-D grid: a
    // 2-D grid allows only 65535 block rows, too few for a tall C. A row here
    // is GROUP_M tile rows, numbered down its columns, so that the blocks in
    // flight share more of A and B in L2 (the last row may have fewer).
    const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
    const int first_row = blockIdx.x / (GROUP_M * tiles_n) * GROUP_M;
    const int group_rows = min(tiles_m - first_row, GROUP_M);
    const int in_group = blockIdx.x % (GROUP_M * tiles_n);
    const int m0 = (first_row + in_group % group_rows) * BM, n0 = in_group / group_rows * BN;
    const int wg = threadIdx.x / WARPGROUP; // this warpgroup's rows: wg * WGMMA_M on
    const int warp = threadIdx.x % WARPGROUP / WARP_SIZE, lane = threadIdx.x % WARP_SIZE;
    const int wm = wg * WGMMA_M + warp * MMA_M; // this warp's rows of D in the block tile
    const int tiles_k = (K + BK - 1) / BK;

    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s)
            mbar_init(&full[s], VEC ? 1 : THREADS);
        asm volatile("fence.mbarrier_init.release.cluster;\n" : : : "memory");
    }
    __syncthreads(); // the barriers exist before anyone arrives or waits

    // ---- load tiles: the first STAGES - 1 tiles on their way
    for (int s = 0; s < STAGES - 1 && s < tiles_k; ++s)
        load_tiles<VEC>(As[s], Bs[s], &full[s], &map_a, &map_b, A, B, M, N, K, m0, n0, s * BK);

    float acc[FN][4] = {};
    for (int t = 0; t < tiles_k; ++t) {
        const int t_copy = t + STAGES - 1; // the k-tile whose copies this iteration issues

        // Tile t has landed once its stage's barrier completes the phase of
        // this round through the ring.
        mbar_wait(&full[t % STAGES], t / STAGES % 2);

        // ---- compute: BK / WGMMA_K wgmma, one group; the warpgroup's rows
        // of A, and all of B
        wgmma_fence();
#pragma unroll
        for (int k = 0; k < BK; k += WGMMA_K)
            wgmma_64x256x16(acc,
                            descriptor(&As[t % STAGES][wg * WGMMA_M * BK + k], A_LEADING, SWIZZLE_ATOM),
                            descriptor(&Bs[t % STAGES][k * BOX_N], BK * BOX_N * (int)sizeof(__half),
                                       SWIZZLE_ATOM));
        wgmma_commit();
        // Tile t - 1's group is done (tile t's may still run: it reads only
        // stage t % STAGES), and after the barrier in every warpgroup: its
        // stage may be refilled.
        wgmma_wait<1>(acc);
        __syncthreads();

        // ---- load tiles: tile t_copy, into the stage tile t - 1 left
        if (t_copy < tiles_k)
            load_tiles<VEC>(As[t_copy % STAGES], Bs[t_copy % STAGES], &full[t_copy % STAGES],
                            &map_a, &map_b, A, B, M, N, K, m0, n0, t_copy * BK);
    }
    wgmma_wait<0>(acc);

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

// The tensor map of a rows x cols matrix of halves, read in boxes of
// box_rows x box_cols with the 128-byte swizzle; parts of a box outside the
// matrix arrive as zeros. Returns false if the driver cannot make it.
static bool tensor_map(CUtensorMap *map, const void *X, int rows, int cols, int box_rows,
                       int box_cols)
{
    // cuTensorMapEncodeTiled is a driver function: the runtime hands it out,
    // so the program needs no link to the driver library.
    static decltype(&cuTensorMapEncodeTiled) encode = nullptr;
    if (!encode) {
        cudaDriverEntryPointQueryResult found;
        if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", (void **)&encode, 12000,
                                             cudaEnableDefault, &found) != cudaSuccess ||
            found != cudaDriverEntryPointSuccess)
            return false;
    }
    const cuuint64_t dims[2] = { (cuuint64_t)cols, (cuuint64_t)rows }; // innermost first
    const cuuint64_t row_bytes[1] = { (cuuint64_t)cols * sizeof(__half) };
    const cuuint32_t box[2] = { (cuuint32_t)box_cols, (cuuint32_t)box_rows };
    const cuuint32_t steps[2] = { 1, 1 };
    return encode(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, const_cast<void *>(X), dims,
                  row_bytes, box, steps, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                  CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) ==
           CUDA_SUCCESS;
}

extern "C" void gemm_launch(int M, int N, int K, float alpha, const void *A,
                            const void *B, float beta, float *C)
{
    const int tiles = ((M + BM - 1) / BM) * ((N + BN - 1) / BN);
    // The TMA path: the copy engine needs 16-byte aligned rows and base
    // addresses (K and N multiples of 8, A and B aligned), and the 16-byte
    // path's stores need C aligned too. Any other shape takes the same
    // kernel with copies by every thread.
    CUtensorMap map_a = {}, map_b = {};
    const bool vec = K % PIECE == 0 && N % PIECE == 0 &&
                     ((uintptr_t)A | (uintptr_t)B | (uintptr_t)C) % 16 == 0 &&
                     tensor_map(&map_a, A, M, K, BM, BK) && tensor_map(&map_b, B, K, N, BK, BOX_N);
    const auto kernel = vec ? gemm_kernel<true> : gemm_kernel<false>;
    // A block may use more than 48 KB of shared memory only if asked; an
    // error here makes the launch fail, which the caller sees.
    cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES);
    kernel<<<tiles, THREADS, SMEM_BYTES>>>(map_a, map_b, M, N, K, alpha, (const __half *)A,
                                           (const __half *)B, beta, C);
}
