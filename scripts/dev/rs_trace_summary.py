#!/usr/bin/env python3
"""Summary of `stream_probe rstrace` files (rsclk_<kernel>_<MB>.csv[.gz]): a block's timeline after its release, in us
(clock64 converted by the globaltimer's rate over the same blocks), means over replays and blocks: per stage s the
producer's issue, the owning group's first warp's full wait passed and its read (slot handed back), their difference
(proc); then the groups' last stages and the exit.
  python3 scripts/dev/rs_trace_summary.py rsclk_m1_rs_b128_32.csv.gz rsclk_g4w4s2_32.csv.gz
Groups of 4 consumer warps: G from a probe's name (g<G>w<W>s<S>), 3 for the library's m1 kernel since session 40
(rs_groups(1)); traces taken before session 40 (runs 335-339) had 4: pass --groups 4 for them."""
import csv
import gzip
import re
import statistics as st
import sys

args = sys.argv[1:]
forced = None
if len(args) > 1 and args[0] == "--groups":
    forced, args = int(args[1]), args[2:]

for path in args:
    m = re.search(r"_g(\d+)w(\d+)s\d+_", path)
    G, W = (int(m.group(1)), int(m.group(2))) if m else (forced or 3, 4)
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        rows = [list(map(int, r)) for r in list(csv.reader(f))[1:]]
    T = lambda r, e: r[2 + e]       # globaltimer ns after the release (events 0-15)
    C = lambda r, e: r[2 + 16 + e]  # clock64 cycles after the release
    ghz = st.mean(C(r, 7) / T(r, 7) for r in rows if T(r, 7) > 2000 and C(r, 7) > 0)

    def us(e):
        v = [C(r, e) for r in rows if C(r, e) >= 0]
        return st.mean(v) / ghz / 1000 if v else float("nan")

    stages = [s for s in range(32) if any(C(r, 80 + s) >= 0 for r in rows)]
    print(f"== {path}: {len(rows)} blocks, SM clock {ghz:.3f} GHz; X ready {us(4):.3f} us, exit {us(7):.3f} us")
    print("  s  issue   full   read   proc")
    for s in stages:
        g, k = s % G, s // G
        if k >= 8:
            break
        full, read = us(16 + 8 * g + k), us(48 + 8 * g + k)
        print(f" {s:2d} {us(80 + s):6.3f} {full:6.3f} {read:6.3f} {read - full:6.3f}")
    print("  groups' last stage done:", " ".join(f"{us(8 + g):.3f}" for g in range(G)))
    ncol = len(rows[0]) - 2 - 16
    if ncol > 144:
        for name, e0 in (("second stage read", 128), ("last stage read", 112), ("last butterfly done", 144)):
            print(f"  warps' {name}:", " ".join(f"{us(e0 + w):.3f}" for w in range(G * W)))
        # BAR.SYNC.DEFER_BLOCKING: the stamp after the barrier runs at arrival, before the barrier completes.
        print(f"  last tile: thread 0 at its barrier {us(5):.3f}, stored {us(6):.3f}")
