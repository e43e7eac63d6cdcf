#!/usr/bin/env python3
"""Gives a tuned table's rows back to cuBLASLt's default where the 2-way bench (`tgemm bench` with the table in force,
the pick against cuBLASLt's default, A B A B) read the pick slower than the default in at least --min-runs of the runs.

    python3 scripts/revert_losers.py configs/sm90_132_bf16.csv run1.csv run2.csv run3.csv [--min-runs 2] > new.csv

Why: the tuner decides inside one long run of a shape, with the card at the clock that run's heat leaves it; a bench
run times each shape's pair briefly. Where two algorithms of cuBLASLt trade places with the clock (4096 x 4096 x 4096,
session 19: `cublaslt_h5` 4% ahead of the default in the tune, 4-5% behind in two of three benches), only runs of the
bench itself tell. A run counts for a row only if it ran the row's own kernel. The reverted rows keep their shape
and take `cublaslt` with the runs' median cuBLASLt time; the list goes to stderr. A fresh bench run must measure the
result: the runs that chose the rows would flatter it. The other direction is promote_winners.py.
"""
import argparse
import statistics
import sys

from table_rows import bench_blocks, key, label, read_table, set_pick, write_table


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("table")
    ap.add_argument("bench", nargs="+", help="tgemm bench --csv files, each a run with this table in force")
    ap.add_argument("--min-runs", type=int, default=2, help="runs in which the pick read below 1.0x (default 2)")
    a = ap.parse_args()
    seen = {}  # shape -> [(kernel, x_cublaslt, cublaslt_us)]
    for path in a.bench:
        for block in bench_blocks(path):
            for r in block:
                if r["what"] == "tgemm mm":
                    seen.setdefault(key(r), []).append((r["kernel"], float(r["x_cublaslt"]), float(r["cublaslt_us"])))
    fields, rows = read_table(a.table)
    reverted = 0
    for r in rows:
        runs = [(x, lt) for k, x, lt in seen.get(key(r), []) if k == r["kernelName"]]
        if r["kernelName"] != "cublaslt" and sum(x < 1.0 for x, _ in runs) >= a.min_runs:
            print("revert_losers: %s: %s read %s -> cublaslt" % (
                label(r), r["kernelName"], " / ".join("%.3f" % x for x, _ in runs)), file=sys.stderr)
            set_pick(r, "cublaslt", statistics.median(lt for _, lt in runs))
            reverted += 1
    write_table(fields, rows, sys.stdout)
    print("revert_losers: %d of %d rows reverted to cuBLASLt's default" % (reverted, len(rows)), file=sys.stderr)


if __name__ == "__main__":
    main()
