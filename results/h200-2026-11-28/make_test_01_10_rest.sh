#!/bin/bash
# The GPU sections of scripts/test.sh (as at 789f9fa: the line numbers are its) that make_test_01_10_a.txt did not
# reach for steps 01-10: test.sh itself with the CPU sections (lines 74-532: seen by CI), the shape checks, the
# wrong kernels and the library cases of steps 01 and 02 (seen there) taken out. The rest runs as make test runs it.
cd "$(dirname "$0")/../.."
sed -e '74,532d' -e 's/^\( *\)checked "\$s" /\1true "$s" /' -e 's/for main in step01_naive step05_wmma; do/for main in; do/' \
    -e 's|^\( *\)bin=\$lib_dir/\$s$|\1case $s in step01*\|step02*) continue ;; esac; bin=$lib_dir/$s|' \
    scripts/test.sh > scripts/test_rest.sh
diff scripts/test.sh scripts/test_rest.sh | grep '^[<>]' | grep -v '^< ' ; diff scripts/test.sh scripts/test_rest.sh | grep -c '^<'
STEPS="${STEPS:-01 02 03 04 05 06 07 08 09 10}" JOBS=16 ARCH=sm_90 bash scripts/test_rest.sh
rc=$?
rm -f scripts/test_rest.sh
exit $rc
