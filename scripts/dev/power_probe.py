"""Energy per FLOP of tgemm's pick and of F.linear (cuBLASLt) under sustained load, from NVML samples.

Why: interleaved with cuBLASLt our seed kernels read ~1.09x, run back to back for 200 ms each ~1.0x (the
`sustained` timing). If both then sit at the board's power cap, throughput is cap / (energy per FLOP), and the
sustained ratio is the ratio of energies per FLOP. This measures it directly: each kernel runs alone for
--seconds (phases alternate, twice each) while `nvidia-smi -lms` samples power and SM clock; per phase it
prints TFLOP/s, mean power, mean clock and pJ/FLOP (samples of the phase's first --settle seconds dropped).

  PYTHONPATH=build-dev/python python3 scripts/dev/power_probe.py 340000,6144,1280,1 8192,6144,1280,1 > power.txt
  ... --kernels sm90_bf16_64x256x64_s5_c1x1_pp_i64,sm90_bf16_128x128x64_s5_c1x1_etma_pp_i64: those kernels instead
  of the table's pick (each through a one-row table, tgemm.load_config)
"""
import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime

import torch
import torch.nn.functional as F

import tgemm

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from table_rows import read_table, set_pick, write_table  # noqa: E402

# The table format's columns, as the shipped table has them.
FIELDS = read_table(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "configs", "sm90_132_bf16.csv"))[0]


def sampler(interval_ms, path):
    # power.draw.instant where the driver has it (the default power.draw is averaged over ~1 s on Hopper). Into a
    # file: a pipe nobody reads fills after ~30 s of samples and stalls nvidia-smi.
    for field in ("power.draw.instant", "power.draw"):
        q = f"--query-gpu=timestamp,{field},clocks.sm"
        if subprocess.run(["nvidia-smi", q, "--format=csv,noheader,nounits"], capture_output=True).returncode == 0:
            p = subprocess.Popen(["nvidia-smi", q, "--format=csv,noheader,nounits", f"-lms={interval_ms}", "-f", path])
            return p, field
    sys.exit("nvidia-smi cannot report power")


def parse(lines):
    out = []
    for ln in lines:
        parts = [s.strip() for s in ln.split(",")]
        if len(parts) != 3:
            continue
        try:
            t = datetime.strptime(parts[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()
            out.append((t, float(parts[1]), float(parts[2])))
        except ValueError:
            pass
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("shapes", nargs="+", help="M,N,K,bias (bias 0/1), bf16")
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--settle", type=float, default=1.0)
    ap.add_argument("--interval-ms", type=int, default=20)
    ap.add_argument("--kernels", default="", help="comma-separated kernel names to run instead of the table's pick")
    a = ap.parse_args()
    kernels = [k for k in a.kernels.split(",") if k] or ["tgemm"]
    tmp = tempfile.mkdtemp()

    samples_path = os.path.join(tmp, "samples.csv")
    proc, field = sampler(a.interval_ms, samples_path)
    phases = []  # (shape, what, t0, t1, flops per second)
    for spec in a.shapes:
        m, n, k, b = (int(v) for v in spec.split(","))
        g = torch.Generator(device="cuda").manual_seed(1)
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16, generator=g)
        w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16, generator=g)
        bias = torch.randn(n, device="cuda", dtype=torch.bfloat16, generator=g) if b else None
        y = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        runs = {"F.linear": lambda: torch.addmm(bias, x, w.t(), out=y) if b else torch.mm(x, w.t(), out=y)}
        tables = {}
        for kname in kernels:
            runs[kname] = lambda: tgemm.mm(x, w, bias, out=y)
            if kname != "tgemm":
                # A one-row table; set_pick fills libtype and solidx from the name as the tuner writes them.
                row = dict.fromkeys(FIELDS, "0")
                row.update({"gfx": "sm90", "cu_num": "132", "M": str(m), "N": str(n), "K": str(k), "bias": str(bool(b)),
                            "dtype": "torch.bfloat16", "outdtype": "torch.bfloat16", "scaleAB": "False",
                            "bpreshuffle": "False", "splitK": "1", "us": "1"})
                set_pick(row, kname, 1.0)
                path = os.path.join(tmp, kname + ".csv")
                with open(path, "w", newline="") as f:
                    write_table(FIELDS, [row], f)
                tables[kname] = path
        use = lambda what: tgemm.load_config(tables.get(what)) if what != "F.linear" else None
        # F.linear's own path for the reference check (addmm/mm with out= is what it calls, without an allocation).
        ref = F.linear(x, w, bias)
        for what, fn in runs.items():
            use(what)
            if what != "F.linear":
                plan = [ln for ln in tgemm.explain(m, n, k, bias=bool(b)).splitlines() if "plan:" in ln]
                print(f"{spec} {what}: {plan}", file=sys.stderr)
            fn()
            torch.cuda.synchronize()
            err = ((y.float() - ref.float()).norm() / ref.float().norm()).item()
            assert err < 1e-2, f"{what} {spec}: relative error {err}"
        for what in 2 * list(runs):
            use(what)
            fn = runs[what]
            torch.cuda.synchronize()
            t0 = time.time()
            iters, ts, its = 0, None, 0
            while time.time() - t0 < a.seconds:
                for _ in range(4):
                    fn()
                iters += 4
                torch.cuda.synchronize()
                if ts is None and time.time() - t0 >= a.settle:
                    ts, its = time.time(), iters
            t1 = time.time()
            # Throughput over the settled part only, as the power samples.
            fps = 2.0 * m * n * k * (iters - its) / (t1 - ts) if ts and t1 > ts and iters > its else 0.0
            phases.append((spec, what, ts or t0, t1, fps))
            time.sleep(0.5)  # a gap between phases in the samples
    tgemm.load_config(None)
    # SIGINT lets nvidia-smi exit normally and flush its file.
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
    with open(samples_path) as f:
        samples = parse(f.read().splitlines())
    print(f"# {field}, {a.interval_ms} ms samples, {a.seconds} s phases, first {a.settle} s of each dropped")
    print("shape,what,tflops,power_w,clock_mhz,pj_per_flop,samples")
    for spec, what, t0, t1, fps in phases:
        s = [(p, c) for (t, p, c) in samples if t0 <= t <= t1]
        if not s or fps <= 0:
            print(f"{spec},{what},{fps / 1e12:.1f},,,,0")
            continue
        pw = statistics.mean(p for p, _ in s)
        ck = statistics.mean(c for _, c in s)
        print(f"{spec},{what},{fps / 1e12:.1f},{pw:.0f},{ck:.0f},{pw / fps * 1e12:.3f},{len(s)}")


if __name__ == "__main__":
    main()
