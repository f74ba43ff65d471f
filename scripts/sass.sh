#!/usr/bin/env bash
# Counts, in a step's compiled kernel, the instructions the steps teach: what
# the compiler really made of the source. Run through `make sass STEP=06`;
# builds the step first. Needs no GPU, only cuobjdump (and the nvdisasm it
# calls), which full CUDA toolkits have.
set -u
cd "$(dirname "$0")/.."
source scripts/common.sh

usage() {
    cat <<USAGE
usage: scripts/sass.sh STEP [--arch sm_NN] [--loop | --all]
  STEP         a step's number (06) or folder (step06_mma_ptx)
  --arch A     which machine code of the build to read (default: the newest)
  --loop       also print the SASS of each kernel's main loop (the shortest
               backward branch around the most of its HGMMA, else HMMA, else
               FFMA), and which address range that is
  --all        also print the whole SASS
Counted: FFMA, LDS.128 and LDG.E.128 (16-byte shared and global loads), HMMA
(mma.sync), LDSM (ldmatrix), LDGSTS (cp.async), HGMMA (wgmma), UTMALDG (TMA
loads), SYNCS (mbarrier), USETMAXREG (setmaxnreg), LDL/STL (local memory:
spills).
USAGE
}

step="" arch="" show=""
while [ $# -gt 0 ]; do
    case $1 in
        --arch) [ $# -ge 2 ] || die sass.sh "--arch needs a value"; arch=$2; shift 2 ;;
        --loop|--all) show=${1#--}; shift ;;
        -h|--help) usage; exit 0 ;;
        -*) die sass.sh "unknown option '$1' (see --help)" ;;
        *) step=$(find_step sass.sh "$1") || exit 2; shift ;;
    esac
done
[ -n "$step" ] || { usage >&2; exit 2; }

for tool in cuobjdump nvdisasm; do
    command -v $tool >/dev/null ||
        die sass.sh "needs $tool, which this CUDA toolkit lacks: pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm, and put the bin folders they install on PATH"
done
obj=$step/kernel.o
build sass.sh "$step"

have=$(cuobjdump --list-elf "$obj" | sed -n 's/.*\.\(sm_[0-9]*a\?\)\.cubin$/\1/p')
[ -n "$have" ] || die sass.sh "$obj holds no machine code (a PTX-only build, ARCH=compute_NN?)"
if [ -z "$arch" ]; then
    arch=$(sort -t_ -k2 -n <<<"$have" | tail -n 1)
elif ! grep -qx "$arch" <<<"$have"; then
    die sass.sh "$obj has no $arch code; it has: $(echo $have)"
fi

sass=$(mktemp)
trap 'rm -f "$sass"' EXIT
cuobjdump --dump-sass -arch "$arch" "$obj" | demangle >"$sass"
[ "${PIPESTATUS[0]}" -eq 0 ] || die sass.sh "cuobjdump failed on $obj"

echo "$step, $arch: instructions per kernel (cuobjdump --dump-sass)"
awk '
    function opcode(line,   f) {
        sub(/^[ \t]*\/\*[0-9a-f]+\*\/[ \t]*/, "", line)
        if (line ~ /^@!?U?P[0-9T]/) sub(/^[^ ]+ +/, "", line)
        split(line, f, /[ ;]/)
        return f[1]
    }
    function flush() {
        if (name == "") return
        printf "%-34s", name
        for (i = 1; i <= n; i++) printf " %" w[i] "d", count[cols[i]]
        printf "\n"
        delete count
    }
    BEGIN {
        n = split("FFMA LDS.128 LDG.E.128 HMMA LDSM LDGSTS HGMMA UTMALDG SYNCS USETMAXREG LDL STL", cols, " ")
        printf "%-34s", "kernel"
        for (i = 1; i <= n; i++) {
            w[i] = length(cols[i]) > 5 ? length(cols[i]) : 5
            printf " %" w[i] "s", cols[i]
        }
        printf "\n"
    }
    /Function :/ { flush(); name = $0; sub(/.*Function : (void )?/, "", name); sub(/\(.*/, "", name); next }
    /^[ \t]+\/\*[0-9a-f]+\*\// {
        op = opcode($0); base = op; sub(/\..*/, "", base)
        if (base == "LDS" && op ~ /\.128/) count["LDS.128"]++
        else if (base == "LDG" && op ~ /\.128/) count["LDG.E.128"]++
        else count[base]++
    }
    END { flush() }' "$sass"

# The main loop: of the branches back to an earlier address, the one whose
# range holds the most of the kernel's matrix instructions (HGMMA where it
# has any, else HMMA, else FFMA: the epilogue's FFMA do not count in a
# tensor-core kernel), and of those the shortest (an outer loop around it,
# the persistent steps' walk over tiles, holds as many).
if [ "$show" = loop ]; then
    awk '
        function hex(s,   v, i) {
            v = 0
            for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
            return v
        }
        /Function :/ { fn = $0; sub(/.*Function : (void )?/, "", fn); sub(/\(.*/, "", fn); fns[fn] = 1; next }
        match($0, /\/\*[0-9a-f]+\*\//) {
            addr = hex(substr($0, RSTART + 2, RLENGTH - 4))
            line[fn, addr] = $0
            for (k = 1; k <= 3; k++) if ($0 ~ (" " kind[k] "[ .]")) { op[fn, addr] = kind[k]; has[fn, kind[k]] = 1 }
            if (match($0, / BRA[^;]* 0x[0-9a-f]+/)) {
                t = substr($0, RSTART, RLENGTH); sub(/.* 0x/, "", t)
                if (hex(t) < addr) { nb[fn]++; from[fn, nb[fn]] = hex(t); to[fn, nb[fn]] = addr }
            }
        }
        BEGIN { kind[1] = "HGMMA"; kind[2] = "HMMA"; kind[3] = "FFMA" }
        END {
            for (f in fns) {
                mma = ""
                for (k = 3; k >= 1; k--) if ((f, kind[k]) in has) mma = kind[k]
                best = 0; bestn = 0
                for (b = 1; b <= nb[f]; b++) {
                    c = 0
                    for (a = from[f, b]; a <= to[f, b]; a += 16) c += (op[f, a] == mma)
                    if (c > bestn || (c == bestn && c > 0 && to[f, b] - from[f, b] < to[f, best] - from[f, best])) {
                        bestn = c; best = b
                    }
                }
                if (!best) { printf "\n%s: no loop holds its matrix instructions\n", f; continue }
                printf "\n%s: main loop, 0x%04x-0x%04x, %d %s\n", f, from[f, best], to[f, best], bestn, mma
                for (a = from[f, best]; a <= to[f, best]; a += 16) if ((f, a) in line) print line[f, a]
            }
        }' "$sass"
elif [ "$show" = all ]; then
    cat "$sass"
fi
