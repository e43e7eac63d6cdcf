#!/usr/bin/env python3
"""Switches a tuned table's row to another candidate where runs of the top-3 re-check (`tgemm bench --top-from
profile.csv` with the table in force: each shape's pick, the tuner's fastest candidates and cuBLASLt, timed in one
process, shuffled rounds) read that candidate faster than the pick by more than --min-gain-pct in at least --min-runs
of the runs.

    python3 scripts/promote_winners.py configs/sm90_132_bf16.csv top1.csv top2.csv [--min-runs 2] \
        [--min-gain-pct 3] > new.csv

Why: issue 5 asks that each row's pick be within 3% of the fastest of its top 3 when they are re-measured together;
the tuner decides inside one long run of a shape, at the clock that run's heat leaves the card (revert_losers.py
says more), so the check's own runs are what tell. A run counts for a row only if it ran the row's own kernel as the
pick. The gain is the ratio of the two rows' x cuBLASLt (each the median of per-round ratios against the same
cuBLASLt samples); where several candidates qualify, the one with the best geometric mean gain wins, with the median
of its times. The switched rows go to stderr. A fresh bench run must measure the result.
"""
import argparse
import math
import statistics
import sys

from table_rows import bench_blocks, key, label, read_table, set_pick, write_table


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("table")
    ap.add_argument("bench", nargs="+", help="tgemm bench --top-from --csv files, each a run with this table in force")
    ap.add_argument("--min-runs", type=int, default=2, help="runs in which the candidate read faster (default 2)")
    ap.add_argument("--min-gain-pct", type=float, default=3.0, help="by more than this (default 3)")
    a = ap.parse_args()
    seen = {}  # shape -> [(pick kernel, {candidate: (gain, us)})], one entry per run
    for path in a.bench:
        for block in bench_blocks(path):
            picks = [i for i, r in enumerate(block) if r["what"] == "tgemm mm"]
            if not picks:
                continue
            pick = block[picks[0]]
            x_pick = float(pick["x_cublaslt"])
            cands = {}
            for r in block[picks[0] + 1:]:
                if r["kernel"] != pick["kernel"] and x_pick > 0 and float(r["x_cublaslt"]) > 0:
                    cands[r["kernel"]] = (float(r["x_cublaslt"]) / x_pick, float(r["us"]))
            seen.setdefault(key(pick), []).append((pick["kernel"], cands))
    fields, rows = read_table(a.table)
    promoted = 0
    for r in rows:
        runs = [c for k, c in seen.get(key(r), []) if k == r["kernelName"]]
        best = None  # (geometric mean gain, kernel, gains, times)
        for kernel in sorted({k for c in runs for k in c}):
            gains = [c[kernel][0] for c in runs if kernel in c]
            if sum(g > 1 + a.min_gain_pct / 100 for g in gains) < a.min_runs:
                continue
            gm = math.exp(sum(math.log(g) for g in gains) / len(gains))
            if best is None or gm > best[0]:
                best = (gm, kernel, gains, [c[kernel][1] for c in runs if kernel in c])
        if best is None or best[0] <= 1:
            continue
        print("promote_winners: %s: %s -> %s (%s faster)" % (
            label(r), r["kernelName"], best[1], " / ".join("%.3f" % g for g in best[2])), file=sys.stderr)
        set_pick(r, best[1], statistics.median(best[3]))
        promoted += 1
    write_table(fields, rows, sys.stdout)
    print("promote_winners: %d of %d rows switched" % (promoted, len(rows)), file=sys.stderr)


if __name__ == "__main__":
    main()
