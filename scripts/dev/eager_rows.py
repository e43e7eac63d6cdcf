#!/usr/bin/env python3
"""The eager table (rows for launches outside a CUDA-graph capture) from a plain-launch tune, in two steps.

    python3 scripts/dev/eager_rows.py candidates GRAPH TUNED_EAGER > cand_eager.csv
        the tuned rows whose kernel differs from the graph table's pick for the shape (or that it has no row for)
    python3 scripts/dev/eager_rows.py keep GRAPH CAND_EAGER --old p1.csv ... --new-runs pA.csv ... [--margin 0.005]
        > sm90_132_bf16_eager.csv      (the decisions go to stderr)
        a candidate row is kept where the median x cuBLASLt of its kernel over the --new-runs (plain-launch benches with
        GRAPH and CAND_EAGER in force) exceeds the median of the graph pick over --old (GRAPH alone) by > --margin

Why (session 51): the tuned table is ranked in graph replay, and on the decode layers the plain launch adds ~1 us more
to our skinny kernels than to cuBLASLt's (session 49, run 410), so 10 of 60 decode rows read 0.88-0.99x cuBLASLt in
plain launches (run 412) while leading in graph replay. The dispatcher plans eager launches from the eager table first.
"""
import argparse
import statistics
import sys

sys.path.insert(0, __file__.rsplit("/", 2)[0])
from keep_gainers import reads  # noqa: E402
from table_rows import key, read_table, write_table  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("step", choices=["candidates", "keep"])
    ap.add_argument("graph")
    ap.add_argument("eager")
    ap.add_argument("--old", nargs="+", default=[])
    ap.add_argument("--new-runs", dest="new_runs", nargs="+", default=[])
    ap.add_argument("--margin", type=float, default=0.005)
    a = ap.parse_args()
    _, graph_rows = read_table(a.graph)
    graph = {key(r): r["kernelName"] for r in graph_rows}
    fields, eager = read_table(a.eager)
    if a.step == "candidates":
        write_table(fields, [r for r in eager if graph.get(key(r)) != r["kernelName"]], sys.stdout)
        return
    if not a.old or not a.new_runs:
        ap.error("keep needs --old and --new-runs")
    old, new = reads(a.old), reads(a.new_runs)
    out = []
    for r in eager:
        s = (r["M"], r["N"], r["K"], r["bias"])
        g = graph.get(key(r), "(untuned default)")
        # The old benches' mm ran the graph pick (or the untuned default); the new ones' must run the candidate, or the
        # eager table did not take effect and the row is dropped.
        o = [x for (shape_k, xs) in old.items() if shape_k[:4] == s for x in xs]
        n = new.get(s + (r["kernelName"],), [])
        keep = bool(o and n) and statistics.median(n) > statistics.median(o) + a.margin
        print("%s %sx%sx%s bias=%s: plain %s %s -> %s %s" % (
            "keep" if keep else "drop", *s, g, "/".join("%.3f" % x for x in o), r["kernelName"],
            "/".join("%.3f" % x for x in n)), file=sys.stderr)
        if keep:
            out.append(r)
    print("eager_rows: %d of %d candidate rows kept" % (len(out), len(eager)), file=sys.stderr)
    write_table(fields, out, sys.stdout)


if __name__ == "__main__":
    main()
