#!/usr/bin/env bash
# The test suite behind `make test`. Closes with "N passed, N failed, N skipped".
#
# Always (no GPU needed): every step builds (or is left out, with the reason,
# where the build's ARCH cannot run it); the harness's unit tests, whose
# crash or missing summary fails; no kernel spills or uses local memory; every
# binary's --help and bad input. With a GPU: every step on many shapes and
# alpha/beta (beta = 0 with C full of NaN), and compute-sanitizer memcheck and
# racecheck on small shapes. Without a usable GPU the GPU half is skipped with
# the reason the CUDA runtime gave, once; a step that needs a newer GPU than
# the one found is skipped with its need, once.
set -u
cd "$(dirname "$0")/.."
case ${1:-} in
    -h|--help)
        echo 'usage: scripts/test.sh (or make test), STEPS="05 06" for those steps only,'
        echo '       JOBS=N for N compiles or GPU checks at a time (default: the CPU cores, at most 8)'
        echo 'Closes with "N passed, N failed, N skipped"; exits 1 if anything failed.'
        exit 0 ;;
    ?*) echo "test.sh: unknown argument '$1' (see --help); STEPS=\"05 06\" picks steps" >&2; exit 2 ;;
esac

if [ -n "${JOBS:-}" ] && ! [[ $JOBS =~ ^[1-9][0-9]{0,2}$ ]]; then
    echo "test.sh: JOBS=$JOBS is not a number of jobs from 1 to 999" >&2
    exit 2
fi

# The compiles (nvcc takes tens of seconds a step) and the GPU checks run
# JOBS at a time (default: the CPU cores, at most 8): job_slot "$JOBS".
JOBS=${JOBS:-$(cores=$(nproc 2>/dev/null || echo 1); echo $((cores < 8 ? cores : 8)))}

passed=0 failed=0 skipped=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT # and the jobs' folder, once there is one (below)

pass() { passed=$((passed + 1)); echo "PASS  $1"; }
skip() { skipped=$((skipped + 1)); echo "SKIP  $1"; }
fail() {
    failed=$((failed + 1))
    echo "FAIL  $1"
    [ -s "$log" ] && tail -n 15 "$log" | sed 's/^/      /'
}

MAKE=${MAKE:-make}
# STEPS="05 06" (make test STEPS=...) tests those steps only; all_steps is
# every step, for the tests of the whole tree.
steps=() all_steps=()
source scripts/common.sh
for dir in $(step_dirs); do
    all_steps+=("$dir")
    if [ -n "${STEPS:-}" ] && ! [[ " $STEPS " == *" ${dir:4:2} "* || " $STEPS " == *" ${dir%%_*} "* ]]; then
        continue
    fi
    steps+=("$dir")
done
[ ${#steps[@]} -gt 0 ] || { echo "test.sh: STEPS=$STEPS names no step" >&2; exit 2; }

echo "== build"
# Everything at once first, JOBS at a time (or in the job slots of a make
# -j that runs this), then each step on its own, which is up to date by
# then or shows that step's error. A step the build's ARCH cannot run is
# left out by the Makefile: its checks are skipped, with the reason, once.
parallel=-j$JOBS
[[ ${MAKEFLAGS:-} == *jobserver* ]] && parallel=
$MAKE -k $parallel --no-print-directory "${steps[@]}" >/dev/null 2>&1
built=()
declare -A left_out
for s in "${steps[@]}"; do
    if $MAKE --no-print-directory "$s" >"$log" 2>&1; then
        pass "build $s"
        built+=("$s")
    elif grep -q "^$s: left out: " "$log"; then
        left_out[$s]=$(sed -n "s/^$s: left out: //p" "$log")
        skip "build $s: ${left_out[$s]}"
    else
        fail "build $s"
    fi
done

echo "== harness unit tests"
# The unit tests print a line per test and close with their own summary. A
# crash, a missing summary, or a non-zero exit that no failed test explains
# fails, whatever was printed; each failed test counts once.
if $MAKE --no-print-directory common/test_common >"$log" 2>&1; then
    ./common/test_common >"$log.unit" 2>&1
    rc=$?
    : >"$log" # a failed test's own line says what failed
    unit_failed=0
    while read -r verdict name; do
        case $verdict in
            PASS) pass "$name" ;;
            FAIL) fail "$name"; unit_failed=$((unit_failed + 1)) ;;
        esac
    done <"$log.unit"
    summary=$(grep -E '^unit tests: [0-9]+ passed, [0-9]+ failed$' "$log.unit")
    if [ $rc -gt 128 ] || [ -z "$summary" ] || { [ $rc -ne 0 ] && [ $unit_failed -eq 0 ]; }; then
        cp "$log.unit" "$log"
        if [ $rc -gt 128 ]; then
            fail "common/test_common died of signal $((rc - 128)) ($(kill -l $((rc - 128)) 2>/dev/null))"
        else
            fail "common/test_common exited with code $rc${summary:+ ($summary)}${summary:- and no summary line}"
        fi
    fi
    rm -f "$log.unit"
else
    fail "build common/test_common"
fi

echo "== registers: no spills, no local memory"
# ptxas reports on machine code only: a PTX-only build (ARCH=compute_NN) has
# none to report on, and a report of no kernel at all is no pass.
JOBS=$JOBS $MAKE --no-print-directory regs STEPS="${steps[*]}" >"$log" 2>&1
rc=$?
kernels=$(grep -c '^step.*gemm_kernel' "$log")
case $rc in
    0) if [ "$kernels" -gt 0 ]; then
           pass "no kernel spills or uses a stack frame ($kernels kernels x architectures)"
       elif [[ ${ARCH:-} == compute_* ]]; then
           skip "registers: ARCH=$ARCH builds PTX only, on which ptxas reports nothing"
       else
           fail "registers: make regs reported no kernel"
       fi ;;
    2) grep 'does not compile' "$log" >"$log.err"; mv "$log.err" "$log"
       fail "a kernel does not compile: $(head -n 1 "$log")" ;;
    *) fail "some kernel spills or uses a stack frame" ;;
esac

echo "== command line (no GPU needed)"
for s in "${built[@]}"; do
    if ./"$s"/run --bogus --help >"$log" 2>&1 && grep -q "^usage: ./$s/run " "$log"; then
        pass "$s --help: usage as typed, exit 0 wherever it stands"
    else
        fail "$s --help"
    fi
    # Numbers are decimal with an optional sign: no spaces, no hex, and a
    # value must fit what it sets.
    for args in "-m 0" "-m abc" "-m 99999999" "--bogus" "-n -5" "-k" "--alpha nan" \
                "--iters 0" "extra" "-m 0x10" "--alpha 0x1p3" "--beta 1e39" "--offset 1025" "--cold=1" "--host 5"; do
        # shellcheck disable=SC2086 # args holds several words
        ./"$s"/run $args >"$log.out" 2>"$log"
        rc=$?
        if [ $rc -eq 2 ] && [ "$(wc -l <"$log")" -eq 1 ] && [ ! -s "$log.out" ] &&
            grep -q "^$s: " "$log"; then
            pass "$s $args: one-line error, exit 2"
        else
            echo "exit code $rc, stdout $(wc -c <"$log.out") bytes" >>"$log"
            fail "$s $args: want a one-line error and exit 2"
        fi
    done
    for value in " 12" "12 "; do
        ./"$s"/run -m "$value" >"$log.out" 2>"$log"
        rc=$?
        if [ $rc -eq 2 ] && grep -q "^$s: -m needs an integer" "$log"; then
            pass "$s -m '$value': spaces refused, exit 2"
        else
            fail "$s -m '$value': want 'needs an integer' and exit 2 (exit code $rc)"
        fi
    done
    # The size message counts the bytes of what A holds: half from step 05 on, e4m3 in step 16.
    ./"$s"/run -s 262145 >"$log.out" 2>"$log"
    case $(bash scripts/arch.sh input "$s") in
        fp16) want="128.0 GiB of half" ;;
        e4m3) want="64.0 GiB of e4m3" ;;
        *) want="256.0 GiB of float" ;;
    esac
    if grep -q "^$s: A would be .*($want)" "$log"; then
        pass "$s -s 262145: the size error counts $want"
    else
        fail "$s -s 262145: want '($want)' in the error"
    fi
    rm -f "$log.out"
done

echo "== ceilings (no GPU needed)"
# ceilings/run builds, takes --help, refuses bad arguments with one line;
# its SASS holds what each ceiling claims to measure (where cuobjdump is).
if $MAKE --no-print-directory ceilings/run >"$log" 2>&1; then
    pass "make ceilings/run builds"
    if ./ceilings/run --bogus --help >"$log" 2>&1 && grep -q '^usage: ceilings/run ' "$log"; then
        pass "ceilings/run --help: usage, exit 0"
    else
        fail "ceilings/run --help"
    fi
    for args in "--runs 0" "--runs x" "--only bogus" "--only" "--bogus"; do
        # shellcheck disable=SC2086 # args holds several words
        ./ceilings/run $args >"$log.out" 2>"$log"
        rc=$?
        if [ $rc -eq 2 ] && [ "$(wc -l <"$log")" -eq 1 ] && [ ! -s "$log.out" ] && grep -q '^ceilings: ' "$log"; then
            pass "ceilings/run $args: one-line error, exit 2"
        else
            fail "ceilings/run $args: want one line and exit 2 (exit code $rc)"
        fi
    done
    if command -v cuobjdump >/dev/null && command -v nvdisasm >/dev/null && [[ ${ARCH:-} != compute_* ]]; then
        # kernel:instruction:fewest, each kernel's SASS (any architecture it was built for) holding that many
        want=(fma_kernel:FFMA:64 mma_kernel:HMMA:8 read_kernel:LDG.E.128:4 write_kernel:STG.E.128:1)
        [[ " $(bash scripts/arch.sh gencode-any "${ARCH:-}") " == *sm_90a* ]] &&
            want+=("wgmma_kernelILb0E:HGMMA.64x256x16.F32:8" "wgmma_kernelILb1E:QGMMA.64x256x32.F32.E4M3.E4M3:8")
        cuobjdump --dump-sass ceilings/run >"$log" 2>&1
        for w in "${want[@]}"; do
            IFS=: read -r kernel instr fewest <<<"$w"
            n=$(awk -v k="$kernel" -v i="$instr" '/Function :/ { on = index($0, k) > 0 } on { for (f = 1; f <= NF; f++) if (index($f, i) == 1) c++ } END { print c + 0 }' "$log")
            if [ "$n" -ge "$fewest" ]; then
                pass "ceilings/run: ${kernel%%ILb*}'s SASS has $n $instr (at least $fewest)"
            else
                fail "ceilings/run: ${kernel%%ILb*}'s SASS has $n $instr, want at least $fewest"
            fi
        done
    else
        skip "ceilings/run's SASS: needs cuobjdump, nvdisasm and machine code"
    fi
else
    fail "make ceilings/run"
fi
rm -f "$log.out"

echo "== planner (no GPU needed)"
# A step with a planner (plan() in its kernel.cu) has every plan walked on
# the CPU over shapes and SM counts (common/test_plan.cu): every k-tile
# multiplied once, every partial sum counted once, one part storing a tile.
# The programs first, JOBS at a time, as PTX: they run on the CPU only.
planned=() plan_dir=$(mktemp -d)
for s in "${built[@]}"; do
    grep -q '^static launch_plan plan(' "$s/kernel.cu" || continue
    planned+=("$s")
    job_slot "$JOBS"
    # shellcheck disable=SC2046 # the flags are several words
    ${NVCC:-nvcc} -O2 -std=c++17 $(bash scripts/arch.sh gencode-host "$s") -Icommon -I. -DKERNEL="\"$s/kernel.cu\"" \
        common/test_plan.cu -o "$plan_dir/$s" >"$plan_dir/$s.log" 2>&1 &
done
wait
for s in ${planned[@]+"${planned[@]}"}; do
    if [ -x "$plan_dir/$s" ]; then
        if "$plan_dir/$s" >"$log" 2>&1; then
            pass "$s: $(tail -n 1 "$log" | sed 's/^PASS  //')"
        else
            fail "$s: common/test_plan"
            head -n 10 "$log" | sed 's/^/      /'
        fi
    else
        cp "$plan_dir/$s.log" "$log"
        fail "$s: common/test_plan.cu does not build with $s/kernel.cu"
    fi
done
rm -rf "$plan_dir"
# scripts/plan.sh on the first step built with a planner: a line per
# candidate, the pick the one of the least time.
for s in "${built[@]}"; do
    grep -q '^static launch_plan plan(' "$s/kernel.cu" || continue
    if bash scripts/plan.sh "$s" -s 3000 >"$log.out" 2>"$log"; then
        least=$(awk '$1 ~ /^[0-9]+x[0-9]+$/ { us = $NF == "pick" ? $(NF - 3) : $NF
                                               if (min == "" || us + 0 < min + 0) min = us } END { print min }' "$log.out")
        rows=$(grep -c '^[0-9]*x[0-9]* ' "$log.out")
        if [ "$rows" -gt 1 ] && [ "$(grep -c ' <- the pick$' "$log.out")" -eq 1 ] &&
            grep ' <- the pick$' "$log.out" | awk -v m="$least" '{ exit !($(NF - 3) == m) }'; then
            pass "scripts/plan.sh ${s%%_*} -s 3000: $rows candidates, the pick the least modelled time ($least us)"
        else
            fail "scripts/plan.sh ${s%%_*} -s 3000: want a line per candidate and the one of the least time picked"
        fi
    else
        fail "scripts/plan.sh ${s%%_*} -s 3000 (exit code $?)"
    fi
    rm -f "$log.out"
    break
done
if [ ${#planned[@]} -eq 0 ] && grep -q '^static launch_plan plan(' "${all_steps[@]/%//kernel.cu}" 2>/dev/null; then
    skip "the planner: no step with one was built"
fi

echo "== tools (no GPU needed)"
# The README runs every script as scripts/NAME.sh: each must be executable.
not_x=$(for f in scripts/*.sh; do [ -x "$f" ] || echo "$f"; done)
if [ -z "$not_x" ]; then
    pass "every scripts/*.sh is executable"
else
    fail "not executable: "$not_x
fi
# The build follows ARCH: in a copy of the sources, so this tree's build stays.
copy=$(mktemp -d)
cp -r Makefile common scripts ceilings "${all_steps[@]}" "$copy"/
(cd "$copy" && $MAKE clean >/dev/null 2>&1)
# make ARCH=sm_75 (every step), or with STEPS, make -k ARCH=sm_75 those
# steps, where each one sm_75 cannot run fails with its line.
targets=()
[ -n "${STEPS:-}" ] && targets=("${steps[@]}")
(cd "$copy" && $MAKE -k --no-print-directory ARCH=sm_75 ${targets[@]+"${targets[@]}"} >"$log" 2>&1)
rc=$?
leaves=$(grep -c ': left out: needs sm_' "$log")
expect=0 runnable=""
for s in "${steps[@]}"; do
    a=$(bash scripts/arch.sh need "$s")
    if [ "${a%a}" != "$a" ] || [ "${a#sm_}" -gt 75 ]; then
        expect=$((expect + 1))
    else
        [ -n "$runnable" ] || runnable=$s
        [ -x "$copy/$s/run" ] || expect=-1 # a step that sm_75 runs was not built
    fi
done
want_rc=0
[ ${#targets[@]} -gt 0 ] && [ "$expect" -gt 0 ] && want_rc=2
if [ "$leaves" -eq "$expect" ] && [ $rc -eq $want_rc ]; then
    pass "make ARCH=sm_75 builds the sm_75 steps and says why it leaves out $leaves"
else
    fail "make ARCH=sm_75: $leaves steps left out, want $expect, each with a line (exit code $rc, want $want_rc)"
fi
# --no-silent: the log must name what make compiles, under make -s test too.
if [ -z "$runnable" ]; then
    skip "changing ARCH rebuilds: none of these steps builds for sm_80"
elif (cd "$copy" && $MAKE --no-print-directory ARCH=sm_90 "$runnable" >/dev/null 2>&1) &&
    (cd "$copy" && $MAKE --no-print-directory --no-silent ARCH=sm_80 "$runnable" >"$log" 2>&1) &&
    grep -q "$runnable/kernel.cu" "$log"; then
    pass "changing ARCH rebuilds (make ARCH=sm_90 $runnable, then ARCH=sm_80)"
else
    fail "make ARCH=sm_80 $runnable after ARCH=sm_90 did not build, or did not recompile"
fi
rm -rf "$copy"

if $MAKE --no-print-directory help >"$log" 2>&1 && grep -q 'make lesson' "$log" &&
    [ "$(grep -c '^  step[0-9][0-9]_.* sm_' "$log")" -eq ${#all_steps[@]} ]; then
    pass "make help lists the targets and each step's architecture"
else
    fail "make help"
fi
# Every script takes --help: its usage on stdout, exit 0, nothing run.
for path in scripts/*.sh; do
    script=$(basename "$path" .sh)
    if bash scripts/$script.sh --help >"$log.out" 2>"$log" && grep -qi 'usage\|scripts/arch.sh need' "$log.out" &&
        [ ! -s "$log" ]; then
        pass "scripts/$script.sh --help: usage, exit 0"
    else
        fail "scripts/$script.sh --help: want the usage and exit 0"
    fi
done
# Bad invocations: one line on stderr naming the script (or the Makefile)
# and the problem, exit 2, before any work (no build, no run).
bad_calls=(
    "run_all.sh|bash scripts/run_all.sh -s abc" "run_all.sh|bash scripts/run_all.sh -s 0"
    "run_all.sh|bash scripts/run_all.sh -m" "run_all.sh|bash scripts/run_all.sh --bogus"
    "run_all.sh|bash scripts/run_all.sh -s 99999999999999999999999"
    "run_all.sh|bash scripts/run_all.sh -s 1073741825"
    "run_all.sh|bash scripts/run_all.sh --csv /nonexistent/x.csv"
    "sweep.sh|bash scripts/sweep.sh --sizes ''" "sweep.sh|bash scripts/sweep.sh --steps 99"
    "sweep.sh|bash scripts/sweep.sh --sizes 0"
    "shapes.sh|bash scripts/shapes.sh --classes bogus" "shapes.sh|bash scripts/shapes.sh --steps 99"
    "shapes.sh|bash scripts/shapes.sh --iters 0" "shapes.sh|bash scripts/shapes.sh --csv /nonexistent/x.csv"
    "regs.sh|bash scripts/regs.sh 4x" "regs.sh|bash scripts/regs.sh --bogus"
    "lesson.sh|bash scripts/lesson.sh 99" "sass.sh|bash scripts/sass.sh 99"
    "profile.sh|bash scripts/profile.sh 99" "profile.sh|bash scripts/profile.sh 01 -s 0"
    "update_docs.sh|bash scripts/update_docs.sh /nonexistent"
    "update_docs.sh|bash scripts/update_docs.sh scripts/test.sh"
    "test.sh|bash scripts/test.sh --bogus" "arch.sh|bash scripts/arch.sh need"
    "try.sh|bash scripts/try.sh 99" "try.sh|bash scripts/try.sh 05 --iters 0"
    "chart.sh|bash scripts/chart.sh /nonexistent.csv" "chart.sh|bash scripts/chart.sh scripts/test.sh"
    "spread.sh|bash scripts/spread.sh README.md" "spread.sh|bash scripts/spread.sh /nonexistent README.md"
    "spread.sh|bash scripts/spread.sh README.md README.md" "spread.sh|bash scripts/spread.sh --bogus"
    "warmup.sh|bash scripts/warmup.sh 99" "warmup.sh|bash scripts/warmup.sh 10 --runs 0"
    "timeline.sh|bash scripts/timeline.sh" "timeline.sh|bash scripts/timeline.sh 99"
    "timeline.sh|bash scripts/timeline.sh 05" "timeline.sh|bash scripts/timeline.sh 11 -m abc"
    "timeline.sh|bash scripts/timeline.sh 11 --stamps /nonexistent/x.txt"
    "timeline.sh|bash scripts/timeline.sh --from /nonexistent" "timeline.sh|bash scripts/timeline.sh --from README.md"
    "timeline.sh|bash scripts/timeline.sh 11 --from README.md" "timeline.sh|bash scripts/timeline.sh --bogus"
    "roofline.sh|bash scripts/roofline.sh --iters 0" "roofline.sh|bash scripts/roofline.sh --bogus"
    "roofline.sh|bash scripts/roofline.sh --from /nonexistent" "roofline.sh|bash scripts/roofline.sh --from README.md"
    "roofline.sh|bash scripts/roofline.sh --data"
    "plan.sh|bash scripts/plan.sh 99" "plan.sh|bash scripts/plan.sh 10" "plan.sh|bash scripts/plan.sh 14 --bogus"
    "plan.sh|bash scripts/plan.sh 14 --sms 0" "plan.sh|bash scripts/plan.sh 14 --clusters 70"
    "plan.sh|bash scripts/plan.sh 14 13"
    "Makefile|$MAKE --no-print-directory ARCH=sm_7" "Makefile|$MAKE --no-print-directory STEP=04"
    "Makefile|$MAKE --no-print-directory step99" "Makefile|$MAKE --no-print-directory lesson"
    "Makefile|$MAKE --no-print-directory sass STEP=" "Makefile|$MAKE --no-print-directory profile"
)
for call in "${bad_calls[@]}"; do
    who=${call%%|*} cmd=${call#*|}
    eval "$cmd" >"$log.out" 2>"$log"
    rc=$?
    if [ $rc -eq 2 ] && [ "$(wc -l <"$log")" -eq 1 ] && grep -q "^$who[:]" "$log" && [ ! -s "$log.out" ]; then
        pass "$cmd: one-line error, exit 2"
    else
        fail "$cmd: want one line from $who and exit 2 (exit code $rc)"
    fi
done
rm -f "$log.out"

for s in "${steps[@]:1}"; do
    if $MAKE --no-print-directory lesson STEP="${s%%_*}" >"$log" 2>&1 &&
        grep -q "^+++ $s/kernel.cu" "$log" && ! grep -q 'What changed' "$log"; then
        pass "make lesson STEP=${s%%_*}: the code diff from the step before, headers left out"
    else
        fail "make lesson STEP=${s%%_*}"
    fi
done

# The Hopper lessons stay the size a reader can follow: one idea per diff,
# at most 200 changed lines each.
for pair in 08:200 09:200 10:200 11:200 12:200 13:200 14:200 15:200; do
    s=${pair%%:*} most=${pair##*:}
    stat=$(bash scripts/lesson.sh "$s" --stat 2>"$log")
    size=$(sed -n 's/.* +\([0-9]*\)\/-\([0-9]*\)$/\1 \2/p' <<<"$stat")
    if [ -n "$size" ] && [ $(( ${size% *} + ${size#* } )) -le "$most" ]; then
        pass "scripts/lesson.sh $s --stat: ${stat##* } changed lines, at most $most"
    else
        fail "scripts/lesson.sh $s --stat: want at most $most changed lines, got '${stat##* }'"
    fi
done

# The chart of a run_all.sh CSV: one bar per row that ran, an SVG document.
printf '%s\n' 'step,technique,precision,ms,tflops,x_step01,x_prev,pct_cublas,check' \
    'step01_naive,naive,fp32,22.3,6.16,1.00,-,12.0,PASS' 'cuBLAS SGEMM,cuBLAS,fp32,2.68,51.30,8.33,-,100.0,-' \
    'step08_wgmma,wgmma,-,-,-,-,-,-,needs sm_90a' >"$log.csv"
if bash scripts/chart.sh "$log.csv" --title 'a < b' >"$log.out" 2>"$log" && head -n 1 "$log.out" | grep -q '^<svg ' &&
    tail -n 1 "$log.out" | grep -qx '</svg>' && [ "$(grep -c '<rect x=' "$log.out")" -eq 2 ] &&
    grep -q 'a &lt; b' "$log.out" && grep -q '>not run<' "$log.out"; then
    pass "scripts/chart.sh: an SVG bar per row that ran, the others marked, text escaped"
else
    fail "scripts/chart.sh: want an SVG with 2 bars and one row not run"
fi
rm -f "$log.csv" "$log.out"
# The same from a saved run_all.sh output, its rows printed with run_all.sh's
# own format: the columns chart.sh cuts must be the ones run_all.sh prints.
fmt=$(sed -n "s/^fmt='\(.*\)'$/\1/p" scripts/run_all.sh)
{
    echo "GEMM M=64 N=64 K=64 on Some GPU (CUDA 13.0), 2026-01-01; median of 20 runs each"
    echo
    printf "$fmt" step technique precision ms TFLOPS "x step01" "x prev" "" "% cuBLAS" check roof "% roof" "TFLOPS, to scale"
    printf "$fmt" step04_register_tile "register tile" fp32 2.959 46.45 7.54 4.77 = 90.4 PASS fma 71.4 "██▎"
    printf "$fmt" "cuBLAS SGEMM" cuBLAS fp32 2.676 51.35 8.34 - "" 100.0 - fma 79.0 "██▍"
    echo
    echo "% cuBLAS: ..."
} >"$log.txt"
if [ -n "$fmt" ] && bash scripts/chart.sh "$log.txt" >"$log.out" 2>"$log" && [ "$(grep -c '<rect x=' "$log.out")" -eq 2 ] &&
    grep -q '>step04_register_tile: 46.45 TFLOPS, 90.4%<' "$log.out" && grep -q '>cuBLAS SGEMM: 51.35 TFLOPS, 100.0%<' "$log.out" &&
    grep -q '>GEMM M=64 N=64 K=64 on Some GPU (CUDA 13.0), 2026-01-01<' "$log.out"; then
    pass "scripts/chart.sh: a saved run_all.sh output, its rows read from run_all.sh's columns, a launch mark beside them"
else
    fail "scripts/chart.sh: want 2 bars with run_all.sh's TFLOPS and % cuBLAS, titled with the GPU and date"
fi
# scripts/timeline.sh from saved stamps: a bar per phase, from a consumer's
# stamp to its next (none after "done", none after its last), its SM's row.
{
    echo "# step11_stream_k M=300 N=300 K=3000 on Some GPU (CUDA 13.0), 2026-01-01: sm block consumer kind ns"
    printf '%s\n' "0 0 0 0 0" "0 0 0 1 40000" "0 0 0 2 45000" "0 0 0 3 50000" "0 0 1 0 0" "0 0 1 3 52000" \
        "5 1 0 1 30000" "5 1 0 0 1000" "5 1 0 0 31000" "5 1 0 1 60000"
} >"$log.stamps"
if bash scripts/timeline.sh --from "$log.stamps" >"$log.svg" 2>"$log" && [ "$(grep -c '<title>SM ' "$log.svg")" -eq 7 ] &&
    grep -q '<title>SM 0, consumer 0: fixup, 5.0 us</title>' "$log.svg" &&
    grep -q '<title>SM 0, consumer 1: multiply, 52.0 us</title>' "$log.svg" &&
    grep -q '<title>SM 5, consumer 0: multiply, 29.0 us</title>' "$log.svg" &&
    grep -q '<title>SM 5, consumer 0: fixup, 1.0 us</title>' "$log.svg" &&
    grep -q '>step11_stream_k M=300 N=300 K=3000 on Some GPU (CUDA 13.0), 2026-01-01<' "$log.svg" &&
    head -n 1 "$log.svg" | grep -q '^<svg ' && tail -n 1 "$log.svg" | grep -qx '</svg>'; then
    pass "scripts/timeline.sh --from: saved stamps drawn, a bar per phase on its SM's row"
else
    fail "scripts/timeline.sh --from: want 7 bars from the saved stamps, each phase's length"
fi
rm -f "$log.stamps" "$log.svg"
# scripts/roofline.sh from saved data: a point per line, the roofs named,
# memory's roof a line up to the highest compute roof; steps within a few
# pixels of each other share a label.
{
    echo "title Roofline of Some GPU (CUDA 13.0), 2026-01-01"; echo "note a test"
    printf '%s\n' "ceiling fma 65" "ceiling mma 650" "ceiling wgmma 840" "ceiling hbm_read 4.5" "ceiling l2_read 8.4" \
        "point 01 step 16 6.2" "point 08 step 575 600" "point 09 step 575 601" "point cuBLAS cublas 680 620" \
        "point 14_M=1 few 0.99 3.3"
} >"$log.roof"
if bash scripts/roofline.sh --from "$log.roof" >"$log.svg" 2>"$log" && [ "$(grep -c '<circle ' "$log.svg")" -eq 5 ] &&
    grep -q '>wgmma (half) 840<' "$log.svg" && grep -q '>FP32 FMA 65<' "$log.svg" && grep -q '>HBM 4.50 TB/s<' "$log.svg" &&
    grep -q '>08-09<' "$log.svg" && grep -q '>14_M=1<' "$log.svg" && grep -q '>Roofline of Some GPU' "$log.svg" &&
    tail -n 1 "$log.svg" | grep -qx '</svg>'; then
    pass "scripts/roofline.sh --from: saved data drawn, five points, the roofs named, neighbours under one label"
else
    fail "scripts/roofline.sh --from: want 5 points, the roofs' labels and '08-09'"
fi
rm -f "$log.roof" "$log.svg"
# The stamps are in no default build: four lines in each kernel from step 10
# on, nothing without -DGEMM_TIMELINE, and no lesson shows them.
stamped=0 wrong=""
for s in "${all_steps[@]}"; do
    n=$(grep -c '^ *TIMELINE(' "$s/kernel.cu")
    if [ "$((10#${s:4:2}))" -ge 10 ]; then
        [ "$n" -eq 4 ] && stamped=$((stamped + 1)) || wrong+=" $s"
    else
        [ "$n" -eq 0 ] || wrong+=" $s"
    fi
done
if [ -z "$wrong" ] && [ $stamped -ge 5 ] && grep -q '^#define TIMELINE(kind) ((void)0)$' common/timeline.cuh &&
    ! bash scripts/lesson.sh 10 | grep -q 'TIMELINE'; then
    pass "the timeline's stamps: four lines in each kernel from step 10 on, nothing in the default build, no lesson"
else
    fail "the timeline's stamps: want four TIMELINE lines in each kernel from step 10 on only, none in a lesson:$wrong"
fi

# scripts/spread.sh: each step's % cuBLAS over saved run_all.sh outputs of one
# shape, and the largest minus the smallest; outputs of two shapes refused.
sed 's/ 90\.4  PASS/ 91.9  PASS/' "$log.txt" >"$log.2.txt"
if bash scripts/spread.sh "$log.txt" "$log.2.txt" >"$log.out" 2>"$log" &&
    grep -qE '^step04_register_tile +90\.4 +91\.9 +1\.5$' "$log.out" && ! grep -q '^cuBLAS SGEMM' "$log.out"; then
    pass "scripts/spread.sh: a step's % cuBLAS in each run_all.sh output, and its spread"
else
    fail "scripts/spread.sh: want step04's 90.4 and 91.9, spread 1.5"
fi
sed -i '1s/M=64 N=64 K=64/M=64 N=64 K=65/' "$log.2.txt"
bash scripts/spread.sh "$log.txt" "$log.2.txt" >"$log.out" 2>"$log"
rc=$?
if [ $rc -eq 2 ] && [ "$(wc -l <"$log")" -eq 1 ] && [ ! -s "$log.out" ]; then
    pass "scripts/spread.sh: outputs of two shapes refused, one line, exit 2"
else
    fail "scripts/spread.sh: outputs of two shapes must be refused with one line and exit 2 (exit code $rc)"
fi
rm -f "$log.2.txt"
# And from a shapes.sh CSV: a bar per step and shape, and one for cuBLAS,
# the median of the steps' cuBLAS runs (as shapes.sh's table shows it).
printf '%s\n' 'class,m,n,k,step,tflops,cublas_tflops,pct_cublas' 'deep,8,8,4096,step10_x,10.00,20.00,50.0' \
    'deep,8,8,4096,step11_y,30.00,30.00,100.0' 'skinny,16,64,64,step10_x,5.00,7.00,71.4' >"$log.csv"
if bash scripts/chart.sh "$log.csv" >"$log.out" 2>"$log" && [ "$(grep -c '<rect x=' "$log.out")" -eq 5 ] &&
    grep -q '>cuBLAS: 25.00 TFLOPS<' "$log.out" && grep -q '>cuBLAS: 7.00 TFLOPS<' "$log.out" &&
    grep -q '>step11_y: 30.00 TFLOPS, 100.0%<' "$log.out" && grep -q '>deep: 8 x 8 x 4096<' "$log.out"; then
    pass "scripts/chart.sh: a shapes.sh CSV, a bar per step and shape and cuBLAS's median"
else
    fail "scripts/chart.sh: want 5 bars from the shapes CSV, cuBLAS at the median of its runs"
fi
rm -f "$log.csv" "$log.txt" "$log.out"

# shapes.sh's decode class from stand-in binaries (no GPU): a step whose
# machine line gives 4 M TFLOPS and cuBLAS 2 M, and ceilings/run's line with
# HBM read at 5 TB/s. The weights' TB/s is TFLOPS / M: 4.00, 80% of HBM's
# read rate, and cuBLAS's 2.00, 40%, on every row.
mock=$(mktemp -d)
last_step=${all_steps[${#all_steps[@]} - 1]}
mkdir -p "$mock/scripts" "$mock/ceilings" "$mock/$last_step"
cp scripts/shapes.sh scripts/common.sh "$mock/scripts/"
: >"$mock/$last_step/main.c"
printf '%s\n' '#!/usr/bin/env bash' 'm=1; while [ $# -gt 0 ]; do [ "$1" = -m ] && m=$2; shift; done' \
    'echo "step=x m=$m tflops=$((4 * m)).00 cublas_tflops=$((2 * m)).00 pct_cublas=200.0 gpu=Stand-in"' \
    >"$mock/$last_step/run"
printf '%s\n' '#!/usr/bin/env bash' 'echo "ceilings: fma=1 hbm_read=5.00 hbm_write=4.00"' >"$mock/ceilings/run"
chmod +x "$mock/$last_step/run" "$mock/ceilings/run"
(cd "$mock" && MAKE=true bash scripts/shapes.sh --steps "${last_step%%_*}" --classes decode >"$log.out" 2>"$log")
rows=$(grep -c "^[0-9]* x [0-9]* x [0-9]* *$last_step  *[0-9.]*  *200.0   4.00     80  █" "$log.out")
theirs=$(grep -c '^ *cuBLAS  *[0-9.]*  *2.00     40  ░' "$log.out")
if [ "$rows" -eq 80 ] && [ "$theirs" -eq 80 ] && grep -q "^Decode's bars: .* HBM's 5.00 TB/s read" "$log.out"; then
    pass "scripts/shapes.sh: the decode class's 80 rows, the weights' TB/s (TFLOPS / M) and its share of HBM's read rate"
else
    fail "scripts/shapes.sh: want 80 decode rows at 4.00 TB/s, 80% of HBM, cuBLAS 2.00, 40% ($rows and $theirs found)"
fi
rm -rf "$mock" "$log.out"

# update_docs.sh, in a copy of the docs and the steps' sources: an output
# whose table it cannot read changes no file; a good one goes into the
# README's block with its chart beside it, and into each header.
copy=$(mktemp -d)
cp -r README.md scripts "$copy"/
for s in "${all_steps[@]}"; do mkdir "$copy/$s" && cp "$s/main.c" "$s/kernel.cu" "$copy/$s"/; done
mkdir "$copy/results"
{
    echo "GEMM M=4096 N=4096 K=4096 on Some GPU (CUDA 13.0), 2026-01-01; median of 20 runs each"
    echo
    printf "$fmt" step technique precision ms TFLOPS "x step01" "x prev" "" "% cuBLAS" check roof "% roof" "TFLOPS, to scale"
    for s in "${all_steps[@]}"; do printf "$fmt" "$s" technique fp16 1.000 123.45 1.00 1.00 = 98.7 PASS wgmma 14.7 "█"; done
    printf "$fmt" "cuBLAS GemmEx" cuBLAS fp16 1.000 125.00 1.00 - "" 100.0 - wgmma 14.9 "█"
} >"$copy/results/good.txt"
sed '3d' "$copy/results/good.txt" >"$copy/results/bad.txt" # the line of headings gone
before=$(cd "$copy" && find . -type f ! -path ./results/bad.txt -exec md5sum {} + | sort)
bash "$copy/scripts/update_docs.sh" results/bad.txt >"$log.out" 2>"$log"
rc=$?
if [ $rc -eq 2 ] && [ "$before" = "$(cd "$copy" && find . -type f ! -path ./results/bad.txt -exec md5sum {} + | sort)" ]; then
    pass "scripts/update_docs.sh: a table it cannot read changes no file, exit 2"
else
    fail "scripts/update_docs.sh: a table it cannot read must change no file and exit 2 (exit code $rc)"
fi
# The lines of the copy's README block $1 ("sass step07_pipeline"), its marks included.
readme_block() {
    awk -v first="<!-- $1 -->" -v last="<!-- /${1%% *} -->" \
        '$0 == first { on = 1 } on { print } $0 == last { on = 0 }' "$copy/README.md"
}
last=${all_steps[${#all_steps[@]} - 1]}
if bash "$copy/scripts/update_docs.sh" results/good.txt >"$log.out" 2>"$log" && [ -s "$copy/results/good.svg" ] &&
    readme_block "run_all 4096" | grep -q 'on Some GPU' &&
    readme_block "run_all 4096" | grep -qF '](results/good.svg)' &&
    grep -q '^ \* Measured: 123.45 TFLOPS, 98.7% of cuBLAS GemmEx' "$copy/$last/kernel.cu"; then
    pass "scripts/update_docs.sh: the table and its chart in the README, the Measured line in the headers"
else
    fail "scripts/update_docs.sh: want the table, its chart and the headers' Measured lines written"
fi
# A Try-it output (scripts/try.sh's lines) goes into its step's block as one
# line; one without both numbers changes nothing.
{
    echo "Try-it of $last on Some GPU (CUDA 13.0), 2026-01-02; median of 20 runs each"
    echo "$last: something; ./$last/run -s 4096"
    printf '  tried:  %8s TFLOPS, %6s%% of cuBLAS (check %s)\n' 12.50 10.0 PASS
    printf '  as is:  %8s TFLOPS, %6s%% of cuBLAS (check %s)\n' 125.00 100.0 PASS
} >"$copy/results/try.txt"
grep -v '^  as is:' "$copy/results/try.txt" >"$copy/results/try_bad.txt"
# update_docs.sh given good.txt and results/FILE, which it must refuse: the README unchanged, exit 2: refused FILE WHAT
refused() {
    local before rc
    before=$(md5sum "$copy/README.md")
    bash "$copy/scripts/update_docs.sh" results/good.txt "results/$1" >"$log.out" 2>"$log"
    rc=$?
    if [ $rc -eq 2 ] && [ "$before" = "$(md5sum "$copy/README.md")" ]; then
        pass "scripts/update_docs.sh: $2 changes no file, exit 2"
    else
        fail "scripts/update_docs.sh: $2 must change no file and exit 2 (exit code $rc)"
    fi
}
refused try_bad.txt "a Try-it output without its numbers"
want="Measured (\`scripts/try.sh ${last:4:2}\`, Some GPU, CUDA 13.0, 2026-01-02): tried 12.50 TFLOPS (10.0% of cuBLAS), as is 125.00 (100.0%)."
if bash "$copy/scripts/update_docs.sh" results/good.txt results/try.txt >"$log.out" 2>"$log" &&
    readme_block "try $last" | grep -qxF "$want"; then
    pass "scripts/update_docs.sh: a Try-it output as its step's Measured line"
else
    fail "scripts/update_docs.sh: want '$want' in the README's Try-it block of $last"
fi
# An idea's output (scripts/try.sh 07 frags) replaces its line in the
# header, wrapped, and nothing after it; a run_all.sh output of another
# shape, each header's "Measured at" paragraph for that shape.
if [ -d "$copy/step07_pipeline" ] && [ -d "$copy/step09_tma" ]; then
    sed -e '1s/^Try-it of [^ ]*/Try-it of step07_pipeline frags/' "$copy/results/try.txt" >"$copy/results/idea.txt"
    sed -e '1s/K=4096/K=4100/' "$copy/results/good.txt" >"$copy/results/k4100.txt"
    if bash "$copy/scripts/update_docs.sh" results/good.txt results/idea.txt results/k4100.txt >"$log.out" 2>"$log" &&
        grep -A1 '^ \*   Measured (scripts/try.sh 07 frags, Some GPU, CUDA 13.0, 2026-01-02):$' "$copy/step07_pipeline/kernel.cu" |
            grep -qx ' \*   tried 12.50 TFLOPS (10.0% of cuBLAS), as is 125.00 (100.0%).' &&
        grep -q '^ \* Measured at 4096 x 4096 x 4100: 123.45 TFLOPS, 98.7% of cuBLAS GemmEx' "$copy/step09_tma/kernel.cu" &&
        [ "$(grep -c 'Measured (scripts/try.sh 07 frags' "$copy/step07_pipeline/kernel.cu")" -eq 1 ] &&
        grep -q '^ \*   Measured (scripts/try.sh 07 tile,' "$copy/step07_pipeline/kernel.cu"; then
        pass "scripts/update_docs.sh: an idea's line and a Measured-at paragraph in the headers"
    else
        fail "scripts/update_docs.sh: want step 07's frags line and step 09's Measured-at paragraph written"
    fi
fi
# A profile (scripts/profile.sh's output) goes into its step's blocks as printed
# (a README that shows one has the block; the copy gets one to fill).
grep -qxF '<!-- profile step07_pipeline -->' "$copy/README.md" ||
    printf '%s\n' '<!-- profile step07_pipeline -->' '<!-- /profile -->' >>"$copy/README.md"
printf '%s\n' "step07_pipeline at 8192^3 on Some GPU (CUDA 13.0), 2026-01-03: ncu --clock-control none, the first launch of gemm_kernel" \
    "" "  tensor pipe busy       12.3 %         of the cycles" >"$copy/results/profile.txt"
if bash "$copy/scripts/update_docs.sh" results/good.txt results/profile.txt >"$log.out" 2>"$log" &&
    readme_block "profile step07_pipeline" | grep -q '^  tensor pipe busy       12.3 %' &&
    readme_block "profile step07_pipeline" | grep -q '2026-01-03: ncu'; then
    pass "scripts/update_docs.sh: a profile.sh output in its step's profile block"
else
    fail "scripts/update_docs.sh: want the profile of step07_pipeline in the README's block"
fi
# SASS counts (scripts/sass.sh's output) go into their step's block as printed.
printf '%s\n' "step07_pipeline, sm_90: instructions per kernel (cuobjdump --dump-sass)" \
    "gemm_kernel<true, 4>            99       0         0    64    24     24     0       0     0          0     0     0" \
    >"$copy/results/sass.txt"
if bash "$copy/scripts/update_docs.sh" results/good.txt results/sass.txt >"$log.out" 2>"$log" &&
    readme_block "sass step07_pipeline" | grep -q '^gemm_kernel<true, 4>            99 ' &&
    ! readme_block "sass step07_pipeline" | grep -q '^gemm_kernel<false, 4>'; then
    pass "scripts/update_docs.sh: a sass.sh output in its step's SASS block"
else
    fail "scripts/update_docs.sh: want the SASS counts of step07_pipeline in the README's block"
fi
# A warm-up comparison (scripts/warmup.sh's output) goes into its step's block as printed.
printf '%s\n' "Warm-up of step10_warp_specialized at 8192^3 on Some GPU (CUDA 13.0), 2026-01-04: 1 processes of each, alternating, unchecked" \
    "" "warmup 0:       ms=1.2345 tflops=890.12 cublas_tflops=880.00 pct_cublas=101.1" >"$copy/results/warmup.txt"
if bash "$copy/scripts/update_docs.sh" results/good.txt results/warmup.txt >"$log.out" 2>"$log" &&
    readme_block "warmup step10_warp_specialized" | grep -q '^warmup 0:       ms=1.2345 ' &&
    readme_block "warmup step10_warp_specialized" | grep -q '2026-01-04: 1 processes'; then
    pass "scripts/update_docs.sh: a warmup.sh output in its step's warm-up block"
else
    fail "scripts/update_docs.sh: want the warm-up runs of step10_warp_specialized in the README's block"
fi
# The roofline's data (scripts/roofline.sh --data) as a table: each point's
# bound, the lower of its instruction's roof and memory's at its intensity,
# neighbouring steps under one bound on one line; data with no memory roof
# changes no file.
grep -qxF '<!-- roofline -->' "$copy/README.md" || printf '%s\n' '<!-- roofline -->' '<!-- /roofline -->' >>"$copy/README.md"
printf '%s\n' "title Roofline of Some GPU (CUDA 13.0), 2026-01-05" "ceiling fma 50" "ceiling mma 500" "ceiling wgmma 800" \
    "ceiling wgmma_fp8 1600" "ceiling hbm_read 4" "ceiling l2_read 8" "point 01 step 16 8" "point 02 step 17 10" \
    "point ${last:4:2}_M=1 few 2 4.00" >"$copy/results/roofline.txt"
grep -v '^ceiling hbm_read' "$copy/results/roofline.txt" >"$copy/results/roofline_bad.txt"
refused roofline_bad.txt "roofline data without a memory roof"
if bash "$copy/scripts/update_docs.sh" results/good.txt results/roofline.txt >"$log.out" 2>"$log" &&
    readme_block roofline | grep -qx 'steps 01-02  4096^3              16.0-17.0            8-10   FP32 FMA 50        16.0-20.0' &&
    readme_block roofline | grep -qx "step ${last:4:2}      1 x 8192 x 8192          2.00            4.00   HBM 8.00           50.0"; then
    pass "scripts/update_docs.sh: the roofline's points, their bounds and percents, in the README's block"
else
    fail "scripts/update_docs.sh: want steps 01-02 under FMA's roof at 16-20% and step ${last:4:2} at M = 1 at 50% of HBM's"
fi
rm -rf "$copy" "$log.out"

# Each step's "Try it" edits (scripts/try.sh), and those of the ideas the
# headers measure, still apply: a step that moved on breaks its experiment
# here.
ideas=$(sed -n 's/^ *"\(step[0-9]*_[a-z0-9_]* [a-z]*\)").*/\1/p' scripts/try.sh)
while read -r s idea; do
    if bash scripts/try.sh "$s" $idea --list >"$log" 2>&1 && grep -q "^+++ .*, tried$" "$log"; then
        pass "scripts/try.sh ${s%%_*}${idea:+ $idea} --list: the experiment's edits apply"
    else
        fail "scripts/try.sh ${s%%_*}${idea:+ $idea} --list: the experiment's edits no longer apply"
    fi
done < <(printf '%s\n' "${steps[@]}" $'\n'"$ideas" | grep .)

# make sass needs cuobjdump, which full toolkits have and some do not, and
# machine code to read, which a PTX-only build (ARCH=compute_NN) has not.
if ! command -v cuobjdump >/dev/null || ! command -v nvdisasm >/dev/null; then
    $MAKE --no-print-directory sass STEP=01 >"$log.out" 2>"$log"
    rc=$?
    if [ $rc -ne 0 ] && grep -q '^sass.sh: needs cuobjdump.*pip install nvidia-cuda-cuobjdump' "$log"; then
        pass "make sass without cuobjdump: one line naming the fix, exit 2"
    else
        fail "make sass without cuobjdump: want one line naming the fix (exit code $rc)"
    fi
    rm -f "$log.out"
elif [[ ${ARCH:-} == compute_* ]]; then
    $MAKE --no-print-directory sass STEP="${built[0]%%_*}" >"$log.out" 2>"$log"
    if grep -q 'holds no machine code (a PTX-only build' "$log"; then
        pass "make sass on a PTX-only build (ARCH=$ARCH): one line saying so"
    else
        fail "make sass on a PTX-only build (ARCH=$ARCH): want one line saying so"
    fi
    rm -f "$log.out"
else
    for s in "${built[@]}"; do
        if $MAKE --no-print-directory sass STEP="${s%%_*}" >"$log" 2>&1 &&
            grep -q '^gemm_kernel' "$log" && grep -q 'LDL *STL$' "$log"; then
            pass "make sass STEP=${s%%_*}: instruction counts"
        else
            fail "make sass STEP=${s%%_*}"
        fi
    done
fi

# ---- GPU half ----

# Shapes (M N K): single elements, sizes just under and over tile multiples
# (block tiles of 32 to 256 rows or columns), non-square, K giving an odd
# number of K-tiles for BK = 8, 16 and 32 (24, 48, 96), fewer K-tiles than a
# pipeline has stages, K and N that are not multiples of 4 or 8 (the
# element-wise paths), multiples of 8 that end a tile early (the 16-byte
# paths with a partial last tile), sizes large enough that the check
# samples the CPU reference and compares all of C with cuBLAS, and, for the
# persistent steps, more tiles of 128 x 256 than the GPU has SMs (132 on an
# H100 or H200), read by TMA directly (2056 x 2048) or repacked (N = 4100).
# Step 11 (on an H100 or H200, 132 SMs) splits tiles along K between blocks:
# with fewer tiles than SMs, every tile in the same number of parts where
# that leaves few SMs idle (128 x 4096 x 4096: 32 tiles of 128 x 128 in 4
# parts; 300 x 1000 x 5000: 24 in 5; 20 x 300 x 30000, whose A has fewer
# rows than a tile: 3 in 44), else, with at most half as many tiles as SMs,
# in shares over all SMs (1024 x 768 x 4100: 48 tiles of 128 x 128); with
# more than SMs, whole rounds before the split ones (2176 x 4096 x 2048: 272
# tiles; 3000^3: 288), the last of them too where the tiles after it leave
# shares of 16 k-tiles or more (600 x 10000 x 3000: 200 tiles, 68 of them
# split after one round; 4100 x 2500 x 4000: 330, 66 after two; 512 x 12288
# x 2304: 192, 60 after one, in shares of 16-17 k-tiles, which step 12 runs
# in clusters, 30 of 96 tiles of 256 x 256 split after a round of 66). The
# others it does not split, as its rule says (K shorter than a k-tile among
# them; 1152 x 2048 x 4096: 72 tiles of 128 x 256, one round), but for wide
# tiles over half a round deep enough for shares over all SMs to pay (1152 x
# 2048 x 5120, also in steps 12-13), and for the 68 tiles of 128 x 128 that
# 512 x 2176 x 4608's 36 wide ones narrow to (steps 11-13); 1000^3 takes 128
# tiles of 128 x 64 whole, in one round. Where C is at most half as wide as
# a tile, the tile narrows, split or not: 4096 x 64 x 4096 (32 tiles of 128
# x 64 in 4 parts), 20000 x 100 x 2000 (157 of 128 x 128 in shares, over 157
# rows of tiles that steps 12 and 13 do not pair, C being narrow). Step 12
# runs clusters of two blocks where C, more than 128 wide, has a round of
# 128 x 256 tiles in an even number of rows of them: 3000^3 (split tiles),
# 2200 x 4100 x 3000 (split, B repacked, a last row of tiles partly below
# C); and in an odd number where A's rows miss 32-byte sectors: 1152 x 3848
# x 520 and 1152 x 3848 x 2056 (9 rows of tiles, the last cluster's second
# block below C; whole tiles, and split ones, which step 13 makes 192 wide);
# and where C has half a round of 128 x 256 tiles that the clusters split:
# 768 x 3072 x 4096 and x 2400 (36 tiles of 256 x 256 in shares over 66
# clusters; step 11: 72 whole tiles in one round). Step 13 takes tiles 192
# wide where those fill the rounds and 256-wide ones would be split: in
# clusters at 3000^3 and 2200 x 4100 x 3000, in clusters of one at 2176 x
# 4096 x 2048 and 1152 x 2048 x 4096, and at 768 x 3072 x 2400 in clusters,
# 48 whole tiles of 256 x 192 for 66 clusters; and where neither width would
# be split but the rounds of the narrower tiles take less time: in clusters
# at 2056 x 2048 x 136 and x 520 (72 tiles of 256 x 256 or 99 of 256 x 192,
# two rounds either way), 1100 x 4100 x 520 and 1152 x 3848 x 520, in
# clusters of one at 1536 x 2000 x 128 (96 tiles of 128 x 256 or 132 of 128
# x 192, one round either way); and at 4000 x 176 x 4200, where step 12
# halves its few wide tiles, 32 of 128 x 192 in four parts each for 64 of
# 128 x 128 in two (C 176 wide), where 32 tiles of 66 k-tiles are the least
# the rule takes (16 k-tiles for each of 132 SMs). 1200 x 7690 x 2000 and
# 768 x 3072 x 4096 keep the 256-wide tiles and split them in clusters (at
# 1200 x 7690 x 2000, B repacked and a last row of tiles partly below C).
# 4000 x 200 x 72 and x 8008 have rows of A and B off sectors and 32 rows of
# tiles: step 11 copies B onto whole lines (and splits the tiles 8008 deep),
# steps 12 and 13 read it in place. 256 x 256 x 32768, rows on sectors, has
# the fewest tiles (two of 128 x 256): steps 12 and 13 split its two tiles
# of 256 x 128 over 66 clusters, in 33 parts each, a tree of three levels.
# 1544 x 824 x 872 has rows of A and B off sectors and under half a round of
# 128 x 256 tiles, too few k-tiles to split: steps 12 and 13 take 49 whole
# tiles of 256 x 128 in one round of clusters, over 13 rows of tiles (the
# last cluster's second block below C); step 11, 91 of 128 x 128 on blocks.
# The fixup leaves out a warp whose 16 rows of a split tile are all below C:
# 20 x 300 x 30000 and 104 x 664 x 15368 (6 tiles of 128 x 128 in 22 parts)
# end C inside a warp of the first warpgroup and of the second.
shapes=(
    "1 1 1" "1 4099 3" "4097 1 65" "127 129 1031" "1000 1000 1000" "2 3 5"
    "33 65 17" "64 64 64" "128 128 128" "129 127 129" "255 257 511"
    "256 256 24" "256 256 48" "256 256 96" "96 160 200" "513 1025 257"
    "1024 768 4100" "2048 2048 2048"
    "17 24 8" "136 264 40" "300 520 72" "130 248 36" "250 260 64" "200 1030 1025"
    "2056 2048 136" "1100 4100 520" "2056 2048 520" "2176 4096 2048" "3000 3000 3000" "128 4096 4096"
    "1152 2048 4096" "20 300 30000" "300 1000 5000" "2200 4100 3000" "1200 7690 2000"
    "1152 3848 520" "1152 3848 2056" "4096 64 4096" "20000 100 2000" "768 3072 4096" "768 3072 2400"
    "1536 2000 128" "1152 2048 5120" "4000 200 72" "4000 200 8008" "6000 300 3000"
    "600 10000 3000" "4100 2500 4000" "512 12288 2304" "4000 176 4200" "512 2176 4608" "104 664 15368"
    "256 256 32768" "1544 824 872"
)
# alpha/beta pairs beyond the default (1, 0), on a few shapes.
scalings=("-1.5 0.5" "0.25 -2" "0 1.5" "2 0")
scaled_shapes=("127 129 1031" "33 65 17" "513 1025 257" "1024 768 4100" "2056 2048 136" "1100 4100 520"
               "2056 2048 520" "2176 4096 2048" "128 4096 4096" "1152 2048 5120" "20 300 30000"
               "300 1000 5000" "2200 4100 3000" "1200 7690 2000" "1152 3848 2056" "20000 100 2000"
               "768 3072 4096" "4000 200 8008" "6000 300 3000" "600 10000 3000" "4100 2500 4000" "4000 176 4200"
               "104 664 15368" "256 256 32768" "1544 824 872")
# Misaligned pointers (M N K offset): A, B and C start `offset` elements past
# an aligned address (--offset), so no row is 16-byte aligned: the
# element-wise paths, or the repacked TMA path, on shapes whose sizes alone
# would take the 16-byte paths; beta = 0.5 so that C is read too. Offset 2
# with N a multiple of 4 leaves C's rows 8 bytes past a 16-byte boundary:
# steps 10-13 must not store float4s there.
offset_runs=("136 264 72 1" "136 264 72 2" "256 256 96 3" "2056 2048 136 1" "513 1025 257 2")
# compute-sanitizer runs (tool M N K): both tools on the element-wise paths
# (N not a multiple of 8), on the 16-byte paths (136 264 72), and on the
# one tile of 8 x 8 x 60000, which step 11 cuts into 132 parts. memcheck
# looks at the step's kernel only; racecheck looks at every kernel of the
# run (cuBLAS's too), because CUDA 13.0's racecheck with --kernel-name, or
# --kernel-name-exclude, stops with an internal error ("failed to handle a
# hardware exception") on the 16-byte paths of steps 05-07 and 11.
# The fifth field, where there is one, is --offset: the misaligned paths;
# the sixth, kernels racecheck leaves out (- for none): on 8 x 8 x 60000 it
# reports a race inside cuBLAS's own split-K kernel (nvjet_..._splitK); the
# seventh, the first step the run is for. Racecheck on 8 x 8 x 60000 is
# for the steps that split tiles, step 11 on: on step 02, whose 1024 threads
# read shared memory about 120 million times there, it had not ended after five
# and a half minutes on an H200 (RUN_LIMIT is five), and the shared tiles of
# steps 02-10 are raced over on the other shapes. 768 x 6144 x 1300 is a
# small product that step 12 runs in clusters, its 72 tiles of 256 x 256
# all split over 66 clusters (step 13: 96 whole tiles of 256 x 192); with
# K = 2000 step 13 splits its 256 x 256 tiles too, and runs there step 12's
# code for them, which racecheck sees at K = 1300. cuBLAS's kernel raises
# no hazard at K = 1300; at K = 2000 and on 256 x 17920 x 1200 it does
# (nvjet_..._coopB), and leaving it out stops racecheck with the internal
# error, so K = 2000 has memcheck only. 1152 x 3848 x 520 has a block
# below C in each column of clusters (step 12 on): memcheck only, as at K =
# 2000, and so has 768 x 3072 x 4096, whose 36 tiles the 66 clusters split
# (step 12 on). 256 x 200 x 30008, rows of B off sectors, is two tiles of 256 x
# 128 that 66 clusters split (step 12 on): memcheck only, as cuBLAS's
# split-K kernel raises hazards there, and leaving it out stops racecheck
# with the internal error (results/h100-2026-11-26/racecheck_few.txt at 14553dd: none
# in gemm_kernel). 512 x 12288 x 2304 is 192 tiles, of which step 11
# takes a round whole and splits the other 60 in shares of 16-17 k-tiles,
# each tile in three parts: memcheck, for the fixup's slots and flags,
# which are in global memory, where racecheck does not look.
sanitizer_runs=(
    "memcheck 67 45 33" "racecheck 67 45 33" "memcheck 128 132 64" "racecheck 128 132 64"
    "memcheck 136 264 72" "racecheck 136 264 72" "memcheck 136 264 72 1" "racecheck 136 264 72 1"
    "memcheck 8 8 60000" "racecheck 8 8 60000 0 nvjet 11"
    "memcheck 768 6144 1300 0 - 12" "racecheck 768 6144 1300 0 - 12"
    "memcheck 768 6144 2000 0 - 13" "memcheck 1152 3848 520 0 - 12" "memcheck 768 3072 4096 0 - 12"
    "memcheck 256 200 30008 0 - 12" "memcheck 512 12288 2304 0 - 11"
)
# The sanitizer runs for step $1, one per line.
sanitizer_runs_for() {
    local run first
    for run in "${sanitizer_runs[@]}"; do
        read -r _ _ _ _ _ _ first <<<"$run"
        if [ "$((10#${1:4:2}))" -ge "$((10#${first:-1}))" ]; then echo "$run"; fi
    done
}
# The GPU checks of step $1: its runs, and its cases of common/test_launch.cu.
cases_for() {
    echo $(( ${#shapes[@]} + ${#scalings[@]} * ${#scaled_shapes[@]} + ${#offset_runs[@]} +
             $(sanitizer_runs_for "$1" | wc -l) + $(library_cases_for "$1" | wc -l) + $(library_sanitized_for "$1") +
             1 + ($((10#${1:4:2})) >= 10) )) # --launches; from step 10, scripts/timeline.sh
}
# common/wrong_kernel.cu's harnesses: step 01's (float), step 05's (half) and the FP8 step's, if there is one
wrong_mains=(step01_naive step05_wmma)
for s in "${all_steps[@]}"; do [ "$(bash scripts/arch.sh input "$s")" = e4m3 ] && { wrong_mains+=("$s"); break; }; done
wrong_cases=$((10 + 6 * (${#wrong_mains[@]} - 2))) # 5 bugs with a float and a half harness; 6 with FP8's
machine_cases=6 # the ceilings measured, their three byte counts, --cold against warm, --host
# gemm_launch as a library (common/test_launch.cu), a process per case:
# every step, on streams of the program's own and in a CUDA graph; the
# default pool left alone and out of GPU memory for the steps that take
# memory for a call (call_memory: copies for TMA, and from step 11 a
# workspace); and from step 10, whose blocks walk the tiles in a grid
# sized to the SMs (and from 11, pass sums to each other), another kernel
# holding all but a few SMs: each shape must end within BUSY_LIMIT
# seconds. 256 x 256 x 32768 and 1024 x 1024 x 16384 split their tiles in
# many parts (1024^2 in clusters from step 12), 128 x 4096 x 4100 copies A
# and B for TMA and splits its tiles too.
BUSY_LIMIT=20 BUSY_FROM=10 BUSY_SHAPES="256 256 32768 1024 1024 16384 128 4096 4100"
library_cases_for() {
    echo threads; echo streams; echo graph; echo reset; echo zero; echo limits; echo "large C"; echo "large A"; echo "large B"; echo alpha0; echo earlier
    # memory of the call's own: the default pool left alone; too little of it, at a process's first call, for a
    # copy of A and of B (34 MB each) and for the workspace of split tiles (17-34 MB on 132 SMs at 256 x 256 x 131072)
    if grep -q 'call_memory' "$1/kernel.cu"; then
        echo pool; echo "oom 4096 4100 4100"
        grep -q zero_kernel "$1/kernel.cu" && echo "oom 256 256 131072"
    fi
    [ "$((10#${1:4:2}))" -ge "$BUSY_FROM" ] && echo "busy $BUSY_LIMIT 120 $BUSY_SHAPES"
    [ "$(bash scripts/arch.sh input "$1")" = e4m3 ] && echo scales # FP8's scales off 16-byte boundaries
    return 0
}
# Under compute-sanitizer (serial, slow), from step 11: a split shape beside
# the other kernel, which holds its SMs 2 seconds at most.
library_sanitizer_runs="memcheck racecheck"
library_sanitizer_from=11
library_sanitizer_case="busy 280 2 8 8 60000 768 6144 1300"
# How many of those runs step $1 has.
library_sanitized_for() {
    if [ "$((10#${1:4:2}))" -ge "$library_sanitizer_from" ]; then echo $library_sanitizer_runs | wc -w; else echo 0; fi
}
# The README says how many shapes, alpha/beta pairs and --offset runs the
# GPU half has: the counts of the arrays above, which it must keep up with.
readme_text=$(tr -s '\n ' '  ' <README.md)
if [[ $readme_text == *"every step on ${#shapes[@]} shapes "* &&
      $readme_text == *"${#scalings[@]} more alpha/beta pairs on ${#scaled_shapes[@]} of them"* &&
      $readme_text == *"and ${#offset_runs[@]} runs with \`--offset\`"* ]]; then
    pass "README: the GPU half's ${#shapes[@]} shapes, ${#scalings[@]} alpha/beta pairs on ${#scaled_shapes[@]} and ${#offset_runs[@]} --offset runs"
else
    fail "README: say the GPU half runs every step on ${#shapes[@]} shapes, ${#scalings[@]} more alpha/beta pairs on ${#scaled_shapes[@]} of them and ${#offset_runs[@]} runs with --offset"
fi
COMMON_OBJS="common/half.o common/fp8.o common/options.o common/step.o common/check.o common/harness.o common/flush.o"

# The steps' reason to skip their GPU checks: left out of the build, or (set
# below) a GPU older than the step needs. Each is said once, with its count.
skip_step() {
    local n
    n=$(cases_for "$1")
    skipped=$((skipped + n))
    echo "SKIP  $1: $2 ($n GPU checks skipped)"
}
for s in "${steps[@]}"; do
    [ -n "${left_out[$s]:-}" ] && skip_step "$s" "left out of this build: ${left_out[$s]}"
done

# A run that has not ended after this many seconds has hung (a block of
# step 11 waiting for a partial sum that never comes): it is stopped, exit
# code 124, and fails.
RUN_LIMIT=300

# One checked run; prints nothing, returns its exit code, output in $log.
run_checked() {
    local s=$1 m=$2 n=$3 k=$4 alpha=$5 beta=$6 offset=${7:-0}
    timeout "$RUN_LIMIT" ./"$s"/run -m "$m" -n "$n" -k "$k" --alpha "$alpha" --beta "$beta" --offset "$offset" \
        --warmup 0 --iters 1 >"$log" 2>&1
}
# A checked run as a job (below): passes if it exits 0 with check=PASS.
checked_job() {
    run_checked "$@"
    local rc=$?
    [ $rc -eq 0 ] && tail -n 1 "$log" | grep -q ' check=PASS ' && return 0
    echo "exit code $rc" >>"$log"
    return 1
}
checked() {
    local s=$1 m=$2 n=$3 k=$4 alpha=$5 beta=$6 offset=${7:-0}
    queue "$s M=$m N=$n K=$k alpha=$alpha beta=$beta${7:+ offset=$offset}" checked_job "$@"
}
# COMMAND... under compute-sanitizer's TOOL, output in $log: true if it
# exits 0 and the tool finds nothing (memcheck ends "ERROR SUMMARY: 0
# errors", racecheck "RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0
# warnings)").
sanitizer_clean() {
    local tool=$1
    shift
    timeout "$RUN_LIMIT" compute-sanitizer --tool "$tool" --error-exitcode 3 "$@" >"$log" 2>&1
    local rc=$?
    [ $rc -eq 0 ] && grep -qE 'ERROR SUMMARY: 0 errors|SUMMARY: 0 hazards displayed \(0 errors, 0 warnings\)' "$log" &&
        return 0
    echo "exit code $rc" >>"$log"
    return 1
}
# One run of a step under a tool (a job).
sanitized_job() {
    local s=$1 tool=$2 m=$3 n=$4 k=$5 offset=$6 exclude=$7 only_step=()
    if [ "$tool" = memcheck ]; then only_step=(--kernel-name kns=gemm_kernel); fi
    if [ -n "$exclude" ]; then only_step=(--kernel-name-exclude "kns=$exclude"); fi
    sanitizer_clean "$tool" ${only_step[@]+"${only_step[@]}"} \
        ./"$s"/run -m "$m" -n "$n" -k "$k" --offset "$offset" --beta 0.5 --warmup 0 --iters 1
}

# common/test_launch under a tool (a job): it must pass, and the tool find nothing.
library_sanitized_job() {
    local tool=$1
    shift
    sanitizer_clean "$tool" "$@" && ! grep -q '^FAIL' "$log"
}

# The GPU checks run as jobs, JOBS at a time. Most of a checked run's time
# is the CPU's (starting CUDA and cuBLAS, the reference sums); the GPU runs
# one process's kernels at a time whatever the number of processes, so each
# result is what it would be alone. Each job's output goes to its own $log;
# it passes if it returns 0. Results are reported in the order the jobs
# were queued, as they come in.
jobs_dir=$(mktemp -d)
trap 'rm -rf "$log" "$jobs_dir"' EXIT
queued=() reported=0
queue() {
    local name=$1
    shift
    job_slot "$JOBS"
    local i=${#queued[@]}
    queued+=("$name")
    (
        log=$jobs_dir/$i.log
        : >"$log"
        "$@"
        echo $? >"$jobs_dir/$i.rc.new" && mv "$jobs_dir/$i.rc.new" "$jobs_dir/$i.rc"
    ) &
    report_done
}
# Reports the jobs that have ended, in queue order, up to the first still running.
report_done() {
    while [ $reported -lt ${#queued[@]} ] && [ -e "$jobs_dir/$reported.rc" ]; do
        cp "$jobs_dir/$reported.log" "$log"
        if [ "$(cat "$jobs_dir/$reported.rc")" -eq 0 ]; then pass "${queued[$reported]}"; else fail "${queued[$reported]}"; fi
        reported=$((reported + 1))
    done
}
report_all() {
    wait
    report_done
}

# Can the CUDA runtime start at all? The first built step answers with a
# tiny run; if it cannot (no GPU, no driver, a driver too old for this
# runtime), its one-line reason is the reason the GPU half is skipped.
gpu_reason=""
if [ ${#built[@]} -eq 0 ]; then
    gpu_reason="no step was built"
else
    run_checked "${built[0]}" 8 8 8 1 0
    rc=$?
    if [ $rc -eq 2 ] && ! grep -q ': needs sm_' "$log"; then
        gpu_reason=$(sed -n "1s/^${built[0]}: //p" "$log")
    fi
fi

echo "== GPU: every step on ${#shapes[@]} shapes and ${#scalings[@]} alpha/beta pairs"
if [ -n "$gpu_reason" ]; then
    # Every binary must say so the same way: one line on stderr, exit 2.
    for s in "${built[@]}"; do
        ./"$s"/run -s 8 >"$log.out" 2>"$log"
        rc=$?
        if [ $rc -eq 2 ] && [ "$(wc -l <"$log")" -eq 1 ] && [ ! -s "$log.out" ] &&
            grep -qF "$s: $gpu_reason" "$log"; then
            pass "$s without a usable GPU: one-line error, exit 2"
        else
            fail "$s without a usable GPU: want one line and exit 2 (exit code $rc)"
        fi
    done
    if [ -x ceilings/run ]; then
        ./ceilings/run >"$log.out" 2>"$log"
        rc=$?
        if [ $rc -eq 2 ] && [ "$(wc -l <"$log")" -eq 1 ] && [ ! -s "$log.out" ] && grep -q '^ceilings: ' "$log"; then
            pass "ceilings/run without a usable GPU: one-line error, exit 2"
        else
            fail "ceilings/run without a usable GPU: want one line and exit 2 (exit code $rc)"
        fi
    fi
    $MAKE --no-print-directory profile STEP=01 >"$log.out" 2>"$log"
    rc=$?
    if [ $rc -ne 0 ] && grep -q '^profile.sh: needs a GPU' "$log" && [ ! -s "$log.out" ]; then
        pass "make profile without a usable GPU: one line, exit 2"
    else
        fail "make profile without a usable GPU: want one line and exit 2 (exit code $rc)"
    fi
    rm -f "$log.out"
    n=$((wrong_cases + machine_cases))
    for s in "${built[@]}"; do n=$((n + $(cases_for "$s"))); done
    skipped=$((skipped + n))
    echo "SKIP  the GPU half ($n checks): $gpu_reason"
else
    runnable=()
    for s in "${built[@]}"; do
        run_checked "$s" 8 8 8 1 0
        if [ $? -eq 2 ] && grep -q ': needs sm_' "$log"; then
            skip_step "$s" "$(sed -n "1s/^$s: //p" "$log")"
        else
            runnable+=("$s")
        fi
    done
    for s in ${runnable[@]+"${runnable[@]}"}; do
        for shape in "${shapes[@]}"; do
            # shellcheck disable=SC2086 # shape holds three words
            checked "$s" $shape 1 0
        done
        for shape in "${scaled_shapes[@]}"; do
            for ab in "${scalings[@]}"; do
                # shellcheck disable=SC2086
                checked "$s" $shape $ab
            done
        done
        for run in "${offset_runs[@]}"; do
            read -r m n k offset <<<"$run"
            checked "$s" "$m" "$n" "$k" 1 0.5 "$offset"
        done
    done
    report_all

    echo "== GPU: deliberately wrong kernels, which the check must report"
    # common/wrong_kernel.cu, linked with step 01's main.c (float inputs),
    # step 05's (half) and the FP8 step's: each of its bugs must end in
    # check=FAIL and exit 1.
    wrong_dir=$(mktemp -d)
    for main in "${wrong_mains[@]}"; do
        input=$(bash scripts/arch.sh input "$main")
        half=$([ "$input" = fp16 ] && echo 1 || echo 0) fp8=$([ "$input" = e4m3 ] && echo 1 || echo 0)
        gencode=$(bash scripts/arch.sh gencode "$main" "${ARCH:-}")
        for wrong in 1 2 3 4 5 $([ "$fp8" = 1 ] && echo 6); do
            name="check catches a wrong kernel: $main's harness, bug $wrong of common/wrong_kernel.cu"
            bin=$wrong_dir/$main.$wrong
            # shellcheck disable=SC2086 # the flag variables hold several words
            if ! { $MAKE --no-print-directory "$main/main.o" $COMMON_OBJS >"$log" 2>&1 &&
                   ${NVCC:-nvcc} -O2 $gencode -Icommon -DWRONG=$wrong -DHALF=$half -DFP8=$fp8 \
                       -c common/wrong_kernel.cu -o "$bin.o" >>"$log" 2>&1 &&
                   ${NVCC:-nvcc} -o "$bin" "$main/main.o" "$bin.o" $COMMON_OBJS -lcublasLt -lcublas -ldl >>"$log" 2>&1; }; then
                fail "$name: does not build"
                continue
            fi
            "$bin" -m 128 -n 128 -k 1024 --warmup 0 --iters 1 >"$log" 2>&1
            rc=$?
            if [ $rc -eq 1 ] && tail -n 1 "$log" | grep -q ' check=FAIL '; then
                pass "$name"
            else
                fail "$name: want check=FAIL and exit 1 (exit code $rc)"
            fi
        done
    done
    rm -rf "$wrong_dir"

    echo "== GPU: gemm_launch as a library, beside other work (common/test_launch.cu)"
    # Each case prints a PASS, FAIL or SKIP line per check; a crash, a hang
    # (RUN_LIMIT), or an exit with no FAIL line to say why, fails.
    lib_dir=$(mktemp -d)
    library_run() { # library_run NAME BINARY CASE...
        local name=$1 bin=$2 rc line
        shift 2
        timeout "$RUN_LIMIT" "$bin" "$@" >"$log.lib" 2>&1
        rc=$?
        : >"$log"
        while IFS= read -r line; do
            case $line in
                "PASS  "*) pass "$name: ${line#PASS  }" ;;
                "FAIL  "*) fail "$name: ${line#FAIL  }" ;;
                "SKIP  "*) skip "$name: ${line#SKIP  }" ;;
            esac
        done <"$log.lib"
        if [ $rc -ne 0 ] && ! grep -q '^FAIL  ' "$log.lib"; then
            cp "$log.lib" "$log"
            fail "$name: common/test_launch $1 exited with code $rc"
        fi
        rm -f "$log.lib"
    }
    # Each step's program first, JOBS at a time: nvcc takes seconds a step.
    for s in ${runnable[@]+"${runnable[@]}"}; do
        job_slot "$JOBS"
        input=$(bash scripts/arch.sh input "$s")
        gencode=$(bash scripts/arch.sh gencode "$s" "${ARCH:-}")
        # shellcheck disable=SC2086 # gencode holds several words
        ${NVCC:-nvcc} -O2 -std=c++17 $gencode -Icommon -DHALF=$([ "$input" = fp16 ] && echo 1 || echo 0) \
            -DFP8=$([ "$input" = e4m3 ] && echo 1 || echo 0) common/test_launch.cu "$s/kernel.o" \
            common/check.o common/half.o common/fp8.o -o "$lib_dir/$s" >"$lib_dir/$s.log" 2>&1 &
    done
    wait
    for s in ${runnable[@]+"${runnable[@]}"}; do
        bin=$lib_dir/$s
        if [ ! -x "$bin" ]; then
            cp "$lib_dir/$s.log" "$log"
            fail "$s: common/test_launch.cu does not build with $s/kernel.o"
            continue
        fi
        while read -r -a args; do
            library_run "$s" "$bin" "${args[@]}"
        done < <(library_cases_for "$s")
    done

    echo "== GPU: the ceilings, and the harness's --cold and --host"
    # Each ceiling measured; the memory ones' bytes as the profiler counts
    # them (within 5%: a write leaves up to L2's size of C in L2 at the end).
    if [ -x ceilings/run ] && ./ceilings/run --runs 3 >"$log" 2>&1 && tail -n 1 "$log" | grep -qE ' fma=[0-9.]+ .* hbm_read=[0-9.]+ '; then
        pass "ceilings/run: every ceiling this GPU has, measured ($(tail -n 1 "$log" | grep -oE '(fma|mma|wgmma|hbm_read)=[0-9.]+' | tr '\n' ' '))"
    else
        fail "ceilings/run: want a rate for each ceiling"
    fi
    if ! command -v ncu >/dev/null || [ ! -x ceilings/run ]; then
        skip "ceilings/run's bytes against the profiler: Nsight Compute (ncu) not found"
    else
        for c in hbm_read:dram__bytes_read.sum hbm_write:dram__bytes_write.sum l2_read:lts__t_bytes.sum; do
            name=${c%%:*} metric=${c#*:}
            ncu --clock-control none --csv --print-units base --metrics "$metric" --kernel-name regex:'read_kernel|write_kernel' \
                --launch-count 1 ./ceilings/run --only "$name" --runs 1 >"$log" 2>&1
            counted=$(awk -F'","' -v m="$metric" '$0 ~ "\"" m "\"" { v = $NF; gsub(/[",]/, "", v); print v }' "$log" | head -n 1)
            claimed=$(grep '^ceilings:' "$log" | grep -oE "${name}_per_run=[0-9]+" | cut -d= -f2)
            if [ -n "$counted" ] && [ -n "$claimed" ] &&
                awk -v a="$counted" -v b="$claimed" 'BEGIN { exit !(a > 0.95 * b && a < 1.05 * b) }'; then
                pass "ceilings/run $name: $claimed bytes a run, the profiler counts $counted ($metric)"
            else
                fail "ceilings/run $name: claims ${claimed:-?} bytes a run, the profiler counts ${counted:-?} ($metric)"
            fi
        done
    fi
    # A 32 MB B (4096 x 4096 halves) stays in the 50-60 MB L2 of an H100 or
    # H200 between warm runs; --cold reads it from memory each time, slower.
    half_step=""
    for s in ${runnable[@]+"${runnable[@]}"}; do [ "$(bash scripts/arch.sh input "$s")" = fp16 ] && half_step=$s; done
    if [ -n "$half_step" ]; then
        ./"$half_step"/run -m 1 -n 4096 -k 4096 --no-check --host >"$log" 2>&1
        warm=$(tail -n 1 "$log")
        ./"$half_step"/run -m 1 -n 4096 -k 4096 --no-check --cold >"$log" 2>&1
        cold=$(tail -n 1 "$log")
        val() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$2"; }
        if awk -v w="$(val ms "$warm")" -v c="$(val ms "$cold")" -v cw="$(val cublas_ms "$warm")" -v cc="$(val cublas_ms "$cold")" \
            'BEGIN { exit !(w > 0 && c > w && cw > 0 && cc > cw) }' && [ "$(val cold "$cold")" = 1 ]; then
            pass "$half_step -m 1 -n 4096 -k 4096: --cold slower than warm, the step ($(val ms "$warm") -> $(val ms "$cold") ms) and cuBLAS ($(val cublas_ms "$warm") -> $(val cublas_ms "$cold"))"
        else
            fail "$half_step -m 1 -n 4096 -k 4096: want --cold slower than warm for the step and cuBLAS"
        fi
        if awk -v a="$(val host_us "$warm")" -v b="$(val cublas_host_us "$warm")" 'BEGIN { exit !(a > 0 && b > 0) }'; then
            pass "$half_step --host: $(val host_us "$warm") us per call, cuBLAS $(val cublas_host_us "$warm") us"
        else
            fail "$half_step --host: want host_us and cublas_host_us"
        fi
    fi

    echo "== GPU: make profile"
    if ! command -v ncu >/dev/null; then
        skip "make profile: Nsight Compute (ncu) not found"
    elif $MAKE --no-print-directory profile STEP="${built[0]%%_*}" SIZE=512 >"$log" 2>&1 &&
        grep -q 'pipe busy' "$log" && grep -q 'cycles per instruction issued' "$log"; then
        pass "make profile STEP=${built[0]%%_*} SIZE=512: the profile table"
    else
        fail "make profile STEP=${built[0]%%_*} SIZE=512"
    fi
    # cuBLAS's kernel, not the step's: its name, and the L2 requests row
    last_built=${built[${#built[@]}-1]}
    if command -v ncu >/dev/null; then
        if bash scripts/profile.sh "${last_built%%_*}" -s 512 --cublas >"$log" 2>"$log.err" &&
            head -n 1 "$log" | grep -q '^cuBLAS, as ' && grep -q '^  kernel: ' "$log" &&
            ! grep -q '^  kernel: .*gemm_kernel' "$log" && grep -q '^  L2 requests ' "$log"; then
            pass "scripts/profile.sh ${last_built%%_*} -s 512 --cublas: cuBLAS's kernel, named"
        else
            fail "scripts/profile.sh ${last_built%%_*} -s 512 --cublas: want cuBLAS's kernel, named"
        fi
        rm -f "$log.err"
    fi

    echo "== GPU: what each step launches, and the timeline"
    for s in ${runnable[@]+"${runnable[@]}"}; do
        if ./"$s"/run -s 512 --warmup 0 --iters 1 --no-check --launches >"$log" 2>&1 &&
            tail -n 1 "$log" | grep -qE ' launches=[0-9]+x[0-9]+/c[0-9]+/s[0-9]+(\+[0-9]+x[0-9]+/c[0-9]+/s[0-9]+)*$' &&
            grep -q '^  launches   [0-9]' "$log"; then
            pass "$s --launches: each kernel's grid, block, cluster and shared memory"
        else
            fail "$s --launches: want launches=BLOCKSxTHREADS/cN/sBYTES, from CUPTI"
        fi
    done
    # The steps with stamps (10 on), their programs first, JOBS at a time (timeline.sh builds one if it is not
    # there, and says why not).
    stamped=()
    for s in ${runnable[@]+"${runnable[@]}"}; do [ "$((10#${s:4:2}))" -ge 10 ] && stamped+=("$s"); done
    [ ${#stamped[@]} -gt 0 ] && $MAKE -k $parallel --no-print-directory "${stamped[@]/%//timeline}" >/dev/null 2>&1
    for s in ${stamped[@]+"${stamped[@]}"}; do
        # 1024^3 in 128-row tiles: 8 rows of them, every consumer stamps multiply, store and done
        if bash scripts/timeline.sh "${s%%_*}" -s 1024 --stamps "$log.txt" >"$log.out" 2>"$log" &&
            awk 'NR > 1 && NF == 5 { k[$4]++ } END { exit !(k[0] >= 8 && k[2] >= 8 && k[3] >= 8) }' "$log.txt" &&
            grep -q '<title>SM [0-9]*, consumer [01]: multiply' "$log.out" && tail -n 1 "$log.out" | grep -qx '</svg>'; then
            pass "scripts/timeline.sh ${s%%_*} -s 1024: stamps from the GPU, drawn"
        else
            fail "scripts/timeline.sh ${s%%_*} -s 1024: want every phase stamped and drawn"
        fi
    done
    rm -f "$log.txt" "$log.out"

    echo "== GPU: compute-sanitizer memcheck and racecheck on small shapes"
    if ! command -v compute-sanitizer >/dev/null; then
        n=0
        for s in ${runnable[@]+"${runnable[@]}"}; do
            n=$((n + $(sanitizer_runs_for "$s" | wc -l) + $(library_sanitized_for "$s")))
        done
        skipped=$((skipped + n))
        echo "SKIP  compute-sanitizer not found: $n runs skipped"
    else
        for s in ${runnable[@]+"${runnable[@]}"}; do
            while read -r tool m n k offset exclude _; do
                [ "$exclude" = - ] && exclude=""
                queue "$s $tool M=$m N=$n K=$k${offset:+ offset=$offset}${exclude:+ without $exclude kernels}" \
                    sanitized_job "$s" "$tool" "$m" "$n" "$k" "${offset:-0}" "$exclude"
            done < <(sanitizer_runs_for "$s")
        done
        report_all
        # One at a time: the other kernel of the busy case holds the GPU's SMs.
        for s in ${runnable[@]+"${runnable[@]}"}; do
            [ "$(library_sanitized_for "$s")" -gt 0 ] && [ -x "$lib_dir/$s" ] || continue
            for tool in $library_sanitizer_runs; do
                # shellcheck disable=SC2086 # the case holds several words
                if library_sanitized_job "$tool" "$lib_dir/$s" $library_sanitizer_case; then
                    pass "$s $tool: common/test_launch $library_sanitizer_case"
                else
                    fail "$s $tool: common/test_launch $library_sanitizer_case"
                fi
            done
        done
    fi
    rm -rf "$lib_dir"
fi

echo
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
