#!/usr/bin/env bash
# How much a step's % of cuBLAS moves from one process to the next: reads
# several saved scripts/run_all.sh outputs of one shape on one GPU and
# prints each step's % cuBLAS in each, and the spread (largest minus
# smallest). A timing protocol that compares like with like keeps the
# spread small whatever the GPU did before each process started.
set -u
cd "$(dirname "$0")/.."
source scripts/common.sh

usage() {
    cat <<USAGE
usage: scripts/spread.sh RUN_ALL_OUTPUT RUN_ALL_OUTPUT... > spread.txt
  two or more saved scripts/run_all.sh outputs of one shape on one GPU, e.g.
  for i in 1 2 3 4 5; do scripts/run_all.sh -s 8192 > r8192_\$i.txt; done
USAGE
}

case ${1:-} in
    -h|--help) usage; exit 0 ;;
    -*) die spread.sh "unknown option '$1' (see --help)" ;;
esac
[ $# -ge 2 ] || die spread.sh "needs two run_all.sh outputs or more (see --help)"
# "M=8192 N=8192 K=8192 on NVIDIA H200 (CUDA 13.0)", and the date, of each.
what="" dates=()
for f in "$@"; do
    [ -f "$f" ] || die spread.sh "no file $f"
    first=$(head -n 1 "$f")
    [[ $first =~ ^GEMM\ (M=[0-9]+\ N=[0-9]+\ K=[0-9]+\ on\ .*\ \(CUDA\ [0-9.]+\)),\ ([0-9]{4}-[0-9]{2}-[0-9]{2})\; ]] ||
        die spread.sh "$f is not a saved scripts/run_all.sh output (its first line: '$first')"
    [ -z "$what" ] || [ "$what" = "${BASH_REMATCH[1]}" ] ||
        die spread.sh "$f is ${BASH_REMATCH[1]}, not $what like $1"
    what=${BASH_REMATCH[1]}
    dates+=("${BASH_REMATCH[2]}")
    run_all_rows "$f" | grep -q '^step' || die spread.sh "$f has no table of steps"
done
span=$(printf '%s\n' "${dates[@]}" | sort -u | sed -n '1p;$p' | uniq | paste -sd' ' | sed 's/ / to /')

echo "% cuBLAS of each step in $# run_all.sh processes: $what, $span"
echo
# One column per process, in the order given; the steps in the first one's order.
for f in "$@"; do run_all_rows "$f" | awk -F'\t' -v f="$f" '$1 ~ /^step/ { print f "\t" $1 "\t" $8 }'; done |
    awk -F'\t' -v n=$# '
        !($2 in seen) { seen[$2] = 1; order[++steps] = $2 }
        { pct[$2, ++count[$2]] = $3 }
        END {
            printf "%-24s", "step"
            for (i = 1; i <= n; i++) printf " %6s", "run " i
            printf " %7s\n", "spread"
            for (s = 1; s <= steps; s++) {
                name = order[s]; lo = ""; hi = ""
                printf "%-24s", name
                for (i = 1; i <= n; i++) {
                    v = pct[name, i]; printf " %6s", v == "" ? "-" : v
                    if (v ~ /^[0-9.]+$/) { if (lo == "" || v + 0 < lo) lo = v + 0; if (hi == "" || v + 0 > hi) hi = v + 0 }
                    else missing = 1
                }
                if (lo == "" || count[name] < n || missing) printf " %7s\n", "-"
                else printf " %7.1f\n", hi - lo
                missing = 0
            }
        }'
echo
echo "Each column: one scripts/run_all.sh run, in which each step is timed against"
echo "cuBLAS in a process of its own; spread: the largest minus the smallest, in"
echo "points of % cuBLAS."
