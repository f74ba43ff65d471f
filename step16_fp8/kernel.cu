/*
 * step16_fp8: A and B in FP8 (e4m3, a byte each) with a float scale per
 * 1 x 128 run of A and per 128 x 128 block of B (gemm.h's gemm_fp8_launch),
 * on the tensor cores' FP8 path: twice step 15's multiplies per cycle.
 *
 * What changed: the operands, and a promotion.
 * - wgmma.m64nNk32.f32.e4m3.e4m3 takes 32 of K per instruction, 32 bytes,
 *   as step 15's k16 took of halves: the descriptors step the same bytes. A
 *   k-tile is 128 deep, one 128-byte line a row, one block of the scales.
 * - FP8 wgmma reads both operands K-major, so B is N x K (each column of C's
 *   weights together, as models store them): its tile is copied as A's, a
 *   box of rows, and a cluster's blocks each copy a part of its rows to all.
 *   Swapped tiles (few rows) read B's rows as wgmma's A, untransposed.
 * - The tensor cores add FP8 products into a sum that keeps 13 bits below
 *   its largest term (results/h200/fp8.txt), where a float keeps 24.
 *   So each k-tile's four wgmma write a sum of their own (the first with
 *   scale-d 0), the consumer waits for it, and adds it, times the scales of
 *   its rows and columns for that k-tile, to its float sums (promote). The
 *   error stays that of 128 products; the check's tolerance (check.c) is
 *   derived from the same 13 bits.
 * - A thread holds two sets of sums, the tile's and the k-tile's: tiles 128
 *   and 64 wide only (192 spills).
 * - The scales come with their k-tile: the producer copies those of the
 *   tile's rows of A and of its block of B into the stage by TMA, a 1-D box
 *   of floats each (from the 16 bytes before them: TMA's boxes start on
 *   16), on the stage's barrier, so that a consumer reads them from shared
 *   memory while its wgmma run, not from L2.
 *
 * Why it is faster: an FP8 wgmma does twice the multiplies of a half one in
 * the same time (1979 dense TFLOPS on an H200 against 989), and A and B are
 * half the bytes, from memory, L2 and shared memory alike.
 *
 * What limits it now: the promotion. A consumer waits for each k-tile's
 * wgmma before it adds, so its next wgmma waits for that: the two
 * consumers of a 128-row tile overlap each other, a ping-pong tile's do
 * not. Two k-tiles' sums in flight, one promoted while the next one's
 * wgmma run, fit a consumer's 232 registers (192 of them), but ptxas then
 * serializes the wgmma (results/h200/fp8.txt, section 9). At 4096 x 7168
 * x 16384 the step ran 860 TFLOPS, cuBLASLt 1000, with 128 x 128 tiles on
 * blocks alone, split (whole ones ran 872, split 854, one process each: as
 * near as two processes come); with no scales at all, 911 (the scales by
 * cp.async then: results/h200/fp8.txt).
 *
 * Launch: as step 15's, without the 192- and 256-wide tiles.
 *
 * Measured: 819.81 TFLOPS, 89.5% of cuBLASLt FP8, 1.36x step 15
 * (scripts/run_all.sh, NVIDIA H200, CUDA 13.0, 4096^3, 2026-12-02).
 */
#include "gemm.h"
#include "launch.cuh"
#include "repack.cuh"

#include <cuda.h>
#include <stdint.h>
#include <type_traits>

// The most elements A, B or C may hold (gemm.h): TMA reads A and B, and C's offsets are 64-bit.
extern "C" const long long gemm_max_elements = GEMM_MAX_ELEMENTS_64;

// rows of C per tile, the kernel's BM: both consumers' halves of one tile (step 13), or one consumer's (plan)
constexpr int BM_BOTH = 128, BM_ONE = 64;
// columns of C per tile, the kernel's BN: the widths the planner chooses from (plan), 128 and 64; step 15's widest,
// BN_WIDE (the tile FIXUP_US was measured on), and 192 spill: a thread holds its sums twice, a k-tile's and the tile's
constexpr int BN_WIDE = 256, BN_NARROW = 128, BN_NARROWEST = 64;
constexpr int BK = 128; // depth of the shared tiles: one 128-byte line of e4m3 per row, one block of scales
constexpr int STAGE_SPACE = 200 * 1024; // bytes of shared memory for the stages: 6 or 8 (BN 128, 64; BM 128)
constexpr int GROUP_M = 8; // tile rows in one group of the block order
constexpr int CLUSTER = 2; // blocks in a cluster, the most (plan)
// The epilogue's pass: OUT_N columns of the tile, each row padded so that
// the 4 rows a half-warp writes start in different banks.
constexpr int OUT_N = 32, OUT_PAD = 8;
constexpr int WGMMA_M = 64, WGMMA_K = 32; // wgmma.m64nBNk32, e4m3
constexpr int MMA_M = 16, MMA_N = 8; // a warp's accumulators come in mma.sync's 16 x 8 tiles

constexpr int WARP_SIZE = 32;
constexpr int WARPGROUP = 4 * WARP_SIZE; // the threads that issue one wgmma
constexpr int PIECE = 16; // elements per 16-byte piece: 16 e4m3
constexpr int LINE_PIECES = 8; // pieces per 128-byte line of shared-memory banks
constexpr int QUAD = 4; // lanes that share a row of an mma fragment
// The fixup's groups of four parts, summed ((0 + 1) + 2) + 3; LEVELS of groups, more than any grid needs (2^32 parts).
constexpr int FAN_IN = 4, LEVELS = 16;
constexpr double MMA_FLOPS_US = 13.2e6; // the planner's cost model (see the header): flops per us per SM, at load
constexpr double PROMOTE_US = 0.05;     // a k-tile's promotion, 128 columns: its scales read, its sums added
constexpr double K_TILE_US = 0.06;     // and a k-tile's own time: its barriers, wgmma's fence, commit and wait
constexpr double L2_BYTES_US = 10.0e6; // bytes per us from L2 to all SMs together
constexpr double HBM_BYTES_US = 4.0e6; // bytes per us to and from memory
constexpr double FIXUP_US = 10.0;      // a level of the fixup, 128 x 256 sums written, read by the last of four
constexpr double L2_SIZE = 50e6;       // bytes of L2 (H100, H200): operands that fit are read from memory once
constexpr double CLUSTER_US = 0.1;     // a cluster's k-tile waits for the slower of its blocks
constexpr double OFF_SECTOR = 1.6;     // L2's cost per byte of a row off 32-byte sectors, against one on them
constexpr double SPLIT_US = 5.0;       // a split's own costs: zero_kernel, the fixup's trips through L2 (not a cluster's)
constexpr double FIXED_US = 5.0;       // every launch's: the harness's time of 1 x 8 x 8, nothing to multiply

constexpr int CONSUMERS = 2;                          // warpgroups that multiply, each its own tiles, in turn
constexpr int THREADS = (1 + CONSUMERS) * WARPGROUP;    // and one that copies
// Tiles of fewer rows than wgmma's M (plan), swapped: the rows on wgmma's N side, the columns on its M side, 64 a
// consumer
constexpr int BM_FEW = 32, BM_FEWER = 16, BM_FEWEST = 8, BN_SWAP = CONSUMERS * WGMMA_M;
// Registers per thread after setmaxnreg (multiples of 8). The block starts
// with REGS each, the most 64K registers give THREADS threads; the producer
// gives some up, and the consumers can take only what it gave: setmaxnreg.inc
// waits until the block has them.
constexpr int REGS = 65536 / THREADS / 8 * 8;
constexpr int PRODUCER_REGS = 40;
constexpr int CONSUMER_REGS = (REGS * (1 + CONSUMERS) - PRODUCER_REGS) / CONSUMERS / 8 * 8;
constexpr int LINE_N = LINE_PIECES * PIECE;            // e4m3 per line: a row of a k-tile
constexpr int KSLICES = BK / WGMMA_K;                  // wgmma per k-tile
// The bytes of one stage: a tile of A (a_rows of it) and one of B, bn columns wide.
__host__ __device__ constexpr int stage_bytes(int bn, int a_rows)
{
    return a_rows * BK + BK * bn; // a byte an element
}
constexpr int SWIZZLE_ATOM = LINE_PIECES * LINE_PIECES * 16; // 8 rows of a line: tiles start on one
// A k-tile's scales come by TMA, in boxes that start on 16 bytes of sa and sb, as TMA's boxes must: SCALE_BOX floats.
// Of A's, the tile's rows and up to SCALE_BOX before them; of B's, SCALE_BOX with its block's. Each lands on 128-byte
// lines of its own (SCALE_LINE floats).
constexpr int SCALE_BOX = 4, SCALE_LINE = 32;
__host__ __device__ constexpr int scale_lines(int floats)
{
    return (floats + SCALE_LINE - 1) / SCALE_LINE * SCALE_LINE;
}

static_assert(BK == LINE_N && BM_ONE == WGMMA_M && BM_BOTH == CONSUMERS * WGMMA_M,
              "a row of A's and of B's tile is one line; a consumer's wgmma covers its rows");
static_assert(CONSUMER_REGS <= 255, "a thread holds at most 255 registers");
static_assert(BM_FEWEST * BK % (SWIZZLE_ATOM / 2) == 0 && stage_bytes(BN_NARROWEST, BM_ONE) % SWIZZLE_ATOM == 0,
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
__device__ void tma_load(uint8_t *dst, const CUtensorMap *map, int c0, int c1, uint64_t *bar)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3}], [%4];\n"
                 : : "r"(smem_addr(dst)), "l"(map), "r"(c0), "r"(c1), "r"(smem_addr(bar)) : "memory");
}

// The same box into this place in every block of the cluster in `mask` (bit
// r: rank r), on each one's barrier at bar's place: one read from L2, for all.
__device__ void tma_load_multicast(uint8_t *dst, const CUtensorMap *map, int c0, int c1, uint64_t *bar, int mask)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
                 " [%0], [%1, {%2, %3}], [%4], %5;\n"
                 : : "r"(smem_addr(dst)), "l"(map), "r"(c0), "r"(c1), "r"(smem_addr(bar)), "h"((uint16_t)mask)
                 : "memory");
}

// The box of a 1-D tensor map (the scales) whose first element is c0.
__device__ void tma_load_1d(float *dst, const CUtensorMap *map, int c0, uint64_t *bar)
{
    asm volatile("cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2}], [%3];\n"
                 : : "r"(smem_addr(dst)), "l"(map), "r"(c0), "r"(smem_addr(bar)) : "memory");
}

// ---- clusters (see the header): every thread of the cluster's blocks
// waits here for all the others; what each wrote before, the others see after.
__device__ void cluster_sync()
{
    asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" : : : "memory");
}

// The float4 at p's place in the shared memory of the block of this rank in the cluster (mapa, as mbar_arrive).
__device__ float4 ld_cluster(const float4 *p, int rank)
{
    float4 v;
    asm volatile("{ .reg .b32 there;\n"
                 "mapa.shared::cluster.u32 there, %4, %5;\n"
                 "ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [there]; }\n"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "r"(smem_addr(p)), "r"(rank) : "memory");
    return v;
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
__device__ uint64_t descriptor(const uint8_t *p, int leading_bytes, int stride_bytes)
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

// d = a * b (+ d where keep), issued by the whole warpgroup: A 64 x 32 and B 32 x 128, both K-major (FP8 wgmma
// reads no other), D 64 x 128 float.
__device__ void wgmma_64xNx32(float (&d)[BN_NARROW / MMA_N][4], uint64_t a, uint64_t b, int keep)
{
    asm volatile("{ .reg .pred p; setp.ne.b32 p, %66, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 {"
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, "
                 "%21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, "
                 "%40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, "
                 "%59, %60, %61, %62, %63"
                 "}, %64, %65, p, 1, 1; }\n"
                 : D4(0), D4(1), D4(2), D4(3), D4(4), D4(5), D4(6), D4(7), D4(8), D4(9), D4(10), D4(11),
                   D4(12), D4(13), D4(14), D4(15)
                 : "l"(a), "l"(b), "r"(keep));
}

// And with B 32 x 64 and D 64 x 64.
__device__ void wgmma_64xNx32(float (&d)[BN_NARROWEST / MMA_N][4], uint64_t a, uint64_t b, int keep)
{
    asm volatile("{ .reg .pred p; setp.ne.b32 p, %34, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 {"
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, "
                 "%21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
                 "}, %32, %33, p, 1, 1; }\n"
                 : D4(0), D4(1), D4(2), D4(3), D4(4), D4(5), D4(6), D4(7)
                 : "l"(a), "l"(b), "r"(keep));
}

// Swapped (plan): A 64 x 32 of B's tile, B 32 x 32 of A's rows (both K-major), D 64 x 32, C's tile transposed.
__device__ void wgmma_swapped(float (&d)[BM_FEW / MMA_N][4], uint64_t a, uint64_t b, int keep)
{
    asm volatile("{ .reg .pred p; setp.ne.b32 p, %18, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n32k32.f32.e4m3.e4m3 {"
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15"
                 "}, %16, %17, p, 1, 1; }\n"
                 : D4(0), D4(1), D4(2), D4(3)
                 : "l"(a), "l"(b), "r"(keep));
}

// The same with 16 rows of A, and with 8.
__device__ void wgmma_swapped(float (&d)[BM_FEWER / MMA_N][4], uint64_t a, uint64_t b, int keep)
{
    asm volatile("{ .reg .pred p; setp.ne.b32 p, %10, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n16k32.f32.e4m3.e4m3 {"
                 "%0, %1, %2, %3, %4, %5, %6, %7"
                 "}, %8, %9, p, 1, 1; }\n"
                 : D4(0), D4(1)
                 : "l"(a), "l"(b), "r"(keep));
}

__device__ void wgmma_swapped(float (&d)[BM_FEWEST / MMA_N][4], uint64_t a, uint64_t b, int keep)
{
    asm volatile("{ .reg .pred p; setp.ne.b32 p, %6, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e4m3 {"
                 "%0, %1, %2, %3"
                 "}, %4, %5, p, 1, 1; }\n"
                 : D4(0)
                 : "l"(a), "l"(b), "r"(keep));
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

// Where k-tile kt's scales of the tile at (m0, n0) lie (gemm.h): its rows' in sa, its block's in sb (BN <= 128: the
// tile's columns lie in one). A stage holds them from the 16 bytes before: at.x % SCALE_BOX, at.y % SCALE_BOX in.
__device__ int2 scales_at(int M, int tiles_k, int m0, int n0, int kt)
{
    return make_int2(kt * M + m0, n0 / BK * tiles_k + kt);
}

// ---- load tiles: tile k0 of A and B into one stage, by one producer
// thread: a TMA box of A and one of B (its rows K-major, as A's), on a
// barrier armed with their bytes. The blocks of a cluster need the same tile
// of B: the block of rank r copies its r-th BN / cluster rows into every
// block's stage. A block whose rows all lie below C (the last of a cluster)
// copies no A. a_rows: the rows of A in its box, fewer than BM in the last
// row (map_last). And the k-tile's scales (promote), on the same barrier,
// from the 16 bytes before each (scales_at): those of the tile's rows of A
// (rows past C read what follows, zeros past the end), and of B's block.
template <int BM, int BN>
__device__ void load_tiles(uint8_t *As, uint8_t *Bs, float *sfa, float *sfb, uint64_t *bar, const CUtensorMap *map_a,
                           const CUtensorMap *map_b, const CUtensorMap *map_sa, const CUtensorMap *map_sb, int M,
                           int tiles_k, int m0, int n0, int k0, int a_rows, int cluster)
{
    if (threadIdx.x == 0) {
        mbar_arrive_expect(bar, stage_bytes(BN, a_rows) + (BM + 2 * SCALE_BOX) * (int)sizeof(float));
        if (a_rows > 0) // none below C
            tma_load(As, map_a, k0, m0, bar);
        const int2 at = scales_at(M, tiles_k, m0, n0, k0 / BK);
        tma_load_1d(sfa, map_sa, at.x / SCALE_BOX * SCALE_BOX, bar);
        tma_load_1d(sfb, map_sb, at.y / SCALE_BOX * SCALE_BOX, bar);
        const int r = (int)blockIdx.x % cluster, rows = BN / cluster; // B's rows this block copies
        if (cluster == 1)
            tma_load(Bs, map_b, k0, n0, bar);
        else
            tma_load_multicast(Bs + r * rows * BK, map_b, k0, n0 + r * rows, bar, (1 << cluster) - 1);
    }
}

// ---- promote: acc += a k-tile's sums (part) times its scales (gemm.h):
// those of A's rows (1 x 128 runs) and of B's columns (128 x 128 blocks).
// The tensor cores keep 13 bits below a sum's largest term (the header), a
// float 24: each k-tile's sum goes to a float before the next. A thread's
// sums: rows g and g + 8 of each 16-row slice, columns tc and tc + 1 of each
// 8 (the epilogue's); swapped, C's rows and columns trade places. The sums
// of rows past C, whatever their scales, are never stored.
// The producer copies the scales into the k-tile's stage (load tiles), so
// that their trip to L2 is under the k-tiles before; a thread reads its own
// while its wgmma run (scales), and applies them after (promote).
template <bool SWAP, int FN>
struct scale_set {
    float b;                   // B's block's
    float a[SWAP ? FN : 1][2]; // A's rows': the thread's two rows, or swapped, its columns (tc, tc + 1) of each 8
};

// sfa: the stage's scales of the tile's rows of A; sfb: of its block of B.
template <bool SWAP, int FN>
__device__ scale_set<SWAP, FN> scales(const float *sfa, const float *sfb, int wm, int lane)
{
    const int g = lane / QUAD, tc = lane % QUAD * 2;
    scale_set<SWAP, FN> sc;
    sc.b = *sfb;
#pragma unroll
    for (int j = 0; j < (SWAP ? FN : 1); ++j)
#pragma unroll
        for (int e = 0; e < 2; ++e)
            sc.a[j][e] = sfa[SWAP ? j * MMA_N + tc + e : wm + g + e * MMA_M / 2];
    return sc;
}

template <bool SWAP, int FN>
__device__ void promote(float (&acc)[FN][4], const float (&part)[FN][4], const scale_set<SWAP, FN> &sc)
{
#pragma unroll
    for (int j = 0; j < FN; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e)
            acc[j][e] += part[j][e] * (sc.b * (SWAP ? sc.a[j][e % 2] : sc.a[0][e / 2]));
}

// The top-left element of tile number `tile` of C. A row of the numbering
// is GROUP_M tile rows, numbered down its columns, so that the tiles in
// flight share more of A and B in L2 (the last row may have fewer).
// A tile is cluster x BM rows: this block's are BM of them, in rank order.
template <int BM, int BN>
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

template <int BM, int BN, bool VEC, bool SPLIT, int CLUSTER_BLOCKS>
__global__ void __launch_bounds__(THREADS, 1)
gemm_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_last,
            const __grid_constant__ CUtensorMap map_b, const __grid_constant__ CUtensorMap map_sa,
            const __grid_constant__ CUtensorMap map_sb, int M, int N, int K, float alpha, float beta,
            float *__restrict__ C, split s)
{
    constexpr bool PING = BM == BM_ONE; // a tile per consumer, in turns; else both on each tile, at once (step 13)
    constexpr bool SWAP = BM < WGMMA_M; // C's tile transposed in the accumulators: 64 columns by BM rows a consumer
    constexpr int STAGES = STAGE_SPACE / stage_bytes(BN, BM), FN = (SWAP ? BM : BN) / MMA_N; // 16 x 8 tiles a warp
    extern __shared__ __align__(SWIZZLE_ATOM) unsigned char smem[];
    uint8_t (*As)[BM * BK] = reinterpret_cast<uint8_t (*)[BM * BK]>(smem);
    uint8_t (*Bs)[BK * BN] = reinterpret_cast<uint8_t (*)[BK * BN]>(smem + STAGES * sizeof *As);
    // stage s's scales: of the tile's rows of A, of its block of B
    __shared__ __align__(SCALE_LINE * sizeof(float)) float scale_a[STAGES][scale_lines(BM + SCALE_BOX)],
        scale_b[STAGES][SCALE_LINE];
    __shared__ uint64_t full[STAGES];  // stage s's tile has landed, and its scales
    __shared__ uint64_t empty[STAGES]; // stage s's consumers, in each block of the cluster, are done with it
    __shared__ uint64_t turn[CONSUMERS]; // consumer c's turn to multiply: the other has issued its tile's wgmma
    __shared__ int arrived[CONSUMERS];  // the parts each consumer found at its group before it (the fixup)

    // Swapped tiles in clusters: one tile a cluster, each block a slice of its k-tiles (plan), the sums added through
    // distributed shared memory. `cluster`: the blocks that share the copies of B, 1 or CLUSTER (plan).
    static_assert(!SWAP || (CLUSTER_BLOCKS > 1 && !SPLIT), "a swapped tile is a cluster's, its k-tiles split over it");
    constexpr int cluster = SWAP ? 1 : CLUSTER_BLOCKS;
    // the block's cluster u of `units` (the grid's), and its rank in it
    const int u = blockIdx.x / CLUSTER_BLOCKS, units = gridDim.x / CLUSTER_BLOCKS, rank = blockIdx.x % CLUSTER_BLOCKS;
    const int tiles_m = (M + cluster * BM - 1) / (cluster * BM), tiles_n = (N + BN - 1) / BN;
    const int warp = threadIdx.x / WARP_SIZE, lane = threadIdx.x % WARP_SIZE;
    // the consumer warpgroup (-1: the producer); a consumer warp's rows of the tile
    const int wg = threadIdx.x / WARPGROUP - 1, wm = (PING ? 0 : wg * WGMMA_M) + warp % (WARPGROUP / WARP_SIZE) * MMA_M;
    const int half = PING ? 0 : wg; // the consumer's half of the tile's sums in the fixup
    const int tiles_k = (K + BK - 1) / BK;

    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) { // full: the thread that arms it; empty: the consumers
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" : : "r"(smem_addr(&full[s])));
            asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" : : "r"(smem_addr(&empty[s])), "n"(cluster * (PING ? 1 : CONSUMERS)));
        }
        for (int c = 0; c < CONSUMERS; ++c) // one thread of the other consumer
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" : : "r"(smem_addr(&turn[c])));
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
            tile_origin<BM, BN>(tile, tiles_m, tiles_n, cluster, m0, n0);
            if constexpr (SWAP) // this block's slice of the tile's k-tiles
                k0 = rank * tiles_k / CLUSTER_BLOCKS, k1 = (rank + 1) * tiles_k / CLUSTER_BLOCKS;
            for (int t = k0; t < k1; ++t, ++n) {
                mbar_wait(&empty[n % STAGES], n / STAGES % 2 ^ 1);
                const int k = k1 - k0 < tiles_k ? k0 + k1 - 1 - t : t; // a piece of a tile: from its last k-tile down
                load_tiles<BM, BN>(As[n % STAGES], Bs[n % STAGES], scale_a[n % STAGES], scale_b[n % STAGES],
                                   &full[n % STAGES], m0 + BM > M ? &map_last : &map_a, &map_b, &map_sa, &map_sb, M,
                                   tiles_k, m0, n0, k * BK, max(min(M - m0, BM), 0), cluster);
            }
        }
        // Wait until the consumers have released every stage, when each copy
        // this thread issued has landed: compute-sanitizer's racecheck may
        // hang on a producer that stops with copies in flight (step 10's header).
        for (int i = n; i < n + STAGES; ++i)
            mbar_wait(&empty[i % STAGES], i / STAGES % 2 ^ 1);
        if constexpr (SWAP)
            cluster_sync(); // as the consumers do, once their sums are in place
        cluster_sync(); // as the consumers do, at the end
        return;
    }

    regs_inc<CONSUMER_REGS>();
    const long long split_k_tiles = (long long)(tiles_m * tiles_n - s.whole) * tiles_k;
    int tile, k0, k1;
    for (int p = 0; part<SPLIT>(p, u, units, s.whole, tiles_m * tiles_n, tiles_k, tile, k0, k1); ++p) {
        if (PING && p % CONSUMERS != wg) { // the other consumer's part: its k-tiles come first in the stages
            n += k1 - k0;
            continue;
        }
        int m0, n0;
        tile_origin<BM, BN>(tile, tiles_m, tiles_n, cluster, m0, n0);
        if constexpr (SWAP)
            k0 = rank * tiles_k / CLUSTER_BLOCKS, k1 = (rank + 1) * tiles_k / CLUSTER_BLOCKS;
        float acc[FN][4] = {}, part[FN][4] = {}; // the tile's sums, in floats; a k-tile's, from the tensor cores
        if (PING && p > 0) // the other has issued every wgmma of part p - 1, which it was given (header)
            mbar_wait(&turn[wg], (p - 1) / CONSUMERS % 2);
        TIMELINE(multiply);
        for (int t = k0; t < k1; ++t, ++n) {
            mbar_wait(&full[n % STAGES], n / STAGES % 2);

            // ---- compute: a wgmma per WGMMA_K-deep slice, the tile's in one group, into part (the first: part =)
            asm volatile("wgmma.fence.sync.aligned;\n" : : : "memory"); // part is ready for wgmma
#pragma unroll
            for (int s = 0; s < KSLICES; ++s)
                if constexpr (SWAP) // the consumer's rows of B's box as wgmma's A; A's rows as its B
                    wgmma_swapped(part,
                                  descriptor(&Bs[n % STAGES][half * WGMMA_M * BK + s * WGMMA_K], A_LEADING, SWIZZLE_ATOM),
                                  descriptor(&As[n % STAGES][s * WGMMA_K], A_LEADING, SWIZZLE_ATOM), s > 0);
                else
                    wgmma_64xNx32(part,
                                descriptor(&As[n % STAGES][half * WGMMA_M * BK + s * WGMMA_K], A_LEADING, SWIZZLE_ATOM),
                                descriptor(&Bs[n % STAGES][s * WGMMA_K], A_LEADING, SWIZZLE_ATOM), s > 0);
            asm volatile("wgmma.commit_group.sync.aligned;\n" : : : "memory");
            const int2 at = scales_at(M, tiles_k, m0, n0, k1 - k0 < tiles_k ? k0 + k1 - 1 - t : t); // as load tiles
            const auto sc = scales<SWAP, FN>(scale_a[n % STAGES] + at.x % SCALE_BOX,
                                             scale_b[n % STAGES] + at.y % SCALE_BOX, wm, lane); // under the wgmma
            // This k-tile's group is done: its stage goes back to the
            // producers, of every block of the cluster, which all copy into
            // it; its sums, scaled, to the floats.
            wgmma_wait<0>(part);
            // Every warp has read its scales before one thread gives the stage back (the producer copies into it).
            asm volatile("bar.sync %0, %1;\n" : : "r"(1 + wg), "n"(WARPGROUP) : "memory");
            if (threadIdx.x % WARPGROUP == 0)
                for (int r = 0; r < cluster; ++r)
                    mbar_arrive(&empty[n % STAGES], SWAP ? rank : r);
            promote(acc, part, sc);
        }
        if (PING && threadIdx.x % WARPGROUP == 0) // the tensor cores go to the other consumer while this one stores
            mbar_arrive(&turn[(wg + 1) % CONSUMERS], rank);

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
            int *count = &s.counts[(own(head) * LEVELS + level) * CONSUMERS + half];
            const auto sum = [&](int member) { // its slot, our rows: 16 x 8 tile j's float4s at j * WARPGROUP
                const size_t x = (size_t)own(head + member * size) * CONSUMERS + half;
                return reinterpret_cast<float4 *>(s.partials) + x * FN * WARPGROUP + threadIdx.x % WARPGROUP;
            };
            const bool rows = __all_sync(~0u, m0 + wm < M); // a warp's rows in C (a vote: uniform)
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
        if constexpr (SWAP) { // each block's sums in its shared memory; rank 0 adds the others' in rank order
            float4 *sums = reinterpret_cast<float4 *>(smem + STAGE_SPACE) + threadIdx.x - WARPGROUP;
#pragma unroll
            for (int j = 0; j < FN; ++j)
                sums[j * CONSUMERS * WARPGROUP] = make_float4(acc[j][0], acc[j][1], acc[j][2], acc[j][3]);
            cluster_sync(); // every block's sums in place; the last cluster_sync keeps them there until read
            for (int r = 1; rank == 0 && r < CLUSTER_BLOCKS; ++r)
#pragma unroll
                for (int j = 0; j < FN; ++j) {
                    const float4 v = ld_cluster(&sums[j * CONSUMERS * WARPGROUP], r);
                    acc[j][0] += v.x, acc[j][1] += v.y, acc[j][2] += v.z, acc[j][3] += v.w;
                }
            if (rank > 0)
                continue;
            // then a thread's sums straight to C: rows 8 apart, 8 lanes a row's 8 columns (32 bytes)
            const int g = lane / QUAD, tc = lane % QUAD * 2;
#pragma unroll
            for (int j = 0; j < FN; ++j)
#pragma unroll
                for (int e = 0; e < 4; ++e)
                    store(C, M, N, m0 + j * MMA_N + tc + e % 2, n0 + wm + g + e / 2 * (MMA_M / 2), acc[j][e], alpha,
                          beta);
            continue;
        }
        // ---- epilogue: alpha, beta, store (with beta == 0, C is not read),
        // while the producer copies the next tile. A warp's 16 rows pass
        // through shared memory OUT_N columns at a time (see the header): in
        // as the accumulators hold them, rows g and g + MMA_M / 2 of each mma
        // tile; out as whole rows, a lane's V at a time.
        using V = std::conditional_t<VEC, float4, float>;
        constexpr int W = sizeof(V) / sizeof(float), ROW = OUT_N / W; // a row's lanes
        const int g = lane / QUAD, tc = lane % QUAD * 2, c = lane % ROW * W;
        float (*out)[OUT_N + OUT_PAD] = // the warp's own 16 rows of the pass
            reinterpret_cast<float (*)[OUT_N + OUT_PAD]>(smem + STAGE_SPACE) + (warp - WARPGROUP / WARP_SIZE) * MMA_M;
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

// The tensor map of a rows x cols matrix of e4m3 whose rows start every
// `pitch` bytes, read in boxes of box_rows x box_cols with the 128-byte
// swizzle (sizes innermost first); parts of a box outside it arrive as zeros.
// False if the driver cannot describe it. L2 fetches a missed line alone,
// not with its neighbour: where rows do not start on lines, a box's row spans
// two, and a 256-byte fetch would bring in lines no box needs.
static bool tensor_map(CUtensorMap &map, const void *X, int rows, int cols, int pitch, int box_rows, int box_cols)
{
    static const auto encode = driver_function<decltype(&cuTensorMapEncodeTiled)>("cuTensorMapEncodeTiled", 12000);
    const cuuint64_t dims[2] = { (cuuint64_t)cols, (cuuint64_t)rows }, row_bytes[1] = { (cuuint64_t)pitch };
    const cuuint32_t box[2] = { (cuuint32_t)box_cols, (cuuint32_t)box_rows }, steps[2] = { 1, 1 };
    return encode && encode(&map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, const_cast<void *>(X), dims, row_bytes, box,
                          steps, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                          CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

// The tensor map of `count` floats in a row (the scales), read in boxes of `box`; parts of a box past the end arrive
// as zeros.
static bool scales_map(CUtensorMap &map, const float *X, long long count, int box)
{
    static const auto encode = driver_function<decltype(&cuTensorMapEncodeTiled)>("cuTensorMapEncodeTiled", 12000);
    const cuuint64_t dims[1] = { (cuuint64_t)count }, no_strides[1] = { 0 };
    const cuuint32_t boxes[1] = { (cuuint32_t)box }, steps[1] = { 1 };
    return encode && encode(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 1, const_cast<float *>(X), dims, no_strides, boxes,
                            steps, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                            CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

// The fixup's counts at zero; the kernel starts beside it (gemm_launch) and waits for it at its first fixup.
__global__ void zero_kernel(int *counts, int n)
{
    asm volatile("griddepcontrol.launch_dependents;\n" : : : "memory");
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        counts[i] = 0;
}

// gemm_kernel for tiles BM x BN in clusters of CLUSTER_BLOCKS: float4 stores or not, split tiles or not.
template <int BM, int BN, int CLUSTER_BLOCKS>
static auto kernel_for(bool vec, bool split)
{
    return vec ? (split ? gemm_kernel<BM, BN, true, true, CLUSTER_BLOCKS> : gemm_kernel<BM, BN, true, false, CLUSTER_BLOCKS>)
               : (split ? gemm_kernel<BM, BN, false, true, CLUSTER_BLOCKS>
                        : gemm_kernel<BM, BN, false, false, CLUSTER_BLOCKS>);
}

// gemm_kernel for tiles BM x bn in clusters of `cluster` (CLUSTER for tiles 128 wide or more): float4 stores or not,
// split tiles or not.
template <int BM>
static auto kernel_of(int bn, int cluster, bool vec, bool split)
{
    return cluster == CLUSTER  ? kernel_for<BM, BN_NARROW, CLUSTER>(vec, split)
           : bn == BN_NARROW ? kernel_for<BM, BN_NARROW, 1>(vec, split)
                             : kernel_for<BM, BN_NARROWEST, 1>(vec, split);
}

// gemm_kernel for swapped tiles of bm rows, a tile's k-tiles on a cluster of CLUSTER (its stores one float at a time).
static auto kernel_swapped(int bm)
{
    return bm == BM_FEW     ? gemm_kernel<BM_FEW, BN_SWAP, false, false, CLUSTER>
           : bm == BM_FEWER ? gemm_kernel<BM_FEWER, BN_SWAP, false, false, CLUSTER>
                            : gemm_kernel<BM_FEWEST, BN_SWAP, false, false, CLUSTER>;
}

// How many clusters of CLUSTER fit on the GPU at once, launched by `config` (the runtime's occupancy query, once per
// context: launch.cuh); none if it cannot say: blocks alone, and no error for the caller.
struct cluster_fit { int n; };
static int clusters_that_fit(const cudaLaunchConfig_t &config)
{
    return per_context<cluster_fit>([&](cluster_fit &fit) {
        // Every kernel takes the same shared memory, a block per SM
        const auto kernel = kernel_for<BM_BOTH, BN_NARROW, CLUSTER>(true, true);
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)config.dynamicSmemBytes);
        if (cudaOccupancyMaxActiveClusters(&fit.n, kernel, &config) != cudaSuccess)
            fit.n = 0, cudaGetLastError();
    }).n;
}

// The fixup's two slots and counts per block, in the call's memory, counts zeroed; false if out of GPU memory.
static bool workspace(split &s, size_t blocks, int bn, call_memory &mem)
{
    const size_t keys = 2 * blocks, counts = keys * LEVELS * CONSUMERS;
    s.partials = (float *)mem.take(keys * BM_BOTH * bn * sizeof(float) + counts * sizeof(int));
    if (!s.partials)
        return false;
    s.counts = (int *)(s.partials + keys * BM_BOTH * bn);
    zero_kernel<<<1, THREADS, 0, mem.stream>>>(s.counts, (int)counts);
    return true;
}

// The launch plan: the tile's width, blocks alone or in clusters of CLUSTER, the clusters (a block alone: a cluster
// of one), the tiles done whole (the first, one per cluster in turn), a split.
struct launch_plan { int bm, bn, cluster, units, whole; bool split; };

// The planner (see the header): the cost model's fastest candidate. Make test checks its plans (common/test_plan.cu).
// Rows of A and of B start on sectors or not; `fit` clusters of CLUSTER fit at once (0: none).
static launch_plan plan(int M, int N, int K, int sms, bool a_sectors, bool b_sectors, int fit)
{
    const int tiles_k = (K + BK - 1) / BK;
    const double operands = 1.0 * M * K + 1.0 * K * N, missed = max(1 - L2_SIZE / operands, 0.0);
    const double c_missed = max(1 - L2_SIZE / (4.0 * M * N), 0.0); // C's bytes written back to memory by its end
    const auto norm = [](double a, double b) { return sqrt(sqrt(a * a * a * a + b * b * b * b)); }; // 4-norm: header
    launch_plan best = {};
    double best_us = INFINITY;
    const auto consider = [&](launch_plan how, double us) { if (us < best_us) best = how, best_us = us; };
    // The candidates, tiles BM x BN, on `units` clusters of `cluster` blocks: a tile cluster x BM rows, B shared out.
    // Swapped tiles in clusters: a tile BM rows, its k-tiles on the cluster's blocks, B not shared.
    const auto candidates = [&](int BM, int BN, int cluster, int units) {
        const bool ksplit = BM < WGMMA_M; // swapped: a tile a cluster, its k-tiles over the cluster's blocks
        const int rows = ksplit ? BM : cluster * BM, tiles = ((M + rows - 1) / rows) * ((N + BN - 1) / BN);
        const double mma_us = K_TILE_US + PROMOTE_US * (ksplit ? BM : BN) / BN_NARROW +
                              (cluster > 1 && !ksplit) * CLUSTER_US + 2.0 * BM * BN * BK / MMA_FLOPS_US;
        const double a_bytes = min(M, BM) * BK * (a_sectors ? 1 : OFF_SECTOR); // a byte an element
        const double b_bytes = BN * BK / (ksplit ? 1.0 : cluster);
        const double k_tile_bytes = a_bytes + b_bytes * (b_sectors ? 1 : OFF_SECTOR); // a block's, from L2
        // n units: the busiest's k-tiles and stores, a tile in up to `parts` parts, `shared` tiles in shares (header)
        const auto time = [&](int n, long long k_tiles, long long stores, long long parts, int shared) {
            const double store_us = min(n, tiles) * rows * BN * sizeof(float) * // a tile per block, to L2
                                    (c_missed / HBM_BYTES_US + (1 - c_missed) / L2_BYTES_US); // and on to memory
            // an SM draws at most its share of L2's rate, as if every SM drew
            const double mma_all = k_tiles * norm(mma_us, max(n * cluster, sms) * k_tile_bytes / L2_BYTES_US);
            // in turns, each store but the last under the other consumer's multiply; else after it (step 13)
            double us = BM == BM_ONE ? norm(mma_all, (stores - 1) * store_us) + store_us : mma_all + stores * store_us;
            for (long long size = 1; size < parts; size *= FAN_IN) // the fixup's levels, its sums BM x BN
                us += FIXUP_US * BM * BN / (BM_BOTH * BN_WIDE);
            us += (parts > 1 && !ksplit) * SPLIT_US;
            const double memory =
                (operands + missed * shared * (rows + BN) * 1.0 * K + 4.0 * M * N) / HBM_BYTES_US;
            return PLAN_TERMS(BM, BN, cluster, n, k_tiles, stores, parts, mma_all, us, memory,
                              norm(us, memory) + FIXED_US);
        };
        if (ksplit) { // one round of tiles, each block at least a k-tile
            if (tiles <= units && cluster <= tiles_k)
                consider({ BM, BN, cluster, tiles, tiles, false },
                         time(tiles, (tiles_k + cluster - 1) / cluster, 1, cluster, 0));
            return;
        }
        const int rounds = (tiles + units - 1) / units; // step 10's, of whole tiles
        consider({ BM, BN, cluster, min(tiles, units), tiles, false },
                 time(min(tiles, units), (long long)rounds * tiles_k, rounds, 1, 0));
        // w rounds whole, then the rest in a share per unit (w: the last round or two; on a tie, fewer tiles split)
        for (int w = rounds - 1; w >= max(rounds - 2, 0); --w) {
            const long long split_k_tiles = (long long)(tiles - w * units) * tiles_k;
            const long long share = (split_k_tiles + units - 1) / units;
            if (split_k_tiles >= units) // a tile spans up to (tiles_k - 1) / share + 2 shares
                consider({ BM, BN, cluster, units, w * units, true },
                         time(units, w * tiles_k + share, w + share / tiles_k + 1, (tiles_k - 1) / share + 2,
                              tiles - w * units));
        }
        // Every tile in p equal parts, on p units each.
        for (int p = 2; p * tiles <= units && p <= tiles_k; ++p)
            consider({ BM, BN, cluster, p * tiles, 0, true }, time(p * tiles, (tiles_k + p - 1) / p, 1, p, 0));
    };
    // Tiles of both consumers or of one, each width, on blocks alone, then in clusters if any fit and B's k-tile is
    // two boxes wide or more.
    for (const int BM : { BM_BOTH, BM_ONE })
        for (const int BN : { BN_NARROW, BN_NARROWEST })
            for (int cluster = 1; cluster <= (fit > 0 && BN > BN_NARROWEST ? CLUSTER : 1); cluster *= CLUSTER)
                candidates(BM, BN, cluster, cluster == 1 ? sms : fit);
    for (const int BM : { BM_FEW, BM_FEWER, BM_FEWEST }) // swapped tiles, a tile a cluster, where clusters fit
        if (fit > 0)
            candidates(BM, BN_SWAP, CLUSTER, fit);
    return best;
}

extern "C" int gemm_fp8_launch(int M, int N, int K, float alpha, const void *A, const float *sa, const void *B,
                               const float *sb, float beta, float *C, cudaStream_t stream)
{
    if (const int done = no_product(M, N, K, alpha, beta, C, stream); done >= 0)
        return done; // an earlier error, sizes out of range, or nothing to multiply (launch.cuh)
    call_memory mem(stream); // this call's memory, on its stream, for copies of operands TMA cannot read (repack.cuh)
    int lda, ldb; // bytes from one row of A, and of B (N x K), to the next
    A = for_tma<uint8_t>(A, M, K, lda, mem);
    B = for_tma<uint8_t>(B, N, K, ldb, mem);
    // TMA reads the scales from a 16-byte boundary, where gemm.h promises 4: a copy of those not on one
    const int tiles_k = (K + BK - 1) / BK, tiles_n = (N + BK - 1) / BK;
    int pitch;
    if ((uintptr_t)sa % 16 != 0)
        sa = (const float *)for_tma<float>(sa, 1, M * tiles_k, pitch, mem);
    if ((uintptr_t)sb % 16 != 0)
        sb = (const float *)for_tma<float>(sb, 1, tiles_n * tiles_k, pitch, mem);
    if (!A || !B || !sa || !sb)
        return mem.error; // out of GPU memory
    int device = 0, sms = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    const int smem = STAGE_SPACE + BM_BOTH * (OUT_N + OUT_PAD) * (int)sizeof(float); // and the epilogue's pass
    // Clusters of CLUSTER (attrs[0]) where the plan takes them; the kernel may start beside zero_kernel (attrs[1]).
    cudaLaunchAttribute attrs[2] = { { cudaLaunchAttributeClusterDimension },
                                     { cudaLaunchAttributeProgrammaticStreamSerialization } };
    attrs[0].val.clusterDim.x = CLUSTER, attrs[0].val.clusterDim.y = attrs[0].val.clusterDim.z = 1;
    attrs[1].val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t config = { dim3(CLUSTER), dim3(THREADS), (size_t)smem, stream, attrs, 1 };
    const launch_plan how = plan(M, N, K, sms, lda % 32 == 0 && (uintptr_t)A % 32 == 0, // rows on 32-byte sectors
                                 ldb % 32 == 0 && (uintptr_t)B % 32 == 0, clusters_that_fit(config));
    CUtensorMap map_a, map_b, map_last; // map_last: boxes of A as tall as the last row of tiles (see the header)
    CUtensorMap map_sa, map_sb;         // the scales: a k-tile's of a tile's rows of A, of its block of B
    const int b_rows = how.bm < WGMMA_M ? BN_SWAP : how.bn / how.cluster; // B's rows in a box: a block's share
    if (!tensor_map(map_a, A, M, K, lda, how.bm, BK) || !tensor_map(map_b, B, N, K, ldb, b_rows, BK) ||
        !tensor_map(map_last, A, M, K, lda, M - (M - 1) / how.bm * how.bm, BK) ||
        !scales_map(map_sa, sa, (long long)M * tiles_k, how.bm + SCALE_BOX) ||
        !scales_map(map_sb, sb, (long long)tiles_n * tiles_k, SCALE_BOX))
        return cudaErrorInvalidValue; // the driver cannot describe an operand to TMA
    const bool vec = N % 4 == 0 && (uintptr_t)C % sizeof(float4) == 0; // float4 stores: rows of whole float4s, aligned
    const auto kernel = how.bm < WGMMA_M  ? kernel_swapped(how.bm)
                        : how.bm == BM_ONE ? kernel_of<BM_ONE>(how.bn, how.cluster, vec, how.split)
                                           : kernel_of<BM_BOTH>(how.bn, how.cluster, vec, how.split);
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
    cudaLaunchKernelEx(&config, kernel, map_a, map_last, map_b, map_sa, map_sb, M, N, K, alpha, beta, C, s);
    return cudaGetLastError();
}
