"""Shared by the scripts that edit a tuned table from `tgemm bench --csv` runs (revert_losers.py, promote_winners.py):
the shape key both files share, reading and writing a table, a row's pick replaced, and a bench CSV read back as one
block of rows per shape."""
import csv
import re

from tune_profile import SHAPE_COLS

# The columns a table row and a bench row share for one problem: the bench's CSV has no scaleAB / bpreshuffle.
KEY = SHAPE_COLS[:6]


def key(row):
    return tuple(row[c] for c in KEY)


def label(row):
    """A row's shape for messages: "M x N x K", " bias" where it has one."""
    return "%s x %s x %s%s" % (row["M"], row["N"], row["K"], " bias" if row["bias"] == "True" else "")


def read_table(path):
    with open(path, newline="") as f:
        rd = csv.DictReader(f)
        return rd.fieldnames, list(rd)


def write_table(fields, rows, out):
    w = csv.DictWriter(out, fieldnames=fields, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)


def set_pick(row, kernel, us):
    """The row runs `kernel` from now on, at `us` (tflops and bw scale with the time); libtype and solidx follow the
    name as the tuner writes them (cublaslt_h<i>: solidx i)."""
    scale = float(row["us"]) / us
    m = re.fullmatch(r"cublaslt(?:_h(\d+))?", kernel)
    libtype = "cublaslt" if m else kernel.split("_")[0]
    row.update({"libtype": libtype, "solidx": (m.group(1) or "0") if m else "0", "kernelName": kernel,
                "us": "%.4f" % us, "tflops": "%.2f" % (float(row["tflops"]) * scale),
                "bw": "%.2f" % (float(row["bw"]) * scale)})


def bench_blocks(path):
    """The rows of one `tgemm bench --csv` run, one list per shape in file order: cuBLASLt's reference row first,
    then `tgemm mm` (the table's pick), then whatever else was timed beside them (--kernel, --top-from)."""
    blocks = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if not blocks or key(blocks[-1][0]) != key(r):
                blocks.append([r])
            else:
                blocks[-1].append(r)
    return blocks
