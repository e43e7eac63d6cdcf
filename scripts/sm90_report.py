#!/usr/bin/env python3
"""Issue 3 report: tgemm's own sm90 kernels against cuBLASLt, from the 2-way bench of the shipped table (--bench) and
the tuner's every-candidate profile.

    python3 scripts/sm90_report.py --profile tune_profile.csv[.gz] [--bench bench_seed.csv --bench bench_models.csv]
        [--models shapes/models.csv] [-o report.md] [--json report.json]

--bench (repeatable; a later file wins for a shape in two): `tgemm bench --csv` output of the shipped table. Where it
holds a shape whose pick is an sm90 kernel, targets 1 and 2 take that shape's figures from it: the `tgemm mm` row
(the table's pick, the configuration the tuner found best) and its x_cublaslt, the median of per-iteration ratios
against cuBLASLt's default timed interleaved in the same process. That is the direct measurement. The targets are the
sm90 family's, so a shape whose pick is another backend (a cuBLASLt algorithm) takes its best sm90 row from the
profile, as do shapes no bench file holds. A bench row counts when it passed the bench's own check (every row of Y
written, err_ratio <= 0.05, as tools/cmd_bench.cpp judges it).

The profile (`tgemm tune`'s, one row per shape and candidate kernel) holds every candidate's median time. The
baseline is the row named `cublaslt`: cuBLASLt's default heuristic algorithm, what F.linear runs; the rows
`cublaslt_h1`.. are cuBLASLt's other heuristic algorithms, not the baseline, and are not used. A candidate counts
when ok = 1 (it ran and passed the accuracy check) and its time is positive; "best sm90" is the fastest such row of
libtype sm90, whatever its name. x = cuBLASLt default us / best sm90 us (> 1: tgemm's kernel is faster). Where
the tuner ran a final round for a shape, only that round's rows are compared (same_round).

Three targets, each reported as met / not met (or not measured where the profile lacks the data):
  1. Seed shapes (N=6144, K=1280, bias, bf16; M in 8192, 65536, 340000, 360000, 768000): x >= 1.10 at every M.
  2. The --models shapes with M >= 2048: median x >= 1.0 and minimum x >= 0.9.
  3. Index width: for each shape and each sm90 kernel `..._i64` whose `..._i32` twin also ran, r = us(i64) /
     us(i32); the i64 variant is within 1% of the i32 one when every configuration's median r <= 1.01.
"""
import argparse
import csv
import json
import math
import os
import statistics
import sys
from collections import defaultdict

from tune_profile import open_text, passing_rows, read_bench

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

BASELINE = "cublaslt"  # cuBLASLt's default heuristic algorithm; cublaslt_h1.. are not the baseline
SEED_N, SEED_K, SEED_BIAS, SEED_DTYPE = 6144, 1280, "True", "torch.bfloat16"
SEED_MS = (8192, 65536, 340000, 360000, 768000)
SEED_X = 1.10
MODELS_MIN_M = 2048
MODELS_MEDIAN_X = 1.0
MODELS_MIN_X = 0.9
INDEX_R = 1.01
LOWEST = 5
BENCH_WHAT = "tgemm mm"
BENCH_MAX_ERR_RATIO = 0.05  # tools/cmd_bench.cpp's pass mark


def shape_key(r):
    """(M, N, K, bias, dtype, outdtype) of a profile or shape-suite row."""
    return (int(r["M"]), int(r["N"]), int(r["K"]), r["bias"].strip(), r["dtype"].strip(), r["outdtype"].strip())


def shape_str(k):
    return "%dx%dx%d%s" % (k[0], k[1], k[2], " +bias" if k[3] == "True" else "")


def read_profile(path):
    """{shape: {kernel: {"libtype", "us", "pieces", "final"}}} of the passing rows (tune_profile.passing_rows). A
    kernel listed twice for one shape (profiles appended to one another) keeps its faster time."""
    prof = defaultdict(dict)
    for r, us in passing_rows(path):
        kern = r["kernel"]
        d = prof[shape_key(r)]
        if kern not in d or us < d[kern]["us"]:
            d[kern] = {"libtype": r["libtype"], "us": us, "pieces": int(r.get("pieces") or 1),
                       "final": r.get("final", "0") == "1"}
    return dict(prof)


def same_round(cands):
    """The candidates whose times come from one round: the tuner's final round where it ran one (the baseline is
    always in it), else all. One kernel's first-round time can read 5-10% faster than its final-round time (8192 x
    6144 x 1280 in docs/data/tune_profile.csv.gz: 191-193 us first-round sm90 rows, 206-213 us final-round ones),
    so mixing the rounds flatters the candidates that did not reach the final."""
    finals = {k: v for k, v in cands.items() if v.get("final")}
    return finals or cands


def read_models(path):
    """The shape suite's keys, in file order, without repeats."""
    with open_text(path) as f:
        return list(dict.fromkeys(shape_key(r) for r in csv.DictReader(f)))


def best_sm90(cands):
    """(kernel, us, pieces) of the fastest sm90 row of one shape, or None."""
    sm = [(v["us"], k, v["pieces"]) for k, v in cands.items() if v["libtype"] == "sm90"]
    if not sm:
        return None
    us, k, pieces = min(sm)
    return k, us, pieces


def read_benches(paths):
    """{shape: compare()-style dict with source "bench"} from `tgemm bench --csv` files, for the shapes whose pick
    is an sm90 kernel; later files win."""
    out = {}
    for path in paths or ():
        for k, (r, _) in read_bench(path, BENCH_WHAT, shape_key).items():
            try:
                x, us, lt_us = float(r["x_cublaslt"]), float(r["us"]), float(r["cublaslt_us"])
                passed = int(r["unwritten"]) == 0 and float(r["err_ratio"]) <= BENCH_MAX_ERR_RATIO
            except (KeyError, ValueError):
                x = us = lt_us = float("nan")
                passed = False
            if r.get("kernel", "").startswith("sm90_") and passed and all(v > 0 and math.isfinite(v) for v in (x, us, lt_us)):
                out[k] = {"lt_us": lt_us, "kernel": r["kernel"], "us": us, "pieces": int(r.get("pieces") or 1),
                          "x": x, "source": "bench"}
            else:
                out.pop(k, None)  # the later file's row stands, even where it does not count
    return out


def compare(prof, key, bench=None):
    """One shape against the baseline: a dict with lt_us, kernel, us, pieces, x and source ("bench" where a bench
    file holds the shape, else "profile"); or with `missing` saying why."""
    if bench and key in bench:
        return bench[key]
    cands = prof.get(key)
    if cands is None:
        return {"missing": "not in profile"}
    had_final = any(v.get("final") for v in cands.values())
    cands = same_round(cands)
    lt = cands.get(BASELINE)
    best = best_sm90(cands)
    if lt is None and best is None:
        return {"missing": "no ok sm90 row and no cublaslt row"}
    if lt is None:
        return {"missing": "no cublaslt row"}
    if best is None:
        return {"missing": "no sm90 kernel in the tuner's final round" if had_final else "no ok sm90 row",
                "lt_us": lt["us"]}
    kern, us, pieces = best
    return {"lt_us": lt["us"], "kernel": kern, "us": us, "pieces": pieces, "x": lt["us"] / us, "source": "profile"}


def status(ok):
    return "met" if ok else "not met"


def seed_section(prof, ms=SEED_MS, bench=None):
    rows = []
    for m in ms:
        c = compare(prof, (m, SEED_N, SEED_K, SEED_BIAS, SEED_DTYPE, SEED_DTYPE), bench)
        rows.append(dict(c, M=m))
    measured = [r for r in rows if "x" in r]
    below = [r["M"] for r in measured if r["x"] < SEED_X]
    if len(measured) < len(rows):
        st = "not measured"
    else:
        st = status(not below)
    return {"target": "x >= %.2f at every seed M" % SEED_X, "rows": rows, "below": below,
            "missing": [r["M"] for r in rows if "x" not in r],
            "min_x": min((r["x"] for r in measured), default=None), "status": st}


def models_section(prof, shapes, min_m=MODELS_MIN_M, lowest=LOWEST, bench=None):
    per, missing = [], []
    for k in shapes:
        if k[0] < min_m:
            continue
        c = compare(prof, k, bench)
        if "x" in c:
            per.append(dict(c, shape=k))
        else:
            missing.append((k, c["missing"]))
    xs = [r["x"] for r in per]
    res = {"target": "median x >= %.1f and minimum x >= %.1f over the models shapes with M >= %d"
                     % (MODELS_MEDIAN_X, MODELS_MIN_X, min_m),
           "count": len(per), "missing": missing, "rows": per}
    if not xs:
        res.update(median=None, min=None, below=0, lowest=[], status="not measured")
        return res
    med, mn = statistics.median(xs), min(xs)
    res.update(median=med, min=mn, below=sum(1 for x in xs if x < MODELS_MIN_X),
               lowest=sorted(per, key=lambda r: r["x"])[:lowest],
               status=status(med >= MODELS_MEDIAN_X and mn >= MODELS_MIN_X))
    return res


def index_pairs(prof):
    """[(shape, config, r, i32 pieces)]: every sm90 `_i64` row whose `_i32` twin is also an ok row of the shape."""
    pairs = []
    for k, cands in prof.items():
        cands = same_round(cands)
        for kern, v in cands.items():
            if v["libtype"] != "sm90" or not kern.endswith("_i64"):
                continue
            twin = cands.get(kern[:-len("_i64")] + "_i32")
            if twin is None or twin["libtype"] != "sm90":
                continue
            pairs.append((k, kern[:-len("_i64")], v["us"] / twin["us"], twin["pieces"]))
    return sorted(pairs)


def index_section(prof):
    pairs = index_pairs(prof)
    by_cfg = defaultdict(list)
    for k, cfg, r, pieces in pairs:
        by_cfg[cfg].append((r, k, pieces))
    cfgs = []
    for cfg, v in sorted(by_cfg.items()):
        rs = [r for r, _, _ in v]
        worst = max(v)
        cfgs.append({"config": cfg, "pairs": len(v), "median": statistics.median(rs),
                     "within": sum(1 for r in rs if r <= INDEX_R) / len(rs), "max": worst[0],
                     "max_shape": worst[1], "max_i32_pieces": worst[2]})
    rs = [p[2] for p in pairs]
    split = [p[2] for p in pairs if p[3] > 1]
    res = {"target": "the i64 variant within 1%% of the i32 variant of the same configuration "
                     "(every configuration's median r <= %.2f)" % INDEX_R,
           "pairs": len(pairs), "configs": cfgs,
           "median": statistics.median(rs) if rs else None,
           "within": sum(1 for r in rs if r <= INDEX_R) / len(rs) if rs else None,
           "i32_split_pairs": len(split), "i32_split_median": statistics.median(split) if split else None,
           "over": [c["config"] for c in cfgs if c["median"] > INDEX_R]}
    res["status"] = status(not res["over"]) if cfgs else "not measured"
    return res


def kernel_str(r):
    return r["kernel"] + (" (%d pieces)" % r["pieces"] if r.get("pieces", 1) > 1 else "")


def render(seed, models, index, profile_name, models_name, bench_names=()):
    out = []
    p = out.append
    p("# Issue 3: tgemm's sm90 kernels against cuBLASLt\n")
    if bench_names:
        p("Sections 1 and 2, source `bench`: where the shipped table's pick is an sm90 kernel, that pick (`tgemm mm`) "
          "timed interleaved with cuBLASLt's default in one process by `tgemm bench` (%s); x = the bench's median of "
          "per-iteration ratios. Shapes whose pick is another backend or which those files lack (source `profile`), "
          "and section 3, come from the tuner's profile `%s`.\n"
          % (", ".join("`%s`" % b for b in bench_names), profile_name))
    else:
        p("From the tuner's profile `%s`." % profile_name)
    p("Profile rows: baseline the `%s` row (cuBLASLt's default heuristic algorithm, what F.linear "
      "runs; `cublaslt_h*` rows are not used). Best sm90: the fastest ok row of libtype sm90. "
      "x = cuBLASLt default us / best sm90 us.\n" % BASELINE)
    p("What profile times are: each shape's rows come from one tune run, but different shapes from different runs (and "
      "kernel versions) as shapes were re-tuned, and rows the gain step chose after the tune (a 2-way bench of the "
      "old pick against the new) are not in it. Where the tuner ran a final round (the fastest few, cuBLASLt's "
      "default and, since session 13, each backend's fastest, interleaved with 2x iterations), only its times are "
      "compared: a first-round time can read 5-10% faster than the same kernel's final-round time. So the best sm90 "
      "here is the best that reached the final round, and a shape whose final round had none is listed as missing. "
      "A bench run that times the configurations beside cuBLASLt (`tgemm bench`, `--bench` here) is the direct "
      "measurement.\n")

    p("## 1. Seed shapes (N=%d, K=%d, bias, bf16)\n" % (SEED_N, SEED_K))
    p("Target: x >= %.2f at every M.\n" % SEED_X)
    p("| M | cuBLASLt us | best sm90 kernel | sm90 us | x cuBLASLt | source |")
    p("| --- | --- | --- | --- | --- | --- |")
    for r in seed["rows"]:
        if "x" in r:
            p("| %d | %.1f | %s | %.1f | %.3f | %s |" % (r["M"], r["lt_us"], kernel_str(r), r["us"], r["x"],
                                                         r["source"]))
        else:
            p("| %d | %s | %s | - | - | - |" % (r["M"], "%.1f" % r["lt_us"] if "lt_us" in r else "-", r["missing"]))
    measured = [r for r in seed["rows"] if "x" in r]
    line = "\n- Measured: %d of %d seed M" % (len(measured), len(seed["rows"]))
    if measured:
        line += "; minimum x %.3f; below %.2f: %s" % (seed["min_x"], SEED_X,
                                                      ", ".join("M=%d" % m for m in seed["below"]) or "none")
    if seed["missing"]:
        line += "; not measured: %s" % ", ".join("M=%d" % m for m in seed["missing"])
    p(line)
    p("- **Target x >= %.2f at every M: %s**\n" % (SEED_X, seed["status"]))

    p("## 2. models shapes with M >= %d (`%s`)\n" % (MODELS_MIN_M, models_name))
    p("Target: median x >= %.1f and minimum x >= %.1f.\n" % (MODELS_MEDIAN_X, MODELS_MIN_X))
    if models is None:
        p("- no shape suite given\n")
    else:
        n_miss = len(models["missing"])
        by_src = defaultdict(int)
        for r in models["rows"]:
            by_src[r["source"]] += 1
        sources = ", ".join("%d from the %s" % (n, src) for src, n in sorted(by_src.items()))
        p("- Shapes measured: %d%s%s" % (models["count"], " (%s)" % sources if sources else "",
                                         "; missing: %d" % n_miss if n_miss else ""))
        if models["count"]:
            p("- Median x: %.3f" % models["median"])
            p("- Minimum x: %.3f" % models["min"])
            p("- Below %.1f: %d" % (MODELS_MIN_X, models["below"]))
            p("\nThe %d lowest:\n" % len(models["lowest"]))
            p("| shape (MxNxK) | cuBLASLt us | best sm90 kernel | sm90 us | x cuBLASLt | source |")
            p("| --- | --- | --- | --- | --- | --- |")
            for r in models["lowest"]:
                p("| %s | %.1f | %s | %.1f | %.3f | %s |"
                  % (shape_str(r["shape"]), r["lt_us"], kernel_str(r), r["us"], r["x"], r["source"]))
        if n_miss:
            p("\nMissing (%d):\n" % n_miss)
            for k, why in models["missing"]:
                p("- %s %s/%s: %s" % (shape_str(k), k[4], k[5], why))
        tail = ""
        if n_miss and models["count"]:
            tail = " (on the %d measured shapes; %d missing)" % (models["count"], n_miss)
        elif n_miss:
            tail = " (%d missing)" % n_miss
        p("\n- **Target median x >= %.1f and minimum x >= %.1f: %s%s**\n"
          % (MODELS_MEDIAN_X, MODELS_MIN_X, models["status"], tail))

    p("## 3. Index width: i64 against i32\n")
    p("Target: the i64 variant within 1%% of the i32 variant of the same configuration (every configuration's median "
      "r <= %.2f), r = us(i64) / us(i32) per shape where both ran.\n" % INDEX_R)
    p("- Pairs: %d" % index["pairs"])
    if index["pairs"]:
        p("- Median r: %.4f" % index["median"])
        p("- Pairs with r <= %.2f: %.1f%%" % (INDEX_R, 100 * index["within"]))
        if index["i32_split_pairs"]:
            p("- Pairs whose i32 twin the tuner ran in pieces (the shape too large for a 32-bit index): %d, "
              "median r %.4f" % (index["i32_split_pairs"], index["i32_split_median"]))
        p("\n| configuration | pairs | median r | r <= %.2f | max r (shape) |" % INDEX_R)
        p("| --- | --- | --- | --- | --- |")
        for c in index["configs"]:
            p("| %s | %d | %.4f | %.0f%% | %.4f (%s%s) |" % (c["config"], c["pairs"], c["median"], 100 * c["within"],
              c["max"], shape_str(c["max_shape"]),
              ", i32 in %d pieces" % c["max_i32_pieces"] if c["max_i32_pieces"] > 1 else ""))
    over = ("; median r > %.2f: %s" % (INDEX_R, ", ".join(index["over"]))) if index["over"] else ""
    p("\n- **Target i64 within 1%% of i32: %s%s**\n" % (index["status"], over))

    p("## Summary\n")
    p("- Seed shapes x >= %.2f: %s" % (SEED_X, seed["status"]))
    if models is not None:
        p("- models M >= %d median >= %.1f, min >= %.1f: %s" % (MODELS_MIN_M, MODELS_MEDIAN_X, MODELS_MIN_X,
                                                              models["status"]))
    p("- i64 within 1%% of i32: %s" % index["status"])
    return "\n".join(out) + "\n"


def to_json(seed, models, index):
    """The numbers of the three sections, JSON-ready (shapes as lists)."""
    def shape_rows(rows):
        return [dict({k: v for k, v in r.items() if k != "shape"}, shape=list(r["shape"])) for r in rows]

    j = {"seed": seed, "index": dict(index, configs=[dict(c, max_shape=list(c["max_shape"]))
                                                      for c in index["configs"]])}
    if models is not None:
        j["models"] = dict(models, rows=shape_rows(models["rows"]), lowest=shape_rows(models["lowest"]),
                           missing=[{"shape": list(k), "why": why} for k, why in models["missing"]])
    return j


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--profile", required=True, help="the tuner's profile CSV (plain or .csv.gz)")
    ap.add_argument("--bench", action="append", default=[],
                    help="`tgemm bench --csv` output of the shipped table (repeatable): targets 1 and 2 from it")
    ap.add_argument("--models", default=os.path.join(ROOT, "shapes", "models.csv"),
                    help="shape suite CSV (default: shapes/models.csv); 'none' to skip section 2")
    ap.add_argument("-o", "--out", help="write the markdown report here instead of stdout")
    ap.add_argument("--json", help="also write the numbers of each section as JSON")
    a = ap.parse_args(argv)
    prof = read_profile(a.profile)
    bench = read_benches(a.bench)
    seed = seed_section(prof, bench=bench)
    models = None if a.models == "none" else models_section(prof, read_models(a.models), bench=bench)
    index = index_section(prof)
    text = render(seed, models, index, os.path.basename(a.profile),
                  os.path.relpath(a.models, ROOT) if models is not None and os.path.abspath(a.models).startswith(ROOT)
                  else a.models, [os.path.basename(b) for b in a.bench])
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
        print("seed: %s; models: %s; index width: %s" % (seed["status"], models["status"] if models else "skipped",
                                                         index["status"]))
    else:
        sys.stdout.write(text)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(to_json(seed, models, index), f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
