#!/usr/bin/env bash
# A step's "Try it" experiment from the README, as a command: the edit is
# made in a scratch copy of the step, which is built and run beside the
# unchanged step, on the same shape and the same GPU, one process after the
# other; both results are printed, the variant's first. Anyone with a GPU
# can check the README's claim this way.
set -u
cd "$(dirname "$0")/.."
source scripts/common.sh

usage() {
    cat <<USAGE
usage: scripts/try.sh STEP [--iters N] [--list]
  STEP        a step's number (05), short name (step05) or folder
  --iters N   timed runs of each; the median is reported (default 20)
  --list      print the step's experiment (the edit and the shape), run nothing
USAGE
}

# Each step's experiment: what it tries, the shape, and sed expressions that
# each change one line of its kernel.cu.
experiment() {
    case $1 in
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
        step05_wmma) what="narrower warp tiles: WN = 32"; shape="-s 4096"
            edits=('s/^constexpr int WN = 64;/constexpr int WN = 32;/') ;;
        step06_mma_ptx) what="the swizzle off: swizzle() returns (r * CHUNKS + c) * PIECE"; shape="-s 4096"
            edits=('s/^    return (r \* CHUNKS + (c ^ (r \/ ROWS_PER_LINE % COLUMNS))) \* PIECE;/    return (r * CHUNKS + c) * PIECE;/') ;;
        step07_pipeline) what="three stages: STAGES_MOST = STAGES_FEWER = 3"; shape="-s 4096"
            edits=('s/^constexpr int STAGES_MOST = 5, STAGES_FEWER = 4;/constexpr int STAGES_MOST = 3, STAGES_FEWER = 3;/') ;;
        step08_wgmma) what="STAGES = 3"; shape="-s 4096"
            edits=('s/^constexpr int STAGES = 4;/constexpr int STAGES = 3;/') ;;
        step09_tma) what="repacked rows padded to whole pieces (PIECE), not lines (LINE_N)"
            shape="-m 4096 -n 4100 -k 4096"
            edits=('s/^    pitch = (cols + LINE_N - 1) \/ LINE_N \* LINE_N;/    pitch = (cols + PIECE - 1) \/ PIECE * PIECE;/') ;;
        step10_warp_specialized) what="one tile per block: tiles blocks, not min(tiles, sms)"; shape="-s 4096"
            edits=('s/^    kernel<<<min(tiles, sms), THREADS, smem>>>/    kernel<<<tiles, THREADS, smem>>>/') ;;
        step11_stream_k) what="every part's k-tiles from the first up, not a split tile's from the last down"
            shape="-m 1024 -n 2048 -k 32768"
            edits=('s/^                const int k = k1 - k0 < tiles_k ? k0 + k1 - 1 - t : t;/                const int k = t;/') ;;
        *) die try.sh "$1 has no experiment" ;;
    esac
}

step="" iters=20 list=0
while [ $# -gt 0 ]; do
    case $1 in
        --iters) positive_int try.sh "$@"; iters=$2; shift 2 ;;
        --list) list=1; shift ;;
        -h|--help) usage; exit 0 ;;
        -*) die try.sh "unknown option '$1' (see --help)" ;;
        *) [ -z "$step" ] || die try.sh "one step at a time (see --help)"
           step=$(find_step try.sh "$1") || exit 2; shift ;;
    esac
done
[ -n "$step" ] || { usage >&2; exit 2; }
experiment "$step"

# The variant: a scratch copy of the tree's sources with the step's edits,
# each of which must change exactly one line (else the step has moved on
# and the experiment must follow it).
copy=$(mktemp -d)
trap 'rm -rf "$copy"' EXIT
cp -r Makefile common scripts "$step" "$copy"/
rm -f "$copy/$step"/*.o "$copy/$step/run" "$copy/$step/.build-config"
for e in "${edits[@]}"; do
    cp "$copy/$step/kernel.cu" "$copy/before.cu"
    sed -i "$e" "$copy/$step/kernel.cu"
    [ "$(diff "$copy/before.cu" "$copy/$step/kernel.cu" | grep -c '^>')" -eq 1 ] ||
        die try.sh "the edit '$e' no longer changes one line of $step/kernel.cu"
done
if [ $list = 1 ]; then
    echo "$step: $what; ./$step/run $shape"
    diff -u --label "$step/kernel.cu" --label "$step/kernel.cu, tried" "$step/kernel.cu" "$copy/$step/kernel.cu"
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
echo "Try-it of $step on ${gpu//_/ } (CUDA $(field cuda "$base")), $(date -u +%Y-%m-%d); median of $iters runs each"
echo "$step: $what; ./$step/run $shape"
printf '  tried:  %8s TFLOPS, %6s%% of cuBLAS (check %s)\n' "$(field tflops "$tried")" \
    "$(field pct_cublas "$tried")" "$(field check "$tried")"
printf '  as is:  %8s TFLOPS, %6s%% of cuBLAS (check %s)\n' "$(field tflops "$base")" \
    "$(field pct_cublas "$base")" "$(field check "$base")"
echo "tried: $tried"
echo "as is: $base"
