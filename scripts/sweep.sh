#!/usr/bin/env bash
# Cost against size: runs chosen steps, and cuBLAS beside each in the same
# process, over square sizes, and prints TFLOPS and % of cuBLAS per size with
# a bar of each TFLOPS to scale. The runs skip the check, to stay inside a
# few minutes; make test and run_all.sh check every step.
set -u
cd "$(dirname "$0")/.."
source scripts/common.sh

steps_all=()
for dir in $(step_dirs); do steps_all+=("$dir"); done
last=${steps_all[${#steps_all[@]} - 1]}

usage() {
    cat <<USAGE
usage: scripts/sweep.sh [--steps "04 07 ..."] [--sizes "512 1024 ..."] [--iters N]
  --steps LIST   steps to run (default: 04 07 and the last, ${last%%_*})
  --sizes LIST   M = N = K for each run (default: 512 to 16384 in powers of
                 two, and 3000 and 6144)
  --iters N      timed runs per size; the median is reported (default 20)
USAGE
}

want="04 07 ${last%%_*}" sizes="512 1024 2048 3000 4096 6144 8192 16384" iters=20
while [ $# -gt 0 ]; do
    case $1 in
        --steps) [ $# -ge 2 ] || die sweep.sh "--steps needs a list"; want=$2; shift 2 ;;
        --sizes) [ $# -ge 2 ] || die sweep.sh "--sizes needs a list"; sizes=$2; shift 2 ;;
        --iters) positive_int sweep.sh "$@"; iters=$2; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) die sweep.sh "unknown option '$1' (see --help)" ;;
    esac
done
[ -n "${sizes// /}" ] || die sweep.sh "--sizes needs at least one size"
[ -n "${want// /}" ] || die sweep.sh "--steps needs at least one step"
for size in $sizes; do positive_int sweep.sh --sizes "$size"; done
steps=()
for s in $want; do steps+=("$(find_step sweep.sh "$s")") || exit 2; done
gpu_or_die sweep.sh
build sweep.sh all

status=0
declare -A r
for s in "${steps[@]}"; do
    [ -x "$s/run" ] || { echo "$s: left out of this build (needs $(bash scripts/arch.sh need "$s"))"; echo; continue; }
    declare -A tf=() ctf=() ms=() pct=()
    gpu="" prec=""
    for size in $sizes; do
        run_step sweep.sh "$s" -s "$size" --iters "$iters" --no-check
        case $? in
            0) ;;
            3) echo; continue 2 ;; # a GPU older than this step needs
            *) status=1; continue 2 ;;
        esac
        tf[$size]=${r[tflops]} ctf[$size]=${r[cublas_tflops]} ms[$size]=${r[ms]} pct[$size]=${r[pct_cublas]}
        gpu=${r[gpu]} prec=${r[precision]}
    done
    label=$(case $prec in fp16) echo "cuBLAS GemmEx (half in, float out)" ;; e4m3) echo "cuBLASLt FP8 (the same scales)" ;;
            *) echo "cuBLAS SGEMM" ;; esac)
    top=$(for size in $sizes; do echo "${ctf[$size]}"; echo "${tf[$size]}"; done | sort -g | tail -n 1)
    echo "$s against $label, on ${gpu//_/ }: median of $iters runs, unchecked"
    fmt='%7s %10s %9s %9s %9s  %s\n'
    printf "$fmt" size ms TFLOPS cuBLAS "% cuBLAS" "TFLOPS to scale: the step, then cuBLAS"
    for size in $sizes; do
        printf "$fmt" "$size" "$(printf %.3f "${ms[$size]}")" "${tf[$size]}" "${ctf[$size]}" "${pct[$size]}" \
            "$(bar "${tf[$size]}" "$top" 30)"
        printf "$fmt" "" "" "" "" "" "$(bar "${ctf[$size]}" "$top" 30 light)"
    done
    echo
done
exit $status
