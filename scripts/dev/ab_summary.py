#!/usr/bin/env python3
"""Build B against build A from scripts/dev/build_ab_device.sh's logs: for each launch mode, shape and kernel the
rounds' x cuBLASLt of each build and the ratio of their medians (b/a), then each kernel's geometric mean of b/a.
  python3 scripts/dev/ab_summary.py <unpacked ab_logs folder> [set1]"""
import collections
import csv
import glob
import math
import os
import re
import sys

folder, tag = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "set1"
cells = collections.defaultdict(lambda: collections.defaultdict(list))  # (mode, M, N, K, kernel) -> build -> [x]
for path in glob.glob(os.path.join(folder, tag + "*_r*.csv")):
    m = re.match(re.escape(tag) + r"(_plain)?_([abc])_r\d+\.csv$", os.path.basename(path))
    if not m:
        continue
    mode = "plain" if m.group(1) else "graph"
    for r in csv.DictReader(open(path)):
        if r["what"] == "cublaslt":
            continue
        k = "pick" if r["what"] == "tgemm mm" else r["kernel"]
        cells[(mode, r["M"], r["N"], r["K"], k)][m.group(2)].append(float(r["x_cublaslt"]))


def median(v):
    v = sorted(v)
    return v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2


ratios = collections.defaultdict(list)
for key in sorted(cells):
    a, b = cells[key].get("a", []), cells[key].get("b", [])
    if not a or not b:
        continue
    ratio = median(b) / median(a)
    ratios[(key[0], key[4])].append(ratio)
    print(f"{key[0]:5} {'x'.join(key[1:4]):16} {key[4]:34} a {' '.join(f'{x:.3f}' for x in a)}  "
          f"b {' '.join(f'{x:.3f}' for x in b)}  b/a {ratio:.3f}")
for (mode, k), v in sorted(ratios.items()):
    print(f"{mode:5} {k:34} geometric mean b/a {math.exp(sum(map(math.log, v)) / len(v)):.4f} over {len(v)} shapes")
