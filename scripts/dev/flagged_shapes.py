#!/usr/bin/env python3
"""The shapes a re-check flagged, as a shapes CSV for a focused run (device_run.sh SETTLE_SHAPES=..., STEPS=settle).

A shape is flagged where, in any of the given `tgemm bench --csv` runs, a candidate read more than --gap-pct faster
than the pick (x_pick, `--pairwise` runs) or the pick read below --min-x cuBLASLt (scaleAB and bpreshuffle are
written False: the bench CSV has neither, and the suites use neither). Session 30 did this by hand
(runs 273, 275, 276: the settle step on the rows runs 272 and 274 flagged, then scripts/robust_picks.py).

    python3 scripts/dev/flagged_shapes.py run_a.csv run_b.csv [--gap-pct 3] [--min-x 0.97] > flagged.csv
"""
import argparse
import csv
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from table_rows import key, label  # noqa: E402
from tune_profile import SHAPE_COLS  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bench", nargs="+")
    ap.add_argument("--gap-pct", type=float, default=3.0)
    ap.add_argument("--min-x", type=float, default=0.97)
    a = ap.parse_args()
    flagged = {}  # shape key -> (label, reasons)
    for path in a.bench:
        for r in csv.DictReader(open(path)):
            why = None
            if r["what"] == "tgemm mm" and float(r["x_cublaslt"] or 0) < a.min_x:
                why = "%s: pick %.3fx cuBLASLt" % (path, float(r["x_cublaslt"]))
            elif r["what"] not in ("tgemm mm", "cublaslt") and float(r.get("x_pick") or 0) > 1 + a.gap_pct / 100:
                why = "%s: %s %.3fx the pick" % (path, r["kernel"], float(r["x_pick"]))
            if why:
                flagged.setdefault(key(r), (label(r), []))[1].append(why)
    w = csv.writer(sys.stdout, lineterminator="\n")
    w.writerow(SHAPE_COLS)
    for k, (name, whys) in flagged.items():
        w.writerow(list(k) + ["False", "False"])
        print("flagged %s: %s" % (name, "; ".join(whys)), file=sys.stderr)
    print("flagged_shapes: %d shapes" % len(flagged), file=sys.stderr)


if __name__ == "__main__":
    main()
