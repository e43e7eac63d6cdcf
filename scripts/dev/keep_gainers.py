#!/usr/bin/env python3
"""Takes a re-tuned table's changed rows into the shipped table only where the benches read the new pick faster.

    python3 scripts/dev/keep_gainers.py SHIPPED NEW --old run1.csv ... --new runA.csv ... [--prefix cublaslt_a]
        [--margin 0.005] [--plain-old p1.csv ... --plain-new pA.csv ...] > table.csv      (the decisions go to stderr)

A row of NEW whose kernel starts with --prefix and differs from SHIPPED's is kept if the median x cuBLASLt of its
kernel over the --new bench CSVs (2-way benches with NEW in force) exceeds the median of SHIPPED's kernel over the
--old bench CSVs (benches with SHIPPED in force) by more than --margin; every other row stays as SHIPPED has it.
Why (session 27, run 257): the tuner picked configured cuBLASLt algorithms on 47 rows; revert_losers.py (below 1.0x)
kept 43, but 16 of them read below the heuristic answer they replaced (e.g. 1024 x 7168 x 8192: cublaslt_h2
1.074-1.095x in runs 244-253, the new pick 0.98-1.04x).

With --plain-old / --plain-new (the same benches in plain launches), a row that gains is still dropped where its new
kernel's median reads below 1.0x cuBLASLt in plain launches and below the old kernel's there by more than --margin
(issue 4 asks >= 1.0x in both timing modes). Why (session 48, runs 401-402): the wgmma skinny kernels took 2-16 x 4608
x 3584 from 1.00-1.02x to 1.02-1.10x in graph replay and from 1.02-1.06x to 0.95-1.00x in plain launches.
"""
import argparse
import csv
import statistics
import sys

sys.path.insert(0, __file__.rsplit("/", 2)[0])
from table_rows import key, read_table, write_table  # noqa: E402


def reads(paths):
    out = {}
    for p in paths:
        for r in csv.DictReader(open(p)):
            if r["what"] != "cublaslt":
                out.setdefault((r["M"], r["N"], r["K"], r["bias"], r["kernel"]), []).append(float(r["x_cublaslt"]))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("shipped")
    ap.add_argument("new")
    ap.add_argument("--old", nargs="+", required=True)
    ap.add_argument("--new-runs", dest="new_runs", nargs="+", required=True)
    ap.add_argument("--prefix", default="cublaslt_a")
    ap.add_argument("--margin", type=float, default=0.005)
    ap.add_argument("--plain-old", dest="plain_old", nargs="+", default=[])
    ap.add_argument("--plain-new", dest="plain_new", nargs="+", default=[])
    a = ap.parse_args()
    old, new = reads(a.old), reads(a.new_runs)
    plain_old, plain_new = reads(a.plain_old), reads(a.plain_new)
    fields, ship = read_table(a.shipped)
    _, tuned = read_table(a.new)
    by_key = {key(r): r for r in tuned}
    out, kept = [], 0
    for r in ship:
        t = by_key.get(key(r))
        if t and t["kernelName"] != r["kernelName"] and t["kernelName"].startswith(a.prefix):
            s = (r["M"], r["N"], r["K"], r["bias"])
            o, n = old.get(s + (r["kernelName"],), []), new.get(s + (t["kernelName"],), [])
            keep = bool(o and n) and statistics.median(n) > statistics.median(o) + a.margin
            plain = ""
            if a.plain_new:
                po, pn = plain_old.get(s + (r["kernelName"],), []), plain_new.get(s + (t["kernelName"],), [])
                plain = "; plain %s -> %s" % ("/".join("%.3f" % x for x in po), "/".join("%.3f" % x for x in pn))
                if keep and pn and statistics.median(pn) < 1.0 and (
                        not po or statistics.median(pn) < statistics.median(po) - a.margin):
                    keep = False
                    plain += " (below 1.0x and the old pick in plain launches)"
            print("%s %sx%sx%s bias=%s: %s %s -> %s %s%s" % (
                "keep" if keep else "drop", *s, r["kernelName"], "/".join("%.3f" % x for x in o), t["kernelName"],
                "/".join("%.3f" % x for x in n), plain), file=sys.stderr)
            if keep:
                kept += 1
                out.append(t)
                continue
        out.append(r)
    print("keep_gainers: %d rows taken from %s" % (kept, a.new), file=sys.stderr)
    write_table(fields, out, sys.stdout)


if __name__ == "__main__":
    main()
