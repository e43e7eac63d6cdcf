#!/usr/bin/env python3
"""Switches a tuned table's row where its pick is fastest in some states of the card only, to the candidate that is
never far behind in any of them.

    python3 scripts/robust_picks.py configs/sm90_132_bf16.csv run1.csv run2.csv ... [--max-gap-pct 3] [--min-runs 2] \
        > new.csv

The runs are `tgemm bench --pairwise --top-from profile.csv --csv` with the table in force, taken in different states
of the card: with `--settle-ms 100` each round starts from the clock an idle pause leaves, without it the candidates'
rounds follow the dense GEMMs of the shape's first round. In one run and shape every kernel's speed against the pick is
measured 2-way: a candidate's in its own rounds (x_pick), cuBLASLt's default in the first round (1 / the pick's x
cuBLASLt), the pick's own 1. A plain `tgemm bench --csv` run adds the pick and cuBLASLt's default only. A kernel's gap in a run is how much slower it read than the fastest of that run; its worst
gap is the largest over the runs. Where the pick read more than --max-gap-pct behind in at least --min-runs runs (one
run's outlier is not a state) and a kernel timed in every run has a smaller worst gap, the row takes the kernel with the
smallest worst gap, with the median of its times. Only runs whose pick was the row's own kernel count. The switched rows go to stderr; a fresh bench must measure the result.

Why: the ranks of some kernels flip with the card's clock. At 4096^3 cuBLASLt's default led its alternatives by 1-10% in
rounds that start after a pause, and trailed them by ~3% in rounds that follow other dense GEMMs, where it ran 10-18%
slower itself (runs 273-275, docs/benchmarks.md session 30); no pick was fastest in both, and `cublaslt_h4` was within
1.7% of the fastest in all six runs. Which state a user's card is in is not known, so the row takes the kernel whose
worst case is best.
"""
import argparse
import statistics
import sys

from table_rows import bench_blocks, key, label, read_table, set_pick, write_table


def speeds(block):
    """(pick kernel, {kernel: (speed against the pick, us)}) of one shape's rows in a --pairwise run, or None."""
    picks = [r for r in block if r["what"] == "tgemm mm"]
    if not picks or float(picks[0]["x_cublaslt"] or 0) <= 0:
        return None
    pick = picks[0]
    out = {pick["kernel"]: (1.0, float(pick["us"]))}
    for r in block:
        if r is pick or r["kernel"] in out:
            continue
        if r["what"] == "cublaslt":
            out[r["kernel"]] = (1.0 / float(pick["x_cublaslt"]), float(r["us"]))
        elif float(r.get("x_pick") or 0) > 0:
            out[r["kernel"]] = (float(r["x_pick"]), float(r["us"]))
    return pick["kernel"], out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("table")
    ap.add_argument("bench", nargs="+", help="tgemm bench [--pairwise --top-from] --csv files, this table in force")
    ap.add_argument("--max-gap-pct", type=float, default=3.0,
                    help="rows whose pick read more than this behind the fastest (default 3) ...")
    ap.add_argument("--min-runs", type=int, default=2, help="... in at least this many runs (default 2)")
    a = ap.parse_args()
    seen = {}  # shape -> [(pick kernel, {kernel: (speed, us)})], one entry per run
    for path in a.bench:
        for block in bench_blocks(path):
            s = speeds(block)
            if s:
                seen.setdefault(key(block[0]), []).append(s)
    fields, rows = read_table(a.table)
    switched = 0
    for r in rows:
        runs = [sp for k, sp in seen.get(key(r), []) if k == r["kernelName"]]
        if not runs:
            continue
        everywhere = set.intersection(*(set(sp) for sp in runs))

        def gaps(kernel):
            return [max(v for v, _ in sp.values()) / sp[kernel][0] - 1 for sp in runs]

        def worst(kernel):
            return max(gaps(kernel))

        mine = worst(r["kernelName"])
        best = min(sorted(everywhere), key=worst)
        if sum(g > a.max_gap_pct / 100 for g in gaps(r["kernelName"])) < a.min_runs or worst(best) >= mine:
            continue
        print("robust_picks: %s: %s -> %s (worst gap over %d runs %.1f%% -> %.1f%%)" % (
            label(r), r["kernelName"], best, len(runs), 100 * mine, 100 * worst(best)), file=sys.stderr)
        set_pick(r, best, statistics.median(sp[best][1] for sp in runs))
        switched += 1
    write_table(fields, rows, sys.stdout)
    print("robust_picks: %d of %d rows switched" % (switched, len(rows)), file=sys.stderr)


if __name__ == "__main__":
    main()
