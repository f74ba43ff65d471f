#!/usr/bin/env bash
# The lesson of one step: the diff of its kernel.cu against the previous
# step's, without the header comments (which say what the diff shows). Run
# through `make lesson STEP=04`. Colored on a terminal, plain in a pipe.
set -u
cd "$(dirname "$0")/.."
source scripts/common.sh

usage() {
    cat <<USAGE
usage: scripts/lesson.sh STEP [--stat]
  STEP     a step's number (04) or folder (step04_register_tile)
  --stat   print only the size of the lesson: lines added and removed
USAGE
}

step="" stat=0
while [ $# -gt 0 ]; do
    case $1 in
        --stat) stat=1; shift ;;
        -h|--help) usage; exit 0 ;;
        -*) die lesson.sh "unknown option '$1' (see --help)" ;;
        *) step=$(find_step lesson.sh "$1") || exit 2; shift ;;
    esac
done
[ -n "$step" ] || { usage >&2; exit 2; }

prev=""
for dir in $(step_dirs); do
    [ "$dir" = "$step" ] && break
    prev=$dir
done
[ -n "$prev" ] || die lesson.sh "$step is the first step: read $step/kernel.cu whole"

# The code of a kernel.cu: everything after its header comment (the first
# block comment, up to the first line that closes it), less the timeline's
# stamps (common/timeline.cuh), the same lines in every step from 10 on.
code() { awk 'body && !/^ *TIMELINE\(/ { print; next } /^ \*\/$/ { body = 1 }' "$1/kernel.cu"; }

a=$(mktemp) b=$(mktemp)
trap 'rm -f "$a" "$b"' EXIT
code "$prev" >"$a"
code "$step" >"$b"
if [ $stat = 1 ]; then
    diff "$a" "$b" | awk -v t="$prev -> $step" '/^>/ { add++ } /^</ { del++ } END { printf "%-44s +%d/-%d\n", t, add, del }'
    exit 0
fi
out() { if [ -t 1 ]; then
            sed -e $'s/^+.*/\e[32m&\e[0m/' -e $'s/^-.*/\e[31m&\e[0m/' -e $'s/^@@.*/\e[36m&\e[0m/'
        else cat; fi; }
diff -u --label "$prev/kernel.cu (below the header)" --label "$step/kernel.cu (below the header)" \
    "$a" "$b" | out
exit 0
