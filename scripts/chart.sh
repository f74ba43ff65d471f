#!/usr/bin/env bash
# An SVG bar chart of a scripts/run_all.sh table or a scripts/shapes.sh
# table: one bar of TFLOPS per row, all to one scale, with its % of cuBLAS
# beside it, as the text tables show them. It reads what those scripts
# write: run_all.sh's CSV (--csv FILE) or its saved output, or shapes.sh's
# CSV. Needs nothing but awk; a browser, or the repository page, shows the
# result.
set -u
cd "$(dirname "$0")/.."
source scripts/common.sh

usage() {
    cat <<USAGE
usage: scripts/chart.sh FILE [--title TEXT] > chart.svg
  FILE           what scripts/run_all.sh --csv wrote, a saved run_all.sh
                 output, or what scripts/shapes.sh --csv wrote
  --title TEXT   the line above the bars (default: the run's GPU and date
                 for a saved output, else the file's name)
USAGE
}

file="" title=""
while [ $# -gt 0 ]; do
    case $1 in
        --title) [ $# -ge 2 ] || die chart.sh "--title needs a text"; title=$2; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        -*) die chart.sh "unknown option '$1' (see --help)" ;;
        *) [ -z "$file" ] || die chart.sh "one file at a time (see --help)"; file=$1; shift ;;
    esac
done
[ -n "$file" ] || { usage >&2; exit 2; }
[ -f "$file" ] || die chart.sh "no file $file"

# Every kind of input becomes the same rows: group (a shape, or empty),
# name, precision, TFLOPS, % cuBLAS, separated by tabs.
first=$(head -n 1 "$file")
case $first in
    step,technique,precision,ms,tflops,x_step01,x_prev,pct_cublas,check*)
        rows=$(awk -F, 'NR > 1 { printf "\t%s\t%s\t%s\t%s\n", $1, $3, $5, $8 }' "$file")
        [ -n "$title" ] || title=$(basename "$file") ;;
    "GEMM M="*)
        rows=$(run_all_rows "$file" | awk -F'\t' '{ printf "\t%s\t%s\t%s\t%s\n", $1, $3, $5, $8 }')
        [ -n "$title" ] || title=${first%%;*} ;;
    class,m,n,k,step,tflops,cublas_tflops,pct_cublas)
        # shapes.sh's CSV: a step per line; cuBLAS's row of each shape is the
        # median of its runs beside the steps, as in shapes.sh's table.
        rows="" shape="" theirs=()
        cublas_row() {
            [ -z "$shape" ] || rows+=$(printf '%s\tcuBLAS\tfp16\t%.2f\t' "$shape" "$(echo "${theirs[*]}" | median)")$'\n'
        }
        while IFS=, read -r class m n k step tflops cublas pct; do
            [ "$class: $m x $n x $k" = "$shape" ] || { cublas_row; shape="$class: $m x $n x $k" theirs=(); }
            theirs+=("$cublas")
            rows+="$shape"$'\t'"$step"$'\t'fp16$'\t'"$tflops"$'\t'"$pct"$'\n'
        done < <(tail -n +2 "$file")
        cublas_row
        rows=${rows%$'\n'}
        [ -n "$title" ] || title=$(basename "$file") ;;
    *) die chart.sh "$file is not what scripts/run_all.sh or scripts/shapes.sh writes (see --help)" ;;
esac

awk -F'\t' -v title="$title" '
    function esc(s) { gsub(/&/, "\\&amp;", s); gsub(/</, "\\&lt;", s); gsub(/>/, "\\&gt;", s); return s }
    {
        n++; group[n] = $1; name[n] = $2; prec[n] = $3; tf[n] = $4; pct[n] = $5
        if (tf[n] ~ /^[0-9.]+$/ && tf[n] + 0 > top) top = tf[n] + 0
        if (!(name[n] in colour_of) && name[n] !~ /^cuBLAS/) colour_of[name[n]] = ++steps
    }
    END {
        if (n == 0 || top == 0) { print "chart.sh: no row with TFLOPS" > "/dev/stderr"; exit 2 }
        split("#e6550d #3182bd #31a354 #756bb1 #636363", palette, " ")
        left = 200; width = 480; row = 24; head = 40; y = head
        for (i = 1; i <= n; i++) if (group[i] != group[i - 1]) groups++
        w = left + width + 170; h = head + n * row + groups * row + 30
        printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" font-size=\"12\">\n", w, h
        printf "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", w, h
        printf "<text x=\"10\" y=\"22\" font-size=\"14\" font-weight=\"bold\">%s</text>\n", esc(title)
        for (i = 1; i <= n; i++) {
            if (group[i] != "" && group[i] != group[i - 1]) {
                printf "<text x=\"10\" y=\"%d\" font-weight=\"bold\">%s</text>\n", y + 18, esc(group[i])
                y += row
            }
            cublas = name[i] ~ /^cuBLAS/
            # the ladder: float rows blue, half rows orange; the shapes: a colour per step
            if (group[i] == "")
                colour = prec[i] == "fp32" ? (cublas ? "#9ecae1" : "#3182bd") : (cublas ? "#fdae6b" : "#e6550d")
            else
                colour = cublas ? "#bdbdbd" : palette[(colour_of[name[i]] - 1) % 5 + 1]
            printf "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>\n", left - 8, y + 16, esc(name[i])
            if (tf[i] !~ /^[0-9.]+$/) {
                printf "<text x=\"%d\" y=\"%d\" fill=\"#777\">not run</text>\n", left, y + 16
            } else {
                len = tf[i] / top * width; if (len < 1) len = 1
                label = tf[i] " TFLOPS" (pct[i] ~ /^[0-9.]+$/ ? ", " pct[i] "%" : "")
                printf "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"><title>%s: %s</title></rect>\n", left, y + 4, len, row - 8, colour, esc(name[i]), label
                printf "<text x=\"%.1f\" y=\"%d\">%s</text>\n", left + len + 6, y + 16, label
            }
            y += row
        }
        printf "<text x=\"%d\" y=\"%d\" fill=\"#555\">TFLOPS to scale; %% of cuBLAS of the same precision, timed in the same process</text>\n", 10, h - 10
        print "</svg>"
    }' <<<"$rows"
