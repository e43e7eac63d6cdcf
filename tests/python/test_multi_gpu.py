"""Multi-GPU test (issue 9): examples/vit_multi_gpu.py --quick on two GPUs over NCCL, as a subprocess: the ViT
encoder in tensor-parallel and data-parallel modes, each equal to the 1-GPU run within bf16 tolerance, and the
data-parallel fc1 (M*N >= 2^31) on a split plan.

    PYTHONPATH=build-dev/python python3 -m pytest tests/python/test_multi_gpu.py -m gpu -v

Skipped, saying why, where there are fewer than two CUDA devices, or no PyTorch, torch.distributed or NCCL.
"""

import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch", reason="multi-GPU test skipped: PyTorch is not installed")

pytestmark = pytest.mark.gpu

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "examples", "vit_multi_gpu.py")


def _why_skip():
    if not torch.cuda.is_available():
        return "multi-GPU test skipped: no CUDA device"
    n = torch.cuda.device_count()
    if n < 2:
        return f"multi-GPU test skipped: needs 2 CUDA devices, this machine has {n}"
    try:
        import torch.distributed as dist
    except ImportError as e:
        return f"multi-GPU test skipped: torch.distributed cannot be imported ({e})"
    if not dist.is_available() or not dist.is_nccl_available():
        return "multi-GPU test skipped: this PyTorch has no torch.distributed with NCCL"
    return None


_WHY = _why_skip()
if _WHY:
    pytest.skip(_WHY, allow_module_level=True)

import tgemm  # noqa: E402  (conftest.py makes the in-tree build importable)


def test_vit_tensor_and_data_parallel_quick():
    env = dict(os.environ)
    # The example runs in fresh processes: give them the tgemm this test imported. NVLink multicast stays off there.
    pkg_parent = os.path.dirname(os.path.dirname(os.path.abspath(tgemm.__file__)))
    env["PYTHONPATH"] = os.pathsep.join(p for p in [pkg_parent, env.get("PYTHONPATH", "")] if p)
    env.update(NCCL_NVLS_ENABLE="0", TORCH_SYMM_MEM_DISABLE_MULTICAST="1", NVSHMEM_DISABLE_NVLS="1",
               PYTHONUNBUFFERED="1")
    r = subprocess.run([sys.executable, EXAMPLE, "--quick"], cwd=ROOT, env=env, capture_output=True, text=True,
                       timeout=900)
    out = r.stdout
    report = f"exit {r.returncode}\n--- stdout ---\n{out}\n--- stderr (last 6000 chars) ---\n{r.stderr[-6000:]}"
    assert r.returncode == 0, report
    assert "RESULT: PASS" in out, report
    lines = out.splitlines()

    def check_line(text):
        hits = [ln for ln in lines if text in ln]
        assert hits, f"no line with {text!r}\n{report}"
        assert hits[0].rstrip().endswith("PASS"), f"{hits[0]!r}\n{report}"
        return hits[0]

    check_line("1 GPU through tgemm vs stock PyTorch (F.linear): relative error")
    check_line("tensor parallel (2 GPUs) vs 1 GPU: relative error")
    check_line("data parallel (2 GPUs) vs 1 GPU: relative error")
    check_line("data parallel: fc1 on each rank is")  # ... M*N = ... >= 2^31
    assert not any(ln.rstrip().endswith("FAIL") for ln in lines), report
    assert any(ln.strip().startswith("split:") and "pieces" in ln for ln in lines), report
    # The final table: a row per mode, with ms/pass, images/s and the speed-up against one GPU.
    head = [i for i, ln in enumerate(lines) if ln.startswith("mode ") and "images/s" in ln and "vs 1 GPU" in ln]
    assert head, f"no final table\n{report}"
    rows = lines[head[0] + 2:head[0] + 5]
    assert len(rows) == 3, report
    for mode, row in zip(("1 GPU", "tensor parallel", "data parallel"), rows):
        assert row.startswith(mode + " "), f"{row!r}\n{report}"
        speedup = [w for w in row.split() if w.endswith("x") and w[:-1].replace(".", "", 1).isdigit()]
        assert speedup and float(speedup[-1][:-1]) > 0, f"{row!r}\n{report}"
