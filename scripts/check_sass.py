#!/usr/bin/env python3
"""What the compiler made of tgemm's Hopper kernels, from the built library's SASS (no GPU needed):

- every sm90 kernel issues wgmma (HGMMA) and TMA loads (UTMALDG); the TMA-store ones (EpiMode 2) TMA stores (UTMASTG);
- no sm90 or skinny kernel spills (cuobjdump -res-usage: STACK:0, LOCAL:0);
- no persistent sm90 GEMM kernel (`gemm_kernel`) calls a subroutine (CALL): the split-K kernel's per-unit 64-bit
  divisions were calls into the division routine, and it ran 6-14% behind its plain twin until they went
  (docs/benchmarks.md, runs 118-125). The swap-AB kernel divides once per CTA (its K range), which costs nothing.
- the k-step loop of every sm90 kernel (the GEMM skeleton and the swap-AB one) has no R2UR and at most --max-kstep
  instructions. Its wgmma descriptors and barrier addresses must stay in uniform registers: when they did not, the
  k-step was 131 instructions instead of 51 and the kernels 1.4-3% slower (docs/benchmarks.md, runs 109-113); the
  swap-AB k-step was 100-112 before session 13 and is 43-51 now.

    python3 scripts/check_sass.py build/libtgemm.so          # the check (a CPU test: ctest -R sass_sm90)
    python3 scripts/check_sass.py build/libtgemm.so --show   # every kernel's k-step; --show-body prints the loops
    python3 scripts/check_sass.py --which                    # the cuobjdump and nvdisasm it would use

cuobjdump comes from --cuobjdump, $CUOBJDUMP, PATH, nvcc's folder, or the PyPI wheel nvidia-cuda-cuobjdump, and the
nvdisasm it runs for -sass from $NVDISASM, PATH, nvcc's folder or the wheel nvidia-cuda-nvdisasm (scripts/setup.sh
installs the wheels where the toolkit lacks them). Without either the check exits 77, which ctest reports as skipped.
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys

SKIP = 77


def find_tool(name, given=None):
    """`name` from `given`, $NAME (upper case), PATH, nvcc's folder, or an NVIDIA PyPI wheel's bin folder."""
    for c in (given, os.environ.get(name.upper()), shutil.which(name)):
        if c:
            return c
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    c = os.path.join(os.path.dirname(nvcc), name)
    if os.path.exists(c):
        return c
    for p in sys.path:
        for c in sorted(glob.glob(os.path.join(p, "nvidia", "*", "bin", name))):
            return c
    return None


def functions(listing, header):
    """{mangled name: text} of each function block of a cuobjdump listing (blocks start with `header`)."""
    out = {}
    parts = re.split(r"^\s*" + header + r"\s*", listing, flags=re.M)
    for part in parts[1:]:
        name = part.split("\n", 1)[0].strip().rstrip(":")
        out[name] = part
    return out


INSTR = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")


def kstep_loop(sass):
    """The k-step loop: from the target of the first backward branch after the first HGMMA to that branch."""
    ins = [(int(a, 16), t) for a, t in INSTR.findall(sass)]
    first = next((i for i, (_, t) in enumerate(ins) if "HGMMA" in t), None)
    if first is None:
        return []
    for j in range(first, len(ins)):
        m = re.search(r"BRA (0x[0-9a-f]+)", ins[j][1])
        if m and int(m.group(1), 16) < ins[first][0]:
            target = int(m.group(1), 16)
            start = next(i for i, (a, _) in enumerate(ins) if a == target)
            return [t for _, t in ins[start : j + 1]]
    return []


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("library", nargs="?", help="libtgemm.so (or a CUDA object file)")
    ap.add_argument("--which", action="store_true", help="print the cuobjdump found (exit 77 if none) and stop")
    ap.add_argument("--cuobjdump")
    ap.add_argument("--max-kstep", type=int, default=72, help="most SASS instructions in an sm90 k-step (now 45-63)")
    ap.add_argument("--show", action="store_true", help="print each kernel's k-step length and counts")
    ap.add_argument("--show-body", action="store_true", help="also print the k-step loops")
    a = ap.parse_args()
    # cuobjdump -sass runs nvdisasm, which a toolkit or a wheel may lack even where cuobjdump is there.
    tool, disasm = find_tool("cuobjdump", a.cuobjdump), find_tool("nvdisasm")
    if a.which:
        print(f"{tool or 'no cuobjdump'} {disasm or 'no nvdisasm'}")
        return 0 if tool and disasm else SKIP
    if not a.library:
        ap.error("the library to check is required")
    if not tool or not disasm:
        print("SASS check skipped: no " + ("cuobjdump" if not tool else "nvdisasm") +
              " (CUDA toolkit, or `pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm`)")
        return SKIP
    env = dict(os.environ, NVDISASM_PATH=os.path.dirname(os.path.abspath(disasm)))
    env["PATH"] = env["NVDISASM_PATH"] + os.pathsep + env.get("PATH", "")
    run = lambda flag: subprocess.run([tool, flag, a.library], capture_output=True, text=True, check=True,
                                      env=env).stdout
    sass = functions(run("-sass"), "Function :")
    usage = functions(run("-res-usage"), "Function")
    errors, checked, worst = [], 0, 0
    for name, text in sorted(usage.items()):
        if name.startswith(("_ZN5tgemm4sm90", "_ZN5tgemm6skinny")):
            m = re.search(r"STACK:(\d+).*LOCAL:(\d+)", text)
            if not m or m.group(1) != "0" or m.group(2) != "0":
                errors.append(f"{name}: spills or uses a stack ({m.group(0) if m else 'no resource line'})")
    for name, text in sorted(sass.items()):
        if not name.startswith("_ZN5tgemm4sm90"):
            continue
        checked += 1
        need = ["HGMMA", "UTMALDG"] + (["UTMASTG"] if "EpiModeE2" in name else [])
        errors += [f"{name}: no {op}" for op in need if op not in text]
        calls = sum(t.startswith("CALL") or " CALL" in t for _, t in INSTR.findall(text))
        if calls and "gemm_kernel" in name:
            errors.append(f"{name}: {calls} subroutine calls (CALL), e.g. a 64-bit division")
        loop = kstep_loop(text)
        r2ur = sum("R2UR" in t for t in loop)
        worst = max(worst, len(loop))
        if a.show or a.show_body:
            short = re.sub(r"^_ZN5tgemm4sm90\d+(\w+?)I(NS0_\d+\w*?Traits)?ILNS_5DTypeE", r"\1:", name)[:70]
            print(f"{short}: k-step {len(loop)} instructions, {sum('HGMMA' in t for t in loop)} HGMMA, {r2ur} R2UR")
            if a.show_body:
                print("\n".join("    " + t for t in loop))
        if not loop:
            errors.append(f"{name}: no k-step loop found (HGMMA followed by a backward branch)")
        elif r2ur or len(loop) > a.max_kstep:
            errors.append(f"{name}: k-step of {len(loop)} instructions with {r2ur} R2UR (budget {a.max_kstep}, no R2UR)")
    if checked == 0:
        print("SASS check skipped: no sm90 kernel in this library (TGEMM_EXCLUDE_BACKENDS?)")
        return SKIP
    for e in errors:
        print("FAIL", e)
    print(f"check_sass: {checked} sm90 kernels, {len(usage)} functions' resources, longest k-step {worst} "
          f"instructions: {'FAILED' if errors else 'ok'}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
