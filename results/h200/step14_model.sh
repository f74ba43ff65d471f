#!/bin/bash
# step14_model.sh KERNEL_CU: builds plan() of a step 14 kernel.cu for the CPU, twice (ping-pong tiles only, step
# 13's only), and sets each kind's modeled TFLOPS beside the measured ones of step14_modes.txt.
set -eu; K=$1; D=$(mktemp -d); here=$(dirname "$0")
mk() { # kernel.cu -> a program printing the plan and its modeled us per "M N K" line
{
echo '#include <cmath>
#include <cstdio>
#include <cstdint>
#include <algorithm>
using std::min; using std::max;
static double min(double a,long long b){return a<b?a:b;} 
'
sed -n '/^constexpr int BM_BOTH/,/^constexpr int LINE_PIECES/p' $1 | grep -v "__device__"
sed -n '/^constexpr int FAN_IN/,/^constexpr int LINE_N/p' $1
echo 'double g_us;'
grep '^struct launch_plan' $1
sed -n '/^static launch_plan plan/,/^}/p' $1 | sed 's/    return best;/    g_us = best_us; return best;/'
echo 'int main(){int M,N,K; while(scanf("%d %d %d",&M,&N,&K)==3){ auto h=plan(M,N,K,132,K%16==0,N%16==0,66);
 printf("%5d x %5d x %5d  bm %3d bn %3d c %d units %3d whole %5d %s  %.1f us %.1f TF\n",M,N,K,h.bm,h.bn,h.cluster,h.units,h.whole,h.split?"split":"     ",g_us,2.0*M*N*K/g_us/1e6);}}'
} > $2.cc; g++ -O2 -std=c++17 -o $2 $2.cc; }
for v in ONE BOTH; do
    sed "s/for (const int BM : { BM_BOTH, BM_ONE })\$/for (const int BM : { BM_$v })/" $K > $D/$v.cu; mk $D/$v.cu $D/$v; done
awk -F'[ :]+' '/ x .*one/{print $1, $3, $5}' $here/step14_modes.txt > $D/shapes
paste -d" " <($D/ONE < $D/shapes | awk '{print $(NF-1)}') <($D/BOTH < $D/shapes | awk '{print $(NF-1)}') \
    <(awk -F'[ :]+' '/ x .*one/{print $1"x"$3"x"$5, $13, $16}' $here/step14_modes.txt) |
awk '{mo=$1; mb=$2; ro=$4; rb=$5; pick=(mo>mb)?"one":"both"; best=(ro>rb)?"one":"both"; got=(pick=="one")?ro:rb; bestv=(ro>rb)?ro:rb;
  e1+=log(mo/ro)^2; e2+=log(mb/rb)^2; n++; loss+=log(bestv/got);
  printf "%-20s model one %6.1f both %6.1f | meas one %6.1f both %6.1f | pick %-4s best %-4s %s\n",$3,mo,mb,ro,rb,pick,best,(pick==best||(bestv-got)/bestv<0.01)?"":" slower by "sprintf("%.1f%%",100*(bestv-got)/bestv)}
  END{printf "rms log err one %.3f both %.3f; mean loss vs best %.2f%%\n",sqrt(e1/n),sqrt(e2/n),100*loss/n}'
