#!/usr/bin/env python3
"""A tune profile with later re-tunes merged in: for each shape a later profile holds, its rows of each backend
(libtype) it re-tuned replace the earlier rows of that shape and backend; every other row stays. Later files win.
The shipped profile stays whole this way when a re-tune covers one backend only (`tgemm tune --libtype cublaslt`
on the table's cuBLASLt rows), so the bench's top-3 re-check (`tgemm bench --top-from`) sees every backend.

    python3 scripts/profile_merge.py docs/data/tune_profile.csv.gz later1.csv.gz later2.csv ... > merged.csv
"""
import csv
import sys

from tune_profile import SHAPE_COLS, open_text


def read(path):
    """The header and the rows; a row cut short (the last line of a tune stopped by a timeout) is left out."""
    with open_text(path) as f:
        rd = csv.reader(f)
        header = next(rd)
        rows = list(rd)
    whole = [r for r in rows if len(r) >= len(header)]
    if len(whole) < len(rows):
        print("profile_merge: %s: %d rows cut short, left out" % (path, len(rows) - len(whole)), file=sys.stderr)
    return header, whole


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    header, rows = read(sys.argv[1])
    idx = [header.index(c) for c in SHAPE_COLS]
    lib = header.index("libtype")

    def group(r):
        return tuple(r[i].strip() for i in idx), r[lib].strip()

    for path in sys.argv[2:]:
        h, later = read(path)
        if h != header:
            sys.exit("profile_merge: %s has other columns than %s" % (path, sys.argv[1]))
        replaced = {group(r) for r in later}
        rows = [r for r in rows if group(r) not in replaced] + later
        print("profile_merge: %s: %d (shape, backend) groups replaced or added" % (path, len(replaced)), file=sys.stderr)
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(header)
    out.writerows(rows)


if __name__ == "__main__":
    main()
