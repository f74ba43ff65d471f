# A first cost model for the planner (issue 80), fitted to split_costs.csv: a candidate (tile width, whole tiles or
# p equal parts or a share per SM) takes F0 + max(k-tiles of the busiest block x max(tensor-core time, its
# blocks' operands through L2), every operand and C through HBM) + fixup levels x a level's cost. Prints the fit
# and, per shape, the candidate it picks against the fastest measured. Run: python3 split_costs_model.py
import csv, math, itertools, sys
rows=[r for r in csv.DictReader(open('split_costs.csv'))]
SMS=132; BM=128; BK=64
def feats(r):
    m,n,k,bn,p=int(r['m']),int(r['n']),int(r['k']),int(r['bn']),int(r['parts'])
    tm=-(-m//BM); tn=-(-n//bn); tiles=tm*tn; tk=-(-k//BK)
    if p==1: blocks=min(tiles,SMS); kt=(-(-tiles//SMS))*tk; parts=1
    elif p==0: blocks=SMS; kt=math.ceil(tiles*tk/SMS); parts=math.ceil(SMS/tiles)
    else: blocks=p*tiles; kt=math.ceil(tk/p); parts=p
    levels=0; s=1
    while s<parts: s*=4; levels+=1
    return dict(m=m,n=n,k=k,bn=bn,kt=kt,blocks=blocks,levels=levels,parts=parts,tiles=tiles,ms=float(r['ms']))
F=[feats(r) for r in rows]
def model(f,c):
    F0,lev,l2,eff,hbm=c
    mma=2*BM*f['bn']*BK/(989e12/SMS*eff)*1e6          # us per k-tile, the tensor cores
    rows=f['m']/(-(-f['m']//BM)); cols=f['n']/(-(-f['n']//f['bn']))
    l2t=f['blocks']*(rows+cols)*BK*2/(l2*1e12)*1e6    # us per k-tile, every block's operands through L2 (the rows and columns in C)
    comp=f['kt']*max(mma,l2t)
    mem=((f['m']*f['k']+f['k']*f['n'])*2+f['m']*f['n']*4)/(hbm*1e12)*1e6
    split=f['levels']*lev*(f['bn']/128)
    return F0+max(comp,mem)+split
best=None
for c in itertools.product([3,4,5,6,7],[1,2,3,4,6],[6,8,10,12],[0.6,0.7,0.8,0.9],[3.0,3.5,4.0]):
    err=sum(math.log(model(f,c)/(f['ms']*1000))**2 for f in F)
    if best is None or err<best[0]: best=(err,c)
print("fit: F0 %s us, per level %s us (x BN/128), L2 %s TB/s, mma efficiency %s, HBM %s TB/s; rms log error %.3f"%(*best[1], math.sqrt(best[0]/len(F))))
c=best[1]
from collections import defaultdict
g=defaultdict(list)
for r,f in zip(rows,F): g[(r['m'],r['n'],r['k'])].append((r,f))
for k,v in g.items():
    mb=min(v,key=lambda x:x[1]['ms']); pk=min(v,key=lambda x:model(x[1],c))
    print("%-20s measured best: BN %3s parts %2s %6.1f us | model's pick: BN %3s parts %2s, measured %6.1f us (%3.0f%% of best), predicted %6.1f"%(" x ".join(k),mb[0]['bn'],mb[0]['parts'],mb[1]['ms']*1000,pk[0]['bn'],pk[0]['parts'],pk[1]['ms']*1000,100*mb[1]['ms']/pk[1]['ms'],model(pk[1],c)))
