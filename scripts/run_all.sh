#!/usr/bin/env bash
# Runs every step at one size and prints the speedup table: each step's
# median time against step 01, against the step before it, and against
# cuBLAS of the same precision timed in the same process on the same data.
# Exits non-zero if any step fails its check or does not run.
set -u
cd "$(dirname "$0")/.."

usage() {
    cat <<USAGE
usage: scripts/run_all.sh [-s SIZE | -m M -n N -k K] [--iters N]
  -s, --size SIZE   M = N = K = SIZE (default 4096)
  -m, -n, -k        one dimension each
  --iters N         timed runs per step; the median is reported (default 20)
  -h, --help        show this help
USAGE
}

m=4096 n=4096 k=4096 iters=20
while [ $# -gt 0 ]; do
    case $1 in
        -s|--size) [ $# -ge 2 ] || { echo "run_all.sh: $1 needs a value" >&2; exit 2; }
                   m=$2 n=$2 k=$2; shift 2 ;;
        -m) [ $# -ge 2 ] || { echo "run_all.sh: -m needs a value" >&2; exit 2; }; m=$2; shift 2 ;;
        -n) [ $# -ge 2 ] || { echo "run_all.sh: -n needs a value" >&2; exit 2; }; n=$2; shift 2 ;;
        -k) [ $# -ge 2 ] || { echo "run_all.sh: -k needs a value" >&2; exit 2; }; k=$2; shift 2 ;;
        --iters) [ $# -ge 2 ] || { echo "run_all.sh: --iters needs a value" >&2; exit 2; }
                 iters=$2; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "run_all.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    esac
done

steps=()
for dir in step[0-9][0-9]_*/; do steps+=("${dir%/}"); done
make --no-print-directory all >/dev/null || { echo "run_all.sh: the build failed (run make)" >&2; exit 1; }

# The key=value line each step prints last.
declare -A res
get() { echo "${res[$1,$2]:-}"; }

status=0
gpu="" cuda=""
for s in "${steps[@]}"; do
    out=$(./"$s"/run -m "$m" -n "$n" -k "$k" --iters "$iters" 2>&1)
    rc=$?
    line=$(tail -n 1 <<<"$out")
    if [[ $line != step=* ]]; then
        echo "$s did not run (exit code $rc):" >&2
        echo "$out" >&2
        res[$s,check]="ERROR"
        status=1
        continue
    fi
    for kv in $line; do res[$s,${kv%%=*}]=${kv#*=}; done
    [ "$(get "$s" check)" = PASS ] || status=1
    gpu=$(get "$s" gpu) cuda=$(get "$s" cuda)
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b == 0) print "-"; else printf "%.2f", a / b }'; }
median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) exit; print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "GEMM M=$m N=$n K=$k on ${gpu//_/ } (CUDA $cuda), $(date -u +%Y-%m-%d); median of $iters runs each"
echo
fmt='%-22s %-15s %-9s %9s %8s %9s %7s %9s  %s\n'
printf "$fmt" step technique precision ms TFLOPS "x step01" "x prev" "% cuBLAS" check
first=${steps[0]} prev=""
cublas_row() {
    # cuBLAS of one precision: the median of what the steps of that precision measured.
    local prec=$1 label=$2 ms tf
    ms=$(for s in "${steps[@]}"; do [ "$(get "$s" precision)" = "$prec" ] && get "$s" cublas_ms; done | median)
    tf=$(for s in "${steps[@]}"; do [ "$(get "$s" precision)" = "$prec" ] && get "$s" cublas_tflops; done | median)
    [ -n "$ms" ] || return 0
    printf "$fmt" "$label" "cuBLAS" "$prec" "$(printf %.3f "$ms")" "$(printf %.2f "$tf")" \
        "$(ratio "$tf" "$(get "$first" tflops)")" "-" "100.0" "-"
}
for i in "${!steps[@]}"; do
    s=${steps[$i]}
    technique=${s#step[0-9][0-9]_}
    prec=$(get "$s" precision)
    if [ -z "$prec" ]; then
        printf "$fmt" "$s" "${technique//_/ }" "-" "-" "-" "-" "-" "-" "$(get "$s" check)"
    else
        x_prev="-"
        [ -n "$prev" ] && x_prev=$(ratio "$(get "$s" tflops)" "$(get "$prev" tflops)")
        printf "$fmt" "$s" "${technique//_/ }" "$prec" "$(printf %.3f "$(get "$s" ms)")" "$(get "$s" tflops)" \
            "$(ratio "$(get "$s" tflops)" "$(get "$first" tflops)")" "$x_prev" \
            "$(get "$s" pct_cublas)" "$(get "$s" check)"
    fi
    prev=$s
    # cuBLAS follows the last step of its precision.
    next=${steps[$((i + 1))]:-}
    if [ -n "$prec" ] && { [ -z "$next" ] || [ "$(get "$next" precision)" != "$prec" ]; }; then
        case $prec in
            fp32) cublas_row fp32 "cuBLAS SGEMM" ;;
            fp16) cublas_row fp16 "cuBLAS GemmEx" ;;
        esac
    fi
done
echo
echo "% cuBLAS: against cuBLAS timed in the same process on the same data; the cuBLAS"
echo "rows give the median of those runs. x prev: against the row above it."
exit $status
