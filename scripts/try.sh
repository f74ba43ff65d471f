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
              11: up, noadds; 12: nostores; 13: tall);
              without it, the step's Try-it from the README
  --iters N   timed runs of each; the median is reported (default 20)
  --list      print the experiment (the edit and the shape), run nothing
USAGE
}

# Each experiment: what it tries, the shape, the file it edits (the step's
# kernel.cu unless it says) and sed expressions, each of which must change it.
experiment() {
    file=$1/kernel.cu
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
            edits=('s/^    const int unit = cols < REPACK_LINE<T> ? REPACK_PIECE<T> : REPACK_LINE<T>;/    const int unit = REPACK_PIECE<T>;/') ;;
        step10_warp_specialized) what="one tile per block: tiles blocks, not min(tiles, sms)"; shape="-s 4096"
            edits=('s/^    kernel<<<min(tiles, sms), THREADS, smem, stream>>>/    kernel<<<tiles, THREADS, smem, stream>>>/') ;;
        "step10_warp_specialized direct") what="the epilogue stores straight from the accumulators, as in step 09"
            shape="-s 2048"
            edits=('/^            __syncwarp(); \/\/ the next pass writes where this one read$/{n;d}'
                   '/^        \/\/ ---- epilogue: alpha, beta, store/,/^            __syncwarp(); \/\/ the next pass writes where this one read$/c\        // ---- epilogue: straight from the accumulators\n        const int g = lane / QUAD, tc = lane % QUAD * 2;\n#pragma unroll\n        for (int j = 0; j < FN; ++j)\n#pragma unroll\n            for (int h = 0; h < 2; ++h)\n                store<VEC>(C, M, N, m0 + wm + h * (MMA_M / 2) + g, n0 + j * MMA_N + tc,\n                           make_float2(acc[j][2 * h], acc[j][2 * h + 1]), alpha, beta);') ;;
        step11_stream_k) what="step 10's rounds of whole tiles everywhere: the planner's other candidates never taken"
            shape="-s 3000"
            edits=('s/^    const auto consider = \[\&\](launch_plan how, double us) { if (us < best_us)/    const auto consider = [\&](launch_plan how, double us) { if (best_us == INFINITY)/') ;;
        "step11_stream_k up") what="every part from its first k-tile up, as whole tiles are"
            shape="-m 1536 -n 1536 -k 8192"
            edits=('s/^                const int k = k1 - k0 < tiles_k ? k0 + k1 - 1 - t : t;.*/                const int k = t;/') ;;
        "step11_stream_k noadds") what="the fixup's adds left out: wrong sums, the time of everything else"
            shape="-m 256 -n 256 -k 131072"
            edits=('s/^                    acc\[j\]\[0\] += v.x, acc\[j\]\[1\] += v.y, acc\[j\]\[2\] += v.z, acc\[j\]\[3\] += v.w;/                    (void)v;/') ;;
        step12_multicast) what="blocks alone everywhere, as in step 11: each block copies all of B"; shape="-s 5000"
            edits=('s/^    if (fit > 0)$/    if (false)/') ;;
        "step12_multicast nostores") what="the epilogue's stores to C left out: wrong results, the time of everything else"
            shape="-s 3000"
            edits=('s/^                store<VEC>(C, M, N, m0 + wm + r, n0 + c0 + c, \*reinterpret_cast<V \*>(\&out\[r\]\[c\]), alpha, beta);/                ;/') ;;
        step13_tile_width) what="tiles 256 wide only, as in step 12"; shape="-m 2304 -n 4608 -k 1536"
            edits=('s/^    for (const int BN : { BN_WIDE, BN_FIT, BN_NARROW, BN_NARROWEST })/    for (const int BN : { BN_WIDE })/') ;;
        "step13_tile_width tall") what="boxes of A BM rows tall in the last row of tiles too, as in step 12"
            shape="-m 528 -n 2992 -k 4800"
            edits=('s/m0 + BM > M ? \&map_last : \&map_a,$/\&map_a,/'
                   's/k \* BK, max(min(M - m0, BM), 0), cluster);$/k * BK, m0 < M ? BM : 0, cluster);/') ;;
        step14_pingpong) what="ping-pong everywhere: the planner's candidates are one consumer's tiles only"
            shape="-s 8192"
            edits=('s/for (const int BM : { BM_BOTH, BM_ONE })$/for (const int BM : { BM_ONE })/') ;;
        step15_swap_ab) what="no swapped tiles: step 14's tiles, with step 15's planner terms"; shape="-m 16 -n 5120 -k 5120 --cold"
            edits=('s/^    for (const int BM : { BM_FEW, BM_FEWER, BM_FEWEST }) \/\/ swapped tiles.*/    for (const int BM : { BM_FEW, BM_FEWER, BM_FEWEST }) if (false)/') ;;
        step16_fp8) what="each consumer reads its k-tile's scales after its wgmma, not while they run"
            shape="-m 4096 -n 7168 -k 16384"
            edits=('/^            const auto sc = scales<SWAP, FN>(scale_a\[n % STAGES\] + at.x % SCALE_BOX,$/,+1d'
                   's/^            wgmma_wait<0>(part);$/&\n            const auto sc = scales<SWAP, FN>(scale_a[n % STAGES] + at.x % SCALE_BOX, scale_b[n % STAGES] + at.y % SCALE_BOX, wm, lane);/') ;;
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
