# Steps 13 and 14 side by side from shapes.sh CSVs: medians over the files of TFLOPS and % of cuBLAS per shape.
import csv,sys,collections
d=collections.defaultdict(dict)
for f in sys.argv[1:]:
    for r in csv.DictReader(open(f)):
        d[(r['class'],int(r['m']),int(r['n']),int(r['k']))].setdefault(r['step'][:6],[]).append((float(r['tflops']),float(r['pct_cublas'])))
med=lambda v: sorted(v)[len(v)//2] if len(v)%2 else sum(sorted(v)[len(v)//2-1:len(v)//2+1])/2
for k,v in d.items():
    t13=med([x[0] for x in v['step13']]); t14=med([x[0] for x in v['step14']]); p14=med([x[1] for x in v['step14']]); p13=med([x[1] for x in v['step13']])
    print("%-10s %5d x %5d x %6d  13 %6.1f (%5.1f%%)  14 %6.1f (%5.1f%%)  x%.3f %s"%(k[0],k[1],k[2],k[3],t13,p13,t14,p14,t14/t13,"  <--" if t14/t13<0.98 else ""))
