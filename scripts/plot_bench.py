#!/usr/bin/env python3
"""Plot x cuBLASLt per shape from `tgemm bench --csv` output(s).

    python3 scripts/plot_bench.py bench_seed.csv bench_models.csv -o docs/bench_x_cublaslt.png
"""
import argparse
import csv
import math
import sys

try:
    import matplotlib
except ImportError:
    sys.exit("plot_bench.py needs matplotlib: pip install matplotlib")

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("csv", nargs="+")
    ap.add_argument("-o", "--out", required=True)
    ap.add_argument("--what", default="tgemm mm", help="which row of each shape to plot (default: tgemm mm)")
    args = ap.parse_args()
    rows = []
    for path in args.csv:
        with open(path) as f:
            rows += [r for r in csv.DictReader(f) if r["what"] == args.what]
    if not rows:
        raise SystemExit("no rows with what == %r" % args.what)
    labels = ["%s x %s x %s%s" % (r["M"], r["N"], r["K"], " b" if r["bias"] == "True" else "") for r in rows]
    x = [float(r["x_cublaslt"]) for r in rows]
    colors = []
    for r in rows:
        k = r["kernel"]
        colors.append("tab:blue" if k.startswith("sm90") else "tab:green" if k.startswith("skinny") else "tab:gray")
    geo = math.exp(sum(math.log(v) for v in x if v > 0) / max(1, sum(1 for v in x if v > 0)))
    fig, ax = plt.subplots(figsize=(max(10, len(rows) * 0.09), 5))
    ax.bar(range(len(x)), x, color=colors, width=0.85)
    ax.axhline(1.0, color="black", lw=0.8)
    ax.axhline(geo, color="tab:red", lw=0.8, ls="--", label="geometric mean %.3fx" % geo)
    ax.set_ylabel("x cuBLASLt (same run, interleaved)")
    ax.set_title("tgemm mm vs cuBLASLt per shape (blue sm90, green skinny, gray cuBLASLt)")
    if len(rows) <= 40:
        ax.set_xticks(range(len(x)))
        ax.set_xticklabels(labels, rotation=90, fontsize=7)
    else:
        ax.set_xlabel("shape (in suite order)")
    ax.set_ylim(0, max(1.3, max(x) * 1.05))
    ax.legend(loc="upper right")
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print("wrote %s: %d shapes, geomean %.3fx, min %.3fx" % (args.out, len(x), geo, min(x)))


if __name__ == "__main__":
    main()
