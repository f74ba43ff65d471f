# The planner's cost model of steps 11-13 (plan() in each kernel.cu), fitted to the candidates step 11 ran at
# b0f7f72 with its plan overridden (split_costs.csv: tile widths 64, 128, 256; whole tiles,
# p equal parts, or a share per SM; blocks alone, rows on sectors). A candidate takes the busiest block's k-tiles,
# each the 4-norm of the tensor cores' time (K_TILE_US + flops / MMA_FLOPS_US) and L2's (every block's bytes at
# L2_BYTES_US), plus a tile's store per tile, plus FIXUP_US x BN / 256 per level of the fixup; then the 4-norm of
# that and memory's time (A, B and C at HBM_BYTES_US, A and B again per tile in shares as far as they miss a 50 MB
# L2). The grid below is searched for the constants whose picks come closest to the fastest measured candidate
# on every shape (worst ratio first, then the mean), and the model's picks with them are printed.
# Run: python3 cost_model.py > cost_model.txt
import csv, math, itertools
from collections import defaultdict
rows = list(csv.DictReader(open('split_costs.csv')))
SMS, BM, BK = 132, 128, 64
def model(m, n, k, bn, p, P):
    tiles = -(-m // BM) * -(-n // bn); tk = -(-k // BK)
    mma = P['KT'] + 2 * BM * bn * BK / P['MMA']; kb = (min(m, BM) + bn) * BK * 2
    ops = 2 * m * k + 2 * k * n; missed = max(1 - 50e6 / ops, 0)
    nm = lambda a, b: (a ** 4 + b ** 4) ** 0.25
    def time(blocks, kt, stores, parts, shared):
        us = kt * nm(mma, blocks * kb / P['L2']) + stores * min(blocks, tiles) * BM * bn * 4 / 4e6
        s = 1
        while s < parts:
            us += P['FIX'] * bn / 256; s *= 4
        return nm(us, (ops + missed * shared * (BM + bn) * 2 * k + 4 * m * n) / 4e6)
    if p == 1:
        r = -(-tiles // SMS); return time(min(tiles, SMS), r * tk, r, 1, 0)
    if p == 0:
        share = -(-tiles * tk // SMS); return time(SMS, share, share // tk + 1, (tk - 1) // share + 2, tiles)
    return time(p * tiles, -(-tk // p), 1, p, 0)
g = defaultdict(list)
for r in rows:
    m, n, k, bn, p = (int(r[x]) for x in 'm n k bn parts'.split()); g[(m, n, k)].append((bn, p, float(r['ms']) * 1000))
def score(P):
    worst, tot = 1, 0
    for key, v in g.items():
        best = min(v, key=lambda x: x[2]); pick = min(v, key=lambda x: model(*key, x[0], x[1], P))
        worst = min(worst, best[2] / pick[2]); tot += math.log(best[2] / pick[2])
    return worst, tot / len(g)
grid = [dict(MMA=a, KT=b, L2=c, FIX=d) for a, b, c, d in
        itertools.product([5.4e6, 6.0e6, 6.6e6], [0.03, 0.06], [8e6, 10e6, 12e6], [4, 6, 8, 10])]
ranked = sorted(grid, key=lambda P: tuple(-x for x in score(P)))
print("constants, best first (worst pick / fastest, mean log ratio):")
for P in ranked[:5]:
    print("  MMA_FLOPS_US %.1e  K_TILE_US %.2f  L2_BYTES_US %.0e  FIXUP_US %d: worst %.2f, mean %.3f" %
          (P['MMA'], P['KT'], P['L2'], P['FIX'], *score(P)))
P = dict(MMA=6.6e6, KT=0.06, L2=10e6, FIX=10)
print("the steps' constants: MMA_FLOPS_US 6.6e6, K_TILE_US 0.06, L2_BYTES_US 10e6, FIXUP_US 10; picks:")
for key, v in g.items():
    best = min(v, key=lambda x: x[2]); pick = min(v, key=lambda x: model(*key, x[0], x[1], P))
    print("  %-20s fastest: BN %3d parts %2d %6.1f us | picked: BN %3d parts %2d %6.1f us (%3.0f%% of the fastest)" %
          (" x ".join(map(str, key)), best[0], best[1], best[2], pick[0], pick[1], pick[2], 100 * best[2] / pick[2]))
print("(parts 1: whole tiles; 0: a share per SM; p: every tile in p equal parts)")
