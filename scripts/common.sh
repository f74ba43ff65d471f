#!/usr/bin/env bash
# Helpers the scripts share; sourced, not run.
case ${0##*/} in # run, not sourced (any shell): say so, before a line only bash can read
    common.sh) echo "usage: source scripts/common.sh (from another script): the helpers the scripts share; nothing to run"
               exit 0 ;;
esac

# One line on stderr, exit 2: die SCRIPT MESSAGE
die() { echo "$1: $2" >&2; exit 2; }

# Waits until fewer than N of this shell's jobs run: job_slot N
job_slot() {
    while [ "$(jobs -rp | wc -l)" -ge "$1" ]; do wait -n; done
}

# Option $2's value $3 must be a decimal integer from 1 to 2^30, the most
# any step takes for a side (an optional +, digits): positive_int SCRIPT
# OPTION [VALUE ...]
positive_int() {
    [ $# -ge 3 ] || die "$1" "$2 needs a value"
    local digits=${3#+}
    digits=${digits#"${digits%%[!0]*}"} # no leading zeros: not octal, and short
    [[ $3 =~ ^\+?[0-9]+$ ]] && [ -n "$digits" ] && [ ${#digits} -le 10 ] &&
        [ "$digits" -le 1073741824 ] ||
        die "$1" "$2 needs an integer from 1 to 1073741824, got '$3'"
}

# The build a script needs, announced on one line first (it can take a
# minute); if it fails, make's last line of its own says why (not make's
# "***" summary): build SCRIPT [TARGET...]
build() {
    local script=$1 out
    shift
    echo "$script: building ${*:-every step} (make)" >&2
    out=$(${MAKE:-make} --no-print-directory STEP= "$@" 2>&1) ||
        die "$script" "the build of ${*:-every step} failed: $(grep -v '^make.*\*\*\*' <<<"$out" | tail -n 1)"
}

# Dies unless STEP (by default the first step) can run on a GPU here: a
# tiny run of it says why not, in its own words: gpu_or_die SCRIPT [STEP]
gpu_or_die() {
    local step=${2:-$(step_dirs | head -n 1)} out
    build "$1" "$step"
    out=$(./"$step"/run -s 8 --warmup 0 --iters 1 --no-check 2>&1) ||
        die "$1" "needs a GPU${2:+ that runs $2}: ${out#"$step: "}"
}

# This GPU's ceilings (ceilings/run, made by make) into the associative
# array roof (declare -A roof first): roof[fma], roof[hbm_read], ... from its
# last line, NAME=RATE. Returns 1, roof empty, if it did not run:
# read_ceilings [RUNS]
read_ceilings() {
    local line kv
    [ -x ceilings/run ] && line=$(./ceilings/run ${1:+--runs "$1"} 2>&1 | tail -n 1) && [[ $line == "ceilings: fma="* ]] ||
        return 1
    for kv in ${line#ceilings:}; do roof[${kv%%=*}]=${kv#*=}; done
}

# One unchecked-or-not run of a step: run_step SCRIPT STEP OPTION...
# Ran: the key=value pairs of its last line in the associative array r
# (declare -A r first), return 0. A GPU older than the step needs: that
# line on stdout, return 3. No usable GPU, or too little memory (any other
# exit code 2): the script dies with the step's message. Any other failure:
# its output on stderr, return 1.
run_step() {
    local script=$1 s=$2 out rc line pair
    shift 2
    out=$(./"$s"/run "$@" 2>&1)
    rc=$?
    line=$(tail -n 1 <<<"$out")
    if [[ $line == step=* ]]; then
        r=()
        for pair in $line; do r[${pair%%=*}]=${pair#*=}; done
        return 0
    fi
    if [ $rc -eq 2 ] && [[ $out == *": needs sm_"* ]]; then
        echo "$out"
        return 3
    fi
    [ $rc -eq 2 ] && die "$script" "${out#"$s: "}"
    echo "$s did not run with $* (exit code $rc):" >&2
    echo "$out" >&2
    return 1
}

# Every step's folder, in order, one a line: the folders stepNN_* that hold
# a main.c, as the Makefile finds them (a folder left from an old build,
# with no sources, is no step).
step_dirs() {
    local main
    for main in step[0-9][0-9]_*/main.c; do
        [ -f "$main" ] && echo "${main%/main.c}"
    done
}

# The instruction a step multiplies with, whose ceiling (ceilings/run) is its
# roof: fma (float), mma (half, mma.sync), wgmma (half, Hopper's own) or
# wgmma_fp8 (e4m3): unit_of STEP
unit_of() {
    case $(bash scripts/arch.sh input "$1") in
        fp32) echo fma ;;
        e4m3) echo wgmma_fp8 ;;
        *) [ "$(bash scripts/arch.sh need "$1")" = sm_90a ] && echo wgmma || echo mma ;;
    esac
}

# The folder of a step given as 07, step07 or step07_pipeline.
find_step() {
    local script=$1 want=$2 dir
    [[ $want =~ ^[0-9]+$ ]] && want=step$(printf %02d "$((10#$want))")
    for dir in $(step_dirs); do
        if [ "$want" = "$dir" ] || [ "$want" = "${dir%%_*}" ]; then echo "$dir"; return; fi
    done
    die "$script" "no step '$2' (the steps: $(step_dirs | tr '\n' ' '))"
}

# C++ names as written (c++filt) where the tool is there.
demangle() { if command -v c++filt >/dev/null; then c++filt; else cat; fi; }

# a / b to two decimals, or - when either is missing.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b == 0) print "-"; else printf "%.2f", a / b }'; }

# The median of the numbers on stdin.
median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) exit; print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# The rows of a saved run_all.sh output, one per line, tab-separated as its
# CSV: step (or cuBLAS row), technique, precision, ms, TFLOPS, x step01,
# x prev, % cuBLAS, check. Its columns are fixed (run_all.sh's printf); the
# table runs from the line of headings to the first empty line.
run_all_rows() {
    awk '
        function col(from, width, s) { s = substr($0, from, width); gsub(/^ +| +$/, "", s); return s }
        /^step +technique +precision/ { in_table = 1; next }
        in_table && /^$/ { exit }
        in_table { printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", col(1, 24), col(26, 17), col(44, 9),
                          col(54, 9), col(64, 8), col(73, 9), col(83, 7), col(91, 9), col(102, 12) }' "$1"
}

# A text bar of value on a scale where top fills width characters, in eighths
# of a character, so that a small value still shows: bar VALUE TOP WIDTH.
# With a fourth argument, light, it is drawn in light shade, whole cells only.
bar() {
    awk -v v="$1" -v top="$2" -v width="$3" -v light="${4:-}" 'BEGIN {
        if (v == "" || top == "" || top == 0) exit
        split("▏ ▎ ▍ ▌ ▋ ▊ ▉", part, " ")
        e = int(v / top * width * 8 + 0.5); if (e < 1) e = 1
        if (light != "") { for (i = 0; i < int((e + 4) / 8) || i < 1; i++) printf "░"; exit }
        for (i = 0; i < int(e / 8); i++) printf "█"
        if (e % 8) printf "%s", part[e % 8]
    }'
}
