#!/usr/bin/env python3
"""The shapes whose pick differs between two tuned tables, as a shapes CSV (for a bench of just those rows).

    python3 scripts/dev/changed_shapes.py OLD NEW > shapes.csv
"""
import sys

sys.path.insert(0, __file__.rsplit("/", 2)[0])
from table_rows import key, read_table  # noqa: E402
from tune_profile import SHAPE_COLS  # noqa: E402


def main():
    old_path, new_path = sys.argv[1:3]
    old = {key(r): r["kernelName"] for r in read_table(old_path)[1]}
    print(",".join(SHAPE_COLS))
    for r in read_table(new_path)[1]:
        if old.get(key(r)) != r["kernelName"]:
            print(",".join(r[c] for c in SHAPE_COLS))


if __name__ == "__main__":
    main()
