"""CPU tests of the report scripts the device runs use (no GPU, no tgemm import): decode_report.py's targets, its
read-kernel context and crossover tables, profile_merge.py, sm90_report.py's issue 3 targets (seed shapes, models
shapes, i64 against i32), merge_tuned.py, revert_losers.py, promote_winners.py and robust_picks.py. Synthetic
`tgemm bench` / tune CSVs with known answers."""

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
    assert "## Context: kernels that only stream each layer's bytes" in text
    line = next(l for l in text.splitlines() if l.startswith("| 4096 | 4096 |"))
    cells = [c.strip() for c in line.strip("|").split("|")]
    mib = float(cells[2])
    assert mib == pytest.approx((2 * (4096 * 4096 + 2 * 4096 + 2 * 4096)) / 2 ** 20, rel=1e-3)
    read_us = 6.0 + (18.0 - 6.0) * (mib - 16) / 48
    assert float(cells[3]) == pytest.approx(read_us, abs=0.01)
    assert "(M=2)" in cells[5]
    assert float(cells[6]) == pytest.approx(read_us / 11.0, abs=0.01)  # tgemm's rate over the read kernel's


def test_context_table_adds_the_pdl_probes_from_their_share_of_the_2g_copy(tmp_path):
    # stream_probe.cu's ring and GEMV columns are % of its own 2 GB copy (the 2048 MiB row's copy_GBps): at 1000 GB/s
    # and 50%, 32 MiB takes 32 * 2^20 / 500e9 s.
    probe = tmp_path / "probe.csv"
    cols = ["size_MB", "read_us", "copy_GBps", "ring4_132_pct", "gemv_ring_132_pct"]
    write_csv(probe, cols, [{"size_MB": 2048, "read_us": 500.0, "copy_GBps": 1000.0, "ring4_132_pct": 100.0, "gemv_ring_132_pct": 100.0},
                            {"size_MB": 16, "read_us": 6.0, "copy_GBps": 900.0, "ring4_132_pct": 50.0, "gemv_ring_132_pct": 40.0},
                            {"size_MB": 64, "read_us": 18.0, "copy_GBps": 900.0, "ring4_132_pct": 50.0, "gemv_ring_132_pct": 40.0}])
    got = decode_report.read_probe(str(probe))
    assert got["ring4_132_pct"][0] == (16.0, pytest.approx(16 * 2 ** 20 / 500e9 * 1e6))
    assert got["gemv_ring_132_pct"][1] == (64.0, pytest.approx(64 * 2 ** 20 / 400e9 * 1e6))
    rows = bench_rows(1, 4096, 4096, 12.0, 12.0, "skinny_bf16_m16_ws_sk4_i64")
    text, _ = run_report(tmp_path, rows, ["--stream-probe", str(probe), "--copy-gbps", "1000"])
    assert "| TMA ring, PDL % copy | row-stream GEMV probe, PDL % copy |" in text
    line = next(l for l in text.splitlines() if l.startswith("| 4096 | 4096 |"))
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[5] == "50%" and cells[6] == "40%"  # 500 and 400 GB/s at every size between the probe's, of 1000


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


def test_profile_merge_replaces_only_the_retuned_backends(tmp_path):
    cols = ["M", "N", "K", "bias", "dtype", "outdtype", "scaleAB", "bpreshuffle", "kernel", "libtype", "ok", "us"]
    base = {"N": 4096, "K": 4096, "bias": "False", "dtype": "torch.bfloat16", "outdtype": "torch.bfloat16",
            "scaleAB": "False", "bpreshuffle": "False", "ok": 1}
    old = tmp_path / "old.csv.gz"
    with gzip.open(old, "wt", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols)
        w.writeheader()
        w.writerows([dict(base, M=m, kernel=k, libtype=k.split("_")[0], us=2.0) for m in (1, 2)
                     for k in ("cublaslt", "cublaslt_h1", "skinny_x")])
    later = tmp_path / "later.csv"
    write_csv(later, cols, [dict(base, M=2, kernel=k, libtype="cublaslt", us=1.0) for k in ("cublaslt", "cublaslt_a66_x")])
    latest = tmp_path / "latest.csv"
    write_csv(latest, cols, [dict(base, M=2, kernel="cublaslt", libtype="cublaslt", us=0.5)])
    with open(latest, "a") as f:
        f.write("2,4096,4096,False,torch.bfloat16\n")  # a line cut short by a stopped tune
    r = subprocess.run([sys.executable, os.path.join(SCRIPTS, "profile_merge.py"), str(old), str(later), str(latest)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    got = sorted((row["M"], row["kernel"], row["us"]) for row in csv.DictReader(r.stdout.splitlines()))
    # M = 1 untouched; at M = 2 the skinny rows stay, the cuBLASLt rows are the last file's that has them.
    assert got == [("1", "cublaslt", "2.0"), ("1", "cublaslt_h1", "2.0"), ("1", "skinny_x", "2.0"),
                   ("2", "cublaslt", "0.5"), ("2", "skinny_x", "2.0")]
    assert "1 rows cut short" in r.stderr
    other = tmp_path / "other.csv"
    write_csv(other, cols[:9], [dict((c, v) for c, v in dict(base, M=3, kernel="a").items() if c in cols[:9])])
    r = subprocess.run([sys.executable, os.path.join(SCRIPTS, "profile_merge.py"), str(old), str(other)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and "other columns" in r.stderr


# sm90_report.py (issue 3): the tuner's profile against the seed, models and index-width targets.

import json  # noqa: E402

import sm90_report  # noqa: E402

PROFILE_COLS = ["M", "N", "K", "bias", "dtype", "outdtype", "scaleAB", "bpreshuffle", "kernel", "libtype", "ok", "us",
                "err_ratio", "rel_l2", "max_rel", "pieces", "final", "note"]
MODELS_COLS = PROFILE_COLS[:8]
BF16 = "torch.bfloat16"
SEED_MS = (8192, 65536, 340000, 360000, 768000)


def profile_rows(m, n, k, bias, times, ok=1, pieces=1):
    """One shape's profile rows, {kernel: us}; libtype from the name as the tuner writes it."""
    rows = []
    for kern, us in times.items():
        lib = "cublaslt" if kern.startswith("cublaslt") else kern.split("_")[0]
        rows.append({"M": m, "N": n, "K": k, "bias": bias, "dtype": BF16, "outdtype": BF16, "scaleAB": "False",
                     "bpreshuffle": "False", "kernel": kern, "libtype": lib, "ok": ok, "us": us, "err_ratio": 0,
                     "rel_l2": 0.0017, "max_rel": 0.0039, "pieces": pieces, "final": 0, "note": " -"})
    return rows


def seed_rows(m, lt_us, sm90_us):
    """A seed shape: cuBLASLt's default at lt_us, the best sm90 kernel at sm90_us, and decoys that must not count:
    a faster cuBLASLt heuristic algo (not the baseline), a faster skinny kernel, a faster sm90 row that failed."""
    rows = profile_rows(m, 6144, 1280, "True", {"cublaslt": lt_us, "cublaslt_h1": lt_us / 2,
                                                "sm90_bf16_128x128x64_s5_c1x1_pp_i32": sm90_us,
                                                "sm90_bf16_128x256x64_s3_c2x1_i64": sm90_us * 1.05,
                                                "skinny_bf16_m64_sk4_i64": sm90_us / 3})
    rows += profile_rows(m, 6144, 1280, "True", {"sm90_bf16_64x256x64_s5_c1x1_pp_i64": sm90_us / 2}, ok=0)
    return rows


def run_sm90(tmp_path, rows, models=None, gz=False, benches=()):
    """Run the script on a profile of `rows` (and a models file of `models` shape rows, and `tgemm bench` CSVs of
    the row lists in `benches`, in order); (report text, json)."""
    prof = tmp_path / ("prof.csv.gz" if gz else "prof.csv")
    if gz:
        with gzip.open(prof, "wt", newline="") as f:
            w = csv.DictWriter(f, fieldnames=PROFILE_COLS)
            w.writeheader()
            w.writerows(rows)
    else:
        write_csv(prof, PROFILE_COLS, rows)
    mfile = tmp_path / "models.csv"
    write_csv(mfile, MODELS_COLS, models or [])
    bench_args = []
    for i, b in enumerate(benches):
        bf = tmp_path / ("bench%d.csv" % i)
        write_csv(bf, BENCH_COLS, b)
        bench_args += ["--bench", str(bf)]
    out, js = tmp_path / "sm90.md", tmp_path / "sm90.json"
    r = subprocess.run([sys.executable, os.path.join(SCRIPTS, "sm90_report.py"), "--profile", str(prof),
                        "--models", str(mfile), "-o", str(out), "--json", str(js)] + bench_args,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return out.read_text(), json.loads(js.read_text())


def models_shape(m, n, k, bias="False"):
    return {"M": m, "N": n, "K": k, "bias": bias, "dtype": BF16, "outdtype": BF16, "scaleAB": "False",
            "bpreshuffle": "False"}


def test_sm90_seed_target_met(tmp_path):
    rows = [r for m in SEED_MS for r in seed_rows(m, 120.0, 100.0)]
    text, j = run_sm90(tmp_path, rows)
    seed = j["seed"]
    assert seed["status"] == "met"
    assert [r["M"] for r in seed["rows"]] == list(SEED_MS)
    for r in seed["rows"]:
        assert r["lt_us"] == pytest.approx(120.0)  # cuBLASLt's default, not the faster cublaslt_h1
        assert r["kernel"] == "sm90_bf16_128x128x64_s5_c1x1_pp_i32"  # not the skinny or the failed sm90 row
        assert r["x"] == pytest.approx(1.2)
    assert "| 65536 | 120.0 | sm90_bf16_128x128x64_s5_c1x1_pp_i32 | 100.0 | 1.200 |" in text
    assert "**Target x >= 1.10 at every M: met**" in text


def test_sm90_seed_target_not_met(tmp_path):
    rows = [r for m in SEED_MS for r in seed_rows(m, 120.0 if m != 340000 else 105.0, 100.0)]
    text, j = run_sm90(tmp_path, rows)
    assert j["seed"]["status"] == "not met"
    assert j["seed"]["below"] == [340000]
    assert j["seed"]["min_x"] == pytest.approx(1.05)
    assert "minimum x 1.050; below 1.10: M=340000" in text
    assert "**Target x >= 1.10 at every M: not met**" in text


def test_sm90_seed_missing_m_is_not_measured(tmp_path):
    rows = [r for m in SEED_MS[:-1] for r in seed_rows(m, 120.0, 100.0)]
    rows = [r for r in rows if not (r["M"] == 8192 and r["kernel"] == "cublaslt")]  # 8192: no baseline row
    text, j = run_sm90(tmp_path, rows)
    seed = j["seed"]
    assert seed["status"] == "not measured"
    assert seed["missing"] == [8192, 768000]
    assert seed["rows"][-1]["missing"] == "not in profile"
    assert seed["rows"][0]["missing"] == "no cublaslt row"
    assert "| 768000 | - | not in profile | - | - |" in text
    assert "**Target x >= 1.10 at every M: not measured**" in text


def seed_bench_rows(m, lt_us, us, kernel="sm90_bf16_128x192x64_s4_c1x1_etma_pp_i64", x=None, **over):
    """A seed shape's `tgemm bench` rows; the mm row's x_cublaslt is the bench's own (a median of ratios), `x`."""
    rows = bench_rows(m, 6144, 1280, us, lt_us, kernel)
    for r in rows:
        r.update(bias="True")
    rows[1].update(over)
    if x is not None:
        rows[1]["x_cublaslt"] = x
    return rows


def test_sm90_bench_files_take_the_targets_over_the_profile(tmp_path):
    # The profile reads 1.20x everywhere; the benches say otherwise where they hold a shape with an sm90 pick.
    rows = [r for m in SEED_MS for r in seed_rows(m, 120.0, 100.0)]
    first = seed_bench_rows(8192, 193.0, 180.0, x=1.05) + seed_bench_rows(65536, 1600.0, 1450.0, x=1.12)
    first += seed_bench_rows(360000, 9100.0, 8000.0, x=1.13)
    # A later file wins for 8192; its x is the bench's median of ratios, not 193 / 176.
    second = seed_bench_rows(8192, 193.0, 176.0, x=1.08)
    # 340000: the pick is a cuBLASLt algorithm, so the sm90 family's figure stays the profile's.
    second += seed_bench_rows(340000, 8600.0, 8500.0, kernel="cublaslt_h3", x=1.01)
    # 360000: the later file's row failed its check (unwritten rows): it does not count, and the earlier file's
    # row does not stand in for it.
    second += seed_bench_rows(360000, 9100.0, 7000.0, x=1.3, unwritten=5)
    text, j = run_sm90(tmp_path, rows, benches=[first, second])
    by_m = {r["M"]: r for r in j["seed"]["rows"]}
    assert by_m[8192]["source"] == "bench" and by_m[8192]["x"] == pytest.approx(1.08)
    assert by_m[8192]["us"] == pytest.approx(176.0) and by_m[8192]["lt_us"] == pytest.approx(193.0)
    assert by_m[65536]["source"] == "bench" and by_m[65536]["x"] == pytest.approx(1.12)
    for m in (340000, 360000, 768000):
        assert by_m[m]["source"] == "profile" and by_m[m]["x"] == pytest.approx(1.2)
    assert j["seed"]["status"] == "not met" and j["seed"]["below"] == [8192]
    assert "| 8192 | 193.0 | sm90_bf16_128x192x64_s4_c1x1_etma_pp_i64 | 176.0 | 1.080 | bench |" in text
    assert "| 340000 | 120.0 | sm90_bf16_128x128x64_s5_c1x1_pp_i32 | 100.0 | 1.200 | profile |" in text
    assert "`bench0.csv`, `bench1.csv`" in text


def test_sm90_compares_within_the_final_round(tmp_path):
    # A shape with a final round: the first-round-only sm90 row (faster on paper) is not compared; a shape whose final
    # round holds no sm90 kernel is missing, with that reason.
    def with_final(rows, finals):
        for r in rows:
            r["final"] = 1 if r["kernel"] in finals else 0
        return rows
    big = "sm90_bf16_64x256x64_s5_c1x1_pp_i32"
    rows = with_final(profile_rows(4096, 4096, 4096, "False", {"cublaslt": 100.0, "cublaslt_h1": 98.0,
                                                                big: 95.0, "sm90_bf16_128x128x64_s5_c1x1_pp_i32": 80.0}),
                      {"cublaslt", "cublaslt_h1", big})
    rows += with_final(profile_rows(8192, 4096, 4096, "False", {"cublaslt": 200.0, "cublaslt_h1": 190.0,
                                                                big: 150.0}), {"cublaslt", "cublaslt_h1"})
    text, j = run_sm90(tmp_path, rows, models=[models_shape(4096, 4096, 4096), models_shape(8192, 4096, 4096)])
    m = j["models"]
    assert m["count"] == 1
    assert m["rows"][0]["kernel"] == big
    assert m["rows"][0]["x"] == pytest.approx(100.0 / 95.0)
    assert m["missing"] == [{"shape": [8192, 4096, 4096, "False", BF16, BF16],
                             "why": "no sm90 kernel in the tuner's final round"}]


def test_sm90_models_median_min_and_baseline(tmp_path):
    # Five M >= 2048 shapes with x = 0.85, 1.0, 1.1, 1.2, 1.3 (median 1.1, minimum 0.85: one below 0.9, target not
    # met); each with a cuBLASLt heuristic algo far faster than the default, which must not be taken as the baseline.
    xs = {(2048, 4096, 4096): 0.85, (4096, 4096, 4096): 1.0, (8192, 4096, 4096): 1.1, (16384, 4096, 4096): 1.2,
          (65536, 4096, 4096): 1.3}
    rows = []
    for (m, n, k), x in xs.items():
        rows += profile_rows(m, n, k, "False", {"cublaslt": 100.0 * x, "cublaslt_h2": 10.0, "cublaslt_h7": 20.0,
                                                "sm90_bf16_64x256x64_s5_c2x1_pp_i64": 100.0,
                                                "sm90_bf16_128x160x64_s5_c1x1_i32": 130.0})
    rows += profile_rows(1024, 4096, 4096, "False", {"cublaslt": 10.0, "sm90_x_i64": 100.0})  # M < 2048: not counted
    rows += profile_rows(4096, 1024, 4096, "True", {"cublaslt_h1": 10.0, "sm90_x_i64": 100.0})  # no default row
    rows += profile_rows(4096, 8192, 1024, "False", {"cublaslt": 10.0, "skinny_x_i64": 5.0})  # no sm90 row
    models = [models_shape(m, n, k) for m, n, k in xs] + [models_shape(1024, 4096, 4096),
                                                         models_shape(4096, 1024, 4096, "True"),
                                                         models_shape(4096, 8192, 1024),
                                                         models_shape(262144, 4096, 4096)]  # not in profile
    text, j = run_sm90(tmp_path, rows, models)
    mo = j["models"]
    assert mo["count"] == 5
    assert mo["median"] == pytest.approx(1.1)
    assert mo["min"] == pytest.approx(0.85)
    assert mo["below"] == 1
    assert mo["status"] == "not met"
    assert [r["shape"][0] for r in mo["lowest"]] == [2048, 4096, 8192, 16384, 65536]
    assert {r["kernel"] for r in mo["lowest"]} == {"sm90_bf16_64x256x64_s5_c2x1_pp_i64"}
    assert sorted((m["shape"][0], m["shape"][1], m["why"]) for m in mo["missing"]) == [
        (4096, 1024, "no cublaslt row"), (4096, 8192, "no ok sm90 row"), (262144, 4096, "not in profile")]
    assert "- Median x: 1.100" in text and "- Minimum x: 0.850" in text and "- Below 0.9: 1" in text
    assert "| 2048x4096x4096 | 85.0 | sm90_bf16_64x256x64_s5_c2x1_pp_i64 | 100.0 | 0.850 |" in text
    assert "not met (on the 5 measured shapes; 3 missing)**" in text


def test_sm90_models_target_met():
    prof = {}
    shapes = []
    for m, x in ((2048, 0.95), (4096, 1.0), (8192, 1.05), (16384, 1.02)):
        key = (m, 4096, 4096, "False", BF16, BF16)
        shapes.append(key)
        prof[key] = {"cublaslt": {"libtype": "cublaslt", "us": 100.0 * x, "pieces": 1},
                     "sm90_a_i32": {"libtype": "sm90", "us": 100.0, "pieces": 1}}
    res = sm90_report.models_section(prof, shapes)
    assert res["median"] == pytest.approx(1.01)
    assert res["min"] == pytest.approx(0.95)
    assert res["below"] == 0 and res["missing"] == []
    assert res["status"] == "met"


def test_sm90_index_width_pairs(tmp_path):
    a, b = "sm90_bf16_128x128x64_s5_c1x1_pp", "sm90_bf16_128x160x64_s5_c1x1"
    rows = profile_rows(4096, 4096, 4096, "False", {a + "_i32": 100.0, a + "_i64": 100.5,  # r 1.005
                                                    b + "_i32": 100.0, b + "_i64": 103.0,  # r 1.03
                                                    a + "_etma_i64": 50.0,  # no i32 twin: skipped
                                                    "sm90_bf16_swapab_64x64x64_s12_cks_i64": 10.0,  # skipped
                                                    "cublaslt": 90.0})
    rows += profile_rows(8192, 4096, 4096, "False", {a + "_i32": 200.0, a + "_i64": 202.0,  # r 1.01
                                                     b + "_i32": 50.0, b + "_i64": 50.0})  # r 1.0
    rows += profile_rows(16384, 4096, 4096, "False", {a + "_i64": 300.0, b + "_i64": 400.0})
    rows += profile_rows(16384, 4096, 4096, "False", {a + "_i32": 100.0, b + "_i32": 100.0}, ok=0)  # failed twins
    text, j = run_sm90(tmp_path, rows)
    ix = j["index"]
    assert ix["pairs"] == 4
    assert ix["median"] == pytest.approx(1.0075)
    assert ix["within"] == pytest.approx(0.75)
    cfgs = {c["config"]: c for c in ix["configs"]}
    assert set(cfgs) == {a, b}
    assert cfgs[a]["pairs"] == 2 and cfgs[a]["median"] == pytest.approx(1.0075)
    assert cfgs[b]["pairs"] == 2 and cfgs[b]["median"] == pytest.approx(1.015)
    assert ix["over"] == [b] and ix["status"] == "not met"
    assert "| %s | 2 | 1.0075 | 100%% |" % a in text
    assert "**Target i64 within 1%% of i32: not met; median r > 1.01: %s**" % b in text
    # Without b's slow 4096 pair every configuration is within 1%.
    prof = sm90_report.read_profile(tmp_path / "prof.csv")
    del prof[(4096, 4096, 4096, "False", BF16, BF16)][b + "_i64"]
    ix = sm90_report.index_section(prof)
    assert ix["pairs"] == 3 and ix["status"] == "met"


def test_sm90_reads_gzip_profile(tmp_path):
    rows = [r for m in SEED_MS for r in seed_rows(m, 110.0, 100.0)]
    rows += profile_rows(8192, 6144, 1280, "True", {"sm90_bf16_128x128x64_s5_c1x1_pp_i64": 101.0})
    text, j = run_sm90(tmp_path, rows, gz=True)
    assert [r["x"] for r in j["seed"]["rows"]] == pytest.approx([1.1] * 5)
    assert j["seed"]["status"] == "met"  # x = 1.10 exactly meets x >= 1.10
    assert j["index"]["pairs"] == 1 and j["index"]["median"] == pytest.approx(1.01)
    assert "From the tuner's profile `prof.csv.gz`" in text


def test_tune_profile_passing_rows_plain_and_gzip(tmp_path):
    """The one reader of tune profiles: only candidates that ran and passed with a finite positive time, values
    stripped, the same rows from a plain and a gzip-compressed file (told apart by content, not by name)."""
    import tune_profile

    text = ("M,N,K,bias,kernel,libtype,ok,us,note\n"
            "8, 4096,4096,False, good ,sm90,1, 12.5 , -\n"
            "8,4096,4096,False,failed,sm90,0,3.0,err_ratio\n"
            "8,4096,4096,False,nan_time,sm90,1,nan, -\n"
            "8,4096,4096,False,zero_time,sm90,1,0, -\n"
            "8,4096,4096,False,no_time,sm90,1,-, -\n"
            "8,4096,4096,False,old_format,cublaslt,1,20.0\n"
            "8,4096,4096,False,cut_short,sm90\n")
    plain = tmp_path / "prof.csv"
    plain.write_text(text)
    packed = tmp_path / "prof_no_gz_suffix"
    with gzip.open(packed, "wt", newline="") as f:
        f.write(text)
    for path in (plain, packed):
        rows = list(tune_profile.passing_rows(str(path)))
        assert [(r["kernel"], us) for r, us in rows] == [("good", 12.5), ("old_format", 20.0)]
        assert rows[0][0]["N"] == "4096" and rows[0][0]["libtype"] == "sm90"


def test_crossover_reads_gzip_profile(tmp_path):
    prof = tmp_path / "prof.csv.gz"
    with gzip.open(prof, "wt", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["M", "N", "K", "bias", "kernel", "libtype", "ok", "us"])
        w.writeheader()
        for m, sk, sm in ((16, 10.0, 30.0), (32, 14.0, 20.0), (64, 25.0, 18.0)):
            w.writerow({"M": m, "N": 1280, "K": 8192, "bias": "False", "kernel": "s", "libtype": "skinny", "ok": 1, "us": sk})
            w.writerow({"M": m, "N": 1280, "K": 8192, "bias": "False", "kernel": "g", "libtype": "sm90", "ok": 1, "us": sm})
    assert decode_report.crossover(str(prof)) == {
        (1280, 8192, "False"): [(16, 10.0, 30.0), (32, 14.0, 20.0), (64, 25.0, 18.0)]}


def test_merge_tuned_tables_and_profiles(tmp_path):
    """merge_tuned.py: overlays replace the base's shapes (a table row per arch, SM count and shape; a profile shape
    with all its candidates), later overlays win, new shapes come last, short lines and other headers are refused."""
    shape = "torch.bfloat16,torch.bfloat16,False,False"
    th = "gfx,cu_num,M,N,K,bias,dtype,outdtype,scaleAB,bpreshuffle,libtype,kernelName,us\n"
    (tmp_path / "base.csv").write_text(th + "".join("sm90,132,%d,64,64,False,%s,cublaslt,cublaslt,%d\n" % (m, shape, m)
                                                    for m in (1, 2, 3)) + "sm90,114,2,64,64,False,%s,cublaslt,cublaslt,9\n" % shape)
    (tmp_path / "o1.csv").write_text(th + "sm90,132,2,64,64,False,%s,sm90,a,1\nsm90,132,3,64,64,False,%s,sm90,b,1\n" % (shape, shape))
    (tmp_path / "o2.csv").write_text(th + "sm90,132,3,64,64,False,%s,sm90,c,1\nsm90,132,4,64,64,False,%s,sm90,d,1\n" % (shape, shape))

    def run(*files):
        return subprocess.run([sys.executable, os.path.join(SCRIPTS, "merge_tuned.py")] + [str(tmp_path / f) for f in files],
                              capture_output=True, text=True)

    r = run("base.csv", "o1.csv", "o2.csv")
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader(r.stdout.splitlines()))
    assert [(x["cu_num"], x["M"], x["kernelName"]) for x in rows] == [
        ("132", "1", "cublaslt"), ("132", "2", "a"), ("132", "3", "c"), ("114", "2", "cublaslt"), ("132", "4", "d")]

    ph = "M,N,K,bias,dtype,outdtype,scaleAB,bpreshuffle,kernel,libtype,ok,us\n"
    with gzip.open(tmp_path / "pbase.csv.gz", "wt", newline="") as f:
        f.write(ph + "".join("%d,64,64,False,%s,%s,x,1,%d\n" % (m, shape, k, m) for m in (1, 2) for k in ("k1", "k2")))
    (tmp_path / "pover.csv").write_text(ph + "2,64,64,False,%s,k3,x,1,5\n2,64,64,False,%s,k4\n" % (shape, shape))
    r = run("pbase.csv.gz", "pover.csv")
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader(r.stdout.splitlines()))
    assert [(x["M"], x["kernel"]) for x in rows] == [("1", "k1"), ("1", "k2"), ("2", "k3")]

    (tmp_path / "other.csv").write_text("M,N,K\n1,2,3\n")
    r = run("base.csv", "other.csv")
    assert r.returncode != 0 and "another header" in r.stderr


def write_table_rows(path, m_kernels, solidx):
    """A tuned table of (M, kernel) rows at N = K = 4096, each 100 us, 10 TFLOP/s, 20 GB/s."""
    th = ("gfx,cu_num,M,N,K,bias,dtype,outdtype,scaleAB,bpreshuffle,libtype,solidx,splitK,us,kernelName,err_ratio,"
          "tflops,bw\n")
    tail = "torch.bfloat16,torch.bfloat16,False,False"
    path.write_text(th + "".join(
        "sm90,132,%d,4096,4096,False,%s,cublaslt,%d,1,100.0000,%s,0.0000,10.00,20.00\n" % (m, tail, solidx, k)
        for m, k in m_kernels))


def test_revert_losers_only_rows_whose_own_kernel_lost_often_enough(tmp_path):
    """revert_losers.py: a row goes back to cuBLASLt's default when its own kernel read below 1.0x in --min-runs
    bench runs (runs of another kernel for the shape do not count), with the runs' median cuBLASLt time; the other
    rows are copied as they are."""
    write_table_rows(tmp_path / "t.csv", ((1, "cublaslt_h5"), (2, "cublaslt_h5"), (3, "cublaslt"), (4, "sm90_x")), solidx=5)
    cols = BENCH_COLS

    def run_csv(name, picks):
        rows = []
        for m, kern, x, lt in picks:
            rows += bench_rows(m, 4096, 4096, lt / x, lt, kern)
        write_csv(tmp_path / name, cols, rows)

    run_csv("b1.csv", [(1, "cublaslt_h5", 0.95, 80.0), (2, "cublaslt_h5", 0.99, 80.0), (3, "cublaslt", 1.0, 1.0),
                       (4, "other", 0.5, 1.0)])
    run_csv("b2.csv", [(1, "cublaslt_h5", 0.97, 90.0), (2, "cublaslt_h5", 1.02, 80.0), (4, "other", 0.5, 1.0)])
    run_csv("b3.csv", [(1, "cublaslt_h5", 1.01, 50.0), (4, "sm90_x", 0.9, 1.0)])
    r = subprocess.run([sys.executable, os.path.join(SCRIPTS, "revert_losers.py"), str(tmp_path / "t.csv")] +
                       [str(tmp_path / b) for b in ("b1.csv", "b2.csv", "b3.csv")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader(r.stdout.splitlines()))
    assert [x["kernelName"] for x in rows] == ["cublaslt", "cublaslt_h5", "cublaslt", "sm90_x"]
    assert rows[0]["libtype"] == "cublaslt" and rows[0]["solidx"] == "0" and rows[0]["us"] == "80.0000"
    assert float(rows[0]["tflops"]) == pytest.approx(12.5) and float(rows[0]["bw"]) == pytest.approx(25.0)
    assert rows[1]["solidx"] == "5" and rows[1]["us"] == "100.0000"
    assert "1 of 4 rows reverted" in r.stderr


def test_keep_gainers_drops_graph_gains_that_fall_below_cublaslt_in_plain_launches(tmp_path):
    """scripts/dev/keep_gainers.py: a changed row is kept where its new pick's median x cuBLASLt beats the old pick's
    by more than --margin; with --plain-old / --plain-new it is still dropped where the new pick reads below 1.0x and
    below the old pick in plain launches (M = 2), not where it is below 1.0x but no worse than the old one (M = 3)."""
    write_table_rows(tmp_path / "old.csv", ((1, "old_k"), (2, "old_k"), (3, "old_k"), (4, "old_k")), solidx=0)
    write_table_rows(tmp_path / "new.csv", ((1, "new_k"), (2, "new_k"), (3, "new_k"), (4, "new_k")), solidx=0)

    def run_csv(name, picks):  # (M, kernel, x cuBLASLt) with cuBLASLt at 10 us
        rows = []
        for m, kern, x in picks:
            rows += bench_rows(m, 4096, 4096, 10.0 / x, 10.0, kern)
        write_csv(tmp_path / name, BENCH_COLS, rows)
        return str(tmp_path / name)

    old = [run_csv("o%d.csv" % i, [(m, "old_k", 1.00) for m in (1, 2, 3, 4)]) for i in (1, 2, 3)]
    new = [run_csv("n%d.csv" % i, [(1, "new_k", 1.05), (2, "new_k", 1.08), (3, "new_k", 1.03), (4, "new_k", 1.002)])
           for i in (1, 2, 3)]
    plain_old = [run_csv("po%d.csv" % i, [(1, "old_k", 1.01), (2, "old_k", 1.03), (3, "old_k", 0.95), (4, "old_k", 1.0)])
                 for i in (1, 2, 3)]
    plain_new = [run_csv("pn%d.csv" % i, [(1, "new_k", 1.02), (2, "new_k", 0.95), (3, "new_k", 0.96), (4, "new_k", 1.0)])
                 for i in (1, 2, 3)]
    script = os.path.join(SCRIPTS, "dev", "keep_gainers.py")
    base = [sys.executable, script, str(tmp_path / "old.csv"), str(tmp_path / "new.csv"), "--prefix", "",
            "--old"] + old + ["--new-runs"] + new

    r = subprocess.run(base, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert [x["kernelName"] for x in csv.DictReader(r.stdout.splitlines())] == ["new_k", "new_k", "new_k", "old_k"]

    r = subprocess.run(base + ["--plain-old"] + plain_old + ["--plain-new"] + plain_new, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert [x["kernelName"] for x in csv.DictReader(r.stdout.splitlines())] == ["new_k", "old_k", "new_k", "old_k"]
    assert "drop 2x4096x4096 bias=False" in r.stderr and "below 1.0x and the old pick in plain launches" in r.stderr
    assert "keep_gainers: 2 rows taken" in r.stderr


def test_promote_winners_switches_rows_whose_candidate_won_often_enough(tmp_path):
    """promote_winners.py: a row takes the candidate timed beside its pick (`tgemm bench --top-from`) that read more
    than --min-gain-pct faster in --min-runs runs (only runs whose pick was the row's own kernel count); of several,
    the best geometric mean gain, with the median of its times; libtype and solidx follow the kernel's name."""
    write_table_rows(tmp_path / "t.csv", ((1, "cublaslt"), (2, "cublaslt"), (3, "sm90_a"), (4, "cublaslt")), solidx=0)

    def block(m, pick, pick_us, cands, lt=100.0):
        """cuBLASLt's reference row, the pick, then (kernel, us) candidates, x cuBLASLt = lt / us."""
        rows = bench_rows(m, 4096, 4096, pick_us, lt, pick)
        for kern, us in cands:
            rows += bench_rows(m, 4096, 4096, us, lt, kern)[1:]
            rows[-1]["what"] = kern
        return rows

    r1 = (block(1, "cublaslt", 100, [("cublaslt_h3", 95), ("skinny_x", 99)]) +
          block(2, "cublaslt", 100, [("cublaslt_h2", 95)]) +
          block(3, "sm90_a", 100, [("sm90_b", 96), ("skinny_c", 90)]) +
          block(4, "other", 100, [("cublaslt_h1", 80)]))
    r2 = (block(1, "cublaslt", 100, [("cublaslt_h3", 96), ("skinny_x", 90)]) +
          block(2, "cublaslt", 100, [("cublaslt_h2", 99.5)]) +
          block(3, "sm90_a", 100, [("sm90_b", 96), ("skinny_c", 92)]) +
          block(4, "other", 100, [("cublaslt_h1", 80)]))
    write_csv(tmp_path / "b1.csv", BENCH_COLS, r1)
    write_csv(tmp_path / "b2.csv", BENCH_COLS, r2)
    r = subprocess.run([sys.executable, os.path.join(SCRIPTS, "promote_winners.py"), str(tmp_path / "t.csv"),
                        str(tmp_path / "b1.csv"), str(tmp_path / "b2.csv")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader(r.stdout.splitlines()))
    # M=1: h3 faster by 5.3% and 4.2% in both runs; skinny_x only in one (1% and 11%): h3.
    assert rows[0]["kernelName"] == "cublaslt_h3" and rows[0]["libtype"] == "cublaslt" and rows[0]["solidx"] == "3"
    assert rows[0]["us"] == "95.5000" and float(rows[0]["tflops"]) == pytest.approx(10 * 100 / 95.5, abs=0.005)
    assert rows[1]["kernelName"] == "cublaslt"      # M=2: one run of two
    assert rows[2]["kernelName"] == "skinny_c" and rows[2]["libtype"] == "skinny" and rows[2]["solidx"] == "0"
    assert rows[3]["kernelName"] == "cublaslt"      # M=4: the runs' pick was another kernel
    assert "2 of 4 rows switched" in r.stderr
    # --min-runs 1: M=2 switches too.
    r = subprocess.run([sys.executable, os.path.join(SCRIPTS, "promote_winners.py"), str(tmp_path / "t.csv"),
                        str(tmp_path / "b1.csv"), str(tmp_path / "b2.csv"), "--min-runs", "1"], capture_output=True,
                       text=True)
    assert [x["kernelName"] for x in csv.DictReader(r.stdout.splitlines())][1] == "cublaslt_h2"


def test_robust_picks_takes_the_kernel_never_far_behind(tmp_path):
    """robust_picks.py: where a row's pick read more than --max-gap-pct behind the fastest in --min-runs runs, the row
    takes the kernel with the smallest worst gap over the runs, among those timed in every run (cuBLASLt's default is,
    from each run's first round); runs of another pick do not count; a plain bench CSV (no x_pick column) adds the
    pick and the default."""
    write_table_rows(tmp_path / "t.csv", ((1, "cublaslt"), (2, "sm90_a"), (4, "sm90_a"), (8, "sm90_a")), solidx=0)
    cols = BENCH_COLS + ["x_pick"]

    def block(m, pick, x_pick_lt, cands, lt=100.0):
        """cuBLASLt's row, the pick (x cuBLASLt x_pick_lt), then (kernel, speed against the pick) candidates."""
        rows = bench_rows(m, 4096, 4096, lt / x_pick_lt, lt, pick)
        rows[0]["x_pick"], rows[1]["x_pick"] = "", 1.0
        for kern, x in cands:
            rows.append(dict(rows[1], what=kern, kernel=kern, us=lt / x_pick_lt / x, x_pick=x))
        return rows

    hot = [block(1, "cublaslt", 1.0, [("cublaslt_h5", 1.05), ("cublaslt_h4", 1.03)]),
           block(2, "sm90_a", 1.02, [("sm90_b", 1.02)]),
           block(4, "sm90_a", 0.95, [("sm90_c", 0.99)]),
           block(8, "other", 1.0, [("sm90_a", 1.2)])]
    hot2 = [block(1, "cublaslt", 1.0, [("cublaslt_h5", 1.04), ("cublaslt_h4", 1.03)]),
            block(2, "sm90_a", 1.02, [("sm90_b", 1.01)]),
            block(4, "sm90_a", 0.96, [("sm90_c", 1.0)])]
    settled = [block(1, "cublaslt", 1.0, [("cublaslt_h5", 0.94), ("cublaslt_h4", 0.985)]),
               block(2, "sm90_a", 1.01, [("sm90_b", 0.99)]),
               block(4, "sm90_a", 0.96, [("sm90_c", 1.0)])]
    for name, blocks in (("hot.csv", hot), ("hot2.csv", hot2), ("settled.csv", settled)):
        write_csv(tmp_path / name, cols, [r for b in blocks for r in b])
    write_csv(tmp_path / "plain.csv", BENCH_COLS, bench_rows(2, 4096, 4096, 100 / 1.03, 100, "sm90_a"))

    def run(*extra):
        r = subprocess.run([sys.executable, os.path.join(SCRIPTS, "robust_picks.py"), str(tmp_path / "t.csv"),
                            *(str(tmp_path / n) for n in ("hot.csv", "hot2.csv", "settled.csv", "plain.csv")), *extra],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        return [x["kernelName"] for x in csv.DictReader(r.stdout.splitlines())], r

    kernels, r = run()
    # M=1: the default is 5% and 4% behind h5 in the hot runs; h5 6.4% behind in the settled one; h4 never > 1.9%.
    assert kernels[0] == "cublaslt_h4"
    # M=2: within 3% everywhere. M=4: 5.3% and 4.2% behind cuBLASLt's default, which leads in every run.
    # M=8: the runs' pick was another kernel.
    assert kernels[1:] == ["sm90_a", "cublaslt", "sm90_a"]
    assert "cublaslt_h4 (worst gap over 3 runs 5.0% -> 1.9%)" in r.stderr and "2 of 4 rows switched" in r.stderr
    rows = list(csv.DictReader(r.stdout.splitlines()))
    assert rows[0]["libtype"] == "cublaslt" and rows[0]["solidx"] == "4" and rows[2]["solidx"] == "0"
    # --min-runs 3: M=1's pick was behind by more than 3% in two runs only; M=4's in three.
    kernels, _ = run("--min-runs", "3")
    assert kernels == ["cublaslt", "sm90_a", "cublaslt", "sm90_a"]
