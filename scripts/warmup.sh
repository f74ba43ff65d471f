#!/usr/bin/env bash
# What the warm-up does to a measurement: runs one step, unchecked, in
# several processes one after the other, alternating no warm-up at all
# (--warmup 0: timing starts from whatever state the GPU is in) with the
# default one (at least half a second of runs), and prints the timing fields
# of each process's last line. "How it is measured" in README.md shows its
# output (scripts/update_docs.sh writes it there).
set -u
cd "$(dirname "$0")/.."
source scripts/common.sh

usage() {
    cat <<USAGE
usage: scripts/warmup.sh STEP [-s SIZE] [--runs N]
  STEP      a step's number (10), short name (step10) or folder
  -s SIZE   M = N = K = SIZE (default 8192)
  --runs N  processes of each kind, alternating (default 3)
USAGE
}

step="" size=8192 runs=3
while [ $# -gt 0 ]; do
    case $1 in
        -s|--size) positive_int warmup.sh "$@"; size=$2; shift 2 ;;
        --runs) positive_int warmup.sh "$@"; runs=$2; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        -*) die warmup.sh "unknown option '$1' (see --help)" ;;
        *) [ -z "$step" ] || die warmup.sh "one step at a time (see --help)"
           step=$(find_step warmup.sh "$1") || exit 2; shift ;;
    esac
done
[ -n "$step" ] || { usage >&2; exit 2; }

gpu_or_die warmup.sh "$step"
declare -A r
lines=()
for ((i = 1; i <= runs; i++)); do
    for warmup in 0 default; do
        none=()
        [ $warmup = default ] || none=(--warmup 0)
        run_step warmup.sh "$step" -s "$size" --no-check "${none[@]}" || exit 1
        lines+=("$(printf '%-15s ms=%s tflops=%s cublas_tflops=%s pct_cublas=%s' "warmup $warmup:" \
            "${r[ms]}" "${r[tflops]}" "${r[cublas_tflops]}" "${r[pct_cublas]}")")
    done
done
echo "Warm-up of $step at ${size}^3 on ${r[gpu]//_/ } (CUDA ${r[cuda]}), $(date -u +%Y-%m-%d): $runs processes of each, alternating, unchecked"
echo
printf '%s\n' "${lines[@]}"
