#!/usr/bin/env bash
# The roofline: each step as a point, its operational intensity (flops per
# byte of device-memory traffic) against its TFLOPS, on log-log axes, under
# the roofs this GPU measures (ceilings/run): a flat roof per instruction
# (FP32 FMA, mma.sync, wgmma), and memory's, a line of slope 1 (TFLOPS = TB/s
# x flops per byte). A point left of where the two meet is memory-bound,
# right of it compute-bound. Every step at 4096^3, and the last step and
# cuBLAS where the rows are few (M = 1, 16 and 128, N = K = 8192), all timed
# cold (A, B and C out of L2 first, as a program that runs the product once
# finds them). The bytes: counted by Nsight Compute (ncu, DRAM read and
# written by the step's kernels or cuBLAS's, one call) where it runs, else
# the fewest a product must move (A and B read once, C written once); the
# picture says which. Needs a GPU, except to draw saved data (--from).
set -u
cd "$(dirname "$0")/.."
source scripts/common.sh

usage() {
    cat <<USAGE
usage: scripts/roofline.sh [--compulsory] [--iters N] [--data FILE] > roofline.svg
       scripts/roofline.sh --from FILE > roofline.svg
  --compulsory   the fewest bytes a product must move, not Nsight Compute's count
  --iters N      timed runs per point; the median is reported (default 20)
  --data FILE    also save what the picture is drawn from, to draw again with --from
  --from FILE    draw data saved with --data; no GPU needed
USAGE
}

compulsory=0 iters=20 data="" from=""
while [ $# -gt 0 ]; do
    case $1 in
        --compulsory) compulsory=1; shift ;;
        --iters) positive_int roofline.sh "$@"; iters=$2; shift 2 ;;
        --data) [ $# -ge 2 ] && [ -n "$2" ] || die roofline.sh "--data needs a file name"; data=$2; shift 2 ;;
        --from) [ $# -ge 2 ] && [ -n "$2" ] || die roofline.sh "--from needs a file name"; from=$2; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) die roofline.sh "unknown option '$1' (see --help)" ;;
    esac
done

# The data, one line each: "title TEXT", "note TEXT", "ceiling NAME RATE" (TFLOPS, or TB/s
# for hbm_read and l2_read), "point LABEL KIND INTENSITY TFLOPS" (KIND: step,
# cublas, or few for the few-row shapes).
draw() {
    awk '
    function esc(s) { gsub(/&/, "\\&amp;", s); gsub(/</, "\\&lt;", s); gsub(/>/, "\\&gt;", s); return s }
    function X(i) { return left + (log(i) / log(10) - x0) / (x1 - x0) * width }
    function Y(t) { return top + height - (log(t) / log(10) - y0) / (y1 - y0) * height }
    $1 == "title" { title = substr($0, 7); next }
    $1 == "note" { note = substr($0, 6); next }
    $1 == "ceiling" && $3 ~ /^[0-9.]+$/ { rate[$2] = $3 + 0; next }
    $1 == "point" && $4 ~ /^[0-9.e+-]+$/ && $5 ~ /^[0-9.e+-]+$/ && $4 > 0 && $5 > 0 {
        n++; label[n] = $2; kind[n] = $3; ai[n] = $4 + 0; tf[n] = $5 + 0; next }
    END {
        if (!("hbm_read" in rate) || n == 0) { print "roofline.sh: no memory roof or no point to draw" > "/dev/stderr"; exit 2 }
        x0 = -1; x1 = 4; y0 = -1; y1 = 4 # 0.1 to 10^4 flops per byte, 0.1 to 10^4 TFLOPS
        left = 70; top = 50; width = 640; height = 480
        w = left + width + 190; h = top + height + 60
        printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" font-size=\"12\">\n", w, h
        printf "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", w, h
        printf "<text x=\"10\" y=\"20\" font-size=\"14\" font-weight=\"bold\">%s</text>\n", esc(title)
        printf "<text x=\"10\" y=\"36\" fill=\"#555\">%s</text>\n", esc(note)
        for (e = x0; e <= x1; e++) {
            printf "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>\n", X(10 ^ e), top, X(10 ^ e), top + height
            printf "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g</text>\n", X(10 ^ e), top + height + 16, 10 ^ e
        }
        for (e = y0; e <= y1; e++) {
            printf "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", left, Y(10 ^ e), left + width, Y(10 ^ e)
            printf "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n", left - 6, Y(10 ^ e) + 4, 10 ^ e
        }
        printf "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">operational intensity, flops per byte of device memory traffic</text>\n", left + width / 2, top + height + 36
        printf "<text x=\"16\" y=\"%d\" transform=\"rotate(-90 16 %d)\" text-anchor=\"middle\">TFLOPS</text>\n", top + height / 2, top + height / 2
        # memory roofs: TFLOPS = TB/s x flops per byte, up to the highest compute roof
        highest = 0
        for (c in rate) if (c !~ /^(hbm|l2)_/ && rate[c] > highest) highest = rate[c]
        split("hbm_read l2_read", mems, " ")
        for (i = 1; i <= 2; i++) {
            c = mems[i]; if (!(c in rate)) continue
            xa = 10 ^ x0; ya = rate[c] * xa; xb = highest / rate[c]; if (xb > 10 ^ x1) xb = 10 ^ x1
            if (ya < 10 ^ y0) { xa = 10 ^ y0 / rate[c]; ya = 10 ^ y0 }
            printf "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"%s/>\n", X(xa), Y(ya), X(xb), Y(highest), c == "hbm_read" ? "#333" : "#999", c == "hbm_read" ? "" : " stroke-dasharray=\"5,4\""
            xl = 0.15; yl = Y(rate[c] * xl) + (c == "hbm_read" ? 14 : -6) # HBM below its line, L2 above
            printf "<text x=\"%.1f\" y=\"%.1f\" fill=\"%s\" transform=\"rotate(-36.9 %.1f %.1f)\">%s %.2f TB/s</text>\n", X(xl), yl, c == "hbm_read" ? "#333" : "#999", X(xl), yl, c == "hbm_read" ? "HBM" : "L2", rate[c]
        }
        # compute roofs, from where memory meets them
        split("fma mma wgmma wgmma_fp8", units, " ")
        split("FP32 FMA,mma.sync (half),wgmma (half),wgmma (e4m3)", names, ",")
        for (i = 1; i <= 4; i++) {
            c = units[i]; if (!(c in rate)) continue
            xa = rate[c] / rate["hbm_read"]
            printf "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#333\" stroke-width=\"2\"/>\n", X(xa), Y(rate[c]), left + width, Y(rate[c])
            printf "<text x=\"%d\" y=\"%.1f\">%s %.0f</text>\n", left + width + 6, Y(rate[c]) + 4, names[i], rate[c]
        }
        # the points: steps blue (float) and orange (half), cuBLAS grey, the few-row shapes green; steps that land
        # within a few pixels of each other share one label ("08-14")
        for (i = 1; i <= n; i++) {
            colour = kind[i] == "cublas" ? "#636363" : kind[i] == "few" ? "#31a354" : label[i] ~ /^0[1-4]$/ ? "#3182bd" : "#e6550d"
            printf "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\"><title>%s: %.3g flops per byte, %.4g TFLOPS</title></circle>\n", X(ai[i]), Y(tf[i]), colour, esc(label[i]), ai[i], tf[i]
            if (kind[i] == "step" && i < n && kind[i + 1] == "step" && (X(ai[i + 1]) - X(ai[first ? first : i])) ^ 2 < 100 &&
                (Y(tf[i + 1]) - Y(tf[first ? first : i])) ^ 2 < 100) {
                if (!first) first = i
                continue
            }
            text = first ? label[first] "-" label[i] : label[i]; at = first ? first : i; first = 0
            # cuBLAS above its point: at the left of it at 4096^3, at the right where the rows are few; below
            # it where it is slower than the step at the same shape, whose label is right above
            square = kind[i] == "cublas" && label[i] !~ /M=/
            dx = square ? -4 : 7; dy = kind[i] == "cublas" ? (!square && kind[i - 1] == "few" && tf[i] < tf[i - 1] ? 14 : -7) : 4
            anchor = square ? "end" : "start"
            printf "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" fill=\"%s\" text-anchor=\"%s\">%s</text>\n", X(ai[at]) + dx, Y(tf[at]) + dy, colour, anchor, esc(text)
        }
        print "</svg>"
    }' "$1"
}

if [ -n "$from" ]; then
    [ -f "$from" ] || die roofline.sh "no file $from"
    grep -q '^ceiling hbm_read [0-9]' "$from" && grep -q '^point ' "$from" ||
        die roofline.sh "$from holds no roofline data (what --data saves)"
    draw "$from"
    exit $?
fi

steps=()
for dir in $(step_dirs); do steps+=("$dir"); done
last=${steps[${#steps[@]} - 1]}
gpu_or_die roofline.sh
build roofline.sh all
echo "roofline.sh: measuring the ceilings" >&2
declare -A roof=()
read_ceilings || die roofline.sh "ceilings/run did not run (make ceilings, then ./ceilings/run says why)"
NCU=${NCU:-ncu}
if [ $compulsory = 0 ] && ! command -v "$NCU" >/dev/null; then
    echo "roofline.sh: no Nsight Compute (ncu): the compulsory bytes instead" >&2
    compulsory=1
fi

out=$(mktemp)
trap 'rm -f "$out" "$out.ncu"' EXIT
gpu="" status=0
# Bytes one call moves to and from device memory: "STEP CUBLAS", each the
# DRAM bytes ncu counts for the step's kernels and for cuBLAS's in one cold
# run of each (flush_l2 first, as --cold does), or the compulsory bytes.
# cuBLAS's: the kernels its timed call ran (THEIRS, the run's cublas_kernel,
# names joined by "+"), in the one call that follows a flush, not the other
# products a step's run times for information (step 16's cuBLASLt with one
# scale per tensor), nor the untimed call that asks cuBLASLt's FP8 whether
# it has an algorithm; none where it ran nothing or its kernels are unknown.
bytes_of() {
    local s=$1 m=$2 n=$3 k=$4 theirs=$5 in
    in=$(case $(bash scripts/arch.sh input "$s") in fp16) echo 2 ;; e4m3) echo 1 ;; *) echo 4 ;; esac)
    if [ $compulsory = 1 ]; then
        awk -v m="$m" -v n="$n" -v k="$k" -v ib="$in" 'BEGIN { b = ib * (m * k + k * n) + 4 * m * n; print b, b }'
        return
    fi
    "$NCU" --clock-control none --cache-control none --csv --print-units base \
        --metrics dram__bytes_read.sum,dram__bytes_write.sum \
        ./"$s"/run -m "$m" -n "$n" -k "$k" --warmup 0 --iters 1 --no-check --cold >"$out.ncu" 2>&1 ||
        { echo "roofline.sh: ncu failed on $s at $m x $n x $k" >&2; echo "- -"; return; }
    # One row per kernel and metric, its columns found by name, in launch order: the step's kernels, cuBLAS's
    # (a name its call ran, as CUPTI saw it: whole, or in a C++ name's mangled form, its length before it) and
    # the rest (information). A flush starts a group; cuBLAS's kernels count in the last group they begin,
    # as many kernels as its call runs, the timed call (the step's kernel or another call's ends a group).
    awk -F'","' -v ran="+$theirs+" 'BEGIN { need = split(ran, names, "+") - 2 }
        /"Metric Name"/ { for (i = 1; i <= NF; i++) { h = $i; gsub(/"/, "", h); col[h] = i }; next }
        col["Metric Name"] && $col["Metric Name"] ~ /^dram__bytes_(read|write)\.sum$/ {
            name = $col["Kernel Name"]; id = $col["ID"]; v = $col["Metric Value"]; gsub(/[",]/, "", v)
            if (name ~ /l2_flush_kernel/) { if (kernels) last = group; group = kernels = 0; open = 1; delete seen; next }
            if (name ~ /gemm_kernel|zero_kernel|repack_kernel|scale_kernel/) { mine += v; open = 0; next }
            if (open && name != "" && (index(ran, "+" name "+") || index(ran, length(name) name)) &&
                (id in seen || kernels < need)) { kernels += !(id in seen); seen[id] = 1; group += v }
            else open = 0 }
        END { if (kernels) last = group; printf "%.0f %.0f\n", mine, last }' "$out.ncu"
}

# One point per step at 4096^3 and, for the last step and cuBLAS, at each few-row shape.
point() { # point LABEL KIND FLOPS BYTES TFLOPS
    awk -v l="$1" -v k="$2" -v f="$3" -v b="$4" -v t="$5" 'BEGIN { if (b > 0 && t ~ /^[0-9.]+$/) printf "point %s %s %.4g %s\n", l, k, f / b, t }'
}
{
    echo "ceiling fma ${roof[fma]:--}"; echo "ceiling mma ${roof[mma]:--}"; echo "ceiling wgmma ${roof[wgmma]:--}"
    echo "ceiling wgmma_fp8 ${roof[wgmma_fp8]:--}"
    echo "ceiling hbm_read ${roof[hbm_read]:--}"; echo "ceiling l2_read ${roof[l2_read]:--}"
} >"$out"
declare -A r
runs=()
for s in "${steps[@]}"; do runs+=("$s 4096 4096 4096 step"); done
for m in 1 16 128; do runs+=("$last $m 8192 8192 few"); done
cublas_square=""
for run in "${runs[@]}"; do
    read -r s m n k kind <<<"$run"
    [ -x "$s/run" ] || continue
    echo "roofline.sh: $s at $m x $n x $k" >&2
    run_step roofline.sh "$s" -m "$m" -n "$n" -k "$k" --iters "$iters" --no-check --cold
    case $? in 0) ;; 3) continue ;; *) status=1; continue ;; esac
    gpu=${r[gpu]} cuda=${r[cuda]}
    read -r mine theirs <<<"$(bytes_of "$s" "$m" "$n" "$k" "${r[cublas_kernel]:-}")"
    flops=$(awk -v m="$m" -v n="$n" -v k="$k" 'BEGIN { printf "%.0f", 2 * m * n * k }')
    label=${s:4:2}
    [ "$kind" = few ] && label="${s:4:2} M=$m"
    point "${label// /_}" "$kind" "$flops" "$mine" "${r[tflops]}" >>"$out"
    printf '%-28s %10s flops/byte %9s TFLOPS   cuBLAS %9s TFLOPS\n' "$s $m x $n x $k" \
        "$(awk -v f="$flops" -v b="$mine" 'BEGIN { if (b > 0) printf "%.3g", f / b; else print "-" }')" \
        "${r[tflops]}" "${r[cublas_tflops]}" >&2
    if [ "$kind" = few ] || { [ "$s" = "$last" ] && [ -z "$cublas_square" ]; }; then
        [ "$kind" = few ] && label="cuBLAS_M=$m" || { label=cuBLAS; cublas_square=1; }
        point "$label" cublas "$flops" "$theirs" "${r[cublas_tflops]}" >>"$out"
    fi
done
[ -n "$gpu" ] || die roofline.sh "no step ran"
how=$([ $compulsory = 1 ] && echo "the compulsory bytes (A, B read once, C written once)" ||
      echo "DRAM bytes counted by Nsight Compute")
sed -i "1i title Roofline of ${gpu//_/ } (CUDA $cuda), $(date -u +%Y-%m-%d)\nnote Every step at 4096^3, the last step and cuBLAS at M x 8192 x 8192, cold; intensity from $how" "$out"
[ -z "$data" ] || cp "$out" "$data"
draw "$out" || status=1
exit $status
