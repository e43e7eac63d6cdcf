#!/usr/bin/env python3
"""Merges shapes re-tuned in several runs into one tuned table or one tune profile: each overlay replaces what the
base (and earlier overlays) held for the shapes it has, and the base keeps every other shape, in its own order.

    python3 scripts/merge_tuned.py base.csv overlay1.csv [overlay2.csv ...] > merged.csv

A tuned table (`gfx` column) is keyed on its rows' arch, SM count and shape, so an overlay replaces one row per
shape; a profile (`kernel` column, one row per candidate) on the shape alone, so an overlay's shape brings all its
candidates and drops all of the base's. Every input must have the base's header. Profiles may be gzip-compressed;
the output is plain CSV.
"""
import csv
import sys

from tune_profile import SHAPE_COLS, open_text


def read(path):
    with open_text(path) as f:
        rows = list(csv.reader(f))
    if not rows:
        sys.exit("merge_tuned: %s is empty" % path)
    return rows[0], rows[1:]


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    header, base = read(sys.argv[1])
    cols = (("gfx", "cu_num") if "gfx" in header else ()) + SHAPE_COLS
    if any(c not in header for c in cols):
        sys.exit("merge_tuned: %s has no %s columns" % (sys.argv[1], ", ".join(c for c in cols if c not in header)))
    idx = [header.index(c) for c in cols]
    key = lambda r: tuple(r[i].strip() for i in idx)
    replaced = {}  # key -> rows, the last overlay's
    for path in sys.argv[2:]:
        h, rows = read(path)
        if h != header:
            sys.exit("merge_tuned: %s has another header than %s" % (path, sys.argv[1]))
        mine = {}
        for r in rows:
            if len(r) == len(header):  # a line cut short by an interrupted run is left out
                mine.setdefault(key(r), []).append(r)
        replaced.update(mine)
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(header)
    seen = set()
    for r in base:
        k = key(r)
        if k not in replaced:
            out.writerow(r)
        elif k not in seen:
            out.writerows(replaced[k])
        seen.add(k)
    for k, rows in replaced.items():  # shapes the base did not have
        if k not in seen:
            out.writerows(rows)
    print("merge_tuned: %d shapes from %d overlays, %d of them new" % (len(replaced), len(sys.argv) - 2,
                                                                        sum(k not in seen for k in replaced)),
          file=sys.stderr)


if __name__ == "__main__":
    main()
