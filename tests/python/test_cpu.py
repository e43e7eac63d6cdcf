"""CPU tests of the tgemm Python package (CI runs them on a machine without a GPU): the package imports, kernels()
and explain() work, and every error path for CPU arrays and bad arguments raises a clear Python exception before
anything is launched. numpy and PyTorch are optional: their tests skip when they are missing."""

import os
import subprocess
import sys

import pytest

import tgemm
from tgemm import _core

SEED = (768000, 6144, 1280)


def test_import_and_version():
    assert isinstance(tgemm.__version__, str) and tgemm.__version__
    for name in ("mm", "explain", "kernels", "load_config", "tables_summary"):
        assert callable(getattr(tgemm, name))


def test_import_does_not_need_torch():
    code = "import sys, tgemm; assert 'torch' not in sys.modules, 'import tgemm imported torch'; print('ok')"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "ok" in r.stdout


def test_kernels():
    ks = tgemm.kernels()
    assert isinstance(ks, list) and ks, "no kernels registered"
    names = [k["name"] for k in ks]
    assert len(names) == len(set(names))
    for k in ks:
        assert k["backend"] in ("sm90", "skinny", "cublaslt", "reference")
        assert k["y_index_bits"] in (32, 64) or k["y_index_bits"] > 0
        assert set(k["in_dtypes"]) <= {"bf16", "fp16", "fp32"}
        assert set(k["out_dtypes"]) <= {"bf16", "fp16", "fp32"}
        assert k["max_m"] is None or isinstance(k["max_m"], int)
    assert any(k["backend"] == "cublaslt" for k in ks), "cuBLASLt, the last resort, is missing"


def test_explain_seed_shape():
    text = tgemm.explain(*SEED, bias=True)
    assert "M*N = 4718592000 >= 2^31" in text
    assert "tables:" in text.splitlines()[0]
    assert any(line.strip().startswith("plan: ") for line in text.splitlines()), text
    assert text == tgemm.explain(768000, 6144, 1280, True, "bf16", "bf16")
    assert "bias bf16" in text


def test_explain_options():
    t = tgemm.explain(4096, 4096, 4096, dtype="fp16", out_dtype="fp32", bias_dtype="fp32", sms=114, arch="sm90")
    assert "fp16 -> fp32" in t and "bias fp32" in t and "114 SMs" in t
    assert "M*N = 16777216 < 2^31" in t
    assert "no-op" in tgemm.explain(0, 16, 16)
    assert "K = 0" in tgemm.explain(16, 16, 0)
    t = tgemm.explain(360000, 6144, 1280, bias=True, ldx=1344)
    assert "ldx=1344" in t


def test_explain_forced_i32_kernel_splits():
    i32 = [k["name"] for k in tgemm.kernels()
           if k["y_index_bits"] == 32 and "bf16" in k["in_dtypes"] and k["backend"] == "sm90"]
    if not i32:
        pytest.skip("this build has no sm90 bf16 kernel with 32-bit Y offsets")
    text = tgemm.explain(*SEED, bias=True, kernel=i32[0])
    assert "addressing limit" in text, text
    assert "split:" in text and "pieces" in text, text


def test_explain_errors():
    with pytest.raises(ValueError, match="unknown kernel 'nope'"):
        tgemm.explain(16, 16, 16, kernel="nope")
    with pytest.raises(ValueError, match="not a supported dtype"):
        tgemm.explain(16, 16, 16, dtype="fp8")
    with pytest.raises(ValueError, match="fp32 inputs are not supported"):
        tgemm.explain(16, 16, 16, dtype="fp32")
    with pytest.raises(ValueError, match="non-negative"):
        tgemm.explain(-1, 16, 16)
    with pytest.raises(ValueError, match="ldx"):
        tgemm.explain(16, 16, 64, ldx=32)


def test_load_config(tmp_path):
    header = ("gfx,cu_num,M,N,K,bias,dtype,outdtype,scaleAB,bpreshuffle,libtype,solidx,splitK,us,kernelName,"
              "err_ratio,tflops,bw\n")
    good = tmp_path / "empty_tuned.csv"
    good.write_text(header)
    bad = tmp_path / "bad.csv"
    bad.write_text(header + "sm90,132,notanumber\n")
    try:
        summary = tgemm.load_config(good)
        assert str(good) in summary and "0 rows" in summary
        assert tgemm.tables_summary() == summary
        assert tgemm.load_config([str(good)]) == summary
        with pytest.raises(OSError):
            tgemm.load_config(tmp_path / "missing.csv")
        with pytest.raises(ValueError, match="bad.csv"):
            tgemm.load_config(str(bad))
    finally:
        restored = tgemm.load_config()
    assert restored == tgemm.tables_summary()


# ---- mm: errors raised before anything runs -------------------------------------------------------------------

class FakeDLPack:
    """A minimal DLPack producer that claims to live on `device_type` (1 = CPU)."""

    def __init__(self, device_type=1, device_id=0):
        self.dev = (device_type, device_id)

    def __dlpack_device__(self):
        return self.dev

    def __dlpack__(self, stream=None):
        raise AssertionError("mm must reject the array from its device before exporting it")


def test_mm_rejects_cpu_dlpack_without_numpy():
    with pytest.raises(ValueError, match=r"x is on the CPU \(DLPack device type 1\)"):
        tgemm.mm(FakeDLPack(1), FakeDLPack(1), out=FakeDLPack(1))
    with pytest.raises(ValueError, match="CUDA host"):
        tgemm.mm(FakeDLPack(3), FakeDLPack(3), out=FakeDLPack(3))


def test_mm_rejects_non_tensors():
    with pytest.raises(TypeError, match="expected a DLPack tensor"):
        tgemm.mm([[1.0]], [[1.0]], out=FakeDLPack(2))


def test_mm_rejects_numpy_arrays():
    np = pytest.importorskip("numpy")
    x = np.zeros((4, 8), dtype=np.float16)
    w = np.zeros((16, 8), dtype=np.float16)
    with pytest.raises(ValueError, match=r"x is on the CPU .*CUDA device memory"):
        tgemm.mm(x, w, out=np.zeros((4, 16), dtype=np.float16))
    with pytest.raises(ValueError, match="CPU"):
        tgemm.mm(x, w)  # without out: still rejected on x's device first


def test_dlpack_info_reads_numpy_capsules():
    np = pytest.importorskip("numpy")
    a = np.arange(6 * 8, dtype=np.float32).reshape(6, 8)[1:5:2, 2:]
    ptr, shape, strides, code, bits, lanes, dev_type, dev_id = _core._C.dlpack_info(a.__dlpack__())
    assert shape == (2, 6) and strides == (16, 1)
    assert (code, bits, lanes) == (2, 32, 1)
    assert (dev_type, dev_id) == (1, 0)
    assert ptr == a.__array_interface__["data"][0]
    h = np.zeros((3,), dtype=np.float16)
    assert _core._C.dlpack_info(h.__dlpack__())[3:6] == (2, 16, 1)


def test_library_validates_before_any_launch():
    """The library's own messages, through the raw binding with made-up pointers: make_problem rejects them before
    any CUDA call, so this is safe with or without a GPU."""
    C = _core._C
    BF, FP, F32 = C.BF16, C.FP16, C.FP32
    base = dict(x=1 << 20, m=64, k=128, ldx=128, x_dtype=BF, w=2 << 20, n=256, kw=128, ldw=128, w_dtype=BF,
                bias=0, bias_size=-1, bias_dtype=BF, y=3 << 20, ym=64, yn=256, ldy=256, y_dtype=BF, device=0, stream=0)

    def call(**kw):
        C.mm(**dict(base, **kw))

    with pytest.raises(ValueError, match=r"x.cols = 128 \(K\) differs from w.cols = 96"):
        call(kw=96, ldw=96)
    with pytest.raises(ValueError, match="w.dtype = fp16 differs from x.dtype = bf16"):
        call(w_dtype=FP)
    with pytest.raises(ValueError, match="x.dtype = fp32 not supported"):
        call(x_dtype=F32, w_dtype=F32)
    with pytest.raises(ValueError, match=r"x.ld = 64 < x.cols = 128"):
        call(ldx=64)
    with pytest.raises(ValueError, match=r"y.rows = 32 differs from x.rows = 64 \(M\)"):
        call(ym=32)
    with pytest.raises(ValueError, match=r"bias.size = 255 differs from w.rows = 256 \(N\)"):
        call(bias=4 << 20, bias_size=255)
    with pytest.raises(ValueError, match=r"bias.dtype = fp16 must be the input dtype \(bf16\) or fp32"):
        call(bias=4 << 20, bias_size=256, bias_dtype=FP)
    with pytest.raises(ValueError, match="y overlaps x"):
        call(y=(1 << 20) + 64)
    with pytest.raises(ValueError, match="dtype code 7"):
        call(y_dtype=7)


def test_matrix_flattening_rules():
    m = _core._matrix
    assert m("x", (2, 3, 8), (24, 8, 1)) == (6, 8, 8)          # contiguous batch dims
    assert m("x", (5, 8), (16, 1)) == (5, 8, 16)                 # rows with a larger stride (a slice)
    assert m("x", (2, 1, 3, 8), (48, 48, 16, 1)) == (6, 8, 16)  # size-1 dims do not matter
    assert m("x", (8,), (1,)) == (1, 8, 8)                       # 1-D x is one row
    assert m("x", (1, 8), (999, 1)) == (1, 8, 8)
    assert m("x", (0, 8), (8, 1)) == (0, 8, 8)
    with pytest.raises(ValueError, match="inner dimension .* has stride 4"):
        m("x", (8, 4), (1, 4))                                   # a transpose
    with pytest.raises(ValueError, match="cannot be flattened"):
        m("x", (2, 3, 8), (64, 8, 1))                            # batch stride is not rows * row stride
    with pytest.raises(ValueError, match="0-d"):
        m("x", (), ())


def test_parse_dtype():
    p = _core.parse_dtype
    assert p("bf16") == p("bfloat16") == p("torch.bfloat16") == _core.BF16
    assert p("fp16") == p("float16") == p("half") == _core.FP16
    assert p("fp32") == p("float32") == _core.FP32
    with pytest.raises(ValueError):
        p("int8")
    np = pytest.importorskip("numpy")
    assert p(np.float16) == p(np.dtype("float16")) == _core.FP16
    assert p(np.float32) == _core.FP32


def test_stream_argument_forms():
    assert _core._stream_handle(None) is None
    assert _core._stream_handle(0) == 0
    assert _core._stream_handle(type("S", (), {"cuda_stream": 1234})()) == 1234
    assert _core._stream_handle(type("S", (), {"ptr": 99})()) == 99
    with pytest.raises(TypeError, match="stream"):
        _core._stream_handle("default")


# ---- PyTorch on the CPU (when installed) ---------------------------------------------------------------------

def _torch():
    torch = pytest.importorskip("torch")
    import importlib
    return torch, importlib.import_module("tgemm.torch")  # registers torch.ops.tgemm.linear


def test_torch_cpu_tensors_are_rejected():
    torch, _ = _torch()
    x = torch.zeros(4, 8, dtype=torch.bfloat16)
    w = torch.zeros(16, 8, dtype=torch.bfloat16)
    with pytest.raises(ValueError, match=r"x is on cpu: tgemm.mm needs tensors on a CUDA device"):
        tgemm.mm(x, w)
    with pytest.raises(ValueError, match=r"x is on meta"):
        tgemm.mm(torch.zeros(4, 8, dtype=torch.bfloat16, device="meta"), w)
    with pytest.raises(ValueError, match="x is on cpu"):
        torch.ops.tgemm.linear(x, w)


def test_torch_op_is_registered_on_import_when_torch_was_loaded_first():
    code = ("import torch, tgemm; torch.ops.tgemm.linear; "
            "import tgemm.torch as tt; assert tgemm.torch is tt; print('ok')")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    pytest.importorskip("torch")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "ok" in r.stdout


def test_torch_fake_implementation_shapes():
    torch, _ = _torch()
    x = torch.empty(2, 3, 8, dtype=torch.bfloat16, device="meta")
    w = torch.empty(16, 8, dtype=torch.bfloat16, device="meta")
    b = torch.empty(16, dtype=torch.float32, device="meta")
    y = torch.ops.tgemm.linear(x, w, b)
    assert y.shape == (2, 3, 16) and y.dtype == torch.bfloat16 and y.device.type == "meta"
    y = torch.ops.tgemm.linear(x, w, None, torch.float32)
    assert y.dtype == torch.float32
    with pytest.raises(Exception, match="differs from w.shape"):
        torch.ops.tgemm.linear(x, torch.empty(16, 9, dtype=torch.bfloat16, device="meta"))


def test_torch_autograd_through_the_op():
    torch, _ = _torch()
    x = torch.empty(2, 3, 8, dtype=torch.bfloat16, device="meta", requires_grad=True)
    w = torch.empty(16, 8, dtype=torch.bfloat16, device="meta", requires_grad=True)
    b = torch.empty(16, dtype=torch.float32, device="meta", requires_grad=True)
    torch.ops.tgemm.linear(x, w, b).sum().backward()
    assert x.grad.shape == x.shape and w.grad.shape == w.shape and b.grad.shape == b.shape
    assert x.grad.dtype == torch.bfloat16 and b.grad.dtype == torch.float32


def _meta_mlp(torch):
    model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.GELU(), torch.nn.Linear(256, 64))
    return model.to(device="meta", dtype=torch.bfloat16)


def test_torch_compile_fullgraph_traces_the_op():
    """Dynamo traces a patched model without a graph break; the graph holds tgemm::linear (meta tensors stand in
    for CUDA ones: the patched forward takes the tgemm path only for CUDA tensors, so it is exercised through a
    model calling the op directly)."""
    torch, tt = _torch()
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    def f(x, w1, b1, w2):
        return tt.linear(torch.nn.functional.gelu(tt.linear(x, w1, b1)), w2, None, torch.float32)

    x = torch.empty(4, 10, 64, dtype=torch.bfloat16, device="meta")
    w1 = torch.empty(256, 64, dtype=torch.bfloat16, device="meta")
    b1 = torch.empty(256, dtype=torch.float32, device="meta")
    w2 = torch.empty(64, 256, dtype=torch.bfloat16, device="meta")
    torch._dynamo.reset()
    y = torch.compile(f, backend=backend, fullgraph=True)(x, w1, b1, w2)
    assert y.shape == (4, 10, 64) and y.dtype == torch.float32
    assert len(graphs) == 1
    assert str(graphs[0].graph).count("tgemm.linear") == 2
    torch._dynamo.reset()
    y = torch.compile(f, backend="aot_eager", fullgraph=True)(x, w1, b1, w2)
    assert y.shape == (4, 10, 64)


def test_torch_patched_forward_traces_without_graph_breaks():
    torch, tt = _torch()
    model = _meta_mlp(torch)
    handle = tt.patch_linear(model)
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    torch._dynamo.reset()
    y = torch.compile(model, backend=backend, fullgraph=True)(torch.empty(3, 64, dtype=torch.bfloat16, device="meta"))
    assert y.shape == (3, 64) and len(graphs) == 1
    handle.undo()


def test_torch_patch_linear_and_undo_on_cpu():
    torch, tt = _torch()
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.Linear(16, 4))
    x = torch.randn(3, 8)
    ref = model(x)
    handle = tt.patch_linear(model)
    assert len(handle) == 2 and handle.modules == ["0", "2"]
    assert all("forward" in m.__dict__ for m in (model[0], model[2]))
    assert torch.equal(model(x), ref)  # fp32 CPU layers fall back to F.linear
    assert len(tt.patch_linear(model)) == 0  # already patched: left alone
    handle.undo()
    assert all("forward" not in m.__dict__ for m in (model[0], model[2]))
    with tt.patch_linear(model) as h:
        assert len(h) == 2
    assert "forward" not in model[0].__dict__
