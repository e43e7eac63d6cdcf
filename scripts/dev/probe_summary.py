#!/usr/bin/env python3
"""x cuBLASLt per shape and kernel over the rounds of a probe (device_run.sh STEPS=probe): one line per shape, one
column per kernel (and environment: the part of a file name probe_<env>_r<round>.csv other than "-"), each cell the
rounds' values; then each kernel's geometric mean over the shapes it ran on.
  python3 scripts/dev/probe_summary.py probe_-_r1.csv probe_-_r2.csv"""
import collections
import csv
import math
import os
import re
import sys

cells = collections.defaultdict(lambda: collections.defaultdict(list))  # shape -> kernel -> [x]
kernels = []
for path in sys.argv[1:]:
    m = re.match(r"probe_(.*)_r\d+\.csv$", os.path.basename(path))
    env = "" if not m or m.group(1) == "-" else " @" + m.group(1)
    for r in csv.DictReader(open(path)):
        if r["what"] == "cublaslt":
            continue
        k = ("pick" if r["what"] == "tgemm mm" else r["kernel"]) + env
        if k not in kernels:
            kernels.append(k)
        cells[(r["M"], r["N"], r["K"], r["bias"])][k].append(float(r["x_cublaslt"]))
for i, k in enumerate(kernels):
    print(f"[{i}] {k}")
for shape, per in cells.items():
    print(" x ".join(shape[:3]) + (" bias" if shape[3] == "True" else ""), end="")
    for i, k in enumerate(kernels):
        v = per.get(k)
        print(f"  [{i}] " + ("/".join(f"{x:.3f}" for x in v) if v else "-"), end="")
    print()
for i, k in enumerate(kernels):
    logs = [math.log(x) for per in cells.values() for x in per.get(k, [])]
    if logs:
        print(f"[{i}] geomean {math.exp(sum(logs) / len(logs)):.4f} over {len(logs)} timings")
