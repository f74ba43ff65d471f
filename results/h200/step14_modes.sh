#!/bin/bash
# Step 14's planner against its two tile kinds forced (ping-pong only, step 13's shared tiles only), and step 13,
# on shallow, deep and small shapes: the data for the planner's store terms. About 190 s on the H200.
# Run from the repository root with OUT set: bash results/h200/step14_modes.sh
cd "$(dirname "$0")/../.."
L=$OUT/modes.txt; t0=$(date +%s); nvidia-smi -L > $L
make -j16 ARCH=sm_90 step13 step14 > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
O="step14_pingpong/main.o common/half.o common/options.o common/step.o common/check.o common/harness.o -lcublas"
mkdir -p /tmp/modes
for v in one both; do
  [ $v = one ] && e='s/for (const int BM : { BM_BOTH, BM_ONE })$/for (const int BM : { BM_ONE })/' ||
                  e='s/for (const int BM : { BM_BOTH, BM_ONE })$/for (const int BM : { BM_BOTH })/'
  sed "$e" step14_pingpong/kernel.cu > /tmp/modes/$v.cu
  grep -q "for (const int BM : { BM_$( [ $v = one ] && echo ONE || echo BOTH) })" /tmp/modes/$v.cu || { echo "edit $v failed" >> $L; continue; }
  ( nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -Icommon -Istep14_pingpong -c /tmp/modes/$v.cu -o /tmp/modes/$v.o &&
    nvcc -o /tmp/modes/run_$v /tmp/modes/$v.o $O ) >> $OUT/build.log 2>&1 &
done; wait
echo "built at $(( $(date +%s) - t0 )) s; columns: TFLOPS (% of cuBLAS)" >> $L
for sh in "8192 8192 256" "10000 10000 64" "4096 4096 512" "16384 16384 1024" "3000 3000 512" "8192 8192 1024" \
          "6000 3072 1024" "768 8192 1024" "2304 4608 1536" "1000 1000 1000" "2048 2048 2048" "4096 4096 4096" \
          "8192 8192 8192" "16 8192 8192" "128 4096 4096" "5000 5000 5000" "3000 3000 3000" \
          "4096 4100 4096" "2048 11008 4096" "12000 12000 128"; do
  set -- $sh; line="$1 x $2 x $3:"
  for s in 13 14 one both; do
    b=./step$s/run; case $s in one|both) b=/tmp/modes/run_$s;; esac
    r=$(timeout 60 $b -m $1 -n $2 -k $3 --no-check 2>&1 | tail -1)
    line="$line  $s $(sed -n 's/.* tflops=\([^ ]*\).*/\1/p' <<<"$r") ($(sed -n 's/.* pct_cublas=\([^ ]*\).*/\1/p' <<<"$r"))"
  done
  echo "$line" >> $L
  [ $(( $(date +%s) - t0 )) -lt 540 ] || break
done
cat $L
