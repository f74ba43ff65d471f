/*
 * step11_stream_k: the SMs share out the k-tiles of C, not its tiles, so
 * that a shape's last round of tiles leaves no SM idle.
 *
 * What changed: step 10 gives each block whole tiles. When the tiles do not
 * fill the SMs evenly, the last round leaves SMs idle, and when C has fewer
 * tiles than the GPU has SMs (a skinny or a deep-K product) most SMs do
 * nothing at all. Now the unit of work is a k-tile of a tile, one BK-deep
 * step of its sum, as in stream-K (Osama et al., PPoPP 2023), in its hybrid
 * form:
 * - Whole rounds first: while two rounds of tiles or more are left, the
 *   blocks take whole tiles in turn, as in step 10 (tiles 0 .. whole - 1).
 *   The tiles of a round are neighbours in the GROUP_M order and share A
 *   and B in L2; pure stream-K would start every block somewhere else in C.
 * - The rest is split: the k-tiles of the other tiles, counted tile after
 *   tile, are cut into one equal share per block, and a share into parts
 *   where tiles end. With a round or more left, a share is at least a tile
 *   deep, so a tile is cut in two parts at most.
 * - The last round whole too where the tiles after it leave shares of
 *   FIXUP_K_TILES k-tiles or more (plan): the blocks of a round
 *   read A and B in step, where shares of its tiles and the rest would
 *   start at k-tiles of their own, and a share that long outweighs its
 *   fixup. The tiles split are then fewer than the blocks, and a tile may
 *   be cut in more than two parts (three at 512 x 12288 x 2304).
 *   512 x 12288 x 4096 is 192 tiles of 64 k-tiles: a round, then 60 tiles
 *   in shares of 29, not all 192 in shares of 93. On an H100 those ran 14%
 *   slower than step 10's rounds; with the rule it runs 7% faster than they
 *   (results/h100-2026-11-26/whole_rounds.txt, rule_10_11.txt). Shorter
 *   shares keep the round split: at 384 x 12288 x 4096 (shares of 5.8
 *   after it) the round taken whole ran 6 to 7 points of cuBLAS slower
 *   (results/h200-2026-11-26/whole_rounds.txt). Tried with the last
 *   round split wherever two rounds or fewer are left, at 512 x 12288 x
 *   4096:
 *   Measured (scripts/try.sh 11 last, NVIDIA H200, CUDA 13.0, 2026-11-26):
 *   tried 504.26 TFLOPS (88.3% of cuBLAS), as is 529.55 (90.2%).
 * - Fewer tiles than SMs (plan): every tile is cut in the same
 *   number of parts, SMs / tiles, on that many blocks per tile, if that
 *   leaves at most an eighth of the SMs idle. Part i of every tile then
 *   covers the same k-tiles, and the blocks that read a slice of A or B
 *   read it at the same time (next point). Shares over all SMs would start
 *   each tile's parts at k-tiles of their own, and the blocks would read A
 *   and B at as many places at once: 512 x 1024 x 65536, 32 tiles of 1024
 *   k-tiles, in shares of 248 on 132 SMs, runs at under three quarters of
 *   the speed of four parts of 256 on 128 SMs (the Try-it).
 * - Only where it pays (plan): passing a partial sum on costs about
 *   FIXUP_K_TILES k-tiles' time, and a share shorter than MIN_SHARE k-tiles
 *   saves less than its tile's sums cost. Elsewhere step 10's rounds stay.
 *   2048 x 2048 x 32768 is 128 tiles: its 4 idle SMs lose 4 x 512 / 132 =
 *   15.5 k-tiles' time each, averaged, under FIXUP_K_TILES. Tried with
 *   FIXUP_K_TILES = 8, which splits it, for no gain:
 *   Measured (scripts/try.sh 11 eager, NVIDIA H200, CUDA 13.0, 2026-11-24):
 *   tried 665.45 TFLOPS (99.9% of cuBLAS), as is 673.01 (99.9%).
 * - With more tiles than SMs, only where the last round of whole tiles
 *   would be at most three fifths full (plan). The shares save the
 *   time of that round's idle SMs, SMs - r of them for a round of r tiles,
 *   but each of their k-tiles takes longer than in a round: a block reads
 *   A and B at two places in K, not one, and the tiles beside it in the
 *   GROUP_M order are not all in flight. The shares cut SMs + r tiles;
 *   with r over three fifths of the SMs, the idle SMs are fewer than a
 *   quarter of those, and the shares lost: over 30 products of 1.5 to 15
 *   rounds on an H100, all 10 with r over 79 of 132 ran slower in shares
 *   than in rounds, by 0.6% to 9%, and 3 of the other 20, by up to 3.9%,
 *   while 17 ran level or up to 17% faster
 *   (results/h100-2026-11-26/last_round.txt). On the H200 the shares lose
 *   less there, and at 6144^3 and 4096 x 12288 x 4096 (r = 96 and 84) they
 *   were ahead by about a point of cuBLAS, which the rule gives up
 *   (results/h200-2026-11-26/last_round_h200.txt). Tried with shares
 *   wherever they pay, at 4152 x 2735 x 6980 (363 tiles; the last round
 *   99 of 132):
 *   Measured (scripts/try.sh 11 full, NVIDIA H200, CUDA 13.0, 2026-11-26):
 *   tried 534.66 TFLOPS (432.3% of cuBLAS), as is 546.82 (441.8%).
 * - Shares shorter than a tile where C has at most half as many tiles as
 *   SMs (plan: parts != 1), so that each tile has two SMs or more.
 *   With more, step 10's single round keeps most SMs busy already, and the
 *   same k-tiles spread over all of them gain less than the count of SMs
 *   says: the SMs share L2, and each k-tile takes longer (4853 x 309 x
 *   3655, 76 tiles: 0.60 us a k-tile on 76 SMs, about 0.8 on 132;
 *   results/h200-2026-11-25/timeline_4853_309_3655.txt). So there (fill)
 *   only if the shares, each k-tile and the fixup counted a third longer,
 *   still take less time than the round.
 *   Over 46 products of 70 to 126 tiles, shares everywhere ran from 17%
 *   slower to 18% faster than the round, 29 of them slower; over 5 of 28
 *   to 52 tiles, 8% to 42% faster
 *   (results/h200-2026-11-25/short_shares.txt). Where a repack padded the
 *   rows of A or B, too: from 6% slower (137 x 11729 x 25027) to 18%
 *   faster in six products (results/h200-2026-11-25/fill.txt); those keep
 *   the round. The same for tiles that the rules below narrow to 128 or
 *   64 (1008 x 1120 x 13296: 72 of 128 x 128): over 14 products of 67 to
 *   93 such tiles, the shares ran 1% to 19% faster than the round in both
 *   of two passes on 12, and 5% to 6% slower on one, 2192 x 424 x 11488
 *   (results/h200-2026-11-27/fill_any.txt). Tried with shares wherever C
 *   has fewer tiles than SMs, at 320 x 5120 x 16384 (120 tiles of 128 x
 *   128, 256 k-tiles each):
 *   Measured (scripts/try.sh 11 short, NVIDIA H200, CUDA 13.0, 2026-11-25):
 *   tried 413.33 TFLOPS (80.2% of cuBLAS), as is 475.48 (92.1%).
 *   And with step 10's round wherever C has over half as many tiles as
 *   SMs, at 1536 x 1536 x 8192 (72 tiles of 128 x 256, 128 k-tiles each:
 *   shares of 69-70 on 132 SMs):
 *   Measured (scripts/try.sh 11 fill, NVIDIA H200, CUDA 13.0, 2026-11-25):
 *   tried 435.77 TFLOPS (66.1% of cuBLAS), as is 564.34 (95.2%).
 * - Fixup: a part that does not hold all of its tile's k-tiles passes its
 *   partial sum (the accumulators: 128 KB for a 128 x 256 tile) on
 *   through a workspace. The parts of a tile (part i: its block's place
 *   among the tile's blocks) meet in groups of four, 0-3, 4-7, ..., then
 *   the groups in groups of four, up to the whole tile. Each part of a
 *   group leaves its sum in its slot (st.cg, a fence) and adds 1 to the
 *   group's count (atom.acq_rel); the one that finds the others counted
 *   is the last, adds the group's sums and goes on, and the others stop.
 *   Each block has two slots: one for the tile its share starts in, one
 *   for the tile it is part 0 of. The part that ends with every sum
 *   applies alpha and beta and stores, as in step 10. The last adds in
 *   order, ((0 + 1) + 2) + 3, whichever part it is (starting from its own
 *   sum if it is 0 or 1: float addition is commutative), so a run gives
 *   the same bits as the last. A tile in 33 parts (256 x 256 x 131072)
 *   meets three levels up.
 *   Progress: no part ever waits for another; the last of a group finds
 *   the others' sums already there. So the kernel finishes however many
 *   SMs other work holds, on a single SM if need be, where a part that
 *   waited for later blocks would wait forever for blocks that cannot
 *   start until it ends. The counts start at zero: zero_kernel zeroes
 *   them first, in the same stream; the kernel, its programmatic
 *   dependent, starts beside it and waits for it (griddepcontrol.wait)
 *   only at its first fixup, long after it ended.
 * - The fixup over the rows of C alone: where C ends inside a tile, a
 *   warp whose 16 rows all lie below C neither adds the other parts' sums
 *   nor leaves its own (the counts go up as before). A split tile
 *   of a 20-row C would otherwise move 128 rows of sums, 108 of them
 *   zeros. The test is __all_sync(0xffffffff, m0 + wm < M), a vote of the
 *   warp's lanes, and not the comparison alone, though that is the same in
 *   every lane: ptxas cannot tell (wm comes from threadIdx.x), and wraps
 *   the branch in code for lanes that part ways, with index arithmetic
 *   moved off the uniform datapath; that cost 2% to 9% where no warp skips
 *   anything, at 128 x 4096 x 4096 and 512 x 1024 x 65536
 *   (results/h200-2026-11-27/fixup_rows.txt). Tried with the fixup over
 *   all 128 rows, at 20 x 300 x 30000:
 *   Measured (scripts/try.sh 11 allrows, NVIDIA H200, CUDA 13.0,
 *   2026-11-27): tried 11.01 TFLOPS (66.9% of cuBLAS), as is 12.75 (78.0%).
 * - Two kernels (gemm_kernel's SPLIT): where no tile is split, the launcher
 *   picks the one compiled without the code for shares and the fixup, and
 *   part() reaches each whole tile without a division. That code never runs
 *   there, yet a kernel that holds it runs short products more slowly than
 *   step 10 does. Tried with the kernel for split tiles on every shape, at
 *   2048 x 2048 x 128:
 *   Measured (scripts/try.sh 11 onekernel, NVIDIA H200, CUDA 13.0,
 *   2026-11-24): tried 100.61 TFLOPS (92.1% of cuBLAS), as is 107.72
 *   (103.4%).
 * - Narrower tiles where C has few (plan): while C has no more tiles
 *   than half the SMs, BN halves, from 256 to 128 always (1024^3: 32 tiles
 *   of 128 x 256, 64 of 128 x 128). Without a split, twice as many SMs
 *   work, each half as long; with one, a tile is cut in half as many
 *   parts, and each partial sum is half the bytes (64 KB). From 128 to 64
 *   only where the tiles are not split (1024^3: 64 tiles of 16 k-tiles,
 *   whose shares would be too short to pay for their sums, become 128 of
 *   128 x 64): a small product runs on twice as many SMs again. Split tiles
 *   (1024 x 1024 x 16384) stay 128 wide: their parts run long, and a 128 x
 *   64 k-tile reads 24 KB for half the flops of a 128 x 128's 32 KB. BN is
 *   the kernel's template parameter; wgmma.m64n128k16 and m64n64k16 hold
 *   a half and a quarter of the accumulators. The stages then take less
 *   room, and 6 or 8 fit where 4 did (STAGE_SPACE): with fewer bytes per
 *   stage, more stages keep as many bytes on their way. Tried with 128 x
 *   128 tiles at the narrowest, at 1024^3:
 *   Measured (scripts/try.sh 11 wider, NVIDIA H200, CUDA 13.0, 2026-11-24):
 *   tried 192.84 TFLOPS (75.3% of cuBLAS), as is 225.58 (91.9%).
 *   cuBLAS's own speed at 1024^3 moves from one process to the next,
 *   between about 190 and 260 TFLOPS in these runs and in the shapes
 *   table, and each line's percentage with it: compare the TFLOPS.
 * - No tile more than twice as wide as C (plan): BN also halves
 *   while C is at most half as wide, down to 64, split or not (16384 x 64
 *   x 4096: 128 tiles of 128 x 64, not of 128 x 256). TMA fills a box's
 *   columns past N with zeros, which cost no memory traffic, but wgmma
 *   multiplies them as it does the others: a tile four times as wide as C
 *   takes four times as long. Tried with the other rules alone, at 16384 x
 *   64 x 4096:
 *   Measured (scripts/try.sh 11 overwide, NVIDIA H200, CUDA 13.0,
 *   2026-11-25): tried 127.04 TFLOPS (56.5% of cuBLAS), as is 219.58 (96.7%).
 * - Tiles 128 wide where C is narrow (plan: narrow): BN halves from
 *   256 to 128, split or not, where tiles 128 wide cover at most four
 *   fifths of the columns tiles 256 wide do: N from 257 to 384, three
 *   tiles across for two whose second is a third to a half zeros (and N
 *   up to 128, the point above). Unless the narrower tiles are split, only
 *   if they take fewer than twice the rounds: a round of them takes about
 *   as long as one of tiles 256 wide, and at 6500 x 350 x 256, 153 in two
 *   rounds ran 5% slower than 102 wide ones in one. Over the 11 products
 *   of results/h200-2026-11-26/narrow.txt the rule takes them for, they
 *   ran 12% to 25% faster; the guard keeps wide tiles on 5 more, giving
 *   up 4% and 8% on two (7000 x 376 x 768, 8400 x 264 x 1024). Not from
 *   128 to 64 for N from 129 to 192: a 128 x 64 k-tile reads 24 KB for half
 *   the flops of a 128 x 128's 32 KB, and in scratch runs the narrower
 *   tiles ran from 20% slower (8192 x 192 x 2048) to 15% faster; nor for
 *   N from 513 to 640, five tiles for three: from 2% slower to 8% faster
 *   (results/h100-2026-11-26/narrow.txt). Tried with tiles 256 wide there,
 *   at 16384 x 320 x 4096:
 *   Measured (scripts/try.sh 11 narrow, NVIDIA H200, CUDA 13.0, 2026-11-26):
 *   tried 360.70 TFLOPS (59.3% of cuBLAS), as is 440.56 (73.2%).
 * - L2 fetches missed lines alone (tensor_map): TMA's L2 promotion is 128
 *   bytes, not step 10's 256. Where rows do not start on 128-byte lines,
 *   a box row spans two lines, and 256-byte fetches bring in neighbours
 *   that no box needs. Tried with step 10's 256 bytes, at 3000^3:
 *   Measured (scripts/try.sh 11 promotion, NVIDIA H200, CUDA 13.0,
 *   2026-11-26): tried 413.00 TFLOPS (70.5% of cuBLAS), as is 468.10 (84.3%).
 * - B copied onto whole lines where its rows and A's start off 32-byte
 *   sectors (K and N 8 more than a multiple of 16), B is wider than a
 *   line, and C is 32 tiles tall or more (gemm_launch; the copy is
 *   repack.cuh's, with rows 128 bytes apart). Every other 128-byte row of
 *   a box then starts 16 bytes into a sector and spans five of them, in
 *   two lines, and L2 answers more requests (What limits it now); a
 *   k-tile of B is 256 columns to A's 128 rows, so B's rows make two
 *   thirds of them. The copy costs one read and one write
 *   of B, and each row of tiles reads B once more: over 16 products the
 *   rule copies B for, it ran from level (4200 x 600 x 30008) to 16%
 *   faster (8000 x 5000 x 5000), 9% on average
 *   (results/h200-2026-11-26/copy_b.txt, which also holds the runs that
 *   drew the rule's lines), and over 20 more drawn at random, from level
 *   to 18% faster (results/h200-2026-11-26/copy_b_random.txt). Where C
 *   was 24 tiles tall or less (3000^3), where A's rows start on sectors
 *   (5000 x 744 x 20000, 4200 x 600 x 30000: 3% behind step 10) or where
 *   B was 40 columns wide, the copy cost more than it saved, and B stays. Tried without it, at 5000^3:
 *   Measured (scripts/try.sh 11 copy, NVIDIA H200, CUDA 13.0, 2026-11-26):
 *   tried 489.81 TFLOPS (80.3% of cuBLAS), as is 544.75 (89.1%).
 * - Boxes of A no taller than the rows of C they are for (map_last): where
 *   M is not a multiple of BM, the last row of tiles reads boxes of M mod
 *   BM rows (all of A where M < BM: 16 x 8192 x 8192). A box of BM rows
 *   would have TMA write zeros for the rows below M into every stage, and
 *   TMA writes zeros more slowly than it copies rows: the blocks of the
 *   last row would finish last, and where C has few rows of tiles, all
 *   the others wait for them. With boxes of BM rows, 528 x 2992 x 4800 (5
 *   rows of 24 tiles of 128 x 128 in one round, 16 rows of C in the last)
 *   took 42 us, and 640 x 2992 x 4800, a fifth more work, 35 us
 *   (results/h200-2026-11-26/last_row_boxes.txt; there too, scratch copies
 *   of steps 11 and 13 with and without the second map: with it, 9% to 32%
 *   faster on four products of 3 to 5 rows of tiles, from 1% slower to 6%
 *   faster on 528 x 3072 x 4800, and from 2% slower to 3% faster on 11
 *   more, as at 640 x 2992 x 4800, where nothing changes). The stages'
 *   other rows of A keep what an earlier k-tile left; only rows of D below
 *   M see them, and those are never stored. Tried with boxes of BM rows in
 *   the last row too, as in step 10, at 528 x 2992 x 4800:
 *   Measured (scripts/try.sh 11 tall, NVIDIA H200, CUDA 13.0, 2026-11-26):
 *   tried 368.39 TFLOPS (68.9% of cuBLAS), as is 438.83 (86.8%).
 * - An order that keeps L2 useful: blocks that read the same slices of A
 *   and B at the same time read them from L2 once. Each block takes its
 *   whole tiles, each from its first k-tile up as in step 10 (the blocks
 *   of a round start together), then the end of its share's first tile,
 *   then the start of its last, each of these from its last k-tile down.
 *   t k-tiles' time after the shares begin, every block is then at k-tile
 *   (tiles_k - 1 - t) mod tiles_k or, in its last part, at share - 1 - t:
 *   two slices of K at a time (with equal parts, part i's end - 1 - t).
 *   Counting up instead, each block would start at a k-tile of its own,
 *   and A and B would come from memory again for every tile. Tried with
 *   every part from its first k-tile up, at 6400^3:
 *   Measured (scripts/try.sh 11 up, NVIDIA H200, CUDA 13.0, 2026-11-26):
 *   tried 637.80 TFLOPS (103.3% of cuBLAS), as is 644.01 (104.4%).
 *
 *   3000^3: 24 x 12 = 288 tiles of 47 k-tiles, 132 SMs (tile: k-tiles)
 *
 *   step 10, whole tiles in rounds      step 11, a round, then shares of 55-56 k-tiles
 *   SM   0  0 | 132 | 264               SM   0  0 | 132: 0-46, 133: 0-7
 *   SM   1  1 | 133 | 265               SM   1  1 | 133: 8-46, 134: 0-16
 *   ...                                 SM   2  2 | 134: 17-46, 135: 0-24
 *   SM  23 23 | 155 | 287               ...
 *   SM  24 24 | 156 | (idle)            SM 130 130 | 285: 29-46, 286: 0-37
 *   ...                                 SM 131 131 | 286: 38-46, 287: 0-46
 *   SM 131 131| 263 | (idle)
 *   time: 3 x 47 = 141 k-tiles          time: 47 + 56 = 103 k-tiles
 *
 *   Block 1 leaves tile 133's k-tiles 8-46 in its slot; block 0 multiplies
 *   k-tiles 0-7 last, adds block 1's sum and stores the tile.
 *
 * Why it is faster: every SM multiplies to the end, at the cost of writing
 * and reading one partial sum per block.
 *
 * What limits it now: with far fewer tiles than SMs a tile is cut in many
 * parts: every part writes its partial sum, and the last of each group of
 * four reads them, one level after the other, while most SMs have nothing
 * left to do (256 x 256 x 131072: four tiles in 33 parts each, three
 * levels; results/h200-2026-11-25/timeline_256_256_131072.txt, with an
 * earlier tree). Tried with the adds left out (wrong sums; the writes and
 * the counts stay):
 * Measured (scripts/try.sh 11 noadds, NVIDIA H200, CUDA 13.0, 2026-11-24):
 * tried 297.19 TFLOPS (74.4% of cuBLAS), as is 278.89 (69.2%).
 * Scratch copies in which the parts share the adds in one level, in
 * place of a tree (each part leaves its sums, waits for all the others',
 * then adds and stores its own columns of the tile), ran 20-42%
 * slower there, and 44-64% at 20 x 300 x 30000, three tiles in 44 parts
 * (results/h200-2026-11-26/shared_adds.txt).
 * A split costs a small product more than it saves (1024^3: 128 tiles of
 * 16 k-tiles stay whole, on 128 SMs). Narrow tiles read more bytes from L2
 * per flop than wide ones, which is why large products keep 128 x 256.
 * Rows that do not start on 32-byte sectors (3000^3, 5000^3: K and N are 8
 * more than a multiple of 16) cost TMA five sectors for every other row of a
 * box instead of four: steps 10 and 11 run much faster at 2992^3 and 3008^3
 * (results/h200-2026-11-24/alignment.txt); at 3000^3, 24 tiles tall,
 * the copy of B would cost more than it saves. And cuBLAS runs in
 * clusters of two blocks that receive each box of A or B together (TMA
 * multicast), so that L2 answers fewer requests: at 3000^3, 8.5 million
 * to this kernel's 14.7 million, with 192 x 192 tiles (results/h200-2026-11-24/
 * profile_cublas_3000.txt and profile_step11_3000.txt, from
 * scripts/profile.sh 11 -s 3000 [--cublas]). Step 12 takes that idea.
 *
 * Launch: one block per SM (fewer if C has fewer tiles and none is split,
 * or if each is cut in the same number of parts), THREADS threads,
 * STAGE_SPACE bytes of dynamic shared memory and step 10's slice for the
 * epilogue; where tiles are split, a workspace of two BM x BN_WIDE float
 * slots and 2 LEVELS x CONSUMERS counts per block, zero_kernel first, and
 * the kernel by cudaLaunchKernelEx as zero_kernel's programmatic dependent.
 * Every choice that depends on the shape is made by plan(), a host function
 * that make test runs on the CPU over shapes and SM counts, walking each
 * plan's parts and fixup (common/test_plan.cu).
 *
 * At 4096^3 no tile is split and the launch is step 10's round.
 * Measured: 639.18 TFLOPS, 100.3% of cuBLAS GemmEx, 1.00x step 10
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
constexpr int BK = 64;  // depth of the shared tiles: one 128-byte line of halves per row
constexpr int STAGE_SPACE = 192 * 1024; // bytes of shared memory for the stages: 4, 6 or 8 (BN 256, 128, 64)
constexpr int GROUP_M = 8; // tile rows in one group of the block order
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

__device__ void mbar_arrive(uint64_t *bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" : : "r"(smem_addr(bar)) : "memory");
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
// their bytes (a_rows of A's BM rows: see gemm_launch).
template <int BN>
__device__ void load_tiles(__half *As, __half *Bs, uint64_t *bar, const CUtensorMap *map_a,
                           const CUtensorMap *map_b, int m0, int n0, int k0, int a_rows)
{
    if (threadIdx.x == 0) {
        mbar_arrive_expect(bar, stage_bytes(BN, a_rows));
        tma_load(As, map_a, k0, m0, bar);
#pragma unroll
        for (int j = 0; j < BN / LINE_N; ++j)
            tma_load(Bs + j * BK * LINE_N, map_b, n0 + j * LINE_N, k0, bar);
    }
}

// The top-left element of tile number `tile` of C. A row of the numbering
// is GROUP_M tile rows, numbered down its columns, so that the tiles in
// flight share more of A and B in L2 (the last row may have fewer).
template <int BN>
__device__ void tile_origin(int tile, int tiles_m, int tiles_n, int &m0, int &n0)
{
    const int first_row = tile / (GROUP_M * tiles_n) * GROUP_M;
    const int group_rows = min(tiles_m - first_row, GROUP_M);
    const int in_group = tile % (GROUP_M * tiles_n);
    m0 = (first_row + in_group % group_rows) * BM;
    n0 = in_group / group_rows * BN;
}

// How the work is shared out (see the header): tiles 0 .. whole - 1 whole, one
// per block in turn as in step 10; the others' k-tiles in gridDim.x equal shares,
// cut into parts where tiles end, whose sums the fixup adds through slots and counts.
struct split {
    int whole;
    float *partials; // two slots of BM x BN_WIDE floats per block (see key in the fixup)
    int *counts;     // two sets of LEVELS x CONSUMERS per block: the parts that got to a group
};

// Part p of block b's work (of `blocks`): tile `tile` of C, k-tiles k0 .. k1 - 1; false past its last part. Its
// whole tiles first; then, of its share, the tiles in the middle, the end of the first tile, the start of the last
// (see the header for why this order).
template <bool SPLIT>
__host__ __device__ bool part(int p, int b, int blocks, int whole, int tiles, int tiles_k, int &tile, int &k0, int &k1)
{
    if (b + p * blocks < whole) {
        tile = b + p * blocks, k0 = 0, k1 = tiles_k;
        return true;
    }
    // block u's share starts at split k-tile u * split_k_tiles / blocks (tile `whole` at 0)
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

// The share (block) that holds split k-tile x, of `blocks` shares: the last whose share starts at x or before.
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

// The slots and counts of part x of a tile whose parts start at block `first`: block first + x's, and for x = 0
// the block's second ones (it may be part x > 0 of another tile).
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

template <int BN, bool VEC, bool SPLIT>
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
    __shared__ uint64_t empty[STAGES]; // every consumer is done with stage s
    __shared__ int arrived[CONSUMERS];  // the parts each consumer found at its group before it (the fixup)

    const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
    const int warp = threadIdx.x / WARP_SIZE, lane = threadIdx.x % WARP_SIZE;
    // the consumer warpgroup (-1: the producer); a consumer warp's rows of D
    const int wg = threadIdx.x / WARPGROUP - 1, wm = (warp - WARPGROUP / WARP_SIZE) * MMA_M;
    const int tiles_k = (K + BK - 1) / BK;
    constexpr int FN = BN / MMA_N; // 16 x 8 tiles per warp

    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) { // full: the thread that arms it; empty: each consumer
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" : : "r"(smem_addr(&full[s])));
            asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" : : "r"(smem_addr(&empty[s])), "n"(CONSUMERS));
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" : : : "memory");
    }
    __syncthreads(); // the barriers exist before anyone waits

    // A k-tile's number among all this block copies or multiplies: stage
    // n % STAGES, on that stage's round n / STAGES.
    int n = 0;
    if (wg < 0) {
        regs_dec<PRODUCER_REGS>();
        // ---- load tiles: every k-tile of every part of this block, each
        // into the next stage once the consumers have released it
        int tile, k0, k1;
        for (int p = 0; part<SPLIT>(p, blockIdx.x, gridDim.x, s.whole, tiles_m * tiles_n, tiles_k, tile, k0, k1); ++p) {
            int m0, n0;
            tile_origin<BN>(tile, tiles_m, tiles_n, m0, n0);
            for (int t = k0; t < k1; ++t, ++n) {
                mbar_wait(&empty[n % STAGES], n / STAGES % 2 ^ 1);
                const int k = k1 - k0 < tiles_k ? k0 + k1 - 1 - t : t; // a piece of a tile: from its last k-tile down
                load_tiles<BN>(As[n % STAGES], Bs[n % STAGES], &full[n % STAGES], m0 + BM > M ? &map_last : &map_a,
                               &map_b, m0, n0, k * BK, min(M - m0, BM));
            }
        }
        // Wait until the consumers have released every stage, when each copy
        // this thread issued has landed: compute-sanitizer's racecheck may
        // hang on a producer that stops with copies in flight (step 10's header).
        for (int i = n; i < n + STAGES; ++i)
            mbar_wait(&empty[i % STAGES], i / STAGES % 2 ^ 1);
        return;
    }

    regs_inc<CONSUMER_REGS>();
    const long long split_k_tiles = (long long)(tiles_m * tiles_n - s.whole) * tiles_k;
    int tile, k0, k1;
    for (int p = 0; part<SPLIT>(p, blockIdx.x, gridDim.x, s.whole, tiles_m * tiles_n, tiles_k, tile, k0, k1); ++p) {
        int m0, n0;
        tile_origin<BN>(tile, tiles_m, tiles_n, m0, n0);
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
            // its stage goes back to the producer.
            wgmma_wait<1>(acc);
            if (t > k0 && threadIdx.x % WARPGROUP == 0)
                mbar_arrive(&empty[(n - 1) % STAGES]);
        }
        wgmma_wait<0>(acc);
        if (threadIdx.x % WARPGROUP == 0)
            mbar_arrive(&empty[(n - 1) % STAGES]);

        // ---- fixup (see the header): the parts of a tile meet in groups of up to FAN_IN, then the groups in
        // groups, ... Each part of a group leaves its sum and counts itself; the last to count adds the group's
        // sums and goes on, the others stop. The part that ends with the sum of them all stores the tile.
        const bool alone = !SPLIT || k1 - k0 == tiles_k; // the tile in one part (each, where none is split)
        const long long first_k = (long long)(tile - s.whole) * tiles_k; // its first k-tile among the split ones
        const int first = alone ? blockIdx.x : share_of(first_k, gridDim.x, split_k_tiles), i = blockIdx.x - first;
        const int parts = alone ? 1 : share_of(first_k + tiles_k - 1, gridDim.x, split_k_tiles) - first + 1;
        bool stopped = false;
        if (!alone) // the counts are zero from here on (gemm_launch)
            asm volatile("griddepcontrol.wait;\n" : : : "memory");
        // This part holds the sum of the `size` parts from i & -size: member `me` of the group of `n` from `head`.
        for (int size = 1, level = 0; size < parts && !stopped; size *= FAN_IN, ++level) {
            int head, me, n;
            group(i, size, parts, head, me, n);
            if (n == 1)
                continue; // alone in its group: the sum goes on as it is
            int *count = &s.counts[(key(first, head) * LEVELS + level) * CONSUMERS + wg];
            const auto sum = [&](int member) { return slot<FN>(s, key(first, head + member * size), wg); };
            const bool rows = __all_sync(0xffffffffu, m0 + wm < M); // no sums for a warp's rows below C (header)
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

// gemm_kernel for tiles BN wide: float4 stores or not, the code for split tiles (SPLIT) or not.
template <int BN>
static auto kernel_for(bool vec, bool split)
{
    return vec ? (split ? gemm_kernel<BN, true, true> : gemm_kernel<BN, true, false>)
               : (split ? gemm_kernel<BN, false, true> : gemm_kernel<BN, false, false>);
}

// The launch plan (see the header): the tile's width BN, whether tiles are split, the blocks, and how many tiles
// (the first) are done whole, one per block in turn.
struct launch_plan {
    int bn, blocks, whole;
    bool split;
};

// Every choice of the launch that depends on the shape, for an M x N x K product on `sms` SMs. A host function
// alone: make test checks its plans without a GPU (common/test_plan.cu).
static launch_plan plan(int M, int N, int K, int sms)
{
    const int tiles_m = (M + BM - 1) / BM, tiles_k = (K + BK - 1) / BK;
    const auto tiles_of = [&](int bn) { return tiles_m * ((N + bn - 1) / bn); };
    const auto rounds = [&](int tiles) { return (tiles + sms - 1) / sms; }; // of whole tiles, one per SM
    const auto split_pays = [&](int tiles) {
        const int idle = (sms - tiles % sms) % sms;
        return (long long)idle * tiles_k > (long long)FIXUP_K_TILES * sms &&
               (long long)tiles * tiles_k >= (long long)MIN_SHARE * sms;
    };
    // Tiles 128 wide where they cover at most four fifths of the columns that tiles 256 wide do, if they are split
    // or take fewer than twice the rounds (see the header).
    const bool narrow = 5 * BN_NARROW * tiles_of(BN_NARROW) <= 4 * BN_WIDE * tiles_of(BN_WIDE) &&
                        (split_pays(tiles_of(BN_NARROW)) || rounds(tiles_of(BN_NARROW)) < 2 * rounds(tiles_of(BN_WIDE)));
    // One rule picks the tile: BN halves from 256 where narrow, from 128 where C is at most half as wide, or while C
    // has no more tiles than half the SMs, down to 128, or to 64 where 128-wide tiles are not split.
    int bn = BN_WIDE;
    while (bn > BN_NARROWEST && ((bn == BN_WIDE ? narrow : 2 * N <= bn) ||
                                 (2 * tiles_of(bn) <= sms && (bn == BN_WIDE || !split_pays(tiles_of(bn))))))
        bn /= 2;
    const int tiles = tiles_of(bn), parts = sms / tiles;
    // With more tiles than SMs, shares only where the last round of whole tiles would be at most three fifths
    // full; with fewer, but over half as many, only where TMA reads the rows without a repack, if the shares
    // take less time than the round with each k-tile and the fixup a third longer (fill; see the header).
    const bool fill = K % 8 == 0 && N % 8 == 0 &&
                      4 * ((long long)tiles * tiles_k + FIXUP_K_TILES * sms) < 3LL * tiles_k * sms;
    const bool pays = split_pays(tiles) && (tiles > sms ? 5 * (tiles % sms) <= 3 * sms : parts != 1 || fill),
               even = parts >= 2 && sms - parts * tiles <= sms / 8;
    // One block per SM (fewer if C has fewer tiles and none is split, or each is cut in the same number of parts).
    // No block waits for one that may not have started (the fixup): it finishes however many SMs other work holds.
    const int blocks = pays ? (even ? parts * tiles : sms) : min(tiles, sms);
    // Whole rounds, the last too where the tiles after it leave shares of FIXUP_K_TILES k-tiles or more (see the header).
    const int whole =
        pays ? max(tiles / blocks - ((long long)(tiles % blocks) * tiles_k < FIXUP_K_TILES * blocks), 0) * blocks : tiles;
    return { bn, blocks, whole, pays };
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
    // B too where its rows, a line or longer, and A's are off 32-byte sectors and C is 32 tiles tall (see the header).
    B = for_tma(B, K, N, ldb, mem, N % 16 != 0 && N > REPACK_LINE && lda % 16 != 0 && M > 31 * BM);
    if (!A || !B)
        return cudaGetLastError(); // out of GPU memory: cudaMallocAsync's error
    // The last row of tiles reads boxes of A as tall as its rows: TMA writes zeros slowly (see the header).
    CUtensorMap map_a, map_b, map_last;
    if (!tensor_map(map_a, A, M, K, lda, BM, BK) || !tensor_map(map_b, B, K, N, ldb, BK, LINE_N) ||
        !tensor_map(map_last, A, M, K, lda, M - (M - 1) / BM * BM, BK))
        return cudaErrorInvalidValue; // the driver cannot describe an operand to TMA
    int device = 0, sms = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    const launch_plan how = plan(M, N, K, sms);
    const bool vec = N % 4 == 0 && (uintptr_t)C % sizeof(float4) == 0; // float4 stores: rows of whole float4s, aligned
    const auto kernel = how.bn == BN_WIDE     ? kernel_for<BN_WIDE>(vec, how.split)
                        : how.bn == BN_NARROW ? kernel_for<BN_NARROW>(vec, how.split)
                                              : kernel_for<BN_NARROWEST>(vec, how.split);
    // A block may use more than 48 KB of shared memory only if asked; an
    // error here makes the launch fail, which the caller sees.
    const int smem = STAGE_SPACE + BM * (OUT_N + OUT_PAD) * (int)sizeof(float); // and the epilogue's pass
    cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    // setmaxnreg hands registers between the warpgroups of a block that
    // starts with REGS each: with more, the consumers would not get theirs;
    // with fewer, setmaxnreg.inc would wait forever. ptxas gives a kernel
    // with setmaxnreg all that __launch_bounds__ allows; check that it did.
    cudaFuncAttributes attr;
    if (cudaFuncGetAttributes(&attr, kernel) == cudaSuccess && attr.numRegs != REGS)
        return cudaErrorInvalidKernelImage; // a build this file does not expect: the kernel would hang
    // Split tiles: two slots and two sets of counts per block, the counts zeroed by zero_kernel first, beside which
    // the kernel may start (programmatic dependent launch).
    cudaLaunchAttribute early = { cudaLaunchAttributeProgrammaticStreamSerialization };
    early.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t config = { dim3(how.blocks), dim3(THREADS), (size_t)smem, 0, &early, 0 };
    split s = { how.whole };
    if (how.split) {
        const size_t keys = 2 * (size_t)how.blocks, counts = keys * LEVELS * CONSUMERS;
        s.partials = (float *)mem.take(keys * BM * BN_WIDE * sizeof(float) + counts * sizeof(int));
        if (!s.partials)
            return cudaGetLastError(); // as above
        s.counts = (int *)(s.partials + keys * BM * BN_WIDE);
        zero_kernel<<<1, THREADS>>>(s.counts, (int)counts);
        config.numAttrs = 1;
    }
    cudaLaunchKernelEx(&config, kernel, map_a, map_last, map_b, M, N, K, alpha, beta, C, s);
    return cudaGetLastError();
}
