"""Reading `tgemm tune` profiles (--profile-file: one row per shape and candidate kernel) and `tgemm bench --csv`
files, shared by the scripts that use them (compare_tables, decode_report, profile_merge, sm90_report). Each script
keys and aggregates the rows its own way; what a row means is decided here once:
  - a profile may be plain or gzip-compressed (told apart by the gzip magic, not the name);
  - a candidate counts when ok = 1 and its time is a finite positive number (a failed, hung or truncated row does
    not);
  - values are stripped of surrounding blanks.
"""
import csv
import gzip
import io
import math

SHAPE_COLS = ("M", "N", "K", "bias", "dtype", "outdtype", "scaleAB", "bpreshuffle")
# Fields a row must have to count (a line cut short by an interrupted run lacks them); the shape columns a script
# keys on are its own business, and later columns (pieces, final, note) are absent in older profiles.
REQUIRED = ("kernel", "ok", "us")


def open_text(path):
    """A text stream of a plain or gzip-compressed file."""
    with open(path, "rb") as f:
        magic = f.read(2)
    if magic == b"\x1f\x8b":
        return io.TextIOWrapper(gzip.open(path, "rb"), newline="")
    return open(path, newline="")


def stripped(r):
    """A csv.DictReader row with its values stripped of surrounding blanks, without the fields a short or long line
    leaves as None."""
    return {k: v.strip() for k, v in r.items() if k is not None and v is not None}


def passing_rows(path):
    """(row, us) for every candidate that ran and passed: row is the CSV row as a dict of stripped strings."""
    with open_text(path) as f:
        for r in csv.DictReader(f):
            r = stripped(r)
            if any(c not in r for c in REQUIRED):
                continue
            if r["ok"] != "1":
                continue
            try:
                us = float(r["us"])
            except ValueError:
                continue
            if us > 0 and math.isfinite(us):
                yield r, us


def read_bench(path, what, key):
    """{key(row): (row of `what`, cuBLASLt's row or None)} from a `tgemm bench --csv` file. A bench row of `what`
    (e.g. "tgemm mm") carries its own x_cublaslt: the median of per-iteration ratios against cuBLASLt's default,
    timed interleaved in the same process, which is the figure the targets are judged on."""
    ours, lt = {}, {}
    with open_text(path) as f:
        for r in csv.DictReader(f):
            r = stripped(r)
            if r.get("what") == what:
                ours[key(r)] = r
            elif r.get("what") == "cublaslt":
                lt[key(r)] = r
    return {k: (ours[k], lt.get(k)) for k in ours}
