#!/usr/bin/env bash
# Every kind of shape at a glance: runs chosen steps, and cuBLAS beside each
# in the same process, over named classes of shapes (square powers of two,
# awkward squares, skinny, narrow, deep K, shallow K, misaligned,
# LLM-like, decode), and prints TFLOPS and % of cuBLAS per shape with a bar
# of each TFLOPS to one scale; for decode, also the weights' TB/s against
# the HBM read rate make ceilings measured.
# The runs skip the check, to stay inside a few minutes; make test checks
# every step on shapes of each class. The classes with few rows run cold
# (--cold: A, B and C out of L2 before each run, for the step and cuBLAS
# alike), as a model's layer at decode time runs: once per token, its
# weights read from memory; the others warm.
set -u
cd "$(dirname "$0")/.."
source scripts/common.sh

# Each class: its name, what makes it hard, its shapes (M N K each),
# whether it runs cold, and whether its bars are the weights' TB/s (B's
# 2 K N bytes over the time: TFLOPS / M) against HBM's read rate.
classes_all=(square awkward skinny narrow deep shallow misaligned llm decode fp8)
class_shapes() {
    cold="" weights=""
    case $1 in
        square) what="powers of two: tiles fill rounds of 132 SMs or nearly"
            shapes=("1024 1024 1024" "2048 2048 2048" "4096 4096 4096" "8192 8192 8192") ;;
        awkward) what="squares whose last round of tiles is part empty, or rows off 32-byte sectors"
            shapes=("1000 1000 1000" "3000 3000 3000" "5000 5000 5000" "6144 6144 6144" "7000 7000 7000") ;;
        skinny) what="a few rows of C, so fewer tiles than SMs; cold" cold=--cold
            shapes=("16 8192 8192" "128 4096 4096" "256 8192 4096" "512 12288 4096") ;;
        narrow) what="a few columns of C: a tile wider than C multiplies columns of zeros"
            shapes=("16384 64 4096" "32768 128 4096" "8192 96 8192" "65536 16 4096") ;;
        deep) what="few tiles, each many k-tiles deep"
            shapes=("1024 1024 16384" "512 1024 65536" "2048 2048 32768" "256 256 131072" "1536 1536 8192") ;;
        shallow) what="a few k-tiles per tile: too few for a split to pay, and C's stores weigh as much as the multiply"
            shapes=("8192 8192 256" "10000 10000 64" "4096 4096 512" "3000 3000 512" "16384 16384 1024" "768 8192 1024"
                    "6000 3072 1024") ;;
        misaligned) what="K or N not a multiple of 8, so rows are not 16-byte aligned"
            shapes=("4096 4096 4100" "4096 4100 4096" "3000 3002 3002" "4095 4095 4095") ;;
        llm) what="tokens x (QKV, MLP up, MLP down, vocabulary) of a 4096-wide model"
            shapes=("4096 12288 4096" "2048 11008 4096" "2048 4096 11008" "512 32000 4096") ;;
        decode) what="M tokens through a layer (N outputs, K inputs) of Llama-2 7B, 13B, a Mixtral expert: weights read per token; cold"
            cold=--cold weights=1 shapes=()
            local m nk
            for nk in "12288 4096" "4096 4096" "11008 4096" "4096 11008" "15360 5120" "5120 5120" "13824 5120" \
                      "5120 13824" "14336 4096" "4096 14336"; do
                for m in 1 2 4 8 16 32 64 128; do shapes+=("$m $nk"); done
            done ;;
        fp8) what="DeepSeek-V3's layers (N x K) at 128 and 4096 tokens, where FP8 with block scales trains and serves"
            shapes=()
            local m nk
            for m in 128 4096; do
                for nk in "2112 7168" "24576 1536" "7168 16384" "4096 7168" "7168 2048"; do shapes+=("$m $nk"); done
            done
            shapes+=("4096 4096 4096" "8192 8192 8192") ;;
        *) return 1 ;;
    esac
}

steps_all=()
for dir in $(step_dirs); do steps_all+=("$dir"); done
last=${steps_all[${#steps_all[@]} - 1]}

usage() {
    cat <<USAGE
usage: scripts/shapes.sh [--steps "07 10 ..."] [--classes "square deep ..."] [--iters N] [--csv FILE]
  --steps LIST     steps to run (default: 07, 10 and the last, ${last%%_*})
  --classes LIST   classes of shapes to run (default: all of ${classes_all[*]})
  --iters N        timed runs per shape; the median is reported (default 20)
  --csv FILE       also write every result to FILE as comma-separated values
USAGE
}

want="07 10 ${last%%_*}" classes="${classes_all[*]}" iters=20 csv=""
while [ $# -gt 0 ]; do
    case $1 in
        --steps) [ $# -ge 2 ] || die shapes.sh "--steps needs a list"; want=$2; shift 2 ;;
        --classes) [ $# -ge 2 ] || die shapes.sh "--classes needs a list"; classes=$2; shift 2 ;;
        --iters) positive_int shapes.sh "$@"; iters=$2; shift 2 ;;
        --csv) [ $# -ge 2 ] && [ -n "$2" ] || die shapes.sh "--csv needs a file name"; csv=$2; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) die shapes.sh "unknown option '$1' (see --help)" ;;
    esac
done
[ -n "${want// /}" ] || die shapes.sh "--steps needs at least one step"
[ -n "${classes// /}" ] || die shapes.sh "--classes needs at least one class"
for c in $classes; do
    class_shapes "$c" || die shapes.sh "no class '$c' (the classes: ${classes_all[*]})"
done
steps=()
for s in $want; do steps+=("$(find_step shapes.sh "$s")") || exit 2; done
if [ -n "$csv" ]; then
    { : >"$csv"; } 2>/dev/null || die shapes.sh "cannot write --csv file '$csv'"
fi
gpu_or_die shapes.sh
build shapes.sh "${steps[@]}"
# HBM's read rate, for the classes whose bars are the weights' TB/s
declare -A roof=()
for c in $classes; do
    class_shapes "$c"
    if [ -n "$weights" ]; then
        build shapes.sh ceilings/run
        read_ceilings 10 || echo "shapes.sh: no ceilings measured (ceilings/run): % HBM says -" >&2
        break
    fi
done

# Every run first (a line on stderr for each), then the tables, so that the
# bars of all classes share one scale.
declare -A tf=() ctf=() pct=() r too_new=()
gpu="" status=0 top=0
for c in $classes; do
    class_shapes "$c"
    for shape in "${shapes[@]}"; do
        read -r m n k <<<"$shape"
        for s in "${steps[@]}"; do
            [ -x "$s/run" ] && [ -z "${too_new[$s]:-}" ] || continue
            echo "shapes.sh: $s at $m x $n x $k" >&2
            run_step shapes.sh "$s" -m "$m" -n "$n" -k "$k" --iters "$iters" --no-check $cold
            case $? in
                0) ;;
                3) too_new[$s]=1; continue ;; # said once; the step's rows are left out
                *) status=1; continue ;;
            esac
            tf[$s,$shape]=${r[tflops]} ctf[$s,$shape]=${r[cublas_tflops]} pct[$s,$shape]=${r[pct_cublas]}
            gpu=${r[gpu]}
            top=$(awk -v a="$top" -v b="${r[tflops]}" -v c="${r[cublas_tflops]}" 'BEGIN { m = a; if (b > m) m = b; if (c > m) m = c; print m }')
        done
    done
done
[ -n "$gpu" ] || die shapes.sh "no step ran (left out of this build: see make's output)"

[ -n "$csv" ] && echo "class,m,n,k,step,tflops,cublas_tflops,pct_cublas" >"$csv"
echo "Shapes on ${gpu//_/ }, $(date -u +%Y-%m-%d): median of $iters runs each, unchecked. % cuBLAS is"
echo "against cuBLAS of the step's precision (GemmEx half in, float out; cuBLASLt FP8 with the same scales) in the step's own process; the"
echo "cuBLAS line is the median of those. Bars: TFLOPS, all to one scale. Warm"
echo "runs (A and B in L2 where they fit) but where a class says cold."
[ ${#roof[@]} -gt 0 ] && echo "Decode's bars: the weights' TB/s against HBM's ${roof[hbm_read]} TB/s read (make ceilings)."
fmt='%-20s %-24s %8s %9s  %s\n' wfmt='%-20s %-24s %8s %9s %6s %6s  %s\n'
# The weights' TB/s of a row (TFLOPS over M) and its share of HBM's read rate
tbs() { awk -v t="$1" -v m="$2" 'BEGIN { printf "%.2f", t / m }'; }
of_hbm() { [ -n "${roof[hbm_read]:-}" ] && awk -v b="$1" -v r="${roof[hbm_read]}" 'BEGIN { printf "%.0f", 100 * b / r }' || echo -; }
for c in $classes; do
    class_shapes "$c"
    echo
    echo "$c: $what"
    # decode's bars: to HBM's read rate, or the fastest row's where it was not measured
    scale=${roof[hbm_read]:-}
    if [ -n "$weights" ]; then
        [ -n "$scale" ] || for shape in "${shapes[@]}"; do
            for s in "${steps[@]}"; do
                [ -n "${tf[$s,$shape]:-}" ] && scale=$(awk -v a="${scale:-0}" -v b="$(tbs "${tf[$s,$shape]}" "${shape%% *}")" 'BEGIN { print (b > a) ? b : a }')
            done
        done
        printf "$wfmt" "M x N x K" step TFLOPS "% cuBLAS" "TB/s" "% HBM" "weights' TB/s to scale"
    else
        printf "$fmt" "M x N x K" step TFLOPS "% cuBLAS" "TFLOPS to scale"
    fi
    for shape in "${shapes[@]}"; do
        read -r m n k <<<"$shape"
        label="$m x $n x $k" theirs=()
        for s in "${steps[@]}"; do
            [ -n "${tf[$s,$shape]:-}" ] || continue
            if [ -n "$weights" ]; then
                b=$(tbs "${tf[$s,$shape]}" "$m")
                printf "$wfmt" "$label" "$s" "${tf[$s,$shape]}" "${pct[$s,$shape]}" "$b" "$(of_hbm "$b")" "$(bar "$b" "$scale" 30)"
            else
                printf "$fmt" "$label" "$s" "${tf[$s,$shape]}" "${pct[$s,$shape]}" "$(bar "${tf[$s,$shape]}" "$top" 30)"
            fi
            label="" theirs+=("${ctf[$s,$shape]}")
            [ -n "$csv" ] && echo "$c,$m,$n,$k,$s,${tf[$s,$shape]},${ctf[$s,$shape]},${pct[$s,$shape]}" >>"$csv"
        done
        [ ${#theirs[@]} -gt 0 ] || continue
        cublas=$(echo "${theirs[*]}" | median)
        if [ -n "$weights" ]; then
            b=$(tbs "$cublas" "$m")
            printf "$wfmt" "$label" cuBLAS "$cublas" "" "$b" "$(of_hbm "$b")" "$(bar "$b" "$scale" 30 light)"
        else
            printf "$fmt" "$label" cuBLAS "$cublas" "" "$(bar "$cublas" "$top" 30 light)"
        fi
    done
done
exit $status
