#!/usr/bin/env bash
# A step's "Try it" experiment from the README, or one of the ideas its
# header measures, as a command: the edit is made in a scratch copy of the
# step, which is built and run beside the unchanged step, on the same shape
# and the same GPU, one process after the other; both results are printed,
# the variant's first. Anyone with a GPU can check the claim this way.
set -u
cd "$(dirname "$0")/.."
source scripts/common.sh

usage() {
    cat <<USAGE
usage: scripts/try.sh STEP [IDEA] [--iters N] [--list]
  STEP        a step's number (05), short name (step05) or folder
  IDEA        one of the ideas the step's header measures, taken out (04: scalar;
              05: unrotated; 06: registers; 07: frags, tile, group; 10: direct;
              11: wider, overwide, narrow, eager, short, fill, full, last, up, promotion,
              tall, copy, noadds, allrows, onekernel;
              12: single, nostores, odd, aligned, round, sectors, copy, few, fewest,
              oneround;
              13: always, clusters, breakeven, rounds, equal, single, sectors,
              halved);
              without it, the step's Try-it from the README
  --iters N   timed runs of each; the median is reported (default 20)
  --list      print the experiment (the edit and the shape), run nothing
USAGE
}

# Each experiment: what it tries, the shape, the file it edits (the step's
# kernel.cu unless it says) and sed expressions, each of which must change it.
experiment() {
    file=$1/kernel.cu
    # step 11's rule for splitting (gemm_launch), which three of its experiments change
    local pays11='^    const bool pays = split_pays(tiles) \&\& (tiles > sms ? 5 \* (tiles % sms) <= 3 \* sms : parts != 1 || fill),$'
    # step 11's rule for copying B onto lines, which step 12 leaves out (an edit's pattern, or its replacement)
    local copy11='N % 16 != 0 \&\& N > REPACK_LINE \&\& lda % 16 != 0 \&\& M > 31 \* BM'
    # step 12's rule for clusters (gemm_launch), which two of its experiments change
    local cluster12='^        may_pair \&\& fit > 0 \&\& (split_pays(paired \/ CLUSTER \* wide_n, fit) || (!sectors \&\& rows \* wide_n >= sms) || one_round) ?'
    case $1${2:+ $2} in
        step01_naive) what="each warp down a column of C: BM = 512, BN = 1"; shape="-s 4096"
            edits=('s/^constexpr int BM = 16;/constexpr int BM = 512;/'
                   's/^constexpr int BN = 32;/constexpr int BN = 1;/') ;;
        step02_shared) what="smaller tiles: BM = BN = BK = 16"; shape="-s 4096"
            edits=('s/^constexpr int BM = 32;/constexpr int BM = 16;/'
                   's/^constexpr int BN = 32;/constexpr int BN = 16;/'
                   's/^constexpr int BK = 32;/constexpr int BK = 16;/') ;;
        step03_double_buffer) what="STAGES = 3"; shape="-s 4096"
            edits=('s/^constexpr int STAGES = 2;/constexpr int STAGES = 3;/') ;;
        step04_register_tile) what="deeper tiles: BK = 16"; shape="-s 4096"
            edits=('s/^constexpr int BK = 8; /constexpr int BK = 16;/') ;;
        "step04_register_tile scalar") what="scalar accesses only: the launcher never picks the VEC kernel"
            shape="-s 4096"
            edits=('s/^    const auto kernel = vec ? gemm_kernel<true> : gemm_kernel<false>;/    const auto kernel = gemm_kernel<false>;/') ;;
        step05_wmma) what="narrower warp tiles: WN = 32"; shape="-s 4096"
            edits=('s/^constexpr int WN = 64;/constexpr int WN = 32;/') ;;
        "step05_wmma unrotated") what="step 04's order: load tile t + 1, compute tile t, store tile t + 1"
            shape="-s 4096"
            edits=('s/the first one into stage 0, the second into registers$/the first one into stage 0/'
                   '/^    load_tile<VEC, A_CHUNKS>(a_next, A, M, K, m0, BK);$/d'
                   '/^    load_tile<VEC, B_CHUNKS>(b_next, B, K, N, BK, n0);$/d'
                   '/^        \/\/ ---- load tiles: registers -> the stage of tile t + 1/,/^        const int k0 = (t + 2) \* BK;$/c\        // ---- load tiles: tile t + 1 into registers, stored after the compute\n        const int k0 = (t + 1) * BK;'
                   's/^        __syncthreads(); \/\/ tile t + 1 is complete/        store_tiles(As[(t + 1) % STAGES], Bs[(t + 1) % STAGES], a_next, b_next);\n&/') ;;
        step06_mma_ptx) what="the swizzle off: swizzle() returns (r * CHUNKS + c) * PIECE"; shape="-s 4096"
            edits=('s/^    return (r \* CHUNKS + (c ^ (r \/ ROWS_PER_LINE % COLUMNS))) \* PIECE;/    return (r * CHUNKS + c) * PIECE;/') ;;
        "step06_mma_ptx registers") what="outside A or B, a cleared register, not a load from the block of zeros"
            shape="-s 4096"
            edits=('s/^        return \*(r < rows && c < cols ? reinterpret_cast<const uint4 \*>(&X\[r \* cols + c\]) : &zeros);/        return r < rows \&\& c < cols ? *reinterpret_cast<const uint4 *>(\&X[r * cols + c]) : make_uint4(0, 0, 0, 0);/') ;;
        step07_pipeline) what="three stages: STAGES_MOST = STAGES_FEWER = 3"; shape="-s 4096"
            edits=('s/^constexpr int STAGES_MOST = 5, STAGES_FEWER = 4;/constexpr int STAGES_MOST = 3, STAGES_FEWER = 3;/') ;;
        "step07_pipeline frags") what="fragments not double-buffered: each slice's loaded just before its mma.sync"
            shape="-s 4096"
            edits=('/^    load_fragments(a\[0\], b\[0\], As\[0\], Bs\[0\], wm, wn, 0);$/d'
                   '/^            if (s + 1 < KSLICES)$/,/^                load_fragments(a\[0\], b\[0\], As\[(t + 1) % STAGES\]/c\            load_fragments(a[0], b[0], As[t % STAGES], Bs[t % STAGES], wm, wn, s * MMA_K);'
                   's/mma_16x8x16(acc\[i\]\[j\], a\[s % 2\]\[i\], b\[s % 2\]\[j\]);/mma_16x8x16(acc[i][j], a[0][i], b[0][j]);/') ;;
        "step07_pipeline tile") what="step 06's 128 x 128 block tile: BM = 128"; shape="-s 8192"
            edits=('s/^constexpr int BM = 256;/constexpr int BM = 128;/') ;;
        "step07_pipeline group") what="blocks numbered row by row: GROUP_M = 1"; shape="-s 8192"
            edits=('s/^constexpr int GROUP_M = 8;/constexpr int GROUP_M = 1;/') ;;
        step08_wgmma) what="STAGES = 3"; shape="-s 4096"
            edits=('s/^constexpr int STAGES = 4;/constexpr int STAGES = 3;/') ;;
        step09_tma) what="repacked rows padded to whole pieces, not lines (common/repack.cuh)"
            shape="-m 4096 -n 4100 -k 4096" file=common/repack.cuh
            edits=('s/^    const int unit = cols < REPACK_LINE ? REPACK_PIECE : REPACK_LINE;/    const int unit = REPACK_PIECE;/') ;;
        step10_warp_specialized) what="one tile per block: tiles blocks, not min(tiles, sms)"; shape="-s 4096"
            edits=('s/^    kernel<<<min(tiles, sms), THREADS, smem>>>/    kernel<<<tiles, THREADS, smem>>>/') ;;
        "step10_warp_specialized direct") what="the epilogue stores straight from the accumulators, as in step 09"
            shape="-s 2048"
            edits=('/^            __syncwarp(); \/\/ the next pass writes where this one read$/{n;d}'
                   '/^        \/\/ ---- epilogue: alpha, beta, store/,/^            __syncwarp(); \/\/ the next pass writes where this one read$/c\        // ---- epilogue: straight from the accumulators\n        const int g = lane / QUAD, tc = lane % QUAD * 2;\n#pragma unroll\n        for (int j = 0; j < FN; ++j)\n#pragma unroll\n            for (int h = 0; h < 2; ++h)\n                store<VEC>(C, M, N, m0 + wm + h * (MMA_M / 2) + g, n0 + j * MMA_N + tc,\n                           make_float2(acc[j][2 * h], acc[j][2 * h + 1]), alpha, beta);') ;;
        step11_stream_k) what="shares over all SMs, not every tile cut in the same number of parts: even = false"
            shape="-m 512 -n 1024 -k 65536"
            edits=('s/^               even = parts >= 2 \&\& sms - parts \* tiles <= sms \/ 8;/               even = false;/') ;;
        "step11_stream_k wider") what="tiles at least 128 wide: BN halves down to BN_NARROW, not BN_NARROWEST"
            shape="-s 1024"
            edits=('s/^    while (bn > BN_NARROWEST \&\& /    while (bn > BN_NARROW \&\& /') ;;
        "step11_stream_k eager") what="splits that save less: FIXUP_K_TILES = 8"
            shape="-m 2048 -n 2048 -k 32768"
            edits=('s/^constexpr int FIXUP_K_TILES = 16, MIN_SHARE = 6;/constexpr int FIXUP_K_TILES = 8, MIN_SHARE = 6;/') ;;
        "step11_stream_k up") what="every part from its first k-tile up, as whole tiles are"; shape="-s 6400"
            edits=('s/^                const int k = k1 - k0 < tiles_k ? k0 + k1 - 1 - t : t;/                const int k = t;/') ;;
        "step11_stream_k promotion") what="TMA's L2 promotion of 256 bytes, as in step 10"; shape="-s 3000"
            edits=('s/CU_TENSOR_MAP_L2_PROMOTION_L2_128B/CU_TENSOR_MAP_L2_PROMOTION_L2_256B/') ;;
        "step11_stream_k tall") what="boxes of A BM rows tall in the last row of tiles too, as in step 10"
            shape="-m 528 -n 2992 -k 4800"
            edits=('s/m0 + BM > M ? \&map_last : \&map_a,$/\&map_a,/' 's/, min(M - m0, BM));$/, BM);/') ;;
        "step11_stream_k copy") what="B read in place where its rows and A's are off sectors, as in step 10"
            shape="-s 5000"
            edits=("s/^    B = for_tma(B, K, N, ldb, mem, $copy11);/    B = for_tma(B, K, N, ldb, mem);/") ;;
        "step11_stream_k onekernel") what="one kernel, the one for split tiles, for every shape"
            shape="-m 2048 -n 2048 -k 128"
            edits=('s/(vec, how.split)/(vec, true)/g') ;;
        "step11_stream_k overwide") what="tiles up to four times as wide as C: BN halves by the other rules alone"
            shape="-m 16384 -n 64 -k 4096"
            edits=('s/((bn == BN_WIDE ? narrow : 2 \* N <= bn) ||$/(/') ;;
        "step11_stream_k narrow") what="tiles 256 wide over 257 to 384 columns: BN halves from 256 only where C is at most half as wide"
            shape="-m 16384 -n 320 -k 4096"
            edits=('s/((bn == BN_WIDE ? narrow : 2 \* N <= bn) ||$/(2 * N <= bn ||/') ;;
        "step11_stream_k short") what="shares shorter than a tile wherever C has fewer tiles than SMs"
            shape="-m 320 -n 5120 -k 16384"
            edits=("s/$pays11/"'    const bool pays = split_pays(tiles) \&\& (tiles < sms || 5 * (tiles % sms) <= 3 * sms),/') ;;
        "step11_stream_k fill") what="with over half a round of wide tiles but less than a round, step 10's single round always"
            shape="-m 1536 -n 1536 -k 8192"
            edits=("s/$pays11/"'    const bool pays = split_pays(tiles) \&\& (tiles > sms ? 5 * (tiles % sms) <= 3 * sms : parts != 1),/') ;;
        "step11_stream_k full") what="shares also where the last round of whole tiles would be more than three fifths full"
            shape="-m 4152 -n 2735 -k 6980"
            edits=("s/$pays11/"'    const bool pays = split_pays(tiles) \&\& (tiles > sms || parts != 1 || fill),/') ;;
        "step11_stream_k last") what="the last round of whole tiles split too, wherever two rounds or fewer are left"
            shape="-m 512 -n 12288 -k 4096"
            edits=('s/^        pays ? max(tiles \/ blocks - ((long long)(tiles % blocks) \* tiles_k < FIXUP_K_TILES \* blocks), 0) \* blocks : tiles;/        pays ? max(tiles \/ blocks - 1, 0) * blocks : tiles;/') ;;
        "step11_stream_k noadds") what="the fixup's adds left out: wrong sums, the time of everything else"
            shape="-m 256 -n 256 -k 131072"
            edits=('s/^                    add(acc\[j\], __ldcg(p + j \* WARPGROUP));/                    (void)p;/') ;;
        "step11_stream_k allrows") what="the fixup over all BM rows of a tile, those below C too, as for a tile inside C"
            shape="-m 20 -n 300 -k 30000"
            edits=('s/^            const bool rows = __all_sync(0xffffffffu, m0 + wm < M);/            const bool rows = true;/') ;;
        step12_multicast) what="clusters wherever C's rows of tiles pair up, small products too"; shape="-s 2048"
            edits=('s/^    const bool may_pair = pair \&\& !narrow \&\& (!few || !b_sectors || fewest);/    const bool may_pair = pair \&\& !narrow;/'
                   "s/$cluster12/"'        may_pair \&\& fit > 0 ?/') ;;
        "step12_multicast single") what="clusters of one everywhere, as in step 11: each block copies all of B"
            shape="-s 5000"
            edits=('s/^        may_pair \&\& fit > 0 \&\& (split_pays/        false \&\& may_pair \&\& fit > 0 \&\& (split_pays/') ;;
        "step12_multicast copy") what="step 11's copy of B where its rows and A's are off sectors"; shape="-s 5000"
            edits=("s/^    B = for_tma(B, K, N, ldb, mem);/    B = for_tma(B, K, N, ldb, mem, $copy11);/") ;;
        "step12_multicast odd") what="clusters of one over odd rows of tiles"; shape="-s 5400"
            edits=('s/^    const bool pair = paired == rows || (!sectors \&\& 8 \* (paired - rows) <= paired);$/    const bool pair = paired == rows;/') ;;
        "step12_multicast aligned") what="clusters over odd rows of tiles where rows start on sectors too"
            shape="-m 1152 -n 8192 -k 8192"
            edits=('s/^    const bool pair = paired == rows || (!sectors \&\& 8/    const bool pair = paired == rows || (8/') ;;
        "step12_multicast round") what="clusters only where C has a round of wide tiles: fewer, step 11's single round"
            shape="-m 1536 -n 1536 -k 4096"
            edits=("s/$cluster12/"'        may_pair \&\& fit > 0 \&\& rows * wide_n >= sms ?/') ;;
        "step12_multicast sectors") what="clusters wherever C has a round of wide tiles, where rows start on sectors too"
            shape="-m 4096 -n 4096 -k 512"
            edits=('s/ || (!sectors \&\& rows \* wide_n >= sms) || one_round) ? CLUSTER : 1;$/ || rows * wide_n >= sms || one_round) ? CLUSTER : 1;/') ;;
        "step12_multicast few") what="clusters only where C has half a round of wide tiles or more, off sectors too: blocks alone"
            shape="-m 1000 -n 1000 -k 20000"
            edits=('s/^    const bool may_pair = pair \&\& !narrow \&\& (!few || !b_sectors || fewest);/    const bool may_pair = pair \&\& !narrow \&\& !few;/') ;;
        "step12_multicast fewest") what="blocks alone over the fewest tiles too, where rows of B start on sectors"
            shape="-m 512 -n 512 -k 32768"
            edits=('s/^    const bool may_pair = pair \&\& !narrow \&\& (!few || !b_sectors || fewest);/    const bool may_pair = pair \&\& !narrow \&\& (!few || !b_sectors);/') ;;
        "step12_multicast oneround") what="blocks alone over whole tiles under a round where rows of A and B are off sectors"
            shape="-s 1800"
            edits=('s/ || one_round) ? CLUSTER : 1;$/) ? CLUSTER : 1;/') ;;
        "step12_multicast nostores") what="the epilogue's stores to C left out: wrong results, the time of everything else"
            shape="-s 3000"
            edits=('s/^                store<VEC>(C, M, N, m0 + wm + r, n0 + c0 + c, \*reinterpret_cast<V \*>(\&out\[r\]\[c\]), alpha, beta);/                ;/') ;;
        step13_tile_width) what="tiles 192 wide nowhere: step 12's rule"; shape="-s 3000"
            edits=('s/^    if (bn == BN_WIDE \&\& (tiles_of(BN_FIT) == tiles_of(BN_WIDE) ||$/    if (false \&\& (/') ;;
        "step13_tile_width always") what="tiles 192 wide wherever tiles 256 wide would be split"; shape="-s 5000"
            edits=('s/^                          (!split_pays(tiles_of(BN_FIT), clusters) \&\&$/                          (true \&\&/') ;;
        "step13_tile_width clusters") what="the rule for clusters of two only"; shape="-m 2900 -n 2000 -k 2000"
            edits=('s/^    if (bn == BN_WIDE \&\& (tiles_of/    if (cluster == CLUSTER \&\& bn == BN_WIDE \&\& (tiles_of/') ;;
        "step13_tile_width breakeven") what="the rule for clusters of two only, where the widths break even"; shape="-m 2900 -n 3008 -k 3008"
            edits=('s/^    if (bn == BN_WIDE \&\& (tiles_of/    if (cluster == CLUSTER \&\& bn == BN_WIDE \&\& (tiles_of/') ;;
        "step13_tile_width rounds") what="tiles 192 wide only where tiles 256 wide would be split"; shape="-m 3000 -n 3000 -k 512"
            edits=('s/^                           (split_pays(tiles_of(BN_WIDE), clusters) || rounds_time(BN_FIT) < rounds_time(BN_WIDE)))))$/                           split_pays(tiles_of(BN_WIDE), clusters))))/') ;;
        "step13_tile_width equal") what="tiles 192 wide only by the rule for rounds, not wherever they are as many as tiles 256 wide"
            shape="-m 8000 -n 544 -k 8000"
            edits=('s/^    if (bn == BN_WIDE \&\& (tiles_of(BN_FIT) == tiles_of(BN_WIDE) ||$/    if (bn == BN_WIDE \&\& (false ||/') ;;
        "step13_tile_width single") what="clusters of one everywhere, as in step 11: tiles 192 wide, each block copying all of B"
            shape="-s 3000"
            edits=('s/^        may_pair \&\& fit > 0 \&\& (split_pays/        false \&\& may_pair \&\& fit > 0 \&\& (split_pays/') ;;
        "step13_tile_width sectors") what="clusters of one everywhere, where rows start on sectors"; shape="-s 3008"
            edits=('s/^        may_pair \&\& fit > 0 \&\& (split_pays/        false \&\& may_pair \&\& fit > 0 \&\& (split_pays/') ;;
        "step13_tile_width halved") what="tiles 128 wide wherever few tiles halve BN, as in step 12, where C is 129 to 192 wide too"
            shape="-m 8192 -n 176 -k 16384"
            edits=('s/^    if (cluster == 1 \&\& bn == BN_NARROW \&\& BN_NARROW < N/    if (false \&\& bn == BN_NARROW \&\& BN_NARROW < N/') ;;
        *) die try.sh "$1 has no experiment${2:+ called '$2'} (see --help)" ;;
    esac
}

step="" idea="" iters=20 list=0
while [ $# -gt 0 ]; do
    case $1 in
        --iters) positive_int try.sh "$@"; iters=$2; shift 2 ;;
        --list) list=1; shift ;;
        -h|--help) usage; exit 0 ;;
        -*) die try.sh "unknown option '$1' (see --help)" ;;
        *) if [ -z "$step" ]; then step=$(find_step try.sh "$1") || exit 2
           elif [ -z "$idea" ]; then idea=$1
           else die try.sh "one step and one idea at a time (see --help)"; fi
           shift ;;
    esac
done
[ -n "$step" ] || { usage >&2; exit 2; }
experiment "$step" "$idea"

# The variant: a scratch copy of the tree's sources with the edits, each of
# which must change the file (else the step has moved on and the experiment
# must follow it).
copy=$(mktemp -d)
trap 'rm -rf "$copy"' EXIT
cp -r Makefile common scripts "$step" "$copy"/
rm -f "$copy/$step"/*.o "$copy/$step/run" "$copy/$step/.build-config" "$copy"/common/*.o
for e in "${edits[@]}"; do
    cp "$copy/$file" "$copy/before"
    sed -i "$e" "$copy/$file"
    ! cmp -s "$copy/before" "$copy/$file" || die try.sh "the edit '$e' no longer changes $file"
done
name="$step${idea:+ $idea}"
if [ $list = 1 ]; then
    echo "$name: $what; ./$step/run $shape"
    diff -u --label "$file" --label "$file, tried" "$file" "$copy/$file"
    exit 0
fi

gpu_or_die try.sh "$step"
(cd "$copy" && build "try.sh (the variant, in a scratch copy)" "$step") || exit 2

# shellcheck disable=SC2086 # shape holds several words
run() { "$1" $shape --iters "$iters" 2>&1 | tail -n 1; }
tried=$(run "$copy/$step/run") base=$(run "./$step/run")
for line in "$tried" "$base"; do
    [[ $line == step=* ]] || die try.sh "a run failed: $line"
done
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$2"; }
gpu=$(field gpu "$base")
echo "Try-it of $name on ${gpu//_/ } (CUDA $(field cuda "$base")), $(date -u +%Y-%m-%d); median of $iters runs each"
echo "$name: $what; ./$step/run $shape"
printf '  tried:  %8s TFLOPS, %6s%% of cuBLAS (check %s)\n' "$(field tflops "$tried")" \
    "$(field pct_cublas "$tried")" "$(field check "$tried")"
printf '  as is:  %8s TFLOPS, %6s%% of cuBLAS (check %s)\n' "$(field tflops "$base")" \
    "$(field pct_cublas "$base")" "$(field check "$base")"
echo "tried: $tried"
echo "as is: $base"
