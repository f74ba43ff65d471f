#!/usr/bin/env bash
# Runs every step at one size and prints the speedup table: each step's
# median time against step 01, against the step before it, and against
# cuBLAS of the same precision timed in the same process on the same data,
# with a bar of its TFLOPS to scale. A step the GPU (or the build's ARCH)
# cannot run gets a row that says what it needs. A step whose kernels are
# launched as the step before's (the same grids, blocks, clusters and shared
# memory: each step's --launches), on the same precision, is marked "=" after
# its x prev: where the step's idea is the launch (a planner, from step 11),
# it kept the step before's schedule there, and that ratio is noise. Each row
# is also put against its roof (ceilings/, measured first on this GPU): the
# ceiling of the instruction it multiplies with (FP32 FMA, mma.sync, wgmma,
# FP8 wgmma), or, where that is lower, memory's at the shape's intensity: the
# bytes A and B must be read and C written, at the measured HBM read and
# write rates. Exits 1 if a step fails its check or does not run, 2 if there
# is no usable GPU or the options are bad.
set -u
cd "$(dirname "$0")/.."
source scripts/common.sh

usage() {
    cat <<USAGE
usage: scripts/run_all.sh [-s SIZE | -m M -n N -k K] [--iters N] [--csv FILE]
  -s, --size SIZE   M = N = K = SIZE (default 4096)
  -m, -n, -k        one dimension each
  --iters N         timed runs per step; the median is reported (default 20)
  --csv FILE        also write the table to FILE as comma-separated values
  -h, --help        show this help
USAGE
}

m=4096 n=4096 k=4096 iters=20 csv=""
while [ $# -gt 0 ]; do
    case $1 in
        -s|--size) positive_int run_all.sh "$@"; m=$2 n=$2 k=$2; shift 2 ;;
        -m) positive_int run_all.sh "$@"; m=$2; shift 2 ;;
        -n) positive_int run_all.sh "$@"; n=$2; shift 2 ;;
        -k) positive_int run_all.sh "$@"; k=$2; shift 2 ;;
        --iters) positive_int run_all.sh "$@"; iters=$2; shift 2 ;;
        --csv) [ $# -ge 2 ] && [ -n "$2" ] || die run_all.sh "--csv needs a file name"; csv=$2; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) die run_all.sh "unknown option '$1' (see --help)" ;;
    esac
done

# The CSV file must be writable before anything runs.
if [ -n "$csv" ]; then
    { : >"$csv"; } 2>/dev/null || die run_all.sh "cannot write --csv file '$csv'"
fi
steps=()
for dir in $(step_dirs); do steps+=("$dir"); done
gpu_or_die run_all.sh
build run_all.sh all

# The roofs: this GPU's ceilings (make ceilings), its last line NAME=RATE.
declare -A roof=()
read_ceilings 10 || echo "run_all.sh: no ceilings measured (ceilings/run): the roof columns say -" >&2

# The key=value line each step prints last, or why it did not run.
declare -A res
get() { echo "${res[$1,$2]:-}"; }

status=0
gpu="" cuda=""
for s in "${steps[@]}"; do
    if [ ! -x "$s/run" ]; then # left out of the build: ARCH cannot run it
        res[$s,check]="needs $(bash scripts/arch.sh need "$s")"
        continue
    fi
    out=$(./"$s"/run -m "$m" -n "$n" -k "$k" --iters "$iters" --launches 2>&1)
    rc=$?
    line=$(tail -n 1 <<<"$out")
    if [[ $line == step=* ]]; then
        for kv in $line; do res[$s,${kv%%=*}]=${kv#*=}; done
        [ "$(get "$s" check)" = PASS ] || status=1
        gpu=$(get "$s" gpu) cuda=$(get "$s" cuda)
    elif [ $rc -eq 2 ] && [[ $out =~ :\ needs\ (sm_[0-9]+a?) ]]; then
        res[$s,check]="needs ${BASH_REMATCH[1]}"
    elif [ $rc -eq 2 ]; then
        # No usable GPU, or one too small for the size: the same for every
        # step, so say it once.
        echo "${out#"$s: "}" >&2
        exit 2
    else
        echo "$s did not run (exit code $rc):" >&2
        echo "$out" >&2
        res[$s,check]="ERROR"
        status=1
    fi
done

# cuBLAS of one precision: the median of what the steps of that precision
# measured. Sets res[<label>,...] like a step's row.
cublas_res() {
    local prec=$1 label=$2 s ms=() tf=()
    for s in "${steps[@]}"; do
        [ "$(get "$s" precision)" = "$prec" ] || continue
        ms+=("$(get "$s" cublas_ms)") tf+=("$(get "$s" cublas_tflops)")
    done
    [ ${#ms[@]} -gt 0 ] || return 0
    res[$label,precision]=$prec
    res[$label,ms]=$(echo "${ms[*]}" | median)
    res[$label,tflops]=$(printf %.2f "$(echo "${tf[*]}" | median)")
    res[$label,pct_cublas]=100.0
    res[$label,check]="-"
}

# Row $1's roof: "NAME PERCENT", NAME the ceiling that bounds it (a step's
# unit_of, cuBLAS's by precision: fma, mma, wgmma, wgmma_fp8; or HBM where
# memory's roof at the shape's intensity is lower), and its TFLOPS as a
# percent of it; "- -" where the ceiling was not measured.
roof_of() {
    local r=$1 unit in
    case $(get "$r" precision) in fp32) in=4 ;; fp16) in=2 ;; e4m3) in=1 ;; *) echo "- -"; return ;; esac
    if [[ $r != cuBLAS* ]]; then unit=$(unit_of "$r")
    elif [ $in = 2 ]; then unit=$([ "${roof[wgmma]:--}" != - ] && echo wgmma || echo mma)
    else unit=$([ $in = 4 ] && echo fma || echo wgmma_fp8); fi
    awk -v tf="$(get "$r" tflops)" -v top="${roof[$unit]:--}" -v unit="$unit" -v m="$m" -v n="$n" -v k="$k" \
        -v ib="$in" -v rd="${roof[hbm_read]:--}" -v wr="${roof[hbm_write]:--}" 'BEGIN {
        if (tf == "" || top == "-") { print "- -"; exit }
        if (rd != "-" && wr != "-") { # memory: A and B read once, C written once; bytes / (TB/s) = ps
            mem = 2 * m * n * k / (ib * (m * k + k * n) / rd + 4 * m * n / wr)
            if (mem < top) { top = mem; unit = "HBM" }
        }
        printf "%s %.1f\n", unit, 100 * tf / top }'
}

# The rows in order: each precision's cuBLAS after its last step.
rows=()
for i in "${!steps[@]}"; do
    s=${steps[$i]} rows+=("$s")
    prec=$(get "$s" precision)
    next_prec=$(get "${steps[$((i + 1))]:-none}" precision)
    if [ -n "$prec" ] && [ "$next_prec" != "$prec" ]; then
        case $prec in
            fp32) cublas_res fp32 "cuBLAS SGEMM"; rows+=("cuBLAS SGEMM") ;;
            fp16) cublas_res fp16 "cuBLAS GemmEx"; rows+=("cuBLAS GemmEx") ;;
            e4m3) cublas_res e4m3 "cuBLASLt FP8"; rows+=("cuBLASLt FP8") ;;
        esac
    fi
done

# The bars: TFLOPS to one scale for the whole table, 30 characters for the
# fastest row.
top=$(for r in "${rows[@]}"; do get "$r" tflops; done | sort -g | tail -n 1)

echo "GEMM M=$m N=$n K=$k on ${gpu//_/ } (CUDA $cuda), $(date -u +%Y-%m-%d); median of $iters runs each"
echo
fmt='%-24s %-17s %-9s %9s %8s %9s %7s%1s%9s  %-12s %-5s %6s  %s\n'
printf "$fmt" step technique precision ms TFLOPS "x step01" "x prev" "" "% cuBLAS" check roof "% roof" "TFLOPS, to scale"
[ -n "$csv" ] && echo "step,technique,precision,ms,tflops,x_step01,x_prev,pct_cublas,check,roof,pct_roof" >"$csv"
first=${steps[0]} prev=""
for r in "${rows[@]}"; do
    if [[ $r == cuBLAS* ]]; then
        technique="cuBLAS" x_prev="-" same=""
    else
        technique=${r#step[0-9][0-9]_} technique=${technique//_/ }
        x_prev="-" same=""
        [ -n "$prev" ] && x_prev=$(ratio "$(get "$r" tflops)" "$(get "$prev" tflops)")
        [ -n "$prev" ] && [ -n "$(get "$r" launches)" ] && [ "$(get "$r" launches)" != unknown ] &&
            [ "$(get "$r" launches)" = "$(get "$prev" launches)" ] &&
            [ "$(get "$r" precision)" = "$(get "$prev" precision)" ] && same="="
        prev=$r
    fi
    prec=$(get "$r" precision)
    if [ -z "$prec" ]; then
        fields=("$r" "$technique" "-" "-" "-" "-" "-" "-" "$(get "$r" check)")
    else
        fields=("$r" "$technique" "$prec" "$(printf %.3f "$(get "$r" ms)")" "$(get "$r" tflops)"
                "$(ratio "$(get "$r" tflops)" "$(get "$first" tflops)")" "$x_prev"
                "$(get "$r" pct_cublas)" "$(get "$r" check)")
    fi
    read -r roof_name roof_pct <<<"$(roof_of "$r")"
    fields+=("$roof_name" "$roof_pct")
    printf "$fmt" "${fields[@]:0:7}" "$same" "${fields[@]:7}" "$(bar "$(get "$r" tflops)" "$top" 30)"
    [ -n "$csv" ] && (IFS=,; echo "${fields[*]}") >>"$csv"
done
echo
echo "% cuBLAS: against cuBLAS timed in the same process on the same data; the cuBLAS"
echo "rows give the median of those runs. x prev: against the step before (the cuBLAS"
echo "rows are not steps); =: launched as the step before (the same grids, blocks,"
echo "clusters and shared memory); from step 11, whose idea is the launch, that"
echo "means the same schedule, and the ratio is noise. roof: the ceiling that bounds"
echo "the row (ceilings/run on this GPU: ${roof[fma]:--} TFLOPS FMA, ${roof[mma]:--} mma.sync, ${roof[wgmma]:--} wgmma,"
echo "${roof[wgmma_fp8]:--} wgmma_fp8; HBM ${roof[hbm_read]:--} TB/s read, ${roof[hbm_write]:--} write, where memory's roof"
echo "at this shape is lower)."
exit $status
