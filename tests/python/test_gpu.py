"""GPU tests of the tgemm Python package: tgemm.mm against F.linear (dtypes, bias, output dtypes, batch dimensions,
strides, streams), CuPy and generic DLPack inputs, torch.ops.tgemm.linear under torch.compile(fullgraph=True) and
CUDA-graph capture/replay, patch_linear and its undo, memory, and one problem with M*N >= 2^31.

    PYTHONPATH=build/python python3 -m pytest tests/python/test_gpu.py -m gpu -v

Every test skips, saying why, where there is no PyTorch or no CUDA device."""

import pytest

torch = pytest.importorskip("torch", reason="GPU tests skipped: PyTorch is not installed")
if not torch.cuda.is_available():
    pytest.skip("GPU tests skipped: no CUDA device", allow_module_level=True)

import torch.nn.functional as F  # noqa: E402

import tgemm  # noqa: E402
import tgemm.torch as tt  # noqa: E402
from tgemm import _core  # noqa: E402

pytestmark = pytest.mark.gpu

DEV = torch.device("cuda", torch.cuda.current_device())
DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}


def rel_err(y, ref):
    y, ref = y.float(), ref.float()
    return ((y - ref).norm() / ref.norm().clamp_min(1e-30)).item()


def tol(out_dtype):
    """Relative (Frobenius) error allowed against the fp32 reference: the output's rounding dominates."""
    return {torch.bfloat16: 1.5e-2, torch.float16: 4e-3, torch.float32: 2e-3}[out_dtype]


def operands(m, n, k, dtype, bias=None, seed=0):
    g = torch.Generator(device=DEV).manual_seed(seed)
    x = torch.randn(m, k, generator=g, device=DEV).to(dtype)
    w = (torch.randn(n, k, generator=g, device=DEV) / k ** 0.5).to(dtype)
    b = None
    if bias == "same":
        b = torch.randn(n, generator=g, device=DEV).to(dtype)
    elif bias == "fp32":
        b = torch.randn(n, generator=g, device=DEV)
    return x, w, b


def reference(x, w, b):
    """fp32 F.linear: the exact product rounded once."""
    return F.linear(x.float(), w.float(), None if b is None else b.float())


SHAPES = [(1, 256, 128), (7, 384, 1024), (300, 1024, 512), (2048, 2048, 1024), (4096, 768, 3072)]


@pytest.mark.parametrize("dtype", ["bf16", "fp16"])
@pytest.mark.parametrize("bias", [None, "same", "fp32"])
@pytest.mark.parametrize("out", [None, "fp32", "other"])
@pytest.mark.parametrize("mnk", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_mm_matches_f_linear(dtype, bias, out, mnk):
    t = DTYPES[dtype]
    x, w, b = operands(*mnk, t, bias)
    other = torch.float16 if t == torch.bfloat16 else torch.bfloat16
    out_dtype = {None: None, "fp32": torch.float32, "other": other}[out]
    y = tgemm.mm(x, w, b, out_dtype=out_dtype)
    assert isinstance(y, torch.Tensor) and y.device == x.device
    assert y.shape == (mnk[0], mnk[1]) and y.dtype == (out_dtype or t)
    assert y.is_contiguous()
    assert rel_err(y, reference(x, w, b)) < tol(y.dtype)
    # and against stock PyTorch in the same dtype (what patch_linear replaces)
    if out is None:
        assert rel_err(y, F.linear(x, w, None if b is None else b.to(t))) < 2 * tol(t)


@pytest.mark.parametrize("batch", [(2, 3), (4, 1, 5), (1,), (3, 0)])
def test_batch_dims_flattened_like_f_linear(batch):
    _, w, b = operands(1, 256, 512, torch.bfloat16, "same")
    x = torch.randn(*batch, 512, device=DEV, dtype=torch.bfloat16)
    y = tgemm.mm(x, w, b)
    assert y.shape == (*batch, 256)
    if y.numel():
        assert rel_err(y, reference(x, w, b)) < 2e-2


def test_1d_input():
    x, w, b = operands(1, 256, 512, torch.bfloat16, "same")
    y = tgemm.mm(x[0], w, b)
    assert y.shape == (256,)
    assert rel_err(y, reference(x[0], w, b)) < 2e-2


def test_strided_rows_and_out():
    # x rows with a stride larger than K (a column slice), output written into a slice of a wider buffer.
    big = torch.randn(512, 1536, device=DEV, dtype=torch.bfloat16)
    x = big[:, 256:256 + 1024]
    assert x.stride() == (1536, 1)
    _, w, b = operands(512, 768, 1024, torch.bfloat16, "same")
    buf = torch.full((512, 1024), float("nan"), device=DEV, dtype=torch.bfloat16)
    out = buf[:, 128:128 + 768]
    r = tgemm.mm(x, w, b, out=out)
    assert r is out
    assert rel_err(out, reference(x, w, b)) < 2e-2
    assert torch.isnan(buf[:, :128]).all() and torch.isnan(buf[:, 128 + 768:]).all(), "wrote outside out"


def test_out_argument_checks():
    x, w, b = operands(64, 128, 256, torch.bfloat16, "same")
    with pytest.raises(ValueError, match="out has shape"):
        tgemm.mm(x, w, b, out=torch.empty(64, 127, device=DEV, dtype=torch.bfloat16))
    with pytest.raises(ValueError, match="out_dtype = fp32 differs from out.dtype = bf16"):
        tgemm.mm(x, w, b, out=torch.empty(64, 128, device=DEV, dtype=torch.bfloat16), out_dtype=torch.float32)
    out = torch.empty(64, 128, device=DEV, dtype=torch.float32)
    assert tgemm.mm(x, w, b, out=out) is out
    assert rel_err(out, reference(x, w, b)) < 1e-2


def test_errors_are_python_exceptions_with_clear_messages():
    x, w, b = operands(64, 128, 256, torch.bfloat16, "same")
    with pytest.raises(ValueError, match="x is on cpu"):
        tgemm.mm(x.cpu(), w, b)
    with pytest.raises(ValueError, match="w is on cpu"):
        tgemm.mm(x, w.cpu(), b)
    with pytest.raises(ValueError, match="bias is on cpu"):
        tgemm.mm(x, w, b.cpu())
    with pytest.raises(ValueError, match=r"x.cols = 256 \(K\) differs from w.cols = 255"):
        tgemm.mm(x, w[:, :255].contiguous(), b)
    with pytest.raises(ValueError, match=r"bias.size = 127 differs from w.rows = 128"):
        tgemm.mm(x, w, b[:127])
    with pytest.raises(ValueError, match="inner dimension .* stride"):
        tgemm.mm(x.t().contiguous().t(), w, b)
    with pytest.raises(ValueError, match="inner dimension .* stride"):
        tgemm.mm(x, w.t().contiguous().t(), b)
    with pytest.raises(ValueError, match="cannot be flattened"):
        tgemm.mm(torch.randn(4, 10, 256, device=DEV, dtype=torch.bfloat16)[:, :8], w, b)
    with pytest.raises(ValueError, match="torch.float64 is not supported"):
        tgemm.mm(x.double(), w, b)
    with pytest.raises(ValueError, match="x.dtype = fp32 not supported"):
        tgemm.mm(x.float(), w.float(), b)
    with pytest.raises(ValueError, match="w.dtype = fp16 differs from x.dtype = bf16"):
        tgemm.mm(x, w.half(), b)
    with pytest.raises(ValueError, match=r"bias.dtype = fp16 must be the input dtype \(bf16\) or fp32"):
        tgemm.mm(x, w, b.half())
    with pytest.raises(ValueError, match="w must be 2-D"):
        tgemm.mm(x, w[None], b)
    with pytest.raises(ValueError, match="y overlaps x"):
        big = torch.zeros(64, 256, device=DEV, dtype=torch.bfloat16)
        tgemm.mm(big, w, b, out=big[:, :128])


def test_unsupported_problem_raises_not_implemented():
    # K=100 rules out the sm90 kernels (rows are not 16-byte multiples), and cuBLASLt's bias epilogue takes no fp32
    # bias with a bf16 output: no kernel can run it, and the message says why for each candidate.
    x, w, b = operands(4096, 1536, 100, torch.bfloat16, "fp32")
    if "plan: none" not in tgemm.explain(4096, 1536, 100, bias_dtype="fp32"):
        pytest.skip("this build can run bf16 x K=100 with an fp32 bias: no unsupported problem to show")
    with pytest.raises(NotImplementedError, match="no kernel can run M=4096 N=1536 K=100"):
        tgemm.mm(x, w, b)
    assert rel_err(tgemm.mm(x, w, b.bfloat16()), reference(x, w, b.bfloat16())) < 2e-2


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two CUDA devices")
def test_different_devices_rejected_and_second_device_works():
    x, w, b = operands(64, 128, 256, torch.bfloat16, "same")
    with pytest.raises(ValueError, match="w is on cuda:1 but x is on cuda:0"):
        tgemm.mm(x.to("cuda:0"), w.to("cuda:1"), b.to("cuda:0"))
    x1, w1, b1 = x.to("cuda:1"), w.to("cuda:1"), b.to("cuda:1")
    y = tgemm.mm(x1, w1, b1)
    assert y.device == torch.device("cuda:1")
    assert torch.cuda.current_device() == DEV.index
    assert rel_err(y, reference(x1, w1, b1)) < 2e-2


def test_empty_and_k_zero():
    w = torch.randn(128, 64, device=DEV, dtype=torch.bfloat16)
    assert tgemm.mm(torch.empty(0, 64, device=DEV, dtype=torch.bfloat16), w).shape == (0, 128)
    b = torch.randn(32, device=DEV, dtype=torch.bfloat16)
    x0, w0 = torch.empty(5, 0, device=DEV, dtype=torch.bfloat16), torch.empty(32, 0, device=DEV, dtype=torch.bfloat16)
    y = tgemm.mm(x0, w0, b)
    assert torch.equal(y, b.expand(5, 32))


def test_runs_on_torch_current_stream():
    """A side stream that is busy (sleeping), then overwrites x: mm must queue behind both, on that stream."""
    x, w, b = operands(1024, 1024, 1024, torch.bfloat16, "same")
    x2 = torch.randn_like(x)
    torch.cuda.synchronize()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        torch.cuda._sleep(50_000_000)
        x.copy_(x2)
        y = tgemm.mm(x, w, b)
    s.synchronize()
    assert rel_err(y, reference(x2, w, b)) < 2e-2


def test_explicit_stream_argument():
    x, w, b = operands(1024, 1024, 1024, torch.bfloat16, "same")
    x2 = torch.randn_like(x)
    out = torch.empty(1024, 1024, device=DEV, dtype=torch.bfloat16)
    torch.cuda.synchronize()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        torch.cuda._sleep(50_000_000)
        x.copy_(x2)
    tgemm.mm(x, w, b, out=out, stream=s)  # the handle of s, given while the current stream is another
    s.synchronize()
    assert rel_err(out, reference(x2, w, b)) < 2e-2
    tgemm.mm(x, w, b, out=out, stream=s.cuda_stream)
    s.synchronize()
    assert rel_err(out, reference(x2, w, b)) < 2e-2


class DLPackWrapper:
    """A foreign DLPack producer (its module has no from_dlpack), to exercise the generic path."""

    def __init__(self, t):
        self.t = t
        self.streams = []

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()

    def __dlpack__(self, stream=None):
        self.streams.append(stream)
        return self.t.__dlpack__(stream=stream)


def test_generic_dlpack_inputs():
    x, w, b = operands(300, 512, 256, torch.float16, "fp32")
    wx = DLPackWrapper(x)
    y = tgemm.mm(wx, DLPackWrapper(w), DLPackWrapper(b))
    assert isinstance(y, torch.Tensor)  # allocated with PyTorch, handed back as is
    assert rel_err(y, reference(x, w, b)) < 5e-3
    assert wx.streams and all(s is not None for s in wx.streams)
    out = torch.empty(300, 512, device=DEV, dtype=torch.float32)
    assert tgemm.mm(DLPackWrapper(x), w, b, out=DLPackWrapper(out)).t is out
    assert rel_err(out, reference(x, w, b)) < 5e-3


def test_cupy_arrays():
    cupy = pytest.importorskip("cupy")
    with cupy.cuda.Device(DEV.index):
        rs = cupy.random.RandomState(0)
        x = rs.standard_normal((333, 512), dtype=cupy.float32).astype(cupy.float16)
        w = (rs.standard_normal((768, 512), dtype=cupy.float32) / 512 ** 0.5).astype(cupy.float16)
        b = rs.standard_normal((768,), dtype=cupy.float32)
        cupy.cuda.Device().synchronize()  # the arrays were made on the default stream; s does not wait for it
        s = cupy.cuda.Stream(non_blocking=True)
        with s:
            y = tgemm.mm(x, w, b)
            y32 = tgemm.mm(x, w, b, out_dtype="fp32")
        s.synchronize()
        assert isinstance(y, cupy.ndarray) and y.dtype == cupy.float16 and y.shape == (333, 768)
        ref = x.astype(cupy.float32) @ w.astype(cupy.float32).T + b
        err = float(cupy.linalg.norm(y.astype(cupy.float32) - ref) / cupy.linalg.norm(ref))
        assert err < 5e-3
        assert float(cupy.linalg.norm(y32 - ref) / cupy.linalg.norm(ref)) < 1e-3
        with pytest.raises(ValueError, match="bfloat16"):
            tgemm.mm(x, w, b, out_dtype="bf16")
        xt = torch.from_dlpack(x)  # mixed frameworks: torch x, cupy w
        assert isinstance(tgemm.mm(xt, w), torch.Tensor)


def test_jax_arrays():
    import os
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # JAX would otherwise take 75% of the GPU
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    try:
        gpu = jax.devices("gpu")[0]
    except RuntimeError:
        pytest.skip("JAX has no GPU backend here")
    x = jax.device_put(jnp.ones((64, 256), dtype=jnp.bfloat16), gpu)
    w = jax.device_put(jnp.full((128, 256), 0.5, dtype=jnp.bfloat16), gpu)
    y = tgemm.mm(x, w)
    assert y.shape == (64, 128)
    assert float(jnp.abs(y.astype(jnp.float32) - 128.0).max()) == 0.0


# ---- torch.ops.tgemm.linear -------------------------------------------------------------------------------------

def test_custom_op_matches_f_linear():
    _, w, b = operands(1, 512, 256, torch.bfloat16, "same")
    x = torch.randn(2, 3, 256, device=DEV, dtype=torch.bfloat16)
    y = torch.ops.tgemm.linear(x, w, b)
    assert y.shape == (2, 3, 512)
    assert rel_err(y, F.linear(x, w, b)) < 2e-2
    y32 = torch.ops.tgemm.linear(x, w, b, torch.float32)
    assert y32.dtype == torch.float32 and rel_err(y32, reference(x, w, b)) < 1e-2
    # any layout F.linear takes: a transposed weight or a non-flattenable x is made contiguous first
    xt = torch.randn(4, 10, 256, device=DEV, dtype=torch.bfloat16)[:, :8]
    wt = w.t().contiguous().t()
    assert rel_err(torch.ops.tgemm.linear(xt, wt, b), F.linear(xt, w, b)) < 2e-2


def test_custom_op_autograd():
    x, w, b = operands(64, 128, 256, torch.bfloat16, "same")
    xs = [x.clone().requires_grad_(), w.clone().requires_grad_(), b.clone().requires_grad_()]
    xr = [t.detach().clone().requires_grad_() for t in xs]
    g = torch.randn(64, 128, device=DEV, dtype=torch.bfloat16)
    torch.ops.tgemm.linear(*xs).backward(g)
    F.linear(*xr).backward(g)
    for a, r in zip(xs, xr, strict=True):
        assert rel_err(a.grad, r.grad) < 2e-2


def test_torch_compile_fullgraph():
    class MLP(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = torch.nn.Linear(256, 1024)
            self.fc2 = torch.nn.Linear(1024, 256)

        def forward(self, x):
            return self.fc2(F.gelu(self.fc1(x))) + x

    model = MLP().to(DEV, torch.bfloat16).eval()
    x = torch.randn(4, 77, 256, device=DEV, dtype=torch.bfloat16)
    with torch.no_grad():
        ref = model(x)
        handle = tt.patch_linear(model)
        eager = model(x)
        torch._dynamo.reset()
        compiled = torch.compile(model, fullgraph=True)
        y = compiled(x)
        y2 = compiled(torch.randn(4, 77, 256, device=DEV, dtype=torch.bfloat16))
        assert y2.shape == y.shape
    assert rel_err(eager, ref) < 2e-2
    assert rel_err(y, eager) < 1e-2
    handle.undo()

    def f(x, w, b):
        return torch.ops.tgemm.linear(x, w, b, torch.float32).relu()

    xx, w, b = operands(128, 256, 512, torch.float16, "fp32")
    torch._dynamo.reset()
    cf = torch.compile(f, fullgraph=True)
    assert rel_err(cf(xx, w, b), reference(xx, w, b).relu()) < 1e-2


def _graph_case():
    x, w, b = operands(2048, 3072, 1024, torch.bfloat16, "same")
    return x, w, b


def test_cuda_graph_capture_and_replay():
    x, w, b = _graph_case()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):  # warm-up on the stream that will capture (plans, workspace)
        for _ in range(2):
            torch.ops.tgemm.linear(x, w, b)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, stream=s):
        y = torch.ops.tgemm.linear(x, w, b)
    for i in range(3):
        x.copy_(torch.randn_like(x))
        g.replay()
        torch.cuda.synchronize()
        assert rel_err(y, reference(x, w, b)) < 2e-2, f"replay {i}"


@pytest.mark.parametrize("k,bias", [(768, "fp32"), (100, "same")], ids=["sm90", "cublaslt_workspace"])
def test_cuda_graph_capture_on_a_fresh_stream(k, bias):
    """The shape ran before on another stream only; the first call on the capturing stream happens inside the
    capture (as when a serving engine captures on its own stream). K=100 (rows not 16-byte multiples) goes to
    cuBLASLt, whose 32 MiB workspace for the capturing stream is allocated inside the capture."""
    x, w, b = operands(4096, 1536, k, torch.bfloat16, bias)
    if k == 100:
        assert "plan: cublaslt" in tgemm.explain(4096, 1536, k, bias=True)
    torch.ops.tgemm.linear(x, w, b)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = torch.ops.tgemm.linear(x, w, b)
    x.copy_(torch.randn_like(x))
    g.replay()
    torch.cuda.synchronize()
    assert rel_err(y, reference(x, w, b)) < 2e-2


def test_cuda_graph_of_patched_model():
    model = torch.nn.Sequential(torch.nn.Linear(512, 2048), torch.nn.GELU(), torch.nn.Linear(2048, 512))
    model = model.to(DEV, torch.float16).eval()
    static_x = torch.randn(64, 512, device=DEV, dtype=torch.float16)
    with torch.no_grad(), tt.patch_linear(model):
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            model(static_x)
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, stream=s):
            static_y = model(static_x)
        static_x.copy_(torch.randn_like(static_x))
        g.replay()
        torch.cuda.synchronize()
        y = static_y.clone()
    with torch.no_grad():
        ref = model(static_x)
    assert rel_err(y, ref) < 1e-2


# ---- patch_linear ---------------------------------------------------------------------------------------------

class CountingCore:
    """Stands in for the extension module and counts mm calls."""

    def __init__(self, real):
        self.real = real
        self.calls = 0

    def __getattr__(self, name):
        return getattr(self.real, name)

    def mm(self, *args):
        self.calls += 1
        return self.real.mm(*args)


def test_patch_linear_routes_and_undo_restores(monkeypatch):
    model = torch.nn.Sequential(
        torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 128, bias=False),
        torch.nn.Sequential(torch.nn.Linear(128, 64)))
    model = model.to(DEV, torch.bfloat16).eval()
    x = torch.randn(3, 50, 256, device=DEV, dtype=torch.bfloat16)
    counter = CountingCore(_core._C)
    monkeypatch.setattr(_core, "_C", counter)
    with torch.no_grad():
        ref = model(x)
        assert counter.calls == 0
        handle = tt.patch_linear(model)
        assert len(handle) == 3 and handle.modules == ["0", "2", "3.0"]
        y = model(x)
        assert counter.calls == 3
        assert rel_err(y, ref) < 2e-2
        model.float()  # fp32 weights: the patched layers fall back to F.linear
        model(x.float())
        assert counter.calls == 3
        model.to(torch.bfloat16)
        handle.undo()
        assert all("forward" not in m.__dict__ for m in model.modules())
        y2 = model(x)
        assert counter.calls == 3 and rel_err(y2, ref) < 1e-3
    handle = tt.patch_linear(model, filter=lambda name, m: m.out_features >= 512)
    assert handle.modules == ["0"] and len(handle.skipped) == 2
    handle.undo()


# ---- memory and a problem with M*N >= 2^31 ---------------------------------------------------------------------

def _free_bytes():
    free, _ = torch.cuda.mem_get_info()
    return free


def test_no_memory_growth_over_repeated_calls():
    x, w, b = operands(8192, 6144, 1280, torch.bfloat16, "same")
    out = torch.empty(8192, 6144, device=DEV, dtype=torch.bfloat16)
    for _ in range(2):
        tgemm.mm(x, w, b, out=out)
        torch.ops.tgemm.linear(x, w, b)
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    alloc0, free0 = torch.cuda.memory_allocated(), _free_bytes()
    for _ in range(50):
        tgemm.mm(x, w, b, out=out)
        y = torch.ops.tgemm.linear(x, w, b)
        del y
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    assert torch.cuda.memory_allocated() == alloc0
    assert abs(_free_bytes() - free0) <= (2 << 20), "device memory changed over 50 warm calls"


@pytest.mark.parametrize("m", [360000])
def test_seed_shape_over_2_pow_31(m):
    """The seed's shape (N=6144, K=1280, bf16, bias) with M*N >= 2^31: right everywhere, nothing written outside."""
    n, k = 6144, 1280
    assert m * n >= 2 ** 31
    free, _ = torch.cuda.mem_get_info()
    if free < 3 * m * n * 2 + (4 << 30):
        pytest.skip("not enough free device memory for the M*N >= 2^31 check")
    x, w, b = operands(m, n, k, torch.bfloat16, "same")
    guard = 1 << 20
    buf = torch.full((m * n + 2 * guard,), 7.0, device=DEV, dtype=torch.bfloat16)
    out = buf[guard:guard + m * n].view(m, n)
    tgemm.mm(x, w, b, out=out)
    ref = F.linear(x, w, b)
    torch.cuda.synchronize()
    assert bool((buf[:guard] == 7).all()) and bool((buf[guard + m * n:] == 7).all()), "wrote outside Y"
    for r0 in range(0, m, 65536):  # row chunks, so the fp32 copies stay small
        assert rel_err(out[r0:r0 + 65536], ref[r0:r0 + 65536]) < 2e-2, f"rows {r0}.."
