#!/usr/bin/env bash
# The oldest GPU a step runs on, read from the one place it is declared: the
# STEP line of the step's main.c, e.g.
#   static const struct step STEP = { "step06_mma_ptx", INPUT_FP16, "sm_80" };
#
#   scripts/arch.sh need STEP            sm_80
#   scripts/arch.sh input STEP           fp16 or fp32: what A and B hold (the
#                                        same line's second field)
#   scripts/arch.sh gencode STEP [ARCH]  the step's nvcc -gencode flags, or
#                                        "left out: <why>" when ARCH cannot run it
#   scripts/arch.sh gencode-host STEP    flags for a program built with the
#                                        step's kernel.cu that runs on the CPU
#                                        only (its planner's): PTX of the step's
#                                        architecture, no machine code to make
#   scripts/arch.sh gencode-any [ARCH]   flags for code that runs on every GPU from
#                                        sm_75 on, with Hopper's own instructions
#                                        (sm_90a) where it builds for Hopper: the
#                                        harness's common/flush.cu, ceilings/
#
# Without ARCH (no GPU to build for): every architecture in SUPPORTED at or
# above the step's own, plus PTX of the newest for chips after it; a step
# built for an "a" target (sm_90a: Hopper's own instructions) gets exactly
# that one. ARCH=sm_NN builds machine code for that GPU; ARCH=compute_NN
# builds PTX only, which the driver compiles when the program starts.
set -u
SUPPORTED=(75 80 86 89 90)

die() { echo "arch.sh: $*" >&2; exit 2; }

# The STEP line of a step's main.c.
step_line() {
    local main=$1/main.c
    [ -f "$main" ] || die "no $main"
    grep -E '^static const struct step STEP = \{' "$main" || die "$main: no STEP line"
}

need() {
    local line
    line=$(step_line "$1") || exit 2
    [[ $line =~ \"(sm_[0-9]+a?)\"\ *\}\; ]] || die "$1/main.c: no arch (\"sm_NN\") at the end of the STEP line"
    echo "${BASH_REMATCH[1]}"
}

input() {
    local line
    line=$(step_line "$1") || exit 2
    [[ $line =~ INPUT_(FP16|FP32|E4M3) ]] || die "$1/main.c: no INPUT_FP16, INPUT_FP32 or INPUT_E4M3 in the STEP line"
    echo "${BASH_REMATCH[1],,}"
}

gencode() {
    local step=$1 arch=${2:-} want exact=0 n kind flags=""
    want=$(need "$step") || exit 2
    [[ $want == *a ]] && exact=1
    want=${want#sm_}; want=${want%a}
    if [ -z "$arch" ]; then
        if [ $exact -eq 1 ]; then
            echo "-gencode arch=compute_${want}a,code=sm_${want}a"
            return
        fi
        local newest=""
        for n in "${SUPPORTED[@]}"; do
            [ "$n" -ge "$want" ] || continue
            flags+=" -gencode arch=compute_$n,code=sm_$n"
            newest=$n
        done
        [ -n "$newest" ] || { echo "left out: needs sm_$want, newer than this build knows"; return; }
        echo "${flags# } -gencode arch=compute_$newest,code=compute_$newest"
        return
    fi
    [[ $arch =~ ^(sm|compute)_([0-9]+)a?$ ]] || die "ARCH=$arch: want sm_NN or compute_NN, e.g. ARCH=sm_90"
    kind=${BASH_REMATCH[1]} n=${BASH_REMATCH[2]}
    if [ $exact -eq 1 ]; then
        if [ "$kind" = sm ] && [ "$n" -eq "$want" ]; then
            echo "-gencode arch=compute_${want}a,code=sm_${want}a"
        else
            echo "left out: needs sm_${want}a, which runs on compute capability ${want:0:-1}.${want: -1} only; ARCH=$arch"
        fi
    elif [ "$n" -lt "$want" ]; then
        echo "left out: needs sm_$want; ARCH=$arch is older"
    elif [ "$kind" = sm ]; then
        echo "-gencode arch=compute_$n,code=sm_$n"
    else
        echo "-gencode arch=compute_$n,code=compute_$n"
    fi
}

gencode_host() {
    local want
    want=$(need "$1") || exit 2
    echo "-gencode arch=compute_${want#sm_},code=compute_${want#sm_}"
}

gencode_any() {
    local arch=${1:-} n kind flags=""
    if [ -z "$arch" ]; then
        for n in "${SUPPORTED[@]}"; do
            if [ "$n" = 90 ]; then flags+=" -gencode arch=compute_90a,code=sm_90a"
            else flags+=" -gencode arch=compute_$n,code=sm_$n"; fi
        done
        echo "${flags# } -gencode arch=compute_${SUPPORTED[-1]},code=compute_${SUPPORTED[-1]}"
        return
    fi
    [[ $arch =~ ^(sm|compute)_([0-9]+)a?$ ]] || die "ARCH=$arch: want sm_NN or compute_NN, e.g. ARCH=sm_90"
    kind=${BASH_REMATCH[1]} n=${BASH_REMATCH[2]}
    if [ "$n" -lt 75 ]; then
        echo "left out: needs sm_75; ARCH=$arch is older"
    elif [ "$kind" = sm ] && [ "$n" = 90 ]; then
        echo "-gencode arch=compute_90a,code=sm_90a"
    else
        echo "-gencode arch=compute_$n,code=${kind}_$n"
    fi
}

case ${1:-} in
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    need) [ $# -eq 2 ] || die "usage: arch.sh need STEP"; need "${2%/}" ;;
    input) [ $# -eq 2 ] || die "usage: arch.sh input STEP"; input "${2%/}" ;;
    gencode) [ $# -ge 2 ] && [ $# -le 3 ] || die "usage: arch.sh gencode STEP [ARCH]"; gencode "${2%/}" "${3:-}" ;;
    gencode-host) [ $# -eq 2 ] || die "usage: arch.sh gencode-host STEP"; gencode_host "${2%/}" ;;
    gencode-any) [ $# -le 2 ] || die "usage: arch.sh gencode-any [ARCH]"; gencode_any "${2:-}" ;;
    *) die "usage: arch.sh need STEP | arch.sh input STEP | arch.sh gencode STEP [ARCH] | arch.sh gencode-host STEP | arch.sh gencode-any [ARCH]" ;;
esac
