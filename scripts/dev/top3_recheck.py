#!/usr/bin/env python3
"""The top-3 re-check's count from `tgemm bench --top-from --csv` output, by the rule the bench uses since session 28:
each row's x cuBLASLt (its per-round ratio against the same cuBLASLt samples), the pick against the fastest row timed
after it. For runs made before that rule (runs 264, 266 compared medians).

    python3 scripts/dev/top3_recheck.py bench_models_tuned.csv [more.csv ...]
"""
import sys

sys.path.insert(0, __file__.rsplit("/", 2)[0])
from table_rows import bench_blocks, label  # noqa: E402


def main():
    for path in sys.argv[1:]:
        checked = within = 0
        misses = []
        for block in bench_blocks(path):
            if len(block) <= 2:
                continue
            pick = float(block[1]["x_cublaslt"])
            if pick <= 0:
                continue
            gap = max(float(r["x_cublaslt"]) for r in block[1:]) / pick - 1
            checked += 1
            if gap <= 0.03:
                within += 1
            else:
                misses.append("%s %+.1f%%" % (label(block[0]), 100 * gap))
        print("%s: pick within 3%% of the fastest of its top 3 in %d of %d shapes%s" % (
            path, within, checked, "; more than 3% off: " + ", ".join(misses) if misses else ""))


if __name__ == "__main__":
    main()
