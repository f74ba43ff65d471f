#!/usr/bin/env bash
# Registers, shared memory, stack frame and spills of every kernel of the
# given steps, per architecture, as ptxas reports them. ptxas sees static
# shared memory only; a kernel that takes dynamic shared memory at launch
# (steps 07-10: STAGES and STAGE_BYTES in their kernel.cu) shows 0
# there. Run through `make regs`, which passes the build's NVCC, NVCCFLAGS
# and ARCH; each step is compiled for the architectures the build gives it
# (scripts/arch.sh).
# Exits 1 if any kernel spills or uses a stack frame (local memory), 2 if a
# kernel does not compile (with the compiler's first error).
set -u
cd "$(dirname "$0")/.."
source scripts/common.sh

usage() {
    cat <<USAGE
usage: scripts/regs.sh [STEP...]
  STEP   a step's number (04), short name (step04) or folder; default: every step
Environment: NVCC, NVCCFLAGS and ARCH, as make passes them (make regs);
  JOBS compiles at a time (default: the CPU cores).
USAGE
}
case ${1:-} in -h|--help) usage; exit 0 ;; -*) die regs.sh "unknown option '$1' (see --help)" ;; esac

NVCC=${NVCC:-nvcc}
NVCCFLAGS=${NVCCFLAGS:--O3 -lineinfo -std=c++17}
want=()
for s in "${@:-$(step_dirs)}"; do
    for w in $s; do want+=("$(find_step regs.sh "${w%/}")") || exit 2; done
done
set -- "${want[@]}"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Every step compiled at once, JOBS at a time (default: the CPU cores), each
# to its own log; then the reports in the steps' order.
declare -A gencodes
for step in "$@"; do
    step=${step%/}
    gencode=$(bash scripts/arch.sh gencode "$step" "${ARCH:-}") || exit 2
    gencodes[$step]=$gencode
    [[ $gencode == left\ out:* ]] && continue
    job_slot "${JOBS:-$(nproc 2>/dev/null || echo 1)}"
    # shellcheck disable=SC2086 # the flag variables hold several words
    { $NVCC $NVCCFLAGS $gencode -Icommon -Xptxas -v -c "$step/kernel.cu" -o "$tmp/$step.o" >"$tmp/$step.log" 2>&1 ||
        rm -f "$tmp/$step.o"; } &
done
wait
status=0
printf '%-22s %-6s %-22s %5s %13s %6s %7s\n' step arch kernel regs static_smem_B stack spill_B
compile_error=0
for step in "$@"; do
    step=${step%/}
    gencode=${gencodes[$step]}
    if [[ $gencode == left\ out:* ]]; then
        echo "$step: $gencode"
        continue
    fi
    if [ ! -f "$tmp/$step.o" ]; then
        echo "$step: does not compile: $(grep -m 1 -iE 'error' "$tmp/$step.log" || head -n 1 "$tmp/$step.log")"
        compile_error=1
        continue
    fi
    demangle <"$tmp/$step.log" | awk -v step="$step" '
        /Compiling entry function/ {
            name = $0; sub(/.*function .?/, "", name); sub(/.? for .*/, "", name)
            sub(/^void /, "", name); sub(/\(.*/, "", name)
            arch = $0; sub(/.* for .?/, "", arch); sub(/.?$/, "", arch)
        }
        /bytes stack frame/ { stack = $1; spill = $5 + $9 }
        /Used [0-9]+ registers/ {
            regs = $0; sub(/.*Used /, "", regs); sub(/ registers.*/, "", regs)
            smem = 0
            if ($0 ~ /bytes smem/) { smem = $0; sub(/ bytes smem.*/, "", smem); sub(/.* /, "", smem) }
            printf "%-22s %-6s %-22s %5s %13s %6s %7s\n", step, arch, name, regs, smem, stack, spill
            if (stack + spill > 0) bad = 1
        }
        END { exit bad }' || status=1
done
[ $compile_error -eq 0 ] || { echo "some kernel does not compile"; exit 2; }
[ $status -eq 0 ] || echo "some kernel uses local memory (stack frame or spills)"
exit $status
