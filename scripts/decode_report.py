#!/usr/bin/env python3
"""Decode (small-M) report for issue 4, from `tgemm bench` and `tgemm tune` output of one device run.

    python3 scripts/decode_report.py --bench graph=bench_decode_graph.csv --bench plain=bench_decode_plain.csv \
        --copy-gbps 4272 [--profile tune_profile.csv] [-o report.md]

Per shape and timing mode: tgemm's row (`--what`, default `tgemm mm`) in TB/s, its % of the copy bandwidth
(bytes = W + X + Y once, as `tgemm bench` counts them), x cuBLASLt, and cuBLASLt's own % of copy. Checks the
targets: >= 85% of copy where N*K >= 16M, >= 1.0x cuBLASLt everywhere; lists the shapes where cuBLASLt is below
70% of copy. With --profile (the tuner's every-candidate times), the crossover per layer: the smallest M from
which the best sm90 kernel beats the best skinny kernel. With --stream-probe (scripts/dev/stream_probe.cu's CSV), what
a plain read-only kernel gets at each layer's size in the same % of copy, beside tgemm's best M row of the layer.
"""
import argparse
import csv
import re
import sys
from collections import defaultdict

from tune_profile import passing_rows, read_bench

BW_TARGET = 0.85
CUBLASLT_LOW = 0.70
BIG_NK = 16 * 1024 * 1024


def shape_key(r):
    return (int(r["M"]), int(r["N"]), int(r["K"]), r["bias"])


def copy_from_log(path):
    with open(path) as f:
        m = re.search(r"D2D copy (\d+) GB/s", f.read())
    if not m:
        sys.exit("no 'D2D copy ... GB/s' line in %s" % path)
    return float(m.group(1))


def crossover(profile):
    """{(N, K, bias): [(M, best skinny us, best sm90 us)]} from the tuner's profile."""
    best = defaultdict(dict)  # (shape) -> backend -> us
    for r, us in passing_rows(profile):
        if r["libtype"] not in ("skinny", "sm90"):
            continue
        k = shape_key(r)
        if us < best[k].get(r["libtype"], 1e30):
            best[k][r["libtype"]] = us
    layers = defaultdict(list)
    for (m, n, kk, bias), b in best.items():
        layers[(n, kk, bias)].append((m, b.get("skinny"), b.get("sm90")))
    return {k: sorted(v) for k, v in layers.items()}


# stream_probe.cu's kernels the context table shows: (column, what), times in us per size. read_us is a column of its
# own; the others are % of the probe's in-graph 2 GB copy, turned into us with that copy's rate (the 2048 MiB row).
PROBE_KERNELS = [
    ("read_us", "read kernel"),
    ("ring4_132_pct", "TMA ring, PDL"),
    ("gemv_ring_132_pct", "row-stream GEMV probe, PDL"),
]


def read_probe(path):
    """{column: [(MiB, us)] sorted by size} for PROBE_KERNELS' columns the CSV has, from stream_probe.cu's CSV."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    ref = next((float(r["copy_GBps"]) for r in rows if float(r["size_MB"]) == 2048), None)
    out = {}
    for col, _ in PROBE_KERNELS:
        pts = []
        for r in rows:
            if col not in r or not r[col]:
                continue
            mib, v = float(r["size_MB"]), float(r[col])
            if col.endswith("_us"):
                pts.append((mib, v))
            elif ref and v > 0:
                pts.append((mib, mib * 2 ** 20 / (v / 100 * ref * 1e9) * 1e6))
        if pts:
            out[col] = sorted(pts)
    return out


def probe_us(points, mib):
    """The probe kernel's time at `mib` MiB, linear between its measured sizes (None outside them)."""
    for (s0, t0), (s1, t1) in zip(points, points[1:]):
        if s0 <= mib <= s1:
            return t0 + (t1 - t0) * (mib - s0) / (s1 - s0)
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", action="append", required=True, help="MODE=bench.csv (e.g. graph=..., plain=...)")
    ap.add_argument("--copy-gbps", type=float, help="measured copy bandwidth (read + write), GB/s")
    ap.add_argument("--copy-from-log", help="a `tgemm bench` log holding the 'D2D copy N GB/s' ceiling line")
    ap.add_argument("--profile", help="tune profile CSV, for the sm90/skinny crossover")
    ap.add_argument("--stream-probe", help="stream_probe.cu CSV: a read-only kernel's time per size, same machine")
    ap.add_argument("--what", default="tgemm mm")
    ap.add_argument("-o", "--out")
    a = ap.parse_args()
    copy = a.copy_gbps or (copy_from_log(a.copy_from_log) if a.copy_from_log else None)
    if not copy:
        sys.exit("give --copy-gbps or --copy-from-log")
    out = []
    p = out.append
    p("# Decode shapes: bandwidth and x cuBLASLt\n")
    p("Copy bandwidth (same run): %.0f GB/s; target %.0f%% = %.0f GB/s where N*K >= 16M; >= 1.0x cuBLASLt everywhere.\n"
      % (copy, 100 * BW_TARGET, BW_TARGET * copy))
    verdict = []
    benches = []  # (mode, rows) in --bench order
    for spec in a.bench:
        mode, path = spec.split("=", 1)
        rows = read_bench(path, a.what, shape_key)
        benches.append((mode, rows))
        p("\n## %s\n" % mode)
        p("| M | N | K | kernel | us | TB/s | % copy | x cuBLASLt | cuBLASLt % copy |")
        p("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        miss_bw, miss_x, low_lt, same = [], [], [], []
        for k in sorted(rows, key=lambda k: (k[1], k[2], k[0])):
            r, lt = rows[k]
            bw = float(r["bw"])
            frac = bw / copy
            x = float(r["x_cublaslt"])
            ltfrac = float(lt["bw"]) / copy if lt else float("nan")
            m, n, kk, _ = k
            p("| %d | %d | %d | %s | %.1f | %.2f | %.0f%% | %.3f | %.0f%% |"
              % (m, n, kk, r["kernel"], float(r["us"]), bw / 1e3, 100 * frac, x, 100 * ltfrac))
            if n * kk >= BIG_NK and frac < BW_TARGET:
                miss_bw.append("%dx%dx%d (%.0f%%)" % (m, n, kk, 100 * frac))
            if r["kernel"] == "cublaslt":  # the table picked cuBLASLt's default: x is the noise of timing one kernel twice
                same.append(x)
            if x < 1.0:
                miss_x.append("%dx%dx%d (%.3fx%s)" % (m, n, kk, x, ", same kernel" if r["kernel"] == "cublaslt" else ""))
            if lt and ltfrac < CUBLASLT_LOW:
                low_lt.append("%dx%dx%d: cuBLASLt %.0f%%, tgemm %.0f%%" % (m, n, kk, 100 * ltfrac, 100 * frac))
        big = sum(1 for k in rows if k[1] * k[2] >= BIG_NK)
        p("\n- >= %.0f%% of copy where N*K >= 16M: %d of %d shapes%s" % (100 * BW_TARGET, big - len(miss_bw), big,
          ("; below: " + ", ".join(miss_bw)) if miss_bw else ""))
        p("- >= 1.0x cuBLASLt: %d of %d shapes%s" % (len(rows) - len(miss_x), len(rows),
          ("; below: " + ", ".join(miss_x)) if miss_x else ""))
        if same:
            p("- %d shapes run cuBLASLt's default itself (their table row keeps it); their x cuBLASLt, %.3f-%.3f, is the noise "
              "of timing one kernel twice in one run" % (len(same), min(same), max(same)))
        p("- cuBLASLt below %.0f%% of copy: %s" % (100 * CUBLASLT_LOW, "; ".join(low_lt) if low_lt else "none"))
        verdict.append((mode, not miss_bw, not miss_x))
    if len(benches) > 1:
        # Plain launches take the eager table's row where it has one (configs/*_eager.csv), graph replays the other's.
        (m0, r0), (m1, r1) = benches[0], benches[1]
        moved = ["%dx%dx%d" % k[:3] for k in sorted(r0, key=lambda k: (k[1], k[2], k[0]))
                 if k in r1 and r0[k][0]["kernel"] != r1[k][0]["kernel"]]
        p("\n%d of %d shapes run another kernel under %s than under %s (the eager table's rows): %s\n"
          % (len(moved), len(r0), m1, m0, ", ".join(moved) if moved else "none"))
    if a.stream_probe:
        probe = read_probe(a.stream_probe)
        mode, rows = benches[0]
        kinds = [(c, w) for c, w in PROBE_KERNELS if c in probe]
        p("\n## Context: kernels that only stream each layer's bytes (%s, N*K >= 16M)\n" % mode)
        p("`scripts/dev/stream_probe.cu`, graph replay over buffers rotated past the L2, timed on the same machine "
          "type and interpolated between its measured sizes; % of the copy bandwidth above. Read kernel: 16-byte "
          "loads, 4 in flight per thread, 4 blocks of 512 per SM, no PDL. TMA ring, PDL: one block per SM, 16 KB 1D "
          "bulk copies into 4 stages, every read after the PDL wait. Row-stream GEMV probe: that ring carrying whole "
          "W rows of K = 4096 at every size, M = 1, with X, the FMAs, the sums and a store (docs/benchmarks.md, runs "
          "288-294).\n")
        p("| N | K | MiB | read kernel us | " + " | ".join("%s %% copy" % w for _, w in kinds) +
          " | tgemm best M row % copy | tgemm / read kernel |")
        p("| --- | --- | --- | --- | " + " | ".join("---" for _ in kinds) + " | --- | --- |")
        layers = defaultdict(list)
        for k, (r, _) in rows.items():
            layers[(k[1], k[2])].append(r)
        for (n, kk), rs in sorted(layers.items()):
            if n * kk < BIG_NK:
                continue
            best = max(rs, key=lambda r: float(r["bw"]))
            mib = float(best["bw"]) * float(best["us"]) * 1e3 / 2 ** 20  # bytes the bench counts, in MiB
            ts = [probe_us(probe[c], mib) for c, _ in kinds]
            if ts[0] is None:
                continue
            bws = [mib * 2 ** 20 / (t * 1e-6) / 1e9 if t else None for t in ts]
            cells = " | ".join("%.0f%%" % (100 * b / copy) if b else "-" for b in bws)
            p("| %d | %d | %.1f | %.2f | %s | %.0f%% (M=%s) | %.2f |" % (n, kk, mib, ts[0], cells, 100 * float(best["bw"]) / copy,
              best["M"], float(best["bw"]) / bws[0]))
    if a.profile:
        p("\n## Crossover: smallest M from which the best sm90 kernel beats the best skinny kernel (tuner's times)\n")
        p("| N | K | bias | crossover M | best skinny / best sm90 us at each M |")
        p("| --- | --- | --- | --- | --- |")
        for (n, kk, bias), v in sorted(crossover(a.profile).items()):
            both = [(m, s, g) for m, s, g in v if s and g]
            if not both:
                continue
            cross = next((m for i, (m, s, g) in enumerate(both) if all(g2 < s2 for _, s2, g2 in both[i:])), None)
            detail = ", ".join("M=%d %.1f/%.1f" % (m, s, g) for m, s, g in both)
            p("| %d | %d | %s | %s | %s |" % (n, kk, bias, cross if cross else "> %d" % both[-1][0], detail))
    text = "\n".join(out) + "\n"
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    sys.stdout.write(text)
    for mode, bw_ok, x_ok in verdict:
        print("%s: bandwidth target %s, x cuBLASLt target %s" % (mode, "met" if bw_ok else "NOT met", "met" if x_ok else "NOT met"))


if __name__ == "__main__":
    main()
