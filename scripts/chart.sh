#!/usr/bin/env bash
# An SVG bar chart of a scripts/run_all.sh table, from the CSV it writes
# (run_all.sh --csv FILE): one bar of TFLOPS per row, to one scale, the
# float rows in one colour and the half rows in another, cuBLAS's rows
# lighter. Needs nothing but awk; a browser, or the repository page, shows
# the result.
set -u
cd "$(dirname "$0")/.."
source scripts/common.sh

usage() {
    cat <<USAGE
usage: scripts/chart.sh CSV [--title TEXT] > chart.svg
  CSV            what scripts/run_all.sh --csv wrote
  --title TEXT   the line above the bars (default: the CSV's name)
USAGE
}

csv="" title=""
while [ $# -gt 0 ]; do
    case $1 in
        --title) [ $# -ge 2 ] || die chart.sh "--title needs a text"; title=$2; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        -*) die chart.sh "unknown option '$1' (see --help)" ;;
        *) [ -z "$csv" ] || die chart.sh "one CSV at a time (see --help)"; csv=$1; shift ;;
    esac
done
[ -n "$csv" ] || { usage >&2; exit 2; }
[ -f "$csv" ] || die chart.sh "no file $csv"
head -n 1 "$csv" | grep -qx 'step,technique,precision,ms,tflops,x_step01,x_prev,pct_cublas,check' ||
    die chart.sh "$csv is not what scripts/run_all.sh --csv writes"
[ -n "$title" ] || title=$(basename "$csv")

awk -F, -v title="$title" '
    function esc(s) { gsub(/&/, "\\&amp;", s); gsub(/</, "\\&lt;", s); gsub(/>/, "\\&gt;", s); return s }
    NR == 1 { next }
    {
        n++; name[n] = $1; prec[n] = $3; tf[n] = $5; pct[n] = $8
        if ($5 != "-" && $5 + 0 > top) top = $5 + 0
    }
    END {
        if (n == 0 || top == 0) { print "chart.sh: no row with TFLOPS" > "/dev/stderr"; exit 2 }
        left = 200; width = 480; row = 24; head = 40
        w = left + width + 150; h = head + n * row + 30
        printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" font-size=\"12\">\n", w, h
        printf "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", w, h
        printf "<text x=\"10\" y=\"22\" font-size=\"14\" font-weight=\"bold\">%s</text>\n", esc(title)
        for (i = 1; i <= n; i++) {
            y = head + (i - 1) * row
            cublas = name[i] ~ /^cuBLAS/
            colour = prec[i] == "fp32" ? (cublas ? "#9ecae1" : "#3182bd") : (cublas ? "#fdae6b" : "#e6550d")
            printf "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>\n", left - 8, y + 16, esc(name[i])
            if (tf[i] == "-" || tf[i] == "") {
                printf "<text x=\"%d\" y=\"%d\" fill=\"#777\">not run</text>\n", left, y + 16
                continue
            }
            len = tf[i] / top * width; if (len < 1) len = 1
            printf "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"><title>%s: %s TFLOPS, %s%% of cuBLAS</title></rect>\n", left, y + 4, len, row - 8, colour, esc(name[i]), tf[i], pct[i]
            printf "<text x=\"%.1f\" y=\"%d\">%s TFLOPS, %s%%</text>\n", left + len + 6, y + 16, tf[i], pct[i]
        }
        printf "<text x=\"%d\" y=\"%d\" fill=\"#555\">TFLOPS to scale; %% of cuBLAS of the same precision, timed in the same process</text>\n", 10, h - 10
        print "</svg>"
    }' "$csv"
