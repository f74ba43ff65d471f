#!/usr/bin/env bash
# Writes the measured numbers into the docs from saved scripts/run_all.sh
# outputs, so that no number is typed by hand:
#   - each kernel.cu header's "Measured:" paragraph, from the first run;
#   - README.md's tables (between <!-- run_all N --> and <!-- /run_all -->
#     for N^3, <!-- run_all M N K --> for other shapes), the sweep
#     (<!-- sweep --> ... <!-- /sweep -->, from scripts/sweep.sh), the shapes
#     (<!-- shapes --> ... <!-- /shapes -->, from scripts/shapes.sh), the
#     spread over processes (<!-- spread N --> ... <!-- /spread -->, from
#     scripts/spread.sh), each step section's line (<!-- measured STEP -->
#     ... <!-- /measured -->), its Try-it's line (<!-- try STEP --> ...
#     <!-- /try -->, from scripts/try.sh) and the lesson sizes
#     (<!-- lesson sizes --> ... <!-- /lesson sizes -->), a step's profile
#     (<!-- profile STEP --> ... <!-- /profile -->, from scripts/profile.sh)
#     and its SASS counts (<!-- sass STEP --> ... <!-- /sass -->, from
#     scripts/sass.sh), and what the warm-up does to a step's timing
#     (<!-- warmup STEP --> ... <!-- /warmup -->, from scripts/warmup.sh),
#     and the roofline's numbers (<!-- roofline --> ... <!-- /roofline -->,
#     from scripts/roofline.sh --data);
#   - in a header, the line of an idea it measures (" * Measured
#     (scripts/try.sh 07 frags, ...", from scripts/try.sh 07 frags), and
#     its " * Measured at M x N x K:" paragraph, from a run_all.sh output of
#     that shape;
#   - an SVG chart beside each run_all.sh output, and beside a shapes.sh
#     output with its CSV, shown under its table in the README.
# usage: scripts/run_all.sh | tee r4096.txt; scripts/run_all.sh -s 8192 | tee r8192.txt
#        scripts/update_docs.sh r4096.txt r8192.txt [more run_all, sweep, shapes, spread, try or roofline outputs]
# The first file must be a run_all.sh output: the headers' lines come from it.
set -u
cd "$(dirname "$0")/.."
source scripts/common.sh

usage="usage: scripts/update_docs.sh RUN_ALL_OUTPUT [RUN_ALL_SWEEP_SHAPES_SPREAD_TRY_PROFILE_SASS_WARMUP_OR_ROOFLINE_OUTPUT...] (the first for the headers)"
case ${1:-} in
    -h|--help) echo "$usage"; exit 0 ;;
    -*) die update_docs.sh "unknown option '$1' (see --help)" ;;
esac
[ $# -ge 1 ] || die update_docs.sh "$usage"
readme=README.md
# The README block a saved output goes to: "run_all 4096", "run_all 4096 4100
# 4096", "sweep", "shapes", "spread 8192", "try step05_wmma", "profile
# step07_pipeline", "sass step07_pipeline" or "warmup
# step10_warp_specialized"; "idea step07_pipeline frags" for an idea's line
# in a header; nothing if the file is none of these.
# "M N K" of a run_all.sh output, from its first line; nothing if it is none.
run_shape() { sed -n '1s/^GEMM M=\([0-9]*\) N=\([0-9]*\) K=\([0-9]*\) on .*/\1 \2 \3/p' "$1"; }
block() {
    local shape kind=run_all
    shape=$(run_shape "$1")
    if [ -z "$shape" ]; then
        kind=spread
        shape=$(sed -n '1s/^% cuBLAS of each step in [0-9]* run_all.sh processes: M=\([0-9]*\) N=\([0-9]*\) K=\([0-9]*\) on .*/\1 \2 \3/p' "$1")
    fi
    if [ -n "$shape" ]; then
        set -- $shape
        if [ "$1" = "$2" ] && [ "$2" = "$3" ]; then echo "$kind $1"; else echo "$kind $1 $2 $3"; fi
    elif head -n 1 "$1" | grep -qE '^step[0-9]+_[a-z_0-9]+ against cuBLAS'; then
        echo sweep
    elif head -n 1 "$1" | grep -qE '^Shapes on .*, [0-9]{4}-[0-9]{2}-[0-9]{2}:'; then
        echo shapes
    elif head -n 1 "$1" | grep -qE '^step[0-9]+_[a-z0-9_]+ at [0-9]+\^3 on .* \(CUDA [0-9.]+\), [0-9-]+: ncu '; then
        head -n 1 "$1" | sed 's/^\(step[0-9]*_[a-z0-9_]*\) .*/profile \1/'
    elif head -n 1 "$1" | grep -qE '^step[0-9]+_[a-z0-9_]+, sm_[0-9]+a?: instructions per kernel'; then
        head -n 1 "$1" | sed 's/^\(step[0-9]*_[a-z0-9_]*\),.*/sass \1/'
    elif head -n 1 "$1" | grep -qE '^Warm-up of step[0-9]+_[a-z0-9_]+ at [0-9]+\^3 on .* \(CUDA [0-9.]+\), [0-9-]+: '; then
        head -n 1 "$1" | sed 's/^Warm-up of \(step[0-9]*_[a-z0-9_]*\) .*/warmup \1/'
    elif head -n 1 "$1" | grep -qE '^title Roofline of .* \(CUDA [0-9.]+\), [0-9-]+$'; then
        echo roofline
    else
        sed -n -e '1s/^Try-it of \(step[0-9]*_[a-z0-9_]*\) on .* (CUDA [0-9.]*), [0-9-]*;.*/try \1/p' \
            -e '1s/^Try-it of \(step[0-9]*_[a-z0-9_]* [a-z]*\) on .* (CUDA [0-9.]*), [0-9-]*;.*/idea \1/p' "$1"
    fi
}
# A Try-it's line from scripts/try.sh's output: "Measured (scripts/try.sh 05,
# NVIDIA H200, CUDA 13.0, 2026-11-23): tried 235.41 TFLOPS (34.0% of cuBLAS),
# as is 280.11 (40.6%)."; nothing if a number is missing.
tried() {
    awk '
        NR == 1 { if (!match($0, /^Try-it of step[0-9]+_[^ ]+( [a-z]+)? on .* \(CUDA [0-9.]+\), [0-9-]+;/)) exit
                  step = substr($3, 5, 2) ($4 == "on" ? "" : " " $4); where = substr($0, index($0, " on ") + 4)
                  sub(/;.*/, "", where); sub(/ \(CUDA /, ", CUDA ", where); sub(/\),/, ",", where) }
        /^  tried: / && $2 ~ /^[0-9.]+$/ && $4 ~ /^[0-9.]+%$/ { tf = $2; pct = $4 }
        /^  as is: / && $3 ~ /^[0-9.]+$/ && $5 ~ /^[0-9.]+%$/ { tf0 = $3; pct0 = $5 }
        END { if (step != "" && tf != "" && tf0 != "")
                  printf "Measured (`scripts/try.sh %s`, %s): tried %s TFLOPS (%s of cuBLAS), as is %s (%s).\n",
                         step, where, tf, pct, tf0, pct0 }' "$1"
}
# The roofline's numbers from its saved data: the roofs, where memory's meets
# each instruction's (the knee), and each point's bound, the lower of its
# instruction's roof and memory's at its intensity, with its TFLOPS as a
# percent of that; neighbouring steps under the same bound, their
# intensities within a quarter of each other, share a line. A point's
# instruction is its step's (a cuBLAS point's: the last step's).
roofline_text() {
    local units="" s last
    for s in $(step_dirs); do units+="${s:4:2}=$(unit_of "$s") "; last=${s:4:2}; done
    awk -v units="$units" -v last="$last" '
        function num(v) { return v >= 100 ? sprintf("%.0f", v) : v >= 10 ? sprintf("%.1f", v) : sprintf("%.2f", v) }
        function range(a, b) { return a == b ? a : a "-" b }
        function flush() {
            if (!rows) return
            printf "%-12s %-18s %10s %15s   %-18s %s\n", what, shape, range(num(ai_lo), num(ai_hi)), range(tf_lo, tf_hi),
                   bound, range(sprintf("%.1f", pct_lo), sprintf("%.1f", pct_hi))
            rows = 0
        }
        BEGIN { n = split(units, u, " "); for (i = 1; i <= n; i++) { split(u[i], kv, "="); unit[kv[1]] = kv[2] }
                split("fma mma wgmma wgmma_fp8", order, " ")
                name["fma"] = "FP32 FMA"; name["mma"] = "mma.sync"; name["wgmma"] = "wgmma"; name["wgmma_fp8"] = "wgmma e4m3" }
        $1 == "title" { title = substr($0, 7) }
        $1 == "ceiling" && $3 ~ /^[0-9.]+$/ { rate[$2] = $3 + 0 }
        $1 == "point" && $4 ~ /^[0-9.e+-]+$/ && $5 ~ /^[0-9.]+$/ { p++; lab[p] = $2; kind[p] = $3; ai[p] = $4 + 0; tf[p] = $5 }
        END {
            if (!("hbm_read" in rate) || !p) exit 1
            roofs = knees = ""
            for (i = 1; i <= 4; i++) {
                c = order[i]; if (!(c in rate)) continue
                roofs = roofs (roofs == "" ? "" : ", ") name[c] " " rate[c]
                knees = knees (knees == "" ? "" : ", ") name[c] " " num(rate[c] / rate["hbm_read"])
            }
            printf "%s\nroofs: %s TFLOPS; HBM read %s TB/s\n", title, roofs, rate["hbm_read"]
            printf "knees, flops per byte where memory meets each: %s\n\n", knees
            printf "%-12s %-18s %10s %15s   %-18s %s\n", "point", "shape", "flops/byte", "TFLOPS", "bound (TFLOPS)", "% of it"
            for (i = 1; i <= p; i++) {
                cublas = lab[i] ~ /^cuBLAS/; step = cublas ? last : substr(lab[i], 1, 2)
                c = unit[step]; if (!(c in rate)) continue
                top = rate[c]; b = name[c] " " rate[c]
                if (rate["hbm_read"] * ai[i] < top) { top = rate["hbm_read"] * ai[i]; b = "HBM " num(top) }
                pct = 100 * tf[i] / top
                m = lab[i]; sub(/^[^=]*=/, "", m); sh = kind[i] == "step" || (cublas && lab[i] !~ /M=/) ? "4096^3" : m " x 8192 x 8192"
                if (kind[i] == "step" && rows && gkind == "step" && b == bound && ai[i] <= 1.25 * ai_lo && ai[i] >= 0.8 * ai_hi) {
                    what = "steps " first "-" step
                    if (ai[i] < ai_lo) ai_lo = ai[i]; if (ai[i] > ai_hi) ai_hi = ai[i]
                    if (tf[i] + 0 < tf_lo + 0) tf_lo = tf[i]; if (tf[i] + 0 > tf_hi + 0) tf_hi = tf[i]
                    if (pct < pct_lo) pct_lo = pct; if (pct > pct_hi) pct_hi = pct
                    continue
                }
                flush()
                rows = 1; gkind = kind[i]; bound = b; first = step; shape = sh
                what = cublas ? "cuBLAS" : "step " step
                ai_lo = ai_hi = ai[i]; tf_lo = tf_hi = tf[i]; pct_lo = pct_hi = pct
            }
            flush()
        }' "$1"
}
# The headers with a " * Measured at 4096 x 4096 x 4100:" paragraph for the
# shape of a run_all.sh output.
at_shape() { run_shape "$1" | sed 's/ / x /g'; }
at_lines() {
    local shape s
    shape=$(at_shape "$1")
    [ -n "$shape" ] || return 0
    for s in $(step_dirs); do grep -q "^ \* Measured at $shape:" "$s/kernel.cu" && echo "$s"; done
    return 0
}
for f in "$@"; do
    [ -f "$f" ] || die update_docs.sh "no file $f"
    b=$(block "$f")
    [ -n "$b" ] || die update_docs.sh "$f is not scripts/run_all.sh, sweep.sh, shapes.sh, spread.sh, try.sh, profile.sh, sass.sh, warmup.sh or roofline.sh --data output"
    case $b in
        idea*) read -r _ s idea <<<"$b"
               grep -q "^ \* *Measured (scripts/try.sh ${s:4:2} $idea," "$s/kernel.cu" ||
                   die update_docs.sh "$s/kernel.cu has no line ' * Measured (scripts/try.sh ${s:4:2} $idea, ...' for $f" ;;
        *) grep -qxF "<!-- $b -->" "$readme" || [ -n "$(at_lines "$f")" ] ||
               die update_docs.sh "README.md has no <!-- $b --> block, and no header a ' * Measured at' line, for $f" ;;
    esac
    [[ $b != try* && $b != idea* ]] || [ -n "$(tried "$f")" ] || die update_docs.sh "$f: no tried and as-is numbers in it"
    [ "$b" != roofline ] || roofline_text "$f" >/dev/null || die update_docs.sh "$f: no memory roof or no point in it"
done
[[ $(block "$1") == run_all* ]] || die update_docs.sh "$1 is not scripts/run_all.sh output: the headers are written from the first file"

# One step's numbers from a run's table: precision ms tflops x_step01 x_prev pct check.
row() { run_all_rows "$1" | awk -F'\t' -v s="$2" '$1 == s && ($9 == "PASS" || $9 == "FAIL") { print $3, $4, $5, $6, $7, $8, $9 }'; }
# "NVIDIA H200, CUDA 13.0, 4096^3, 2026-11-22" from a run's first line.
where() {
    sed -n '1s/^GEMM M=\([0-9]*\) N=\([0-9]*\) K=\([0-9]*\) on \(.*\) (CUDA \([0-9.]*\)), \([0-9-]*\);.*/\4, CUDA \5, M=\1 N=\2 K=\3, \6/p' "$1" |
        sed 's/M=\([0-9]*\) N=\1 K=\1/\1^3/'
}
# "470.24 TFLOPS, 63.4% of cuBLAS GemmEx, 1.38x step 06"
measured() {
    local run=$1 s=$2 prec ms tf x01 xprev pct check prev="" d
    read -r prec ms tf x01 xprev pct check <<<"$(row "$run" "$s")" || return 1
    [ -n "$tf" ] || return 1
    for d in $(step_dirs); do [ "$d" = "$s" ] && break; prev=$d; done
    printf '%s TFLOPS, %s%% of %s' "$tf" "$pct" "$(case $prec in fp16) echo cuBLAS GemmEx ;; e4m3) echo cuBLASLt FP8 ;; *) echo cuBLAS SGEMM ;; esac)"
    [ -n "$prev" ] && [ "$xprev" != - ] && printf ', %sx step %s' "$xprev" "${prev:4:2}"
    return 0
}

first=$1
[ -n "$(where "$first")" ] || die update_docs.sh "$first: its first line names no GPU, CUDA version or date"
for s in $(step_dirs); do
    row "$first" "$s" | grep -q . || [ ! -x "$s/run" ] ||
        die update_docs.sh "$first has no row for $s, which this tree builds: not this code's run?"
done

# The charts (scripts/chart.sh), drawn before anything is written: one beside
# each run_all.sh output (r8192.txt: r8192.svg), and one beside a shapes.sh
# output whose CSV is beside it (shapes.txt, shapes.csv: shapes.svg). The
# README shows those inside the repository under their tables.
charts=$(mktemp -d)
trap 'rm -rf "$charts"' EXIT
declare -A chart_of=() drawn=()
for run in "$@"; do
    drawn[$run]=$charts/${#drawn[@]}.svg
    case $(block "$run") in
        run_all*) grep -qxF "<!-- $(block "$run") -->" "$readme" || continue
                  bash scripts/chart.sh "$run" >"${drawn[$run]}" ||
                      die update_docs.sh "scripts/chart.sh could not draw $run" ;;
        shapes) [ -f "${run%.*}.csv" ] || continue
                bash scripts/chart.sh "${run%.*}.csv" --title "$(head -n 1 "$run" | sed 's/:.*//')" >"${drawn[$run]}" ||
                    die update_docs.sh "scripts/chart.sh could not draw ${run%.*}.csv" ;;
        *) continue ;;
    esac
    chart_of[$run]=${run%.*}.svg
done
for run in "${!chart_of[@]}"; do cp "${drawn[$run]}" "${chart_of[$run]}"; done
# A header's sentence, rewritten: put_sentence FILE PREFIX HEAD TEXT. The
# sentence that starts with PREFIX HEAD on a line of its own (PREFIX is " * "
# or " *   ") runs to the line that ends it with ")." (or to the end of its
# paragraph); TEXT takes its place, wrapped at 78 columns behind PREFIX.
put_sentence() {
    local new
    new=$(fold -s -w $((78 - ${#2})) <<<"$4" | sed 's/ *$//' | sed "s/^/$2/")
    awk -v head="$2$3" -v new="$new" '
        !done && index($0, head) == 1 { print new; skip = 1; done = 1 }
        skip && ($0 == " *" || $0 == " */") { skip = 0 }
        skip { if (/\)\.$/) skip = 0; next }
        { print }' "$1" >"$1.new" && mv "$1.new" "$1"
}
for s in $(step_dirs); do
    m=$(measured "$first" "$s") || { echo "update_docs.sh: $s is not in $first; its header is left as it was" >&2; continue; }
    put_sentence "$s/kernel.cu" " * " "Measured:" "Measured: $m (scripts/run_all.sh, $(where "$first"))."
done
for run in "$@"; do
    case $(block "$run") in
        run_all*)
            read -r m n k <<<"$(run_shape "$run")"; shape="$m x $n x $k"
            for s in $(at_lines "$run"); do
                mm=$(measured "$run" "$s") || die update_docs.sh "$run has no row for $s, whose header has a Measured at $shape line"
                put_sentence "$s/kernel.cu" " * " "Measured at $shape:" \
                    "Measured at $shape: $mm (scripts/run_all.sh -m $m -n $n -k $k, $(where "$run" | sed "s/, M=[0-9]* N=[0-9]* K=[0-9]*//"))."
            done ;;
        idea*)
            read -r _ s idea <<<"$(block "$run")"
            line=$(grep -m 1 "^ \* *Measured (scripts/try.sh ${s:4:2} $idea," "$s/kernel.cu")
            put_sentence "$s/kernel.cu" "${line%%Measured*}" "Measured (scripts/try.sh ${s:4:2} $idea," \
                "$(tried "$run" | tr -d '`')" ;;
    esac
done

for run in "$@"; do
    b=$(block "$run") image=""
    [[ $b != idea* ]] && grep -qxF "<!-- $b -->" "$readme" || continue
    if [ -n "${chart_of[$run]:-}" ]; then
        svg=$(realpath --relative-to=. "${chart_of[$run]}")
        case $svg in
            ../*|/*) echo "update_docs.sh: ${chart_of[$run]} is outside the repository: README.md does not show it" >&2 ;;
            *) image="![the table above as a chart, TFLOPS to scale]($svg)" ;;
        esac
    fi
    # A table goes in as printed; a Try-it as its one line.
    body=$charts/body
    if [[ $b == try* ]]; then
        tried "$run" >"$body"
    elif [ "$b" = roofline ]; then
        { echo '```'; roofline_text "$run"; echo '```'; } >"$body"
    else
        { echo '```'; cat "$run"; echo '```'; [ -z "$image" ] || printf '\n%s\n' "$image"; } >"$body"
    fi
    awk -v first="<!-- $b -->" -v last="<!-- /${b%% *} -->" -v file="$body" '
        $0 == first { print; while ((getline line < file) > 0) print line; skip = 1; next }
        skip && $0 == last { skip = 0 }
        !skip { print }' "$readme" >"$readme.new" && mv "$readme.new" "$readme" ||
        die update_docs.sh "could not write $run into README.md"
done
for s in $(step_dirs); do
    m=$(measured "$first" "$s") || continue
    line="Measured: $m ($(where "$first"))."
    awk -v s="$s" -v line="$line" '
        $0 == "<!-- measured " s " -->" { print; print line; skip = 1; next }
        skip && /^<!-- \/measured -->$/ { skip = 0 }
        !skip { print }' "$readme" >"$readme.new" && mv "$readme.new" "$readme"
done
# The size of each lesson, as make lesson counts it (<!-- lesson sizes -->).
if grep -q '^<!-- lesson sizes -->$' "$readme"; then
    sizes=$(mktemp)
    for dir in $(step_dirs); do bash scripts/lesson.sh "$dir" --stat 2>/dev/null; done >"$sizes"
    awk -v file="$sizes" '
        $0 == "<!-- lesson sizes -->" { print; print "```"; while ((getline line < file) > 0) print line; print "```"; skip = 1; next }
        skip && /^<!-- \/lesson sizes -->$/ { skip = 0 }
        !skip { print }' "$readme" >"$readme.new" && mv "$readme.new" "$readme"
    rm -f "$sizes"
fi
echo "update_docs.sh: headers and README.md written from $*"
