#!/usr/bin/env python3
"""skinny_ws_device.sh's environment A/B (WS_ENV_VARIANTS, the env_* logs): per shape, the mean over rounds of one
candidate's x cuBLASLt under each variant, then each variant's geometric mean over the shapes.
  python3 scripts/dev/env_ab_summary.py <unpacked ws_logs folder> [what]     (what: "tgemm mm", the table's pick,
  by default; or a forced kernel's name)"""
import collections
import csv
import glob
import math
import os
import statistics
import sys

folder = sys.argv[1]
what = sys.argv[2] if len(sys.argv) > 2 else "tgemm mm"
cells = collections.defaultdict(lambda: collections.defaultdict(list))  # (M, N, K) -> variant -> [x]
for path in sorted(glob.glob(os.path.join(folder, "env_*_r*.csv"))):  # not env2_*: another set, same variant names
    base = os.path.basename(path)[:-4]
    variant = base.rsplit("_r", 1)[0].split("_", 2)[2]  # env_<mode>_<variant>_r<round>
    for r in csv.DictReader(open(path)):
        if r["what"] == what:  # a forced kernel's rows carry its name here
            cells[(r["M"], r["N"], r["K"])][variant].append(float(r["x_cublaslt"]))
variants = sorted({v for c in cells.values() for v in c})
print(f"{what}: x cuBLASLt, mean over rounds ('_' is the run without a variant)")
print(f"{'':16}" + "".join(f"{v[:22]:>23}" for v in variants))
logs = collections.defaultdict(list)
for shape, c in cells.items():
    row = []
    for v in variants:
        x = statistics.mean(c[v]) if c[v] else float("nan")
        row.append(x)
        if c[v]:
            logs[v].append(math.log(x))
    print(f"{'x'.join(shape):16}" + "".join(f"{x:23.3f}" for x in row))
print(f"{'geomean':16}" + "".join(f"{math.exp(sum(logs[v]) / len(logs[v])):23.3f}" for v in variants))
