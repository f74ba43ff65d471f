#!/usr/bin/env bash
# The test suite behind `make test`. Closes with "N passed, N failed, N skipped".
#
# Always (no GPU needed): every step builds; the harness's unit tests; no
# kernel spills or uses local memory; every binary's --help and bad input.
# With a GPU: every step on many shapes and alpha/beta (beta = 0 with C full
# of NaN), and compute-sanitizer memcheck and racecheck on small shapes.
set -u
cd "$(dirname "$0")/.."

passed=0 failed=0 skipped=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

pass() { passed=$((passed + 1)); echo "PASS  $1"; }
skip() { skipped=$((skipped + 1)); echo "SKIP  $1"; }
fail() {
    failed=$((failed + 1))
    echo "FAIL  $1"
    [ -s "$log" ] && tail -n 15 "$log" | sed 's/^/      /'
}

steps=()
for dir in step[0-9][0-9]_*/; do steps+=("${dir%/}"); done

echo "== build"
built=()
for s in "${steps[@]}"; do
    if make --no-print-directory "$s/run" >"$log" 2>&1; then
        pass "build $s"
        built+=("$s")
    else
        fail "build $s"
    fi
done

echo "== harness unit tests"
if make --no-print-directory common/test_common >"$log" 2>&1; then
    ./common/test_common >"$log" 2>&1
    while read -r verdict name; do
        case $verdict in
            PASS) pass "$name" ;;
            FAIL) fail "$name" ;;
        esac
    done <"$log"
else
    fail "build common/test_common"
fi

echo "== registers: no spills, no local memory"
if make --no-print-directory regs >"$log" 2>&1; then
    pass "no kernel spills or uses a stack frame ($(($(wc -l <"$log") - 1)) kernels x architectures)"
else
    fail "some kernel spills or uses a stack frame"
fi

echo "== command line (no GPU needed)"
for s in "${built[@]}"; do
    if ./"$s"/run --help >"$log" 2>&1 && grep -q '^usage:' "$log"; then
        pass "$s --help"
    else
        fail "$s --help"
    fi
    for args in "-m 0" "-m abc" "-m 99999999" "--bogus" "-n -5" "-k" "--alpha nan" \
                "--iters 0" "extra"; do
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
    rm -f "$log.out"
done

# ---- GPU half ----

# Shapes (M N K): single elements, sizes just under and over tile multiples
# (block tiles of 32 to 256 rows or columns), non-square, K giving an odd
# number of K-tiles for BK = 8, 16 and 32 (24, 48, 96), fewer K-tiles than a
# pipeline has stages, K and N that are not multiples of 4 or 8 (the
# element-wise paths), multiples of 8 that end a tile early (the 16-byte
# paths with a partial last tile), and sizes large enough that the check
# samples the CPU reference and compares all of C with cuBLAS.
shapes=(
    "1 1 1" "1 4099 3" "4097 1 65" "127 129 1031" "1000 1000 1000" "2 3 5"
    "33 65 17" "64 64 64" "128 128 128" "129 127 129" "255 257 511"
    "256 256 24" "256 256 48" "256 256 96" "96 160 200" "513 1025 257"
    "1024 768 4100" "2048 2048 2048"
    "17 24 8" "136 264 40" "300 520 72" "130 248 36" "250 260 64" "200 1030 1025"
)
# alpha/beta pairs beyond the default (1, 0), on a few shapes.
scalings=("-1.5 0.5" "0.25 -2" "0 1.5" "2 0")
scaled_shapes=("127 129 1031" "33 65 17" "513 1025 257" "1024 768 4100")
# compute-sanitizer runs (tool M N K): both tools on the element-wise paths
# (N not a multiple of 8) and on the 16-byte paths (136 264 72). memcheck
# looks at the step's kernel only; racecheck looks at every kernel of the
# run (cuBLAS's too), because CUDA 13.0's racecheck with --kernel-name stops
# with an internal error ("failed to handle a hardware exception") on the
# 16-byte paths of steps 05-07, and without it reports them clean.
sanitizer_runs=(
    "memcheck 67 45 33" "racecheck 67 45 33" "memcheck 128 132 64" "racecheck 128 132 64"
    "memcheck 136 264 72" "racecheck 136 264 72"
)

gpu_cases=$(( ${#built[@]} * (${#shapes[@]} + ${#scalings[@]} * ${#scaled_shapes[@]}) ))
sanitizer_cases=$(( ${#built[@]} * ${#sanitizer_runs[@]} ))

gpu_found() { command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; }

# One checked run. A GPU older than the step needs counts as skipped.
run_case() {
    local s=$1 m=$2 n=$3 k=$4 alpha=$5 beta=$6
    local name="$s M=$m N=$n K=$k alpha=$alpha beta=$beta"
    ./"$s"/run -m "$m" -n "$n" -k "$k" --alpha "$alpha" --beta "$beta" \
        --warmup 0 --iters 1 >"$log" 2>&1
    local rc=$?
    if [ $rc -eq 0 ] && tail -n 1 "$log" | grep -q ' check=PASS '; then
        pass "$name"
    elif [ $rc -eq 2 ] && grep -q 'needs compute capability' "$log"; then
        skip "$name: $(cat "$log")"
    else
        fail "$name (exit code $rc)"
    fi
}

echo "== GPU: every step on ${#shapes[@]} shapes and ${#scalings[@]} alpha/beta pairs"
if ! gpu_found; then
    for s in "${built[@]}"; do
        ./"$s"/run -s 8 >"$log.out" 2>"$log"
        rc=$?
        if [ $rc -eq 2 ] && [ "$(wc -l <"$log")" -eq 1 ] && grep -q "^$s: no CUDA GPU" "$log"; then
            pass "$s without a GPU: one-line error, exit 2"
        else
            fail "$s without a GPU: want a one-line error and exit 2 (exit code $rc)"
        fi
    done
    rm -f "$log.out"
    skipped=$((skipped + gpu_cases + sanitizer_cases))
    echo "SKIP  no GPU found (nvidia-smi -L lists none): $gpu_cases GPU checks and" \
         "$sanitizer_cases compute-sanitizer runs skipped"
else
    for s in "${built[@]}"; do
        for shape in "${shapes[@]}"; do
            # shellcheck disable=SC2086 # shape holds three words
            run_case "$s" $shape 1 0
        done
        for shape in "${scaled_shapes[@]}"; do
            for ab in "${scalings[@]}"; do
                # shellcheck disable=SC2086
                run_case "$s" $shape $ab
            done
        done
    done

    echo "== GPU: compute-sanitizer memcheck and racecheck on small shapes"
    if ! command -v compute-sanitizer >/dev/null; then
        skipped=$((skipped + sanitizer_cases))
        echo "SKIP  compute-sanitizer not found: $sanitizer_cases runs skipped"
    else
        for s in "${built[@]}"; do
            for run in "${sanitizer_runs[@]}"; do
                read -r tool m n k <<<"$run"
                name="$s $tool M=$m N=$n K=$k"
                only_step=()
                if [ "$tool" = memcheck ]; then only_step=(--kernel-name kns=gemm_kernel); fi
                compute-sanitizer --tool "$tool" --error-exitcode 3 ${only_step[@]+"${only_step[@]}"} \
                    ./"$s"/run -m "$m" -n "$n" -k "$k" --beta 0.5 --warmup 0 --iters 1 \
                    >"$log" 2>&1
                rc=$?
                # memcheck ends "ERROR SUMMARY: 0 errors", racecheck
                # "RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)".
                if [ $rc -eq 0 ] && grep -qE 'ERROR SUMMARY: 0 errors|SUMMARY: 0 hazards displayed \(0 errors, 0 warnings\)' "$log"; then
                    pass "$name"
                elif [ $rc -eq 2 ] && grep -q 'needs compute capability' "$log"; then
                    skip "$name: $(tail -n 1 "$log")"
                else
                    fail "$name (exit code $rc)"
                fi
            done
        done
    fi
fi

echo
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
