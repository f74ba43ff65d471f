#!/usr/bin/env bash
# The schedule as a picture: an SVG of the SMs over time, a row per SM, a
# bar per multiply (a whole tile or a share of one), fixup and store, each
# consumer warpgroup in half its SM's row. From the stamps a step's kernels
# record when built with them on (common/timeline.cuh, steps 10 and up; no
# default build has them), in one call after a warm-up call. Needs a GPU,
# except to draw saved stamps (--from).
set -u
cd "$(dirname "$0")/.."
source scripts/common.sh

usage() {
    cat <<USAGE
usage: scripts/timeline.sh STEP [-s SIZE | -m M -n N -k K] [--stamps FILE] > timeline.svg
       scripts/timeline.sh --from FILE > timeline.svg
  STEP           a step's number (11) or folder, from step 10 on
  -s, --size     M = N = K = SIZE (default 3000)
  -m, -n, -k     one dimension each
  --stamps FILE  also save the stamps, to draw again with --from
  --from FILE    draw stamps saved with --stamps; no GPU needed
USAGE
}

step="" m=3000 n=3000 k=3000 stamps="" from=""
while [ $# -gt 0 ]; do
    case $1 in
        -s|--size) positive_int timeline.sh "$@"; m=$2 n=$2 k=$2; shift 2 ;;
        -m) positive_int timeline.sh "$@"; m=$2; shift 2 ;;
        -n) positive_int timeline.sh "$@"; n=$2; shift 2 ;;
        -k) positive_int timeline.sh "$@"; k=$2; shift 2 ;;
        --stamps) [ $# -ge 2 ] && [ -n "$2" ] || die timeline.sh "--stamps needs a file name"; stamps=$2; shift 2 ;;
        --from) [ $# -ge 2 ] && [ -n "$2" ] || die timeline.sh "--from needs a file name"; from=$2; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        -*) die timeline.sh "unknown option '$1' (see --help)" ;;
        *) [ -z "$step" ] || die timeline.sh "one step at a time (see --help)"
           step=$(find_step timeline.sh "$1") || exit 2; shift ;;
    esac
done

if [ -n "$from" ]; then
    [ -z "$step" ] || die timeline.sh "--from draws saved stamps: no STEP with it (see --help)"
    [ -f "$from" ] || die timeline.sh "no file $from"
    head -n 1 "$from" | grep -q '^# step[0-9][0-9]_[a-z0-9_]* M=[0-9]* N=[0-9]* K=[0-9]* on ' ||
        die timeline.sh "$from is not what --stamps saves"
    file=$from
else
    [ -n "$step" ] || die timeline.sh "which step? (see --help)"
    grep -q '^ *TIMELINE(multiply);' "$step/kernel.cu" ||
        die timeline.sh "$step records no stamps: timelines start at step 10"
    if [ -n "$stamps" ]; then
        { : >"$stamps"; } 2>/dev/null || die timeline.sh "cannot write --stamps file '$stamps'"
    fi
    gpu_or_die timeline.sh "$step"
    build timeline.sh "$step/timeline"
    line=$(./"$step"/run -s 8 --warmup 0 --iters 1 --no-check 2>&1 | tail -n 1)
    gpu=$(sed -n 's/.* gpu=\([^ ]*\).*/\1/p' <<<"$line") cuda=$(sed -n 's/.* cuda=\([^ ]*\).*/\1/p' <<<"$line")
    file=${stamps:-$(mktemp)}
    [ -n "$stamps" ] || trap 'rm -f "$file"' EXIT
    { echo "# $step M=$m N=$n K=$k on ${gpu//_/ } (CUDA $cuda), $(date -u +%Y-%m-%d): sm block consumer kind ns"
      ./"$step"/timeline -m "$m" -n "$n" -k "$k"; } >"$file" || die timeline.sh "$step/timeline -m $m -n $n -k $k failed"
fi

# Each consumer's stamps in time order: a phase runs from its stamp to the
# consumer's next (kind 3, done, starts none).
title=$(head -n 1 "$file" | sed 's/^# //; s/: sm block consumer kind ns$//')
tail -n +2 "$file" | sort -k2,2n -k3,3n -k5,5n | awk -v title="$title" '
    function esc(s) { gsub(/&/, "\\&amp;", s); gsub(/</, "\\&lt;", s); return s }
    NF == 5 { n++; sm[n] = $1; key[n] = $2 " " $3; con[n] = $3; kind[n] = $4; t[n] = $5
              if ($1 + 1 > sms) sms = $1 + 1; if ($5 > end) end = $5 }
    END {
        if (n == 0 || end == 0) { print "timeline.sh: no stamps to draw" > "/dev/stderr"; exit 2 }
        split("#4c72b0 #dd8452 #55a868", colour, " "); split("multiply fixup store", name, " ")
        left = 60; top = 50; plot = 900; row = 6; h = top + sms * row + 50
        printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" font-size=\"12\">\n", left + plot + 20, h
        printf "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", left + plot + 20, h
        printf "<text x=\"10\" y=\"20\" font-size=\"14\" font-weight=\"bold\">%s</text>\n", esc(title)
        for (c = 1; c <= 3; c++) {
            printf "<rect x=\"%d\" y=\"30\" width=\"12\" height=\"10\" fill=\"%s\"/>", left + (c - 1) * 110, colour[c]
            printf "<text x=\"%d\" y=\"40\">%s</text>\n", left + (c - 1) * 110 + 16, name[c]
        }
        for (i = 1; i <= n; i++) {
            if (kind[i] == 3 || i == n || key[i + 1] != key[i]) continue
            x = left + t[i] / end * plot; w = (t[i + 1] - t[i]) / end * plot
            printf "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"%s\"><title>SM %d, consumer %d: %s, %.1f us</title></rect>\n",
                   x, top + sm[i] * row + con[i] * row / 2, w, row / 2, colour[kind[i] + 1], sm[i], con[i], name[kind[i] + 1], (t[i + 1] - t[i]) / 1000
        }
        for (s = 0; s < sms; s += 16)
            printf "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">SM %d</text>\n", left - 6, top + s * row + row, s
        step = 10 ^ int(log(end / 1000 / 2) / log(10)); if (step < 1) step = 1
        for (us = 0; us * 1000 <= end; us += step)
            printf "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g</text>\n", left + us * 1000 / end * plot, top + sms * row + 16, us
        printf "<text x=\"%d\" y=\"%d\" fill=\"#555\">microseconds from the first stamp; a row per SM, its two consumers one above the other</text>\n", left, h - 10
        print "</svg>"
    }'
