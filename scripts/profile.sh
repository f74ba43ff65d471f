#!/usr/bin/env bash
# A short Nsight Compute profile of one step's kernel: the few numbers the
# README's explanations use, each with a line saying what it means. Run
# through `make profile STEP=07`. Every profiler number in the README and in
# the kernels' headers comes from this script, at its default size unless
# the text names another.
#
# The size: 4096^3 for the float steps, 8192^3 for the half steps, so that
# the kernel runs well over a millisecond. Nsight Compute replays the kernel
# once per group of counters; it profiles the first launch of gemm_kernel
# (the check is skipped, so that is the first timed run). The GPU's clocks are
# left as they are (--clock-control none): the numbers are those of the
# timed runs. Extra flags for ncu: NCU_FLAGS="...".
#
# With --cublas, the same numbers for the cuBLAS kernel the step is timed
# against (its longest launch in the same run), whose name gives its tile
# and cluster: what the library does on the same shape.
set -u
cd "$(dirname "$0")/.."
source scripts/common.sh

usage() {
    cat <<USAGE
usage: scripts/profile.sh STEP [-s SIZE] [--cublas]
  STEP      a step's number (07) or folder (step07_pipeline)
  -s SIZE   M = N = K = SIZE (default 4096 for float steps, 8192 for half)
  --cublas  profile the cuBLAS kernel the step is timed against, not the step
Environment: NCU_FLAGS (extra ncu flags), NCU (the ncu to use).
USAGE
}

step="" size="" cublas=0
while [ $# -gt 0 ]; do
    case $1 in
        -s|--size) positive_int profile.sh "$@"; size=$2; shift 2 ;;
        --cublas) cublas=1; shift ;;
        -h|--help) usage; exit 0 ;;
        -*) die profile.sh "unknown option '$1' (see --help)" ;;
        *) step=$(find_step profile.sh "$1") || exit 2; shift ;;
    esac
done
[ -n "$step" ] || { usage >&2; exit 2; }

gpu_or_die profile.sh "$step"
NCU=${NCU:-ncu}
command -v "$NCU" >/dev/null ||
    die profile.sh "needs Nsight Compute (ncu), which is not on PATH: it comes with the CUDA toolkit (or set NCU=/path/to/ncu)"
fp16=0
[ "$(bash scripts/arch.sh input "$step")" = fp16 ] && fp16=1
[ -n "$size" ] || size=$([ $fp16 = 1 ] && echo 8192 || echo 4096)

stalls="barrier branch_resolving dispatch_stall drain gmma imc_miss lg_throttle long_scoreboard
        math_pipe_throttle membar mio_throttle misc no_instruction not_selected short_scoreboard
        sleeping tex_throttle wait"
if [ $fp16 = 1 ]; then
    pipe=sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active pipe_name="tensor pipe"
else
    pipe=sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active pipe_name="FMA pipe"
fi
metrics="gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,$pipe"
metrics+=",l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"
metrics+=",l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"
metrics+=",lts__t_bytes.sum.per_second,dram__bytes.sum.per_second,lts__t_requests.sum"
metrics+=",launch__grid_size,launch__cluster_dim_x,launch__cluster_dim_y"
metrics+=",sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread"
for s in $stalls; do metrics+=",smsp__average_warps_issue_stalled_${s}_per_issue_active.ratio"; done

raw=$(mktemp)
trap 'rm -f "$raw"' EXIT
# The step's kernel: its first launch. cuBLAS's: every launch of the run is
# profiled (one of the step, one of cuBLAS, and a repack where there is one),
# and the longest one not the step's is shown.
which=(--kernel-name gemm_kernel --launch-count 1)
[ $cublas = 1 ] && which=(--launch-count 8)
# shellcheck disable=SC2086 # NCU_FLAGS holds several words
"$NCU" --clock-control none "${which[@]}" --csv \
    --print-units base --metrics "$metrics" ${NCU_FLAGS:-} \
    ./"$step"/run -s "$size" --warmup 0 --iters 1 --no-check >"$raw" 2>&1 ||
    { tail -n 5 "$raw" >&2; die profile.sh "ncu failed (its last lines are above)"; }
grep -q '"Metric Name"' "$raw" ||
    { tail -n 5 "$raw" >&2; die profile.sh "ncu measured nothing (its last lines are above)"; }

gpu=$(sed -n 's/^step=.* gpu=\([^ ]*\).*/\1/p' "$raw" | tr _ ' ')
cuda=$(sed -n 's/^step=.* cuda=\([^ ]*\).*/\1/p' "$raw")
if [ $cublas = 1 ]; then
    echo "cuBLAS, as $step is timed against it, at ${size}^3 on $gpu (CUDA $cuda), $(date -u +%Y-%m-%d): ncu --clock-control none, its longest kernel"
else
    echo "$step at ${size}^3 on $gpu (CUDA $cuda), $(date -u +%Y-%m-%d): ncu --clock-control none, the first launch of gemm_kernel"
fi
echo
# The CSV's columns are found by name; values may hold thousands separators.
# A row per metric and launch (ID); the launch shown is chosen at the end.
awk -F'","' -v pipe="$pipe" -v pipe_name="$pipe_name" -v cublas=$cublas '
    NR == 1 || /"Metric Name"/ {
        for (i = 1; i <= NF; i++) { h = $i; gsub(/"/, "", h); col[h] = i }
        next
    }
    col["Metric Name"] && NF >= col["Metric Value"] {
        v = $col["Metric Value"]; gsub(/[",]/, "", v); id = $col["ID"]
        kname[id] = $col["Kernel Name"]; all[id, $col["Metric Name"]] = v
    }
    function row(label, value, meaning) { printf "  %-22s %-14s %s\n", label, value, meaning }
    END {
        shown = ""
        for (id in kname) {
            mine = kname[id] ~ /(gemm|repack)_kernel/
            if (cublas ? mine : !mine) continue
            if (shown == "" || all[id, "gpu__time_duration.sum"] + 0 > all[shown, "gpu__time_duration.sum"] + 0) shown = id
        }
        if (shown == "") { print "profile.sh: ncu saw no such kernel" > "/dev/stderr"; exit 1 }
        for (k in all) { split(k, key, SUBSEP); if (key[1] == shown) val[key[2]] = all[k] }
        if (cublas) { kernel = kname[shown]; sub(/\(.*/, "", kernel); sub(/^void /, "", kernel); printf "  kernel: %s\n\n", kernel }
        row("time", sprintf("%.3f ms", val["gpu__time_duration.sum"] / 1e6), "the kernel, once, under the profiler")
        row("SM clock", sprintf("%.2f GHz", val["sm__cycles_elapsed.avg.per_second"] / 1e9), "as the GPU ran it (clocks not locked)")
        row(pipe_name " busy", sprintf("%.1f %%", val[pipe]), "of the cycles: how close the step is to its math units'"'"' peak")
        row("occupancy", sprintf("%.1f %%", val["sm__warps_active.avg.pct_of_peak_sustained_active"]), "active warps, of the most an SM can hold")
        row("registers", val["launch__registers_per_thread"] " / thread", "fewer would let more warps share an SM")
        row("bank conflicts", sprintf("%d ld, %d st", val["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"], val["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"]), "extra shared-memory passes, whole run")
        row("L2 throughput", sprintf("%.2f TB/s", val["lts__t_bytes.sum.per_second"] / 1e12), "bytes through L2: tiles fetched by the SMs")
        row("DRAM throughput", sprintf("%.2f TB/s", val["dram__bytes.sum.per_second"] / 1e12), "bytes to and from device memory")
        row("L2 requests", sprintf("%.1f million", val["lts__t_requests.sum"] / 1e6), "asked of L2 by all SMs, whole run")
        cluster = val["launch__cluster_dim_x"] * val["launch__cluster_dim_y"]
        row("blocks", val["launch__grid_size"], cluster > 1 ? "in clusters of " cluster ", which can receive a box of A or B together" : "no clusters")
        printf "\n  warp stalls, in cycles per instruction issued (the top four; an SM hides\n  a stall while another warp can issue):\n"
        n = 0
        for (m in val) if (m ~ /^smsp__average_warps_issue_stalled_/) {
            name = m; sub(/^smsp__average_warps_issue_stalled_/, "", name); sub(/_per_issue_active.ratio$/, "", name)
            n++; sname[n] = name; sval[n] = val[m] + 0
        }
        for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (sval[j] > sval[i]) {
            t = sval[i]; sval[i] = sval[j]; sval[j] = t; t = sname[i]; sname[i] = sname[j]; sname[j] = t
        }
        say["long_scoreboard"] = "waiting for global or local memory (or L1)"
        say["short_scoreboard"] = "waiting for shared memory or a slow math result"
        say["barrier"] = "waiting at __syncthreads for the other warps"
        say["math_pipe_throttle"] = "the math pipe is busy with other warps (good)"
        say["mio_throttle"] = "the shared-memory queue is full"
        say["lg_throttle"] = "the global-memory queue is full"
        say["wait"] = "a fixed wait the compiler put between dependent instructions"
        say["not_selected"] = "ready, but another warp issued (good)"
        say["gmma"] = "waiting for wgmma (warpgroup MMA) results"
        say["sleeping"] = "asleep (a wait on an mbarrier or nanosleep)"
        say["dispatch_stall"] = "the dispatcher could not take the instruction"
        say["branch_resolving"] = "waiting for a branch target"
        say["no_instruction"] = "the instruction cache missed"
        say["imc_miss"] = "the constant cache missed"
        say["membar"] = "waiting at a memory fence"
        say["drain"] = "waiting for stores to drain at exit"
        say["tex_throttle"] = "the texture queue is full"
        say["misc"] = "other"
        for (i = 1; i <= 4 && i <= n; i++) row("  " sname[i], sprintf("%.2f", sval[i]), say[sname[i]])
    }' "$raw"
