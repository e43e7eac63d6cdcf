"""Per shape, what a pause before each timing round changes in `tgemm bench --pairwise` (device_run.sh STEPS=settle).

For each CSV (settle_<ms>_r<rep>.csv): the pick's median in the shape's first round (against cuBLASLt), then per
top candidate the pick's median in that candidate's own 2-way round (round_pick_us) and the candidate's speed against
the pick (x_pick). If the pause does what it is for, round_pick_us stays near the first round's.

  python3 scripts/dev/settle_summary.py OUT/settle_*_r*.csv
"""
import os
import re
import sys
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from table_rows import bench_blocks, key, label  # noqa: E402


def main(paths):
    by_shape = defaultdict(list)  # shape key -> [(run, pick_us, pick kernel, [(kernel, round_pick_us, x_pick)])]
    names = {}  # shape key -> "M x N x K[ bias]"
    for p in paths:
        m = re.search(r"settle_([0-9.]+)_r(\d+)\.csv$", p)
        run = f"settle {m.group(1)} ms r{m.group(2)}" if m else p
        for rs in bench_blocks(p):
            pick = next((r for r in rs if r["what"] == "tgemm mm"), None)
            if pick is None:
                continue
            cands = [(r["what"], float(r.get("round_pick_us") or 0), float(r.get("x_pick") or 0))
                     for r in rs if r["what"] not in ("cublaslt", "tgemm mm")]
            by_shape[key(pick)].append((run, float(pick["us"]), pick["kernel"], cands))
            names[key(pick)] = label(pick)
    for shape, runs in by_shape.items():
        print(f"{names[shape]} (pick {runs[0][2]})")
        for run, pick_us, _, cands in sorted(runs):
            best = max((x for _, _, x in cands), default=0)
            print(f"  {run:20s} pick {pick_us:8.1f} us in round 1; best x_pick {best:.3f}")
            for k, rp, x in cands:
                print(f"      {k:45s} pick {rp:8.1f} us in its round ({rp / pick_us - 1:+6.1%}), x_pick {x:.3f}")


if __name__ == "__main__":
    main(sys.argv[1:])
