#!/usr/bin/env python3
"""Copy a tune profile (CSV, or .gz) without the rows of the shapes in a shapes CSV: the base for re-tuning a
subset of shapes into a shipped table while keeping every other shape's recorded candidates.

    python3 scripts/profile_without.py docs/data/tune_profile.csv.gz subset.csv > tune_profile.csv
"""
import csv
import sys

from tune_profile import SHAPE_COLS, open_text


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    prof, shapes = sys.argv[1], sys.argv[2]
    with open(shapes, newline="") as f:
        drop = {tuple(r[c].strip() for c in SHAPE_COLS) for r in csv.DictReader(f)}
    with open_text(prof) as f:
        rows = csv.reader(f)
        header = next(rows)
        idx = [header.index(c) for c in SHAPE_COLS]
        out = csv.writer(sys.stdout, lineterminator="\n")
        out.writerow(header)
        kept = 0
        for r in rows:
            if tuple(r[i].strip() for i in idx) not in drop:
                out.writerow(r)
                kept += 1
    print("profile_without: kept %d rows, dropped the shapes of %s (%d)" % (kept, shapes, len(drop)), file=sys.stderr)


if __name__ == "__main__":
    main()
