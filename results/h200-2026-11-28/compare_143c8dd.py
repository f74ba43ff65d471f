#!/usr/bin/env python3
"""Steps 07 and 10-13 of this tree (shapes_run_a.csv, shapes_run_b.csv) against step 13 at 143c8dd
(../h200-2026-11-27/shapes_final.csv and the first column of planner_vs_143c8dd.txt), per row of
scripts/shapes.sh: % of cuBLAS (mean of the runs), and step 13's TFLOPS against 143c8dd's, since cuBLAS's
own speed moves from one process to the next. Run from this folder: python3 compare_143c8dd.py"""
import csv, re, statistics as st

runs = {}
for f in ("shapes_run_a.csv", "shapes_run_b.csv"):
    for row in csv.DictReader(open(f)):
        key = (row["class"], int(row["m"]), int(row["n"]), int(row["k"]))
        runs.setdefault(key, {}).setdefault(row["step"][:6], []).append(
            (float(row["tflops"]), float(row["pct_cublas"])))
old = {}
for row in csv.DictReader(open("../h200-2026-11-27/shapes_final.csv")):
    if row["step"].startswith("step13"):
        old[(int(row["m"]), int(row["n"]), int(row["k"]))] = [(float(row["tflops"]), float(row["pct_cublas"]))]
for line in open("planner_vs_143c8dd.txt"):  # its first table, before the share order was put back
    m = re.match(r"(\d+) x (\d+) x (\d+)\s+([\d.]+) \(([\d.]+)\)", line)
    if m:
        k = tuple(int(x) for x in m.groups()[:3])
        if k in old and len(old[k]) == 1:
            old[k].append((float(m.group(4)), float(m.group(5))))

pct = lambda v: st.mean(p for t, p in v)
tf = lambda v: st.mean(t for t, p in v)
print("% of cuBLAS, mean of the runs (07: run a alone); 13/143c8dd: step 13's TFLOPS over 143c8dd's step 13's;")
print("flags: step 13's TFLOPS more than 2% below 143c8dd's (<<), a step more than 2% below the one before.")
print("%-20s %6s %6s %6s %6s %6s %8s %11s" % ("M x N x K", "07", "10", "11", "12", "13", "143c8dd", "13/143c8dd"))
new13, old13 = [], []
for key in runs:
    d, o = runs[key], old[key[1:]]
    new13.append(pct(d["step13"]))
    old13.append(pct(o))
    ratio = tf(d["step13"]) / tf(o)
    flags = ["<<"] if ratio < 0.98 else []
    for a, b in (("step10", "step11"), ("step11", "step12"), ("step12", "step13")):
        if tf(d[b]) < 0.98 * tf(d[a]):
            flags.append("%s %+.1f%% on %s" % (b, 100 * (tf(d[b]) / tf(d[a]) - 1), a))
    print("%-20s %6.1f %6.1f %6.1f %6.1f %6.1f %8.1f %11.3f  %s" % (
        "%d x %d x %d" % key[1:], pct(d["step07"]), pct(d["step10"]), pct(d["step11"]), pct(d["step12"]),
        pct(d["step13"]), pct(o), ratio, " ".join(flags)))
print("median %% of cuBLAS, step 13: this tree %.1f, 143c8dd %.1f" % (st.median(new13), st.median(old13)))
