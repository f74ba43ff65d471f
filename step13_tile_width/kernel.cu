/*
 * step13_tile_width: where tiles 256 wide would be split or run in longer
 * rounds, tiles 192 wide that fill the rounds whole.
 *
 * What changed: step 12 splits tiles along K wherever a last round of
 * whole tiles would leave many clusters idle. A split costs more than its
 * k-tiles: each part that does not start its tile writes its partial sums
 * to L2 (128 KB per block), and the part that starts it reads them back,
 * adds and stores C, last, when every other block does the same. A tile
 * of another width changes how many tiles there are instead, and where
 * one width leaves a last round mostly empty, the other often fills it:
 *
 *   3000^3: 47 k-tiles per tile, 66 clusters of two (tiles: cluster tiles)
 *
 *   256 x 256 (step 12): 12 x 12 = 144       256 x 192: 12 x 16 = 192
 *   tiles, 2.18 rounds: a round whole,        tiles, 2.91 rounds: three
 *   then 78 tiles in 66 shares of 55-56       rounds whole, 6 of 66 clusters
 *   k-tiles; 47 + 56 = 103 k-tiles, and       idle in the last; 3 x 47 = 141
 *   a fixup per block                         k-tiles of 3/4 the work: 106
 *
 * - One more width, BN_FIT = 192: the kernel's BN, wgmma.m64n192k16, 96
 *   accumulators per thread; four stages of 40 KB fit in STAGE_SPACE. In
 *   a cluster, rank 0 copies two of B's three boxes and rank 1 one.
 * - The rule (plan): BN_FIT where tiles of BN_WIDE would be split
 *   (split_pays) and tiles of BN_FIT would not, that is, where the last
 *   round of the narrower tiles costs its idle SMs less than FIXUP_K_TILES
 *   k-tiles each, averaged: what step 11 counts a split to cost. Where both
 *   would be split, BN_WIDE stays (below). The rule holds for clusters of
 *   one too. It asks split_pays, not whether step 12 would split: with
 *   more wide tiles than half the SMs and fewer than SMs, or more than SMs
 *   and a last round more than three fifths full, step 12's blocks out of
 *   clusters run them in rounds (step 11's header), whose idle SMs the
 *   narrower tiles put to work all the same (1152 x 2048 x 4096,
 *   9 rows of tiles: 99 tiles of 128 x 192 in one round, not 72 of 128 x
 *   256). Tried with the rule for clusters only, at 2900 x 2000 x 2000 (23
 *   rows of tiles whose rows start on sectors: clusters of one; 184 tiles
 *   of 128 x 256, or 253 of 128 x 192):
 *   Measured (scripts/try.sh 13 clusters, NVIDIA H200, CUDA 13.0,
 *   2026-11-24): tried 419.56 TFLOPS (78.2% of cuBLAS), as is 503.82 (94.7%).
 *   And near where the widths break even, at 2900 x 3008 x 3008 (clusters
 *   of one; 276 tiles of 128 x 256 in 2.09 rounds, or 368 of 128 x 192 in
 *   2.79):
 *   Measured (scripts/try.sh 13 breakeven, NVIDIA H200, CUDA 13.0,
 *   2026-11-24): tried 535.41 TFLOPS (91.4% of cuBLAS), as is 561.73 (94.6%).
 * - Where neither width would be split, as where tiles have too few
 *   k-tiles for a split to pay (3000 x 3000 x 512: 8), the width whose
 *   rounds take less time, a round as long as its tile is wide
 *   (rounds_time). In clusters there, 144 cluster tiles of 256 x 256 take
 *   three rounds of 66 clusters, the last with 12, and 192 of 256 x 192
 *   take three too, the last with 60: 3 x 192 against 3 x 256. Tried
 *   without it, at 3000 x 3000 x 512:
 *   Measured (scripts/try.sh 13 rounds, NVIDIA H200, CUDA 13.0, 2026-11-25):
 *   tried 295.69 TFLOPS (79.7% of cuBLAS), as is 359.33 (95.3%).
 *   Over 43 products 128 to 3000 deep whose width it changes, it ran 0.94
 *   to 1.23 times as fast, 1.11 on average (results/h200-2026-11-25/
 *   rounds_time.txt). The 0.94, at 1536 x 2000 x 128 (one run of 10 us),
 *   is inside what that product moves from one process to the next (44
 *   to 84 TFLOPS in three more runs of each). Where the rounds' times
 *   differ by under 2%, it may lose: 8192 x 8192 x 512 ran 2% slower in
 *   three runs each, 8192 x 8192 x 2048 1.5% faster.
 * - And wherever tiles of BN_FIT are as many as wide ones (N from 129 to
 *   192, 257 to 384, 513 to 576): the same rounds or shares, each tile
 *   three quarters of the work. Tiles 128 wide are narrow (step 12) only
 *   where they also cover at most four fifths of the columns tiles 192
 *   wide do, so N from 257 to 384 takes these, in clusters where the rows
 *   of tiles pair up. Over the 18 products of results/h200-2026-11-26/
 *   narrow.txt, with N from 260 to 560, step 13 ran level (within 3%) on 9
 *   and 16% to 50% faster on the other 9; at 12000 x 384 x 4096, step
 *   12's blocks alone of tiles 128 wide stay 6% ahead. Tried with tiles
 *   192 wide only by the rules above, at 8000 x 544 x 8000 (189 tiles of
 *   128 x 256 or of 128 x 192):
 *   Measured (scripts/try.sh 13 equal, NVIDIA H200, CUDA 13.0, 2026-11-26):
 *   tried 351.39 TFLOPS (57.6% of cuBLAS), as is 516.25 (90.8%).
 * - And where C has under half a round of wide tiles and step 11 halves
 *   BN to 128 (blocks alone), if C is 129 to 192 wide: one column of tiles
 *   192 wide covers it where tiles 128 wide take two, the second at least
 *   half zeros: three quarters of the work, in half as many tiles, split
 *   along K. Only where those leave shares of FIXUP_K_TILES k-tiles
 *   or more: with shorter shares, the parts' sums cost more than the
 *   zeros (128 x 176 x 65536: one tile of 192 in 132 shares of 8 k-tiles
 *   ran 11% slower than two of 128 in shares of 16). Over the 7 products
 *   of results/h200-2026-11-27/fit_few.txt it takes them for, with 2 to
 *   64 rows of tiles, it ran 6% to 59% faster; on 3 with shorter shares
 *   it gives up 5% to 9%. Tried without it, at 8192 x 176 x 16384 (128
 *   tiles of 128 x 128 in one round, or 64 of 128 x 192 in two parts
 *   each):
 *   Measured (scripts/try.sh 13 halved, NVIDIA H200, CUDA 13.0, 2026-11-27):
 *   tried 287.43 TFLOPS (59.4% of cuBLAS), as is 456.17 (96.9%).
 *
 * Why it is faster: on those shapes no block writes or reads a partial
 * sum; a few SMs idle in the last round cost less, and where no tile is
 * split, the rounds of the narrower tiles are shorter.
 *
 * What limits it now: per flop, a narrower tile reads more. A block's
 * k-tile of 128 x 192 takes 16 KB of A and, in a cluster, half of 24 KB of
 * B: 28 KB for three quarters of the flops for which the wide tile takes
 * 32 KB, 17% more L2 traffic per flop. Where both widths would be split
 * (5000^3), the wide tile is faster. Tried with BN_FIT wherever BN_WIDE
 * would be split, at 5000^3:
 * Measured (scripts/try.sh 13 always, NVIDIA H200, CUDA 13.0, 2026-11-24):
 * tried 548.86 TFLOPS (91.7% of cuBLAS), as is 574.09 (95.6%).
 * The rule counts rounds and the cost of a split, not those bytes: where
 * the widths break even, it may pick the slower. Nor does it change the
 * clusters: where step 12 takes clusters to split half a round of wide
 * tiles, the tiles 192 wide that this step picks instead run in clusters
 * too, unsplit. Where rows start on sectors, blocks out of clusters ran
 * them 2-3% faster than the clusters do (2048 x 1536 x 4096, 768 x 4096 x
 * 8192); where they do not, slower (1000 x 3000 x 5000; results/
 * h200-2026-11-25/clusters_half_round.txt).
 * Nor do the narrower tiles pay without step 12's clusters where rows do
 * not start on sectors and L2 sets the pace: a block alone takes all 24 KB
 * of B's k-tile, 40 KB for three quarters of the flops for which a wide
 * tile alone takes 48 KB. Tried with clusters of one everywhere (step 11's
 * blocks, with this step's rule), at 3000^3, where they run at about step
 * 11's speed:
 * Measured (scripts/try.sh 13 single, NVIDIA H200, CUDA 13.0, 2026-11-25):
 * tried 463.09 TFLOPS (82.9% of cuBLAS), as is 544.97 (98.8%).
 * And at 3008^3, whose rows start on sectors, where they pay alone too:
 * Measured (scripts/try.sh 13 sectors, NVIDIA H200, CUDA 13.0, 2026-11-25):
 * tried 577.31 TFLOPS (99.9% of cuBLAS), as is 573.80 (99.2%).
 *
 * Launch: cudaLaunchKernelEx, clusters of CLUSTER blocks along x as many as
 * fit at once (fewer if C has fewer tiles), or one block per SM as in step
 * 11; THREADS threads, STAGE_SPACE bytes of dynamic shared memory and the
 * epilogue's slice; a workspace of two slots and 2 LEVELS x CONSUMERS
 * counts per block, and zero_kernel first, when tiles are split (step 11).
 *
 * Measured: 632.92 TFLOPS, 99.5% of cuBLAS GemmEx, 1.00x step 12
 * (scripts/run_all.sh, NVIDIA H200, CUDA 13.0, 4096^3, 2026-11-27).
 */
#include "gemm.h"
#include "launch.cuh"
#include "repack.cuh"

#include <cuda.h>
#include <cuda_fp16.h>
#include <stdint.h>
#include <type_traits>

constexpr int BM = 128; // rows of C per block
// columns of C per block, the kernel's BN: 256, or 128 or 64 when C has few tiles (plan)
constexpr int BN_WIDE = 256, BN_NARROW = 128, BN_NARROWEST = 64;
static_assert(BN_WIDE == 2 * BN_NARROW && BN_NARROW == 2 * BN_NARROWEST, "BN halves: the narrowest's checks hold for all");
// or 192 where tiles of 192 fill the rounds and wide ones would be split or run longer rounds (plan)
constexpr int BN_FIT = 192;
static_assert(BN_FIT % BN_NARROWEST == 0 && BN_FIT < BN_WIDE, "whole lines of B; the wide tile's slot holds its sums");
constexpr int BK = 64;  // depth of the shared tiles: one 128-byte line of halves per row
constexpr int STAGE_SPACE = 192 * 1024; // bytes of shared memory for the stages: 4, 4, 6 or 8 (BN 256, 192, 128, 64)
constexpr int GROUP_M = 8; // tile rows in one group of the block order
constexpr int CLUSTER = 2; // blocks in a cluster, the most (plan)
constexpr int SECTOR = 32; // bytes: L2 reads and writes memory in sectors
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
// When splitting pays (see the header; split_pays in plan): the SMs a last round of whole tiles leaves idle
// must lose more than FIXUP_K_TILES k-tiles' time each, averaged over all SMs, and each share be MIN_SHARE.
constexpr int FIXUP_K_TILES = 16, MIN_SHARE = 6;
// The fixup's groups: four parts, summed ((0 + 1) + 2) + 3, whose count adds 1 per part there; LEVELS of groups,
// more than any grid needs (FAN_IN^LEVELS = 2^32 parts).
constexpr int FAN_IN = 4, LEVELS = 16;

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

static_assert(BK == LINE_N && BN_NARROWEST % LINE_N == 0 && BM % WGMMA_M == 0,
              "a row of A's tile is one line, a row of B's whole lines; warpgroups cover the tile");
static_assert(CONSUMER_REGS <= 255, "a thread holds at most 255 registers");
static_assert(BM * BK % (SWIZZLE_ATOM / 2) == 0 && stage_bytes(BN_NARROWEST) % SWIZZLE_ATOM == 0, "tiles start on atoms");

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
    float *p = &C[r * N + c];
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

// ---- load tiles: tile k0 of A and B into one stage, by one producer
// thread: a TMA box of A and BN / LINE_N boxes of B, on a barrier armed with
// their bytes (a_rows of A's BM rows: see gemm_launch). The blocks of a
// cluster need the same tile of B: the block of rank r copies boxes r,
// r + cluster, ... into every block's stage.
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

// The top-left element of this block's rows of tile number `tile` of C (a
// tile: cluster x BM rows, BM for each block of the cluster, in rank order).
// A row of the numbering is GROUP_M tile rows, numbered down its columns, so
// that the tiles in flight share more of A and B in L2 (the last row may
// have fewer).
template <int BN>
__device__ void tile_origin(int tile, int tiles_m, int tiles_n, int cluster, int &m0, int &n0)
{
    const int first_row = tile / (GROUP_M * tiles_n) * GROUP_M;
    const int group_rows = min(tiles_m - first_row, GROUP_M);
    const int in_group = tile % (GROUP_M * tiles_n);
    m0 = ((first_row + in_group % group_rows) * cluster + (int)blockIdx.x % cluster) * BM;
    n0 = in_group / group_rows * BN;
}

// How the work is shared out (see the header): tiles 0 .. whole - 1 whole, one
// per cluster in turn as in step 10; the others' k-tiles in a share per cluster,
// cut into parts where tiles end, whose sums the fixup adds through slots and counts.
struct split {
    int whole;
    float *partials; // two slots of BM x BN_WIDE floats per block (see key in the fixup)
    int *counts;     // two sets of LEVELS x CONSUMERS per block: the parts that got to a group
};

// Part p of cluster b's work (of `blocks` clusters; a block alone is a cluster of one): tile `tile` of C, k-tiles
// k0 .. k1 - 1; false past its last part. Its whole tiles first; then, of its share, the tiles in the middle, the
// end of the first tile, the start of the last (see the header for why this order).
template <bool SPLIT>
__host__ __device__ bool part(int p, int b, int blocks, int whole, int tiles, int tiles_k, int &tile, int &k0, int &k1)
{
    if (b + p * blocks < whole) {
        tile = b + p * blocks, k0 = 0, k1 = tiles_k;
        return true;
    }
    // cluster u's share starts at split k-tile u * split_k_tiles / blocks (tile `whole` at 0)
    const long long split_k_tiles = (long long)(tiles - whole) * tiles_k;
    const long long first = b * split_k_tiles / blocks, end = (b + 1) * split_k_tiles / blocks;
    // the share's first and last tile, counted among the split tiles; q: this part of the share
    const int first_t = (int)(first / tiles_k), last_t = (int)((end - 1) / tiles_k);
    const int q = p - (whole - b + blocks - 1) / blocks, count = last_t - first_t + 1;
    if (!SPLIT || first >= end || q >= count)
        return false;
    const int t = q < count - 2 ? first_t + 1 + q : q == count - 2 ? first_t : last_t;
    k0 = (int)max(first - (long long)t * tiles_k, 0LL);
    k1 = (int)min(end - (long long)t * tiles_k, (long long)tiles_k);
    tile = whole + t;
    return true;
}

// The share (cluster) that holds split k-tile x, of `blocks` shares: the last whose share starts at x or before.
__host__ __device__ int share_of(long long x, int blocks, long long split_k_tiles)
{
    return (int)(((x + 1) * blocks - 1) / split_k_tiles);
}

// Part i's group in the fixup, at the level where each member holds the sum of `size` parts of a tile in `parts`:
// the group's first part `head`, i's place `me` in it, and its `n` members.
__host__ __device__ void group(int i, int size, int parts, int &head, int &me, int &n)
{
    head = i & -(size * FAN_IN), me = (i - head) / size, n = min((parts - head + size - 1) / size, FAN_IN);
}

// The slots and counts of part x of a tile whose parts start at cluster `first`: cluster first + x's, and for
// x = 0 the cluster's second ones (it may be part x > 0 of another tile); a block's own are key * cluster + rank.
__host__ __device__ int key(int first, int x)
{
    return 2 * (first + x) + (x == 0);
}

// Slot u (key u: see the fixup), this consumer's 64 rows of it: its thread's float4 of
// 16 x 8 tile j at j * WARPGROUP, so that a warp's accesses are contiguous.
template <int FN>
__device__ float4 *slot(const split &s, int u, int wg)
{
    return reinterpret_cast<float4 *>(s.partials) + ((size_t)u * CONSUMERS + wg) * FN * WARPGROUP +
           threadIdx.x % WARPGROUP;
}

__device__ void add(float (&acc)[4], float4 v) { acc[0] += v.x, acc[1] += v.y, acc[2] += v.z, acc[3] += v.w; }

// The threads of consumer warpgroup wg wait for each other (barrier 0: __syncthreads's).
__device__ void warpgroup_sync(int wg)
{
    asm volatile("bar.sync %0, %1;\n" : : "r"(1 + wg), "n"(WARPGROUP) : "memory");
}

template <int BN, bool VEC, bool SPLIT, int CLUSTER_BLOCKS>
__global__ void __launch_bounds__(THREADS, 1)
gemm_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_last,
            const __grid_constant__ CUtensorMap map_b, int M, int N, int K, float alpha, float beta,
            float *__restrict__ C, split s)
{
    constexpr int STAGES = STAGE_SPACE / stage_bytes(BN); // tiles in shared memory
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
    constexpr int FN = BN / MMA_N; // 16 x 8 tiles per warp

    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) { // full: the thread that arms it; empty: the cluster's consumers
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" : : "r"(smem_addr(&full[s])));
            asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" : : "r"(smem_addr(&empty[s])), "n"(cluster * CONSUMERS));
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

        // ---- fixup (see the header): the parts of a tile (part i: this rank's block in the tile's i-th
        // cluster) meet in groups of up to FAN_IN, then the groups in groups, ... Each part of a group leaves its
        // sum and counts itself; the last to count adds the group's sums and goes on, the others stop. The part
        // that ends with the sum of them all stores the tile.
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
            const auto sum = [&](int member) { return slot<FN>(s, own(head + member * size), wg); };
            const bool rows = __all_sync(0xffffffffu, m0 + wm < M); // no sums for a warp's rows below C (step 11)
            if (rows)
#pragma unroll
                for (int j = 0; j < FN; ++j)
                    __stcg(sum(me) + j * WARPGROUP, make_float4(acc[j][0], acc[j][1], acc[j][2], acc[j][3]));
            __threadfence(); // the sum is in L2, where other SMs read, before the count says so
            warpgroup_sync(wg);
            if (threadIdx.x % WARPGROUP == 0) // acq_rel: the last sees every sum counted before its own
                asm volatile("atom.acq_rel.gpu.global.add.s32 %0, [%1], 1;\n"
                             : "=r"(arrived[wg]) : "l"(count) : "memory");
            warpgroup_sync(wg);
            stopped = arrived[wg] != n - 1;
            // The last adds the group's sums in order, ((0 + 1) + 2) + 3, whoever it is: from its own if it is 0
            // or 1 (float addition is commutative), else from 0's. A pass over the tile per slot, so that the
            // pass's loads are in flight together.
            if (rows && !stopped && me >= 2)
#pragma unroll
                for (int j = 0; j < FN; ++j) {
                    const float4 v = __ldcg(sum(0) + j * WARPGROUP);
                    acc[j][0] = v.x, acc[j][1] = v.y, acc[j][2] = v.z, acc[j][3] = v.w;
                }
            for (int m = 1; rows && !stopped && m < n; ++m) {
                const float4 *p = sum(m == 1 && me == 1 ? 0 : m);
#pragma unroll
                for (int j = 0; j < FN; ++j)
                    add(acc[j], __ldcg(p + j * WARPGROUP));
            }
        }
        if (stopped)
            continue;

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
    }
    // No block leaves before the others of its cluster: until their last
    // k-tile they copy into this block's stages and arrive on its barriers.
    cluster_sync();
}

// The tensor map of a rows x cols matrix of halves whose rows start every
// `pitch` halves, read in boxes of box_rows x box_cols with the 128-byte
// swizzle (sizes innermost first); parts of a box outside it arrive as zeros.
// False if the driver cannot describe it.
// L2 fetches a missed line alone, not with its neighbour, which a box may not need (see the header).
static bool tensor_map(CUtensorMap &map, const void *X, int rows, int cols, int pitch, int box_rows, int box_cols)
{
    decltype(&cuTensorMapEncodeTiled) encode = nullptr;
    cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", (void **)&encode, 12000, cudaEnableDefault, nullptr);
    const cuuint64_t dims[2] = { (cuuint64_t)cols, (cuuint64_t)rows }, row_bytes[1] = { pitch * sizeof(__half) };
    const cuuint32_t box[2] = { (cuuint32_t)box_cols, (cuuint32_t)box_rows }, steps[2] = { 1, 1 };
    return encode && encode(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, const_cast<void *>(X), dims, row_bytes, box,
                          steps, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                          CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

// The fixup's counts at zero, before the kernel that counts them: it starts as soon as this one has (programmatic
// dependent launch: gemm_launch) and waits for it only at its first fixup (griddepcontrol.wait).
__global__ void zero_kernel(int *counts, int n)
{
    asm volatile("griddepcontrol.launch_dependents;\n" : : : "memory");
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        counts[i] = 0;
}

// gemm_kernel for tiles BN wide in clusters of CLUSTER_BLOCKS: float4 stores or not, split tiles (SPLIT) or not.
template <int BN, int CLUSTER_BLOCKS>
static auto kernel_for(bool vec, bool split)
{
    return vec ? (split ? gemm_kernel<BN, true, true, CLUSTER_BLOCKS> : gemm_kernel<BN, true, false, CLUSTER_BLOCKS>)
               : (split ? gemm_kernel<BN, false, true, CLUSTER_BLOCKS> : gemm_kernel<BN, false, false, CLUSTER_BLOCKS>);
}

// The launch plan (see the header): the tile's width BN, blocks alone or in clusters of CLUSTER, whether tiles
// are split, the clusters (a block alone: a cluster of one), and how many tiles (the first) are done whole, one per
// cluster in turn.
struct launch_plan {
    int bn, cluster, units, whole;
    bool split;
};

// Every choice of the launch that depends on the shape, for an M x N x K product on `sms` SMs whose rows of A and
// of B start on sectors or not; fit() says how many clusters of CLUSTER fit on the GPU at once (0: none), asked only
// where clusters may pay. A host function alone: make test checks its plans without a GPU (common/test_plan.cu).
template <class Fit>
static launch_plan plan(int M, int N, int K, int sms, bool a_sectors, bool b_sectors, const Fit &fit_of)
{
    const int tiles_k = (K + BK - 1) / BK;
    const auto rounds = [&](int tiles, int units) { return (tiles + units - 1) / units; }; // of whole tiles, one per unit
    const auto split_pays = [&](int tiles, int units) { // units: the blocks or clusters that share the tiles
        const int idle = (units - tiles % units) % units;
        return (long long)idle * tiles_k > (long long)FIXUP_K_TILES * units &&
               (long long)tiles * tiles_k >= (long long)MIN_SHARE * units;
    };
    // Clusters of CLUSTER blocks where C is not narrow and the clusters split
    // its tiles (under half a round of wide tiles, only where rows of B do
    // not start on sectors or C has at most a sixteenth of a round: tiles
    // cut in 8 parts or more), or, where rows of A or B do not start on
    // sectors, it has a round of wide tiles or more, or, where rows of both
    // do not, the clusters take its tiles in one round, as wide as blocks
    // alone would (one_round); and where its rows of tiles pair up, or, off
    // sectors, where the blocks over rows below C are at most an eighth of
    // all; else of one (see the header).
    const int rows = (M + BM - 1) / BM, paired = (rows + CLUSTER - 1) / CLUSTER * CLUSTER;
    const bool sectors = a_sectors && b_sectors;
    const bool pair = paired == rows || (!sectors && 8 * (paired - rows) <= paired);
    const int wide_n = (N + BN_WIDE - 1) / BN_WIDE; // columns of wide tiles
    // Tiles 128 wide where they cover at most four fifths of the columns that tiles 256 or 192 wide do, if they are
    // split or take fewer than twice the rounds (see the header), for blocks alone: a narrow C has no clusters.
    const int narrow_n = (N + BN_NARROW - 1) / BN_NARROW, fit_n = (N + BN_FIT - 1) / BN_FIT; // their columns
    const bool narrow = 5 * BN_NARROW * narrow_n <= 4 * min(BN_WIDE * wide_n, BN_FIT * fit_n) &&
                        (split_pays(rows * narrow_n, sms) || rounds(rows * narrow_n, sms) < 2 * rounds(rows * wide_n, sms));
    const bool few = 2 * rows * wide_n < sms, fewest = 16 * rows * wide_n <= sms; // under half, a sixteenth of a round
    const bool may_pair = pair && !narrow && (!few || !b_sectors || fewest);
    const int fit = may_pair ? fit_of() : 0;
    // Rows of A and B off sectors: over half a round of blocks over tiles as wide as the clusters' (so that blocks
    // alone take that width too), and at most a round of clusters.
    const int cluster_bn = few ? BN_NARROW : BN_WIDE, cluster_n = (N + cluster_bn - 1) / cluster_bn; // the clusters' tiles
    const bool one_round = !a_sectors && !b_sectors && sms < 2 * rows * cluster_n && paired / CLUSTER * cluster_n <= fit;
    const int cluster =
        may_pair && fit > 0 && (split_pays(paired / CLUSTER * wide_n, fit) || (!sectors && rows * wide_n >= sms) || one_round) ? CLUSTER : 1;
    const int clusters = cluster == CLUSTER ? fit : sms;
    const int tiles_m = (M + cluster * BM - 1) / (cluster * BM);
    const auto tiles_of = [&](int bn) { return tiles_m * ((N + bn - 1) / bn); };
    // One rule picks the tile: BN halves from 256 where narrow, from 128 where C is at most half as wide, or while C
    // has no more tiles than half the SMs, down to 128, or to 64 where 128-wide tiles are not split. Clusters of
    // CLUSTER take cluster_bn: 128 where C has under half a round of wide tiles (few), twice as many tiles to split,
    // each partial sum half the bytes, as for blocks alone; elsewhere 256, and C is not narrow.
    int bn = cluster == CLUSTER ? cluster_bn : BN_WIDE;
    while (cluster == 1 && bn > BN_NARROWEST &&
           ((bn == BN_WIDE ? narrow : 2 * N <= bn) ||
            (2 * tiles_of(bn) <= sms && (bn == BN_WIDE || !split_pays(tiles_of(bn), clusters)))))
        bn /= 2;
    // The narrower tile where it takes no more tiles than wide ones, or where
    // tiles of BN_FIT would not be split, if wide ones would be (its rounds
    // leave less idle than a split costs), or if its rounds take less time,
    // each a tile's width long (see the header).
    const auto rounds_time = [&](int bn) { return (long long)rounds(tiles_of(bn), clusters) * bn; };
    if (bn == BN_WIDE && (tiles_of(BN_FIT) == tiles_of(BN_WIDE) ||
                          (!split_pays(tiles_of(BN_FIT), clusters) &&
                           (split_pays(tiles_of(BN_WIDE), clusters) || rounds_time(BN_FIT) < rounds_time(BN_WIDE)))))
        bn = BN_FIT;
    // And for blocks alone where few tiles halved BN to 128, if C is 129 to 192 wide (one column of tiles of
    // BN_FIT, not two of 128) and those leave shares of FIXUP_K_TILES k-tiles or more (see the header).
    if (cluster == 1 && bn == BN_NARROW && BN_NARROW < N && N <= BN_FIT &&
        (long long)tiles_of(BN_FIT) * tiles_k >= (long long)FIXUP_K_TILES * clusters)
        bn = BN_FIT;
    const int tiles = tiles_of(bn), parts = clusters / tiles;
    // With more tiles than SMs, shares only where the last round of whole tiles would be at most three fifths
    // full; with fewer, but over half as many, only where TMA reads the rows without a repack, if the shares
    // take less time than the round with each k-tile and the fixup a third longer (fill; see the header).
    const bool fill = K % 8 == 0 && N % 8 == 0 &&
                      4 * ((long long)tiles * tiles_k + FIXUP_K_TILES * sms) < 3LL * tiles_k * sms;
    // Clusters split tiles wherever split_pays holds, for as few tiles as there are (see the header).
    const bool pays = split_pays(tiles, clusters) &&
                      (cluster == CLUSTER || (tiles > sms ? 5 * (tiles % sms) <= 3 * sms : parts != 1 || fill)),
               even = parts >= 2 && clusters - parts * tiles <= clusters / 8;
    // All the clusters that fit (fewer if C has fewer tiles and none is
    // split, or each is cut in the same number of parts). No block waits for
    // one that may not have started (the fixup, step 11's header): it
    // finishes however many SMs other work holds.
    const int units = pays ? (even ? parts * tiles : clusters) : min(tiles, clusters);
    // Whole rounds, the last too where the tiles after it leave shares of FIXUP_K_TILES k-tiles or more (see the header).
    const int whole =
        pays ? max(tiles / units - ((long long)(tiles % units) * tiles_k < FIXUP_K_TILES * units), 0) * units : tiles;
    return { bn, cluster, units, whole, pays };
}

extern "C" int gemm_launch(int M, int N, int K, float alpha, const void *A,
                           const void *B, float beta, float *C)
{
    if (const int done = no_product(M, N, K, beta, C); done >= 0)
        return done; // sizes out of range, or nothing to multiply (launch.cuh)
    // An operand TMA cannot read (repack.cuh) is repacked first: one read and
    // one write of it (4096 x 4100 halves: 67 MB, 14 us or more at 4.8 TB/s),
    // which pays unless the other side is a tile or two across, as the product
    // reads the copy once per row or column of tiles.
    call_memory mem; // the copies' memory, this call's own (repack.cuh)
    int lda, ldb;    // halves from one row of A, and of B, to the next
    A = for_tma(A, M, K, lda, mem);
    B = for_tma(B, K, N, ldb, mem);
    if (!A || !B)
        return cudaGetLastError(); // out of GPU memory: cudaMallocAsync's error
    // The last row of tiles reads boxes of A as tall as its rows: TMA writes zeros slowly (step 11's header).
    CUtensorMap map_a, map_b, map_last;
    if (!tensor_map(map_a, A, M, K, lda, BM, BK) || !tensor_map(map_b, B, K, N, ldb, BK, LINE_N) ||
        !tensor_map(map_last, A, M, K, lda, M - (M - 1) / BM * BM, BK))
        return cudaErrorInvalidValue; // the driver cannot describe an operand to TMA
    int device = 0, sms = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    const bool a_sectors = lda * sizeof(__half) % SECTOR == 0 && (uintptr_t)A % SECTOR == 0; // rows of A on sectors
    const bool b_sectors = ldb * sizeof(__half) % SECTOR == 0 && (uintptr_t)B % SECTOR == 0; // rows of B on sectors
    // A block may use more than 48 KB of shared memory only if asked; an
    // error here makes the launch fail, which the caller sees.
    const int smem = STAGE_SPACE + BM * (OUT_N + OUT_PAD) * (int)sizeof(float); // and the epilogue's pass
    // Clusters of CLUSTER (attrs[0]) where the rule below takes them; the kernel may start beside zero_kernel
    // where tiles are split (attrs[1]: programmatic dependent launch).
    cudaLaunchAttribute attrs[2] = { { cudaLaunchAttributeClusterDimension },
                                     { cudaLaunchAttributeProgrammaticStreamSerialization } };
    attrs[0].val.clusterDim.x = CLUSTER, attrs[0].val.clusterDim.y = attrs[0].val.clusterDim.z = 1;
    attrs[1].val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t config = { dim3(CLUSTER), dim3(THREADS), (size_t)smem, 0, attrs, 1 };
    // How many clusters of CLUSTER fit on the GPU at once: every kernel takes the same shared memory, a block per
    // SM; none (blocks alone) if the GPU cannot say.
    const auto fit = [&] {
        int n = 0;
        cudaFuncSetAttribute(gemm_kernel<BN_WIDE, true, true, CLUSTER>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
        if (cudaOccupancyMaxActiveClusters(&n, gemm_kernel<BN_WIDE, true, true, CLUSTER>, &config) != cudaSuccess) {
            n = 0;
            cudaGetLastError(); // blocks alone: no error for the caller
        }
        return n;
    };
    const launch_plan how = plan(M, N, K, sms, a_sectors, b_sectors, fit);
    const bool vec = N % 4 == 0 && (uintptr_t)C % sizeof(float4) == 0; // float4 stores: rows of whole float4s, aligned
    const auto kernel = how.cluster == CLUSTER ? (how.bn == BN_FIT    ? kernel_for<BN_FIT, CLUSTER>(vec, how.split)
                                                  : how.bn == BN_WIDE ? kernel_for<BN_WIDE, CLUSTER>(vec, how.split)
                                                                      : kernel_for<BN_NARROW, CLUSTER>(vec, how.split))
                        : how.bn == BN_FIT    ? kernel_for<BN_FIT, 1>(vec, how.split)
                        : how.bn == BN_WIDE   ? kernel_for<BN_WIDE, 1>(vec, how.split)
                        : how.bn == BN_NARROW ? kernel_for<BN_NARROW, 1>(vec, how.split)
                                              : kernel_for<BN_NARROWEST, 1>(vec, how.split);
    cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    // setmaxnreg hands registers between the warpgroups of a block that
    // starts with REGS each: with more, the consumers would not get theirs;
    // with fewer, setmaxnreg.inc would wait forever. ptxas gives a kernel
    // with setmaxnreg all that __launch_bounds__ allows; check that it did.
    cudaFuncAttributes attr;
    if (cudaFuncGetAttributes(&attr, kernel) == cudaSuccess && attr.numRegs != REGS)
        return cudaErrorInvalidKernelImage; // a build this file does not expect: the kernel would hang
    // Split tiles: two slots and two sets of counts per block, the counts zeroed by zero_kernel first (step 11).
    const size_t keys = 2 * (size_t)how.units * how.cluster, counts = keys * LEVELS * CONSUMERS;
    split s = { how.whole };
    if (how.split) {
        s.partials = (float *)mem.take(keys * BM * BN_WIDE * sizeof(float) + counts * sizeof(int));
        if (!s.partials)
            return cudaGetLastError(); // as above
        s.counts = (int *)(s.partials + keys * BM * BN_WIDE);
        zero_kernel<<<1, THREADS>>>(s.counts, (int)counts);
    }
    config.gridDim = dim3(how.units * how.cluster);
    config.attrs = how.cluster == CLUSTER ? attrs : attrs + 1; // a cluster of one: step 11's launch
    config.numAttrs = (how.cluster == CLUSTER) + how.split;
    cudaLaunchKernelEx(&config, kernel, map_a, map_last, map_b, M, N, K, alpha, beta, C, s);
    return cudaGetLastError();
}
