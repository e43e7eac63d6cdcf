#!/usr/bin/env python3
"""Compares two tuned tables of the same shapes (issue 9): `tgemm tune --gpus 0` against `tgemm tune --gpus 0,1`.

A shape agrees when both tables name the same winner, or when the two winners are within the noise: their `us`
within --noise-pct (3 %) of each other, or, given both profiles (--profile-file of each run), each run timed the
other run's winner within --noise-pct of its own (the same kernels compared on one GPU in one run, which leaves out
any difference in speed between the GPUs). A shape in one table only does not agree.

    python3 scripts/compare_tables.py one_gpu.csv two_gpus.csv \\
        [--profile1 p1.csv --profile2 p2.csv] [--shapes shapes.csv --gpus2 0,1] \\
        [--time1 S --time2 S] [--progress1 tune1.err]

--shapes and --gpus2 name the GPU each shape was tuned on in the second run (tgemm tune hands the i-th distinct
shape of its input to GPU i mod the number of GPUs). --time1/--time2 are the two runs' wall times in seconds:
the speed-up is time1 / time2. --progress1 is the first run's stderr (its progress lines): from its elapsed times
the script derives each shape's tuning time, and from those the best speed-up tune's fixed split of shapes over
GPUs allows. Exit status 0 when every shape agrees, 1 when one does not, 2 on unreadable input.
"""

import argparse
import csv
import re
import statistics
import sys

from tune_profile import SHAPE_COLS, passing_rows

SHORT = {"torch.bfloat16": "bf16", "torch.float16": "fp16", "torch.float32": "fp32"}


def shape_key(row):
    return tuple(row[c].strip() for c in SHAPE_COLS)


def shape_str(key):
    m, n, k, bias, dt, odt = key[:6]
    s = f"{m}x{n}x{k}" + (" bias" if bias.lower() == "true" else "")
    if (dt, odt) != ("torch.bfloat16", "torch.bfloat16"):
        s += f" {SHORT.get(dt, dt)}->{SHORT.get(odt, odt)}"
    return s


def read_table(path):
    """{(gfx, cu_num, shape key): (kernel, us)}"""
    out = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            out[(row["gfx"], row["cu_num"]) + shape_key(row)] = (row["kernelName"].strip(), float(row["us"]))
    return out


def read_profile(path):
    """{shape key: {kernel: us}} of the passing candidates (tune_profile.passing_rows)."""
    out = {}
    for r, us in passing_rows(path):
        out.setdefault(shape_key(r), {})[r["kernel"]] = us
    return out


def read_shapes(path):
    """The distinct shapes of an untuned-shapes CSV, in order (tgemm tune's order)."""
    seen = []
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            k = shape_key(row)
            if k not in seen:
                seen.append(k)
    return seen


def progress_times(path):
    """Per-shape tuning times (s) from a one-GPU `tgemm tune` stderr: its progress lines
    '[i/n] M=.. N=.. K=.. [bias] kernel  elapsed Ts ETA Us', in completion order (1 s resolution)."""
    with open(path, errors="replace") as f:
        text = f.read()
    done = {}
    for seg in re.split(r"[\r\n]", text):
        m = re.search(r"\[(\d+)/(\d+)\] .*?elapsed (\d+)s", seg)
        if m:
            done[int(m.group(1))] = float(m.group(3))
    if not done:
        return []
    times, prev = [], 0.0
    for i in range(1, max(done) + 1):
        if i not in done:
            return []
        times.append(max(done[i] - prev, 0.0))
        prev = done[i]
    return times


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("table1", help="the first run's table (one GPU)")
    ap.add_argument("table2", help="the second run's table (several GPUs)")
    ap.add_argument("--profile1")
    ap.add_argument("--profile2")
    ap.add_argument("--shapes", help="the shapes file both runs were given")
    ap.add_argument("--gpus2", default="0,1", help="the second run's --gpus (default 0,1)")
    ap.add_argument("--time1", type=float)
    ap.add_argument("--time2", type=float)
    ap.add_argument("--progress1", help="the first run's stderr")
    ap.add_argument("--noise-pct", type=float, default=3.0)
    ap.add_argument("--label1", default="1 GPU")
    ap.add_argument("--label2", default="2 GPUs")
    a = ap.parse_args()
    try:
        t1, t2 = read_table(a.table1), read_table(a.table2)
        p1 = read_profile(a.profile1) if a.profile1 else None
        p2 = read_profile(a.profile2) if a.profile2 else None
        order = read_shapes(a.shapes) if a.shapes else None
        prog = progress_times(a.progress1) if a.progress1 else []
    except (OSError, KeyError, ValueError, csv.Error) as e:
        print(f"compare_tables: {e}", file=sys.stderr)
        return 2
    gpus2 = [g for g in a.gpus2.split(",") if g]
    gpu_of = {k: gpus2[i % len(gpus2)] for i, k in enumerate(order)} if order and gpus2 else {}
    noise = a.noise_pct / 100

    keys = sorted(set(t1) | set(t2), key=lambda k: (order.index(k[2:]) if order and k[2:] in order else 1 << 30,
                                                  [int(x) if x.isdigit() else 0 for x in k[2:5]]))
    w_shape, w_kern = 24, 36
    hdr = (f"{'shape (M x N x K)':<{w_shape}} {'GPU':>3}  {a.label1 + ': winner':<{w_kern}} {'us':>10}  "
           f"{a.label2 + ': winner':<{w_kern}} {'us':>10} {'diff':>7}  verdict")
    if gpu_of:
        print(f"GPU: the GPU the second run tuned the shape on (tune deals the i-th shape to GPU i mod {len(gpus2)})")
    print(hdr)
    print("-" * len(hdr))
    counts = {"same": 0, "noise": 0, "bad": 0}
    ratios = {}  # GPU of run 2 -> us2/us1 for shapes with the same winner
    for key in keys:
        shape = key[2:]
        gpu = gpu_of.get(shape, "-")
        a1, a2 = t1.get(key), t2.get(key)
        if a1 is None or a2 is None:
            counts["bad"] += 1
            have = a1 or a2
            print(f"{shape_str(shape):<{w_shape}} {gpu:>3}  "
                  f"{(have[0] if a1 else '(missing)'):<{w_kern}} {(f'{a1[1]:.2f}' if a1 else '-'):>10}  "
                  f"{(have[0] if a2 else '(missing)'):<{w_kern}} {(f'{a2[1]:.2f}' if a2 else '-'):>10} {'':>7}  "
                  f"MISSING in {'the first' if a1 is None else 'the second'} table")
            continue
        (k1, us1), (k2, us2) = a1, a2
        diff = (us2 - us1) / us1 if us1 > 0 else float("inf")
        if k1 == k2:
            verdict, kind = "same winner", "same"
            ratios.setdefault(gpu, []).append(us2 / us1 if us1 > 0 else float("nan"))
        elif abs(us2 - us1) <= noise * min(us1, us2):
            verdict, kind = f"noise: winners' us within {a.noise_pct:g}%", "noise"
        else:
            verdict, kind = "DIFFERENT", "bad"
            if p1 is not None and p2 is not None:
                o1 = p1.get(shape, {}).get(k2)  # run 1's time of run 2's winner
                o2 = p2.get(shape, {}).get(k1)
                if o1 is not None and o2 is not None:
                    d1, d2 = o1 / us1 - 1, o2 / us2 - 1
                    if d1 <= noise and d2 <= noise:
                        verdict, kind = (f"noise: each run timed the other's winner within {a.noise_pct:g}% "
                                         f"(+{d1 * 100:.1f}%, +{d2 * 100:.1f}%)"), "noise"
                    else:
                        verdict += f" (run 1 times run 2's winner +{d1 * 100:.1f}%, run 2 run 1's +{d2 * 100:.1f}%)"
                else:
                    verdict += " (a winner is missing from the other run's profile)"
        counts[kind] += 1
        print(f"{shape_str(shape):<{w_shape}} {gpu:>3}  {k1:<{w_kern}} {us1:>10.2f}  {k2:<{w_kern}} {us2:>10.2f} "
              f"{diff * 100:>+6.1f}%  {verdict}")

    n = len(keys)
    print()
    for gpu, rs in sorted(ratios.items()):
        rs = [r for r in rs if r == r]
        if rs:
            print(f"same-winner shapes tuned on GPU {gpu} in the second run: us {a.label2} / {a.label1}, median "
                  f"{statistics.median(rs):.3f} over {len(rs)} shapes (min {min(rs):.3f}, max {max(rs):.3f})")
    if a.time1 and a.time2:
        print(f"tune time: {a.label1} {a.time1:.1f} s, {a.label2} {a.time2:.1f} s: speed-up {a.time1 / a.time2:.2f}x "
              f"(ideal {len(gpus2)})")
    if prog and order and len(prog) == len(order) and gpus2:
        per = [0.0] * len(gpus2)
        for i, t in enumerate(prog):
            per[i % len(gpus2)] += t
        total = sum(prog)
        if max(per) > 0:
            print(f"the first run's per-shape times (1 s resolution) dealt as tune deals them (shape i to GPU i mod "
                  f"{len(gpus2)}): {', '.join(f'GPU {g} {t:.0f} s' for g, t in zip(gpus2, per))} of {total:.0f} s "
                  f"-> at best {total / max(per):.2f}x with that split")
            slow = sorted(range(len(prog)), key=lambda i: -prog[i])[:3]
            print("  the longest shapes: " + ", ".join(f"{shape_str(order[i])} {prog[i]:.0f} s (GPU "
                                                      f"{gpus2[i % len(gpus2)]})" for i in slow))
    ok = counts["bad"] == 0 and n > 0
    print(f"VERDICT: {'SAME TABLE' if ok else 'DIFFERENT TABLES'}: {n} shapes, {counts['same']} same winner, "
          f"{counts['noise']} different winners within the noise, {counts['bad']} different or missing")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
