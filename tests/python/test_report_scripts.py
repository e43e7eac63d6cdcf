"""CPU tests of the report scripts the device runs use (no GPU, no tgemm import): decode_report.py's targets, its
read-kernel context and crossover tables, and profile_without.py's re-tune base. Synthetic `tgemm bench` / tune
CSVs with known answers."""

import csv
import gzip
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPTS = os.path.join(ROOT, "scripts")
sys.path.insert(0, SCRIPTS)

import decode_report  # noqa: E402

BENCH_COLS = ["M", "N", "K", "bias", "dtype", "outdtype", "what", "kernel", "pieces", "us", "tflops", "bw", "x_cublaslt",
              "cublaslt_us", "rel_l2", "err_ratio", "unwritten", "max_rel"]
COPY = 4000.0  # GB/s


def bench_rows(m, n, k, ours_us, lt_us, kernel):
    """A shape's cuBLASLt and `tgemm mm` rows; bw as `tgemm bench` counts it (W + X + Y once, bf16)."""
    nbytes = 2 * (n * k + m * k + m * n)
    rows = []
    for what, us, kern in (("cublaslt", lt_us, "cublaslt"), ("tgemm mm", ours_us, kernel)):
        rows.append({"M": m, "N": n, "K": k, "bias": "False", "dtype": "torch.bfloat16", "outdtype": "torch.bfloat16",
                     "what": what, "kernel": kern, "pieces": 1, "us": us, "tflops": 0, "bw": nbytes / (us * 1e-6) / 1e9,
                     "x_cublaslt": lt_us / us, "cublaslt_us": lt_us, "rel_l2": 0, "err_ratio": 0, "unwritten": 0,
                     "max_rel": 0})
    return rows


def write_csv(path, cols, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols)
        w.writeheader()
        w.writerows(rows)


def run_report(tmp_path, rows, extra=()):
    bench = tmp_path / "graph.csv"
    write_csv(bench, BENCH_COLS, rows)
    out = tmp_path / "report.md"
    r = subprocess.run([sys.executable, os.path.join(SCRIPTS, "decode_report.py"), "--bench", "graph=%s" % bench,
                        "--copy-gbps", str(COPY), "-o", str(out), *extra], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return out.read_text(), r.stdout


def test_targets_counted_where_they_apply(tmp_path):
    # 4096 x 4096 (16M weights): 32 MiB in 9.0 us is 3.73 TB/s, 93% of 4 TB/s, and 1.1x cuBLASLt.
    # 2048 x 4096 (8M weights) is below the size the bandwidth target covers, and 0.9x cuBLASLt.
    rows = bench_rows(1, 4096, 4096, 9.0, 9.9, "skinny_bf16_m16_ws_sk4_i64")
    rows += bench_rows(1, 2048, 4096, 10.0, 9.0, "skinny_bf16_m16_ws_sk8_i64")
    text, verdict = run_report(tmp_path, rows)
    assert ">= 85% of copy where N*K >= 16M: 1 of 1 shapes" in text
    assert ">= 1.0x cuBLASLt: 1 of 2 shapes; below: 1x2048x4096 (0.900x)" in text
    assert "graph: bandwidth target met, x cuBLASLt target NOT met" in verdict


def test_same_kernel_misses_are_labelled(tmp_path):
    rows = bench_rows(2, 4096, 4096, 10.05, 10.0, "cublaslt")
    text, _ = run_report(tmp_path, rows)
    assert "2x4096x4096 (0.995x, same kernel)" in text
    assert "1 shapes run cuBLASLt's default itself" in text


def test_probe_interpolates_between_sizes():
    probe = [(16.0, 6.0), (32.0, 10.0), (64.0, 17.0)]
    assert decode_report.probe_us(probe, 16.0) == pytest.approx(6.0)
    assert decode_report.probe_us(probe, 24.0) == pytest.approx(8.0)
    assert decode_report.probe_us(probe, 48.0) == pytest.approx(13.5)
    assert decode_report.probe_us(probe, 8.0) is None  # outside the measured sizes: no guess
    assert decode_report.probe_us(probe, 65.0) is None


def test_context_table_compares_with_the_read_kernel(tmp_path):
    probe = tmp_path / "probe.csv"
    write_csv(probe, ["size_MB", "read_us", "read_GBps", "read_pct_copy2G", "copy_us", "copy_GBps", "copy_pct_copy2G"],
              [{"size_MB": 16, "read_us": 6.0}, {"size_MB": 64, "read_us": 18.0}])
    # Two M rows of one layer; the context row takes the faster one (M = 2).
    rows = bench_rows(1, 4096, 4096, 12.0, 12.0, "skinny_bf16_m16_ws_sk4_i64")
    rows += bench_rows(2, 4096, 4096, 11.0, 12.0, "skinny_bf16_m16_ws_sk4_i64")
    text, _ = run_report(tmp_path, rows, ["--stream-probe", str(probe)])
    assert "## Context: a read-only kernel at each layer's size" in text
    line = next(l for l in text.splitlines() if l.startswith("| 4096 | 4096 |"))
    cells = [c.strip() for c in line.strip("|").split("|")]
    mib = float(cells[2])
    assert mib == pytest.approx((2 * (4096 * 4096 + 2 * 4096 + 2 * 4096)) / 2 ** 20, rel=1e-3)
    read_us = 6.0 + (18.0 - 6.0) * (mib - 16) / 48
    assert float(cells[3]) == pytest.approx(read_us, abs=0.01)
    assert "(M=2)" in cells[5]
    assert float(cells[6]) == pytest.approx(read_us / 11.0, abs=0.01)  # tgemm's rate over the read kernel's


def test_crossover_from_profile(tmp_path):
    prof = tmp_path / "prof.csv"
    cols = ["M", "N", "K", "bias", "kernel", "libtype", "ok", "us"]
    rows = []
    for m, sk, sm in ((16, 10.0, 30.0), (32, 14.0, 20.0), (64, 25.0, 18.0), (128, 40.0, 19.0)):
        rows.append({"M": m, "N": 4096, "K": 4096, "bias": "False", "kernel": "skinny_x", "libtype": "skinny", "ok": 1, "us": sk})
        rows.append({"M": m, "N": 4096, "K": 4096, "bias": "False", "kernel": "sm90_x", "libtype": "sm90", "ok": 1, "us": sm})
    write_csv(prof, cols, rows)
    text, _ = run_report(tmp_path, bench_rows(1, 4096, 4096, 9.0, 9.9, "k"), ["--profile", str(prof)])
    line = next(l for l in text.splitlines() if l.startswith("| 4096 | 4096 | False |"))
    assert line.split("|")[4].strip() == "64"  # sm90 faster from M = 64 on, and at every larger M


def test_profile_without_drops_only_the_listed_shapes(tmp_path):
    cols = ["M", "N", "K", "bias", "dtype", "outdtype", "scaleAB", "bpreshuffle", "kernel", "us"]
    base = {"N": 4096, "K": 4096, "bias": "False", "dtype": "torch.bfloat16", "outdtype": "torch.bfloat16",
            "scaleAB": "False", "bpreshuffle": "False"}
    prof_rows = [dict(base, M=m, kernel=k, us=1.0) for m in (1, 2) for k in ("a", "b")]
    prof = tmp_path / "prof.csv.gz"
    with gzip.open(prof, "wt", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols)
        w.writeheader()
        w.writerows(prof_rows)
    shapes = tmp_path / "shapes.csv"
    write_csv(shapes, cols[:8], [dict(base, M=2)])
    r = subprocess.run([sys.executable, os.path.join(SCRIPTS, "profile_without.py"), str(prof), str(shapes)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    kept = list(csv.DictReader(r.stdout.splitlines()))
    assert [(row["M"], row["kernel"]) for row in kept] == [("1", "a"), ("1", "b")]
    assert "kept 2 rows" in r.stderr
