#!/usr/bin/env bash
# What a step's planner weighs at one shape, without a GPU: every candidate
# launch, in the order plan() weighs it, with the cost model's microseconds
# and their terms, and the pick marked. The numbers are the planner's own
# (its PLAN_TERMS, common/launch.cuh, read by common/plan_show.cu, built
# by make as STEP/plan with the CUDA compiler). Rows of A and B are taken as
# cudaMalloc leaves them, repacked where gemm_launch repacks them.
set -u
cd "$(dirname "$0")/.."
source scripts/common.sh

usage() {
    cat <<USAGE
usage: scripts/plan.sh STEP [-s SIZE | -m M -n N -k K] [--sms S] [--clusters C]
  STEP              a step with a planner: 11 and up (or its folder)
  -s, --size SIZE   M = N = K = SIZE (default 4096)
  -m, -n, -k        one dimension each
  --sms S           SMs of the GPU planned for (default 132: H100 and H200 SXM)
  --clusters C      clusters of two blocks that fit at once (default S / 2)
  -h, --help        show this help
USAGE
}

step="" m=4096 n=4096 k=4096 sms=132 clusters=""
while [ $# -gt 0 ]; do
    case $1 in
        -s|--size) positive_int plan.sh "$@"; m=$2 n=$2 k=$2; shift 2 ;;
        -m) positive_int plan.sh "$@"; m=$2; shift 2 ;;
        -n) positive_int plan.sh "$@"; n=$2; shift 2 ;;
        -k) positive_int plan.sh "$@"; k=$2; shift 2 ;;
        --sms) positive_int plan.sh "$@"; sms=$2; shift 2 ;;
        --clusters)
            [ $# -ge 2 ] && [[ $2 =~ ^[0-9]+$ ]] && [ ${#2} -le 6 ] ||
                die plan.sh "--clusters needs a count from 0 up, got '${2:-}'"
            clusters=$((10#$2)); shift 2 ;;
        -h|--help) usage; exit 0 ;;
        -*) die plan.sh "unknown option '$1' (see --help)" ;;
        *) [ -z "$step" ] || die plan.sh "one step at a time, got '$step' and '$1'"
           step=$(find_step plan.sh "$1") || exit 2; shift ;;
    esac
done
[ -n "$step" ] || { usage >&2; exit 2; }
[ "$sms" -le 1024 ] || die plan.sh "--sms needs a count of SMs up to 1024, got $sms"
clusters=${clusters:-$((sms / 2))}
[ $((clusters * 2)) -le "$sms" ] || die plan.sh "--clusters: $clusters clusters of two need more than $sms SMs"
grep -q '^static launch_plan plan(' "$step/kernel.cu" ||
    die plan.sh "$step has no planner: its launch is the same at every shape (the planner comes in step 11)"

out=$(${MAKE:-make} --no-print-directory "$step/plan" 2>&1) ||
    die plan.sh "the build of $step/plan failed: $(grep -v '^make.*\*\*\*' <<<"$out" | tail -n 1)"
echo "The planner of $step at $m x $n x $k on $sms SMs ($clusters clusters of two fit where the step uses them)."
echo "A line per candidate, in the order it weighs them: the tile (rows x columns of C), blocks in a cluster,"
echo "units (blocks or clusters) at once, whether tiles are split; the busiest unit's k-tiles, tiles stored and"
echo "the most parts of a split tile; its modelled microseconds: the multiply (each k-tile at the slower of"
echo "wgmma and its share of L2), + the stores (and a split tile's fixup), memory (every operand byte and C"
echo "through HBM), and the time, the 4-norm of the first two summed and memory."
echo
"./$step/plan" "$m" "$n" "$k" "$sms" "$clusters"
