/*
 * step13_tile_width: the planner also chooses the tile's width, 256, 192,
 * 128 or 64 columns, for each product.
 *
 * What changed: steps 10-12 multiply 128 x 256 tiles (256 x 256 in a
 * cluster) whatever the shape of C. A width that suits one shape wastes
 * another:
 *
 *   3000^3: 47 k-tiles per tile, 66 clusters of two (tiles: cluster tiles)
 *
 *   256 x 256 (step 12): 12 x 12 = 144       256 x 192: 12 x 16 = 192
 *   tiles, 2.18 rounds: a round whole,        tiles, 2.91 rounds: three
 *   then 78 tiles in 66 shares of 55-56       rounds whole, 6 of 66 clusters
 *   k-tiles; 47 + 56 = 103 k-tiles, and       idle in the last; 3 x 47 = 141
 *   a fixup per block                         k-tiles of 3/4 the work: 106
 *
 *   and where C is 64 columns wide, a tile 256 wide multiplies 192 columns
 *   of zeros; where C has few tiles (1024^3: 32 of 128 x 256), narrower
 *   ones put more SMs to work without a split.
 * - The kernel's BN is a template parameter: wgmma.m64nBNk16 for BN of
 *   256, 192, 128 or 64 (BN_WIDE ... BN_NARROWEST), FN = BN / 8
 *   accumulator tiles per warp, and as many stages as STAGE_SPACE holds:
 *   4, 4, 6 or 8. In a cluster (BN of 128 or more) the ranks share B's
 *   BN / 64 boxes as before; the workspace's slots are BM x BN.
 * - The planner weighs step 12's candidates at each width: a k-tile of a
 *   narrower tile takes the tensor cores less time but reads more from L2
 *   per flop (16 KB of A for BN columns of B), a round stores less, and a
 *   level of the fixup moves BN / 256 of the sums. Nothing new in the cost
 *   model but the width in its terms.
 *
 * The second idea: boxes of A no taller than the rows of C they are for.
 * Where M is not a multiple of BM, the last row of tiles reads boxes of
 * M mod BM rows (map_last; all of A where M < BM: 16 x 8192 x 8192). A
 * box of BM rows would have TMA write zeros for the rows below M into
 * every stage, and TMA writes zeros more slowly than it copies rows: the
 * blocks of the last row would finish last. The stages' other rows keep
 * what an earlier k-tile left; only rows of D below M see them, and those
 * are never stored. Tried with boxes of BM rows, at 528 x 2992 x 4800:
 * Measured (scripts/try.sh 13 tall, NVIDIA H200, CUDA 13.0, 2026-11-28):
 * tried 353.02 TFLOPS (66.1% of cuBLAS), as is 465.10 (90.6%).
 *
 * Why it is faster: each product runs on the tile that leaves the fewest
 * SMs idle for the fewest bytes: whole rounds instead of split tiles where
 * a narrower tile fills them (3000^3), columns without zeros (16384 x 64 x
 * 4096), more tiles than SMs where C has few (1024^3).
 *
 * What limits it now: the model's constants are averages. Where two
 * candidates come within a few percent of each other it may pick the
 * slower. And where the fixup sets the pace (128 x 4096 x 4096: 32 tiles
 * of 64 k-tiles in four parts), every part writes its sums before it
 * counts, the last too: the price of a fixup in which no block waits.
 *
 * Launch: as step 12's, with the plan's width; STAGE_SPACE bytes of
 * stages and the epilogue's slice of dynamic shared memory.
 *
 * Measured: 608.14 TFLOPS, 114.2% of cuBLAS GemmEx, 1.00x step 12
 * (scripts/run_all.sh, NVIDIA H200, CUDA 13.0, 4096^3, 2026-12-02).
 */
#include "gemm.h"
#include "launch.cuh"
#include "repack.cuh"

#include <cuda.h>
#include <cuda_fp16.h>
#include <stdint.h>
#include <type_traits>

// The most elements A, B or C may hold (gemm.h): TMA reads A and B, and C's offsets are 64-bit.
extern "C" const long long gemm_max_elements = GEMM_MAX_ELEMENTS_64;

constexpr int BM = 128; // rows of C per block
// columns of C per block, the kernel's BN: the widths the planner chooses from (plan)
constexpr int BN_WIDE = 256, BN_FIT = 192, BN_NARROW = 128, BN_NARROWEST = 64;
constexpr int BK = 64;  // depth of the shared tiles: one 128-byte line of halves per row
constexpr int STAGE_SPACE = 192 * 1024; // bytes of shared memory for the stages: 4, 4, 6 or 8 (BN 256, 192, 128, 64)
constexpr int GROUP_M = 8; // tile rows in one group of the block order
constexpr int CLUSTER = 2; // blocks in a cluster, the most (plan)
// The epilogue's pass: OUT_N columns of the tile, each row padded so that
// the 4 rows a half-warp writes start in different banks.
constexpr int OUT_N = 32, OUT_PAD = 8;
constexpr int WGMMA_M = 64, WGMMA_K = 16; // wgmma.m64nBNk16
constexpr int MMA_M = 16, MMA_N = 8; // a warp's accumulators come in mma.sync's 16 x 8 tiles

constexpr int WARP_SIZE = 32;
constexpr int WARPGROUP = 4 * WARP_SIZE; // the threads that issue one wgmma
constexpr int PIECE = 8; // elements per 16-byte piece: 8 halves
constexpr int LINE_PIECES = 8; // pieces per 128-byte line of shared-memory banks
constexpr int QUAD = 4; // lanes that share a row of an mma fragment
// The fixup's groups of four parts, summed ((0 + 1) + 2) + 3; LEVELS of groups, more than any grid needs (2^32 parts).
constexpr int FAN_IN = 4, LEVELS = 16;
constexpr double MMA_FLOPS_US = 6.6e6; // the planner's cost model (see the header): flops per us per SM, at load
constexpr double K_TILE_US = 0.06;     // and a k-tile's own time: its barriers, wgmma's fence, commit and wait
constexpr double L2_BYTES_US = 10.0e6; // bytes per us from L2 to all SMs together
constexpr double HBM_BYTES_US = 4.0e6; // bytes per us to and from memory
constexpr double FIXUP_US = 10.0;      // a level of the fixup, 128 x 256 sums written, read by the last of four
constexpr double L2_SIZE = 50e6;       // bytes of L2 (H100, H200): operands that fit are read from memory once
constexpr double CLUSTER_US = 0.1;     // a cluster's k-tile waits for the slower of its blocks
constexpr double OFF_SECTOR = 1.6;     // L2's cost per byte of a row off 32-byte sectors, against one on them

constexpr int CONSUMERS = BM / WGMMA_M;               // warpgroups that multiply
constexpr int THREADS = (1 + CONSUMERS) * WARPGROUP;    // and one that copies
// Registers per thread after setmaxnreg (multiples of 8). The block starts
// with REGS each, the most 64K registers give THREADS threads; the producer
// gives some up, and the consumers can take only what it gave: setmaxnreg.inc
// waits until the block has them.
constexpr int REGS = 65536 / THREADS / 8 * 8;
constexpr int PRODUCER_REGS = 40;
constexpr int CONSUMER_REGS = (REGS * (1 + CONSUMERS) - PRODUCER_REGS) / CONSUMERS / 8 * 8;
constexpr int LINE_N = LINE_PIECES * PIECE;            // halves per line: B's columns in one column of lines
constexpr int KSLICES = BK / WGMMA_K;                  // wgmma per k-tile
// The bytes of one stage: a tile of A (a_rows of it) and one of B, bn columns wide.
__host__ __device__ constexpr int stage_bytes(int bn, int a_rows = BM)
{
    return (a_rows * BK + BK * bn) * (int)sizeof(__half);
}
constexpr int SWIZZLE_ATOM = LINE_PIECES * LINE_PIECES * 16; // 8 rows of a line: tiles start on one

static_assert(BK == LINE_N && BN_NARROWEST % LINE_N == 0 && BN_FIT % LINE_N == 0 && BM % WGMMA_M == 0,
              "a row of A's tile is one line, a row of B's whole lines; warpgroups cover the tile");
static_assert(CONSUMER_REGS <= 255, "a thread holds at most 255 registers");
static_assert(BM * BK % (SWIZZLE_ATOM / 2) == 0 && stage_bytes(BN_NARROWEST) % SWIZZLE_ATOM == 0,
              "tiles start on atoms");

__device__ uint32_t smem_addr(const void *p)
{
    return (uint32_t)__cvta_generic_to_shared(p);
}

// ---- mbarriers (see the header): arrive, expecting `bytes` from TMA.
__device__ void mbar_arrive_expect(uint64_t *bar, int bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n"
                 : : "r"(smem_addr(bar)), "r"(bytes) : "memory");
}

// Arrives on the barrier at bar's place in the block of this rank in the
// cluster (mapa: its address there), which may be this block.
__device__ void mbar_arrive(uint64_t *bar, int rank)
{
    asm volatile("{ .reg .b32 there;\n"
                 "mapa.shared::cluster.u32 there, %0, %1;\n"
                 "mbarrier.arrive.shared::cluster.b64 _, [there]; }\n"
                 : : "r"(smem_addr(bar)), "r"(rank) : "memory");
}

// Waits until the phase with this parity has completed.
__device__ void mbar_wait(uint64_t *bar, int parity)
{
    asm volatile("{ .reg .pred done;\n"
                 "WAIT_%=: mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
                 "@!done bra WAIT_%=; }\n" : : "r"(smem_addr(bar)), "r"(parity) : "memory");
}

// ---- TMA: the box of the tensor map whose first element is (c0, c1)
// (innermost coordinate first) into shared memory; its bytes count down bar.
__device__ void tma_load(__half *dst, const CUtensorMap *map, int c0, int c1, uint64_t *bar)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3}], [%4];\n"
                 : : "r"(smem_addr(dst)), "l"(map), "r"(c0), "r"(c1), "r"(smem_addr(bar)) : "memory");
}

// The same box into this place in every block of the cluster in `mask` (bit
// r: rank r), on each one's barrier at bar's place: one read from L2, for all.
__device__ void tma_load_multicast(__half *dst, const CUtensorMap *map, int c0, int c1, uint64_t *bar, int mask)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
                 " [%0], [%1, {%2, %3}], [%4], %5;\n"
                 : : "r"(smem_addr(dst)), "l"(map), "r"(c0), "r"(c1), "r"(smem_addr(bar)), "h"((uint16_t)mask)
                 : "memory");
}

// ---- clusters (see the header): every thread of the cluster's blocks
// waits here for all the others; what each wrote before, the others see after.
__device__ void cluster_sync()
{
    asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" : : : "memory");
}

// The warpgroup's registers per thread from here on: fewer, or more.
template <int COUNT>
__device__ void regs_dec()
{
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" : : "n"(COUNT));
}

template <int COUNT>
__device__ void regs_inc()
{
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" : : "n"(COUNT));
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
template <int PENDING, int FN>
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
__device__ void wgmma_64xNx16(float (&d)[BN_WIDE / MMA_N][4], uint64_t a, uint64_t b)
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

// The same with B 16 x 192 and D 64 x 192: three quarters of the accumulators.
__device__ void wgmma_64xNx16(float (&d)[BN_FIT / MMA_N][4], uint64_t a, uint64_t b)
{
    asm volatile("wgmma.mma_async.sync.aligned.m64n192k16.f32.f16.f16 {"
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, "
                 "%21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, "
                 "%40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, "
                 "%59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, "
                 "%78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95"
                 "}, %96, %97, 1, 1, 1, 0, 1;\n"
                 : D4(0), D4(1), D4(2), D4(3), D4(4), D4(5), D4(6), D4(7),
                   D4(8), D4(9), D4(10), D4(11), D4(12), D4(13), D4(14), D4(15),
                   D4(16), D4(17), D4(18), D4(19), D4(20), D4(21), D4(22), D4(23)
                 : "l"(a), "l"(b));
}

// The same with B 16 x 128 and D 64 x 128: half the accumulators.
__device__ void wgmma_64xNx16(float (&d)[BN_NARROW / MMA_N][4], uint64_t a, uint64_t b)
{
    asm volatile("wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {"
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, "
                 "%21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, "
                 "%40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, "
                 "%59, %60, %61, %62, %63"
                 "}, %64, %65, 1, 1, 1, 0, 1;\n"
                 : D4(0), D4(1), D4(2), D4(3), D4(4), D4(5), D4(6), D4(7),
                   D4(8), D4(9), D4(10), D4(11), D4(12), D4(13), D4(14), D4(15)
                 : "l"(a), "l"(b));
}

// And with B 16 x 64 and D 64 x 64: a quarter of them.
__device__ void wgmma_64xNx16(float (&d)[BN_NARROWEST / MMA_N][4], uint64_t a, uint64_t b)
{
    asm volatile("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {"
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, "
                 "%21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
                 "}, %32, %33, 1, 1, 1, 0, 1;\n"
                 : D4(0), D4(1), D4(2), D4(3), D4(4), D4(5), D4(6), D4(7)
                 : "l"(a), "l"(b));
}

// C(r, c) = alpha * v + beta * C(r, c), inside C only; with beta == 0, C is
// not read.
__device__ void store(float *C, int M, int N, int r, int c, float v, float alpha, float beta)
{
    if (r >= M || c >= N)
        return;
    float *p = &C[(size_t)r * N + c];
    *p = beta == 0.0f ? alpha * v : alpha * v + beta * *p;
}

// The same for the W floats of v (a float4, or a float) at C(r, c..c+W-1).
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
        V *p = reinterpret_cast<V *>(&C[(size_t)r * N + c]);
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

// ---- load tiles: tile k0 of A and B into one stage, by one producer
// thread: a TMA box of A and BN / LINE_N boxes of B, on a barrier armed with
// their bytes. The blocks of a cluster need the same tile of B: the block of
// rank r copies boxes r, r + cluster, ... into every block's stage. A block
// whose rows all lie below C (the last of a cluster) copies no A.
// a_rows: the rows of A in its box, fewer than BM in the last row (map_last).
template <int BN>
__device__ void load_tiles(__half *As, __half *Bs, uint64_t *bar, const CUtensorMap *map_a,
                           const CUtensorMap *map_b, int m0, int n0, int k0, int a_rows, int cluster)
{
    if (threadIdx.x == 0) {
        mbar_arrive_expect(bar, stage_bytes(BN, a_rows));
        if (a_rows > 0) // none below C
            tma_load(As, map_a, k0, m0, bar);
#pragma unroll
        for (int j = 0; j < BN / LINE_N; ++j)
            if (cluster == 1)
                tma_load(Bs + j * BK * LINE_N, map_b, n0 + j * LINE_N, k0, bar);
            else if (j % cluster == (int)blockIdx.x % cluster)
                tma_load_multicast(Bs + j * BK * LINE_N, map_b, n0 + j * LINE_N, k0, bar, (1 << cluster) - 1);
    }
}

// The top-left element of tile number `tile` of C. A row of the numbering
// is GROUP_M tile rows, numbered down its columns, so that the tiles in
// flight share more of A and B in L2 (the last row may have fewer).
// A tile is cluster x BM rows: this block's are BM of them, in rank order.
template <int BN>
__device__ void tile_origin(int tile, int tiles_m, int tiles_n, int cluster, int &m0, int &n0)
{
    const int first_row = tile / (GROUP_M * tiles_n) * GROUP_M;
    const int group_rows = min(tiles_m - first_row, GROUP_M);
    const int in_group = tile % (GROUP_M * tiles_n);
    m0 = ((first_row + in_group % group_rows) * cluster + (int)blockIdx.x % cluster) * BM;
    n0 = in_group / group_rows * BN;
}

struct split { int whole; float *partials; int *counts; }; // tiles done whole (see part); slots, counts (see key)

// Part p of cluster b's work (of `blocks` clusters; a block alone is a cluster of one): tile `tile`, k-tiles
// k0 .. k1 - 1; false past the last. Whole tiles first, then of its share the tiles in the middle, the end of the
// first tile, the start of the last (see the header).
template <bool SPLIT>
__host__ __device__ bool part(int p, int b, int blocks, int whole, int tiles, int tiles_k, int &tile, int &k0, int &k1)
{
    if (b + p * blocks < whole) {
        tile = b + p * blocks, k0 = 0, k1 = tiles_k;
        return true;
    }
    // b's share: split k-tiles first .. end - 1 (tile `whole` starts at 0), in tiles first_t .. last_t; q: the part
    const long long split_k_tiles = (long long)(tiles - whole) * tiles_k;
    const long long first = b * split_k_tiles / blocks, end = (b + 1) * split_k_tiles / blocks;
    const int first_t = (int)(first / tiles_k), last_t = (int)((end - 1) / tiles_k);
    const int q = p - (whole - b + blocks - 1) / blocks, count = last_t - first_t + 1;
    if (!SPLIT || first >= end || q >= count)
        return false;
    const int t = q < count - 2 ? first_t + 1 + q : q == count - 2 ? first_t : last_t; // the middle, first, last
    k0 = (int)max(first - (long long)t * tiles_k, 0LL);
    k1 = (int)min(end - (long long)t * tiles_k, (long long)tiles_k);
    tile = whole + t;
    return true;
}

// The share (cluster) that holds split k-tile x, of `blocks` shares: the last whose share starts at x or before.
__host__ __device__ int share_of(long long x, int blocks, long long all) { return ((x + 1) * blocks - 1) / all; }

// Part i's group in the fixup where each member holds `size` parts' sum: its first part head, i's place me, n members.
__host__ __device__ void group(int i, int size, int parts, int &head, int &me, int &n)
{ head = i & -(size * FAN_IN), me = (i - head) / size, n = min((parts - head + size - 1) / size, FAN_IN); }

// The slot and counts of part x of a tile whose parts start at cluster `first` (x = 0: the cluster's second ones);
// a block's own are key * cluster + rank.
__host__ __device__ int key(int first, int x) { return 2 * (first + x) + (x == 0); }

template <int BN, bool VEC, bool SPLIT, int CLUSTER_BLOCKS>
__global__ void __launch_bounds__(THREADS, 1)
gemm_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_last,
            const __grid_constant__ CUtensorMap map_b, int M, int N, int K, float alpha, float beta,
            float *__restrict__ C, split s)
{
    constexpr int STAGES = STAGE_SPACE / stage_bytes(BN), FN = BN / MMA_N; // stages; 16 x 8 tiles per warp
    extern __shared__ __align__(SWIZZLE_ATOM) unsigned char smem[];
    __half (*As)[BM * BK] = reinterpret_cast<__half (*)[BM * BK]>(smem);
    __half (*Bs)[BK * BN] = reinterpret_cast<__half (*)[BK * BN]>(smem + STAGES * sizeof *As);
    __shared__ uint64_t full[STAGES];  // stage s's tile has landed
    __shared__ uint64_t empty[STAGES]; // every consumer of the cluster is done with stage s
    __shared__ int arrived[CONSUMERS];  // the parts each consumer found at its group before it (the fixup)

    constexpr int cluster = CLUSTER_BLOCKS; // 1 or CLUSTER (plan)
    // the block's cluster u of `units` (the grid's), and its rank in it
    const int u = blockIdx.x / cluster, units = gridDim.x / cluster, rank = blockIdx.x % cluster;
    const int tiles_m = (M + cluster * BM - 1) / (cluster * BM), tiles_n = (N + BN - 1) / BN;
    const int warp = threadIdx.x / WARP_SIZE, lane = threadIdx.x % WARP_SIZE;
    // the consumer warpgroup (-1: the producer); a consumer warp's rows of D
    const int wg = threadIdx.x / WARPGROUP - 1, wm = (warp - WARPGROUP / WARP_SIZE) * MMA_M;
    const int tiles_k = (K + BK - 1) / BK;

    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) { // full: the thread that arms it; empty: the cluster's consumers
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" : : "r"(smem_addr(&full[s])));
            asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n"
                         : : "r"(smem_addr(&empty[s])), "n"(cluster * CONSUMERS));
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" : : : "memory");
    }
    cluster_sync(); // the barriers exist before anyone in the cluster waits on them or copies to them

    // A k-tile's number among all this block copies or multiplies: stage
    // n % STAGES, on that stage's round n / STAGES.
    int n = 0;
    if (wg < 0) {
        regs_dec<PRODUCER_REGS>();
        // ---- load tiles: every k-tile of every part of this block, each
        // into the next stage once the consumers have released it
        int tile, k0, k1;
        for (int p = 0; part<SPLIT>(p, u, units, s.whole, tiles_m * tiles_n, tiles_k, tile, k0, k1); ++p) {
            int m0, n0;
            tile_origin<BN>(tile, tiles_m, tiles_n, cluster, m0, n0);
            for (int t = k0; t < k1; ++t, ++n) {
                mbar_wait(&empty[n % STAGES], n / STAGES % 2 ^ 1);
                const int k = k1 - k0 < tiles_k ? k0 + k1 - 1 - t : t; // a piece of a tile: from its last k-tile down
                load_tiles<BN>(As[n % STAGES], Bs[n % STAGES], &full[n % STAGES], m0 + BM > M ? &map_last : &map_a,
                               &map_b, m0, n0, k * BK, max(min(M - m0, BM), 0), cluster);
            }
        }
        // Wait until the consumers have released every stage, when each copy
        // this thread issued has landed: compute-sanitizer's racecheck may
        // hang on a producer that stops with copies in flight (step 10's header).
        for (int i = n; i < n + STAGES; ++i)
            mbar_wait(&empty[i % STAGES], i / STAGES % 2 ^ 1);
        cluster_sync(); // as the consumers do, at the end
        return;
    }

    regs_inc<CONSUMER_REGS>();
    const long long split_k_tiles = (long long)(tiles_m * tiles_n - s.whole) * tiles_k;
    int tile, k0, k1;
    for (int p = 0; part<SPLIT>(p, u, units, s.whole, tiles_m * tiles_n, tiles_k, tile, k0, k1); ++p) {
        int m0, n0;
        tile_origin<BN>(tile, tiles_m, tiles_n, cluster, m0, n0);
        float acc[FN][4] = {};
        if constexpr (SPLIT) // with the fixup, whose adds write acc: the zeros before the first wgmma (ptxas: C7515)
            wgmma_wait<0>(acc);
        TIMELINE(multiply);
        for (int t = k0; t < k1; ++t, ++n) {
            mbar_wait(&full[n % STAGES], n / STAGES % 2);

            // ---- compute: a wgmma per WGMMA_K-deep slice, the tile's in one group
            asm volatile("wgmma.fence.sync.aligned;\n" : : : "memory"); // acc is ready for wgmma
#pragma unroll
            for (int s = 0; s < KSLICES; ++s)
                wgmma_64xNx16(acc,
                                descriptor(&As[n % STAGES][wg * WGMMA_M * BK + s * WGMMA_K], A_LEADING, SWIZZLE_ATOM),
                                descriptor(&Bs[n % STAGES][s * WGMMA_K * LINE_N], BK * LINE_N * (int)sizeof(__half),
                                           SWIZZLE_ATOM));
            asm volatile("wgmma.commit_group.sync.aligned;\n" : : : "memory");
            // The previous k-tile's group is done (this one may still run):
            // its stage goes back to the producers, of every block of the
            // cluster, which all copy into it.
            wgmma_wait<1>(acc);
            if (t > k0 && threadIdx.x % WARPGROUP == 0)
                for (int r = 0; r < cluster; ++r)
                    mbar_arrive(&empty[(n - 1) % STAGES], r);
        }
        wgmma_wait<0>(acc);
        if (threadIdx.x % WARPGROUP == 0)
            for (int r = 0; r < cluster; ++r)
                mbar_arrive(&empty[(n - 1) % STAGES], r);

        TIMELINE(fixup);
        // ---- fixup (see the header): groups of FAN_IN parts, then of groups; the last of each adds, goes on, stores.
        // Part i of a tile: this rank's block in the tile's i-th cluster.
        const bool alone = !SPLIT || k1 - k0 == tiles_k; // the tile in one part (each, where none is split)
        const long long first_k = (long long)(tile - s.whole) * tiles_k; // its first k-tile among the split ones
        const int first = alone ? u : share_of(first_k, units, split_k_tiles), i = u - first;
        const int parts = alone ? 1 : share_of(first_k + tiles_k - 1, units, split_k_tiles) - first + 1;
        bool stopped = false;
        if (!alone) // the counts are zero from here on (gemm_launch)
            asm volatile("griddepcontrol.wait;\n" : : : "memory");
        // This part holds the sum of the `size` parts from i & -size: member `me` of the group of `n` from `head`.
        for (int size = 1, level = 0; size < parts && !stopped; size *= FAN_IN, ++level) {
            int head, me, n;
            group(i, size, parts, head, me, n);
            if (n == 1)
                continue; // alone in its group: the sum goes on as it is
            const auto own = [&](int x) { return key(first, x) * cluster + rank; }; // this rank's slot and counts
            int *count = &s.counts[(own(head) * LEVELS + level) * CONSUMERS + wg];
            const auto sum = [&](int member) { // its slot, our rows: 16 x 8 tile j's float4s at j * WARPGROUP
                const size_t x = (size_t)own(head + member * size) * CONSUMERS + wg;
                return reinterpret_cast<float4 *>(s.partials) + x * FN * WARPGROUP + threadIdx.x % WARPGROUP;
            };
            const bool rows = __all_sync(~0u, m0 + wm < M); // a warp's rows in C (a vote: ptxas sees it is uniform)
            if (rows)
#pragma unroll
                for (int j = 0; j < FN; ++j)
                    __stcg(sum(me) + j * WARPGROUP, make_float4(acc[j][0], acc[j][1], acc[j][2], acc[j][3]));
            __threadfence(); // the sum is in L2, where other SMs read, before the count says so
            asm volatile("bar.sync %0, %1;\n" : : "r"(1 + wg), "n"(WARPGROUP) : "memory"); // the warpgroup's sums
            if (threadIdx.x % WARPGROUP == 0) // acq_rel: the last sees every sum counted before its own
                asm volatile("atom.acq_rel.gpu.global.add.s32 %0, [%1], 1;\n"
                             : "=r"(arrived[wg]) : "l"(count) : "memory");
            asm volatile("bar.sync %0, %1;\n" : : "r"(1 + wg), "n"(WARPGROUP) : "memory"); // and its count
            stopped = arrived[wg] != n - 1;
            // The last adds the sums in order, ((0 + 1) + 2) + 3: from its own if it is 0 or 1, else from 0's (header).
            if (rows && !stopped && me >= 2)
#pragma unroll
                for (int j = 0; j < FN; ++j) {
                    const float4 v = __ldcg(sum(0) + j * WARPGROUP);
                    acc[j][0] = v.x, acc[j][1] = v.y, acc[j][2] = v.z, acc[j][3] = v.w;
                }
            for (int m = 1; rows && !stopped && m < n; ++m) {
                const float4 *q = sum(m == 1 && me == 1 ? 0 : m);
#pragma unroll
                for (int j = 0; j < FN; ++j) {
                    const float4 v = __ldcg(q + j * WARPGROUP);
                    acc[j][0] += v.x, acc[j][1] += v.y, acc[j][2] += v.z, acc[j][3] += v.w;
                }
            }
        }
        if (stopped)
            continue;

        TIMELINE(store);
        // ---- epilogue: alpha, beta, store (with beta == 0, C is not read),
        // while the producer copies the next tile. A warp's 16 rows pass
        // through shared memory OUT_N columns at a time (see the header): in
        // as the accumulators hold them, rows g and g + MMA_M / 2 of each mma
        // tile; out as whole rows, a lane's V at a time.
        using V = std::conditional_t<VEC, float4, float>;
        constexpr int W = sizeof(V) / sizeof(float), ROW = OUT_N / W; // a row's lanes
        const int g = lane / QUAD, tc = lane % QUAD * 2, c = lane % ROW * W;
        float (*out)[OUT_N + OUT_PAD] = reinterpret_cast<float (*)[OUT_N + OUT_PAD]>(smem + STAGE_SPACE) + wm;
#pragma unroll
        for (int c0 = 0; c0 < BN; c0 += OUT_N) {
#pragma unroll
            for (int j = 0; j < OUT_N / MMA_N; ++j)
#pragma unroll
                for (int h = 0; h < 2; ++h)
                    *reinterpret_cast<float2 *>(&out[h * (MMA_M / 2) + g][j * MMA_N + tc]) =
                        make_float2(acc[c0 / MMA_N + j][2 * h], acc[c0 / MMA_N + j][2 * h + 1]);
            __syncwarp();
#pragma unroll
            for (int r = lane / ROW; r < MMA_M; r += WARP_SIZE / ROW)
                store<VEC>(C, M, N, m0 + wm + r, n0 + c0 + c, *reinterpret_cast<V *>(&out[r][c]), alpha, beta);
            __syncwarp(); // the next pass writes where this one read
        }
        TIMELINE(done);
    }
    // No block leaves before the others of its cluster: until their last
    // k-tile they copy into this block's stages and arrive on its barriers.
    cluster_sync();
}

// The tensor map of a rows x cols matrix of halves whose rows start every
// `pitch` halves, read in boxes of box_rows x box_cols with the 128-byte
// swizzle (sizes innermost first); parts of a box outside it arrive as zeros.
// False if the driver cannot describe it. L2 fetches a missed line alone,
// not with its neighbour: where rows do not start on lines, a box's row spans
// two, and a 256-byte fetch would bring in lines no box needs.
static bool tensor_map(CUtensorMap &map, const void *X, int rows, int cols, int pitch, int box_rows, int box_cols)
{
    static const auto encode = driver_function<decltype(&cuTensorMapEncodeTiled)>("cuTensorMapEncodeTiled", 12000);
    const cuuint64_t dims[2] = { (cuuint64_t)cols, (cuuint64_t)rows }, row_bytes[1] = { pitch * sizeof(__half) };
    const cuuint32_t box[2] = { (cuuint32_t)box_cols, (cuuint32_t)box_rows }, steps[2] = { 1, 1 };
    return encode && encode(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, const_cast<void *>(X), dims, row_bytes, box,
                          steps, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                          CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

// The fixup's counts at zero; the kernel starts beside it (gemm_launch) and waits for it at its first fixup.
__global__ void zero_kernel(int *counts, int n)
{
    asm volatile("griddepcontrol.launch_dependents;\n" : : : "memory");
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        counts[i] = 0;
}

// gemm_kernel for tiles BN wide in clusters of CLUSTER_BLOCKS: float4 stores or not, split tiles or not.
template <int BN, int CLUSTER_BLOCKS>
static auto kernel_for(bool vec, bool split)
{
    return vec ? (split ? gemm_kernel<BN, true, true, CLUSTER_BLOCKS> : gemm_kernel<BN, true, false, CLUSTER_BLOCKS>)
               : (split ? gemm_kernel<BN, false, true, CLUSTER_BLOCKS> : gemm_kernel<BN, false, false, CLUSTER_BLOCKS>);
}

// gemm_kernel for tiles bn wide in clusters of `cluster` (CLUSTER for tiles 128 wide or more): float4 stores or not,
// split tiles or not.
static auto kernel_of(int bn, int cluster, bool vec, bool split)
{
    return cluster == CLUSTER ? (bn == BN_WIDE  ? kernel_for<BN_WIDE, CLUSTER>(vec, split)
                                 : bn == BN_FIT ? kernel_for<BN_FIT, CLUSTER>(vec, split)
                                                : kernel_for<BN_NARROW, CLUSTER>(vec, split))
           : bn == BN_WIDE   ? kernel_for<BN_WIDE, 1>(vec, split)
           : bn == BN_FIT    ? kernel_for<BN_FIT, 1>(vec, split)
           : bn == BN_NARROW ? kernel_for<BN_NARROW, 1>(vec, split)
                             : kernel_for<BN_NARROWEST, 1>(vec, split);
}

// How many clusters of CLUSTER fit on the GPU at once, launched by `config` (the runtime's occupancy query, once per
// context: launch.cuh); none if it cannot say: blocks alone, and no error for the caller.
struct cluster_fit { int n; };
static int clusters_that_fit(const cudaLaunchConfig_t &config)
{
    return per_context<cluster_fit>([&](cluster_fit &fit) {
        // Every kernel takes the same shared memory, a block per SM
        const auto kernel = kernel_for<BN_WIDE, CLUSTER>(true, true);
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)config.dynamicSmemBytes);
        if (cudaOccupancyMaxActiveClusters(&fit.n, kernel, &config) != cudaSuccess)
            fit.n = 0, cudaGetLastError();
    }).n;
}

// The fixup's two slots and counts per block, in the call's memory, counts zeroed; false if out of GPU memory.
static bool workspace(split &s, size_t blocks, int bn, call_memory &mem)
{
    const size_t keys = 2 * blocks, counts = keys * LEVELS * CONSUMERS;
    s.partials = (float *)mem.take(keys * BM * bn * sizeof(float) + counts * sizeof(int));
    if (!s.partials)
        return false;
    s.counts = (int *)(s.partials + keys * BM * bn);
    zero_kernel<<<1, THREADS, 0, mem.stream>>>(s.counts, (int)counts);
    return true;
}

// The launch plan: the tile's width, blocks alone or in clusters of CLUSTER, the clusters (a block alone: a cluster
// of one), the tiles done whole (the first, one per cluster in turn), a split.
struct launch_plan { int bn, cluster, units, whole; bool split; };

// The planner (see the header): the cost model's fastest candidate. Make test checks its plans (common/test_plan.cu).
// Rows of A and of B start on sectors or not; `fit` clusters of CLUSTER fit at once (0: none).
static launch_plan plan(int M, int N, int K, int sms, bool a_sectors, bool b_sectors, int fit)
{
    const int tiles_k = (K + BK - 1) / BK;
    const double operands = 2.0 * M * K + 2.0 * K * N, missed = max(1 - L2_SIZE / operands, 0.0);
    const auto norm = [](double a, double b) { return sqrt(sqrt(a * a * a * a + b * b * b * b)); }; // 4-norm: header
    launch_plan best = {};
    double best_us = INFINITY;
    const auto consider = [&](launch_plan how, double us) { if (us < best_us) best = how, best_us = us; };
    // The candidates, tiles BN wide, on `units` clusters of `cluster` blocks: a tile cluster x BM rows, B shared out.
    const auto candidates = [&](int BN, int cluster, int units) {
        const int tiles = ((M + cluster * BM - 1) / (cluster * BM)) * ((N + BN - 1) / BN);
        const double mma_us = K_TILE_US + (cluster > 1) * CLUSTER_US + 2.0 * BM * BN * BK / MMA_FLOPS_US;
        const double a_bytes = min(M, BM) * BK * 2.0 * (a_sectors ? 1 : OFF_SECTOR), b_bytes = BN * BK * 2.0 / cluster;
        const double k_tile_bytes = a_bytes + b_bytes * (b_sectors ? 1 : OFF_SECTOR); // a block's, from L2
        // n units: the busiest's k-tiles and stores, a tile in up to `parts` parts, `shared` tiles in shares (header)
        const auto time = [&](int n, long long k_tiles, long long stores, long long parts, int shared) {
            const double multiply = k_tiles * norm(mma_us, n * cluster * k_tile_bytes / L2_BYTES_US);
            double us = multiply +
                        stores * min(n, tiles) * cluster * BM * BN * sizeof(float) / HBM_BYTES_US; // a tile per block
            for (long long size = 1; size < parts; size *= FAN_IN) // the fixup's levels, its sums BN wide
                us += FIXUP_US * BN / BN_WIDE;
            const double memory =
                (operands + missed * shared * (cluster * BM + BN) * 2.0 * K + 4.0 * M * N) / HBM_BYTES_US;
            return PLAN_TERMS(BM, BN, cluster, n, k_tiles, stores, parts, multiply, us, memory, norm(us, memory));
        };
        const int rounds = (tiles + units - 1) / units; // step 10's, of whole tiles
        consider({ BN, cluster, min(tiles, units), tiles, false },
                 time(min(tiles, units), (long long)rounds * tiles_k, rounds, 1, 0));
        // w rounds whole, then the rest in a share per unit (w: the last round or two; on a tie, fewer tiles split)
        for (int w = rounds - 1; w >= max(rounds - 2, 0); --w) {
            const long long split_k_tiles = (long long)(tiles - w * units) * tiles_k;
            const long long share = (split_k_tiles + units - 1) / units;
            if (split_k_tiles >= units) // a tile spans up to (tiles_k - 1) / share + 2 shares
                consider({ BN, cluster, units, w * units, true },
                         time(units, w * tiles_k + share, w + share / tiles_k + 1, (tiles_k - 1) / share + 2,
                              tiles - w * units));
        }
        // Every tile in p equal parts, on p units each.
        for (int p = 2; p * tiles <= units && p <= tiles_k; ++p)
            consider({ BN, cluster, p * tiles, 0, true }, time(p * tiles, (tiles_k + p - 1) / p, 1, p, 0));
    };
    // Each width, on blocks alone, then in clusters if any fit and B's k-tile is two boxes wide or more.
    for (const int BN : { BN_WIDE, BN_FIT, BN_NARROW, BN_NARROWEST })
        for (int cluster = 1; cluster <= (fit > 0 && BN > BN_NARROWEST ? CLUSTER : 1); cluster *= CLUSTER)
            candidates(BN, cluster, cluster == 1 ? sms : fit);
    return best;
}

extern "C" int gemm_launch(int M, int N, int K, float alpha, const void *A,
                           const void *B, float beta, float *C, cudaStream_t stream)
{
    if (const int done = no_product(M, N, K, alpha, beta, C, stream); done >= 0)
        return done; // an earlier error, sizes out of range, or nothing to multiply (launch.cuh)
    call_memory mem(stream); // this call's memory, on its stream, for copies of operands TMA cannot read (repack.cuh)
    int lda, ldb; // halves from one row of A, and of B, to the next
    A = for_tma(A, M, K, lda, mem);
    B = for_tma(B, K, N, ldb, mem);
    if (!A || !B)
        return mem.error; // out of GPU memory
    CUtensorMap map_a, map_b, map_last; // map_last: boxes of A as tall as the last row of tiles (see the header)
    if (!tensor_map(map_a, A, M, K, lda, BM, BK) || !tensor_map(map_b, B, K, N, ldb, BK, LINE_N) ||
        !tensor_map(map_last, A, M, K, lda, M - (M - 1) / BM * BM, BK))
        return cudaErrorInvalidValue; // the driver cannot describe an operand to TMA
    int device = 0, sms = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    const int smem = STAGE_SPACE + BM * (OUT_N + OUT_PAD) * (int)sizeof(float); // and the epilogue's pass
    // Clusters of CLUSTER (attrs[0]) where the plan takes them; the kernel may start beside zero_kernel (attrs[1]).
    cudaLaunchAttribute attrs[2] = { { cudaLaunchAttributeClusterDimension },
                                     { cudaLaunchAttributeProgrammaticStreamSerialization } };
    attrs[0].val.clusterDim.x = CLUSTER, attrs[0].val.clusterDim.y = attrs[0].val.clusterDim.z = 1;
    attrs[1].val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t config = { dim3(CLUSTER), dim3(THREADS), (size_t)smem, stream, attrs, 1 };
    const launch_plan how = plan(M, N, K, sms, lda % 16 == 0 && (uintptr_t)A % 32 == 0, // rows on 32-byte sectors
                                 ldb % 16 == 0 && (uintptr_t)B % 32 == 0, clusters_that_fit(config));
    const bool vec = N % 4 == 0 && (uintptr_t)C % sizeof(float4) == 0; // float4 stores: rows of whole float4s, aligned
    const auto kernel = kernel_of(how.bn, how.cluster, vec, how.split);
    // A block may use more than 48 KB of shared memory only if asked; an
    // error here makes the launch fail, which the caller sees.
    cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    // setmaxnreg assumes REGS per thread at the start (see the header): check ptxas gave all __launch_bounds__ allows.
    cudaFuncAttributes attr;
    if (cudaFuncGetAttributes(&attr, kernel) == cudaSuccess && attr.numRegs != REGS)
        return cudaErrorInvalidKernelImage; // a build this file does not expect: the kernel would hang
    // Split tiles: two slots and counts per block, zero_kernel first (programmatic dependent launch: see the header).
    split s = { how.whole };
    if (how.split && !workspace(s, (size_t)how.units * how.cluster, how.bn, mem))
        return mem.error; // out of GPU memory, as above
    config.gridDim = dim3(how.units * how.cluster);
    config.attrs = how.cluster == CLUSTER ? attrs : attrs + 1; // a cluster of one: step 11's launch
    config.numAttrs = (how.cluster == CLUSTER) + how.split;
    cudaLaunchKernelEx(&config, kernel, map_a, map_last, map_b, M, N, K, alpha, beta, C, s);
    return cudaGetLastError();
}
