"""tgemm.mm on framework tensors: operand descriptions, streams, output allocation. No framework is imported here
unless the caller's tensors come from it (or, for a DLPack tensor without `out`, to allocate the output)."""

import os
import sys

from ._loader import load_extension

_C = load_extension()

BF16, FP16, FP32 = _C.BF16, _C.FP16, _C.FP32
_DTYPE_NAMES = ("bf16", "fp16", "fp32")
_DTYPE_ALIASES = {
    "bf16": BF16, "bfloat16": BF16, "torch.bfloat16": BF16,
    "fp16": FP16, "float16": FP16, "half": FP16, "torch.float16": FP16, "torch.half": FP16,
    "fp32": FP32, "float32": FP32, "float": FP32, "torch.float32": FP32, "torch.float": FP32,
}
# DLPack device types (dlpack.h DLDeviceType) and dtype codes (DLDataTypeCode).
_DL_CUDA, _DL_CUDA_MANAGED = 2, 13
_DL_DEVICE_NAMES = {1: "CPU", 2: "CUDA", 3: "CUDA host (pinned)", 4: "OpenCL", 7: "Vulkan", 8: "Metal", 9: "VPI",
                    10: "ROCm", 11: "ROCm host", 13: "CUDA managed", 14: "oneAPI"}
_DL_FLOAT, _DL_BFLOAT = 2, 4
_DL_CODE_NAMES = {0: "int", 1: "uint", 2: "float", 3: "opaque", 4: "bfloat", 5: "complex", 6: "bool"}


def parse_dtype(d, what="dtype"):
    """A dtype code (BF16/FP16/FP32) from 'bf16'/'fp16'/'fp32', torch/numpy/jax dtypes or their names."""
    if isinstance(d, int) and d in (BF16, FP16, FP32):
        return d
    if isinstance(d, str):
        key = d
    else:
        key = str(d)
        if not key.startswith("torch."):
            name = getattr(d, "name", None)
            if not isinstance(name, str):
                name = getattr(d, "__name__", None)
            if isinstance(name, str):
                key = name
    code = _DTYPE_ALIASES.get(key.lower())
    if code is None:
        raise ValueError(f"{what}: {d!r} is not a supported dtype (bf16, fp16 or fp32)")
    return code


def dtype_name(code):
    return _DTYPE_NAMES[code]


# ---- torch ------------------------------------------------------------------------------------------------------

_torch_codes = None  # {torch.dtype: code}, filled on first use
_torch_dtypes = None  # code -> torch.dtype


def _torch_tables(torch):
    global _torch_codes, _torch_dtypes
    if _torch_codes is None:
        _torch_codes = {torch.bfloat16: BF16, torch.float16: FP16, torch.float32: FP32}
        _torch_dtypes = (torch.bfloat16, torch.float16, torch.float32)
    return _torch_codes


def _torch_operand(name, t, torch):
    """(ptr, shape, strides, dtype code, device index) of a torch tensor on a CUDA device."""
    if t.device.type != "cuda":
        raise ValueError(f"{name} is on {t.device}: tgemm.mm needs tensors on a CUDA device (e.g. {name}.cuda())")
    code = _torch_tables(torch).get(t.dtype)
    if code is None:
        raise ValueError(f"{name}.dtype = {t.dtype} is not supported: x and w must be torch.bfloat16 or torch.float16; "
                         f"bias and out may also be torch.float32")
    return t.data_ptr(), tuple(t.shape), t.stride(), code, t.get_device()


# ---- cupy -------------------------------------------------------------------------------------------------------

def _cupy_operand(name, a):
    code = {"float16": FP16, "float32": FP32}.get(a.dtype.name)
    if code is None:
        raise ValueError(f"{name}.dtype = {a.dtype} is not supported: CuPy inputs must be float16 (CuPy has no "
                         f"bfloat16; bias and out may also be float32)")
    item = a.dtype.itemsize
    strides = tuple(s // item for s in a.strides)
    return a.data.ptr, tuple(a.shape), strides, code, a.device.id


def _cupy_stream(cupy, device):
    with cupy.cuda.Device(device):
        return cupy.cuda.get_current_stream().ptr


# ---- any DLPack producer ------------------------------------------------------------------------------------------

def _dlpack_device(name, obj):
    dev_fn = getattr(obj, "__dlpack_device__", None)
    if dev_fn is None or not hasattr(obj, "__dlpack__"):
        raise TypeError(f"{name}: expected a DLPack tensor on a CUDA device (torch.Tensor, cupy.ndarray, jax.Array, "
                        f"...), got {type(obj).__module__}.{type(obj).__qualname__}")
    dev_type, dev_id = dev_fn()
    dev_type, dev_id = int(dev_type), int(dev_id)
    if dev_type not in (_DL_CUDA, _DL_CUDA_MANAGED):
        where = _DL_DEVICE_NAMES.get(dev_type, f"device type {dev_type}")
        raise ValueError(f"{name} is on the {where} (DLPack device type {dev_type}): tgemm.mm needs arrays in CUDA "
                         f"device memory")
    return dev_id


def _dlpack_operand(name, obj, dl_stream, keep):
    dev_id = _dlpack_device(name, obj)
    try:
        capsule = obj.__dlpack__(stream=dl_stream)
    except TypeError:  # a producer predating the `stream` keyword
        capsule = obj.__dlpack__()
    ptr, shape, strides, code, bits, lanes, dev_type, cap_dev = _C.dlpack_info(capsule)
    keep.append(capsule)
    if lanes != 1 or (code, bits) not in ((_DL_BFLOAT, 16), (_DL_FLOAT, 16), (_DL_FLOAT, 32)):
        dname = f"{_DL_CODE_NAMES.get(code, code)}{bits}" + (f"x{lanes}" if lanes != 1 else "")
        raise ValueError(f"{name}.dtype = {dname} is not supported: x and w must be bfloat16 or float16; bias and out "
                         f"may also be float32")
    dt = BF16 if code == _DL_BFLOAT else (FP16 if bits == 16 else FP32)
    return ptr, shape, strides, dt, dev_id


# ---- shapes ------------------------------------------------------------------------------------------------------

def _matrix(name, shape, strides):
    """(rows, cols, ld) of a [..., cols] tensor seen as a row-major matrix, flattening the leading dimensions as
    F.linear does. The inner dimension must be contiguous and the leading ones must collapse into one row stride."""
    if len(shape) == 0:
        raise ValueError(f"{name} is a 0-d tensor: it needs at least one dimension")
    cols = shape[-1]
    if cols > 1 and strides[-1] != 1:
        raise ValueError(f"{name}: the inner dimension (size {cols}) has stride {strides[-1]}, but tgemm needs it "
                         f"contiguous (stride 1); pass {name}.contiguous()")
    rows = 1
    for s in shape[:-1]:
        rows *= s
    if rows == 0:
        return 0, cols, max(cols, 1)
    ld = None
    expect = None
    for size, stride in zip(reversed(shape[:-1]), reversed(strides[:-1])):
        if size == 1:
            continue
        if ld is None:
            ld = stride
        elif stride != expect:
            raise ValueError(f"{name}: leading dimensions {tuple(shape[:-1])} with strides {tuple(strides[:-1])} "
                             f"cannot be flattened into rows of one stride; pass {name}.contiguous()")
        expect = stride * size
    if ld is None:  # one row
        ld = max(cols, 1)
    return rows, cols, ld


def _stream_handle(stream):
    if stream is None:
        return None
    if isinstance(stream, int):
        return stream
    for attr in ("cuda_stream", "ptr"):  # torch.cuda.Stream, cupy.cuda.Stream
        v = getattr(stream, attr, None)
        if isinstance(v, int):
            return v
    raise TypeError(f"stream: expected a cudaStream_t as an int, a torch.cuda.Stream or a cupy.cuda.Stream, got "
                    f"{type(stream).__name__}")


def _kind(obj):
    """'torch', 'cupy' or 'dlpack', without importing anything."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(obj, torch.Tensor):
        return "torch"
    cupy = sys.modules.get("cupy")
    if cupy is not None and isinstance(obj, cupy.ndarray):
        return "cupy"
    return "dlpack"


def _describe(name, obj, kind, dl_stream, keep):
    if kind == "torch":
        return _torch_operand(name, obj, sys.modules["torch"])
    if kind == "cupy":
        return _cupy_operand(name, obj)
    return _dlpack_operand(name, obj, dl_stream, keep)


def _allocator_for_dlpack():
    try:
        import torch  # noqa: F401
        return "torch"
    except ImportError:
        pass
    try:
        import cupy  # noqa: F401
        return "cupy"
    except ImportError:
        pass
    return None


def _current_stream(kind, device):
    if kind == "torch":
        return sys.modules["torch"].cuda.current_stream(device).cuda_stream
    if kind == "cupy":
        return _cupy_stream(sys.modules["cupy"], device)
    return 0


def _allocate(kind, shape, code, device):
    if kind == "torch":
        torch = sys.modules["torch"]
        _torch_tables(torch)
        return torch.empty(shape, dtype=_torch_dtypes[code], device=torch.device("cuda", device))
    cupy = sys.modules["cupy"]
    if code == BF16:
        raise ValueError("out_dtype bf16 cannot be allocated with CuPy (it has no bfloat16): pass out= or out_dtype "
                         "fp16/fp32")
    with cupy.cuda.Device(device):
        return cupy.empty(shape, dtype="float16" if code == FP16 else "float32")


def _to_framework_of(x, y):
    """y (a torch tensor or cupy array) as an array of x's framework, through DLPack, where that framework has
    from_dlpack; else y itself."""
    root = type(x).__module__.split(".")[0]
    try:
        if root in ("jax", "jaxlib"):
            import jax.numpy as jnp
            return jnp.from_dlpack(y)
        mod = sys.modules.get(root)
        conv = getattr(mod, "from_dlpack", None) if mod is not None else None
        if conv is not None:
            return conv(y)
    except Exception:  # noqa: BLE001 - fall back to the allocating framework's array
        pass
    return y


def mm(x, w, bias=None, *, out=None, out_dtype=None, stream=None):
    """Y = x · wᵀ (+ bias), the F.linear contract, on CUDA tensors of any DLPack framework.

    x: [..., K] (leading dimensions are flattened into M rows as F.linear does; the inner dimension must be
    contiguous, the row stride may be larger than K); w: [N, K]; bias: [N] or None, in x's dtype or float32.
    x and w: bfloat16 or float16. The result is [..., N], in `out_dtype` (bf16, fp16 or fp32; default x's dtype),
    written into `out` when given. Runs on `stream` (an int cudaStream_t, torch.cuda.Stream or cupy.cuda.Stream),
    by default the caller's current stream: PyTorch's for torch tensors, CuPy's for CuPy arrays. Returns a tensor
    of x's framework (for other DLPack producers, allocated with PyTorch or CuPy and handed back through the
    framework's from_dlpack). Asynchronous; never synchronises.

    Raises ValueError for invalid arguments (CPU arrays, dtypes, shapes, strides, devices), NotImplementedError when
    no kernel can run the problem, RuntimeError on CUDA errors.
    """
    kx = _kind(x)
    handle = _stream_handle(stream)
    keep = []  # DLPack capsules, alive until the call returns

    if kx == "dlpack":
        device = _dlpack_device("x", x)
        alloc = _kind(out) if out is not None else _allocator_for_dlpack()
        if out is None and alloc is None:
            raise ValueError("x is neither a torch tensor nor a CuPy array: pass out= (a CUDA DLPack tensor), or "
                             "install PyTorch or CuPy so tgemm can allocate the output")
        if handle is None:
            handle = _current_stream(alloc, device)
        dl_stream = handle if handle != 0 else 1  # DLPack: 1 = the legacy default stream
        xp, xs, xst, xdt, xdev = _dlpack_operand("x", x, dl_stream, keep)
    else:
        xp, xs, xst, xdt, xdev = _describe("x", x, kx, None, keep)
        alloc, device = kx, xdev
        if handle is None:
            handle = _current_stream(kx, device)
        dl_stream = handle if handle != 0 else 1
    wp, ws, wst, wdt, wdev = _describe("w", w, _kind(w), dl_stream, keep)
    if len(ws) != 2:
        raise ValueError(f"w must be 2-D [N, K], got shape {tuple(ws)}")
    if wdev != xdev:
        raise ValueError(f"w is on cuda:{wdev} but x is on cuda:{xdev}: all operands must be on one device")
    m, k, ldx = _matrix("x", xs, xst)
    n, kw, ldw = _matrix("w", ws, wst)
    if bias is not None:
        bp, bs, bst, bdt, bdev = _describe("bias", bias, _kind(bias), dl_stream, keep)
        if len(bs) != 1:
            raise ValueError(f"bias must be 1-D [N], got shape {tuple(bs)}")
        if bs[0] > 1 and bst[0] != 1:
            raise ValueError(f"bias must be contiguous, got stride {bst[0]}")
        if bdev != xdev:
            raise ValueError(f"bias is on cuda:{bdev} but x is on cuda:{xdev}: all operands must be on one device")
        bsize = bs[0]
    else:
        bp, bsize, bdt = 0, -1, 0

    out_shape = tuple(xs[:-1]) + (n,)
    want = parse_dtype(out_dtype, "out_dtype") if out_dtype is not None else None
    if out is None:
        ydt = xdt if want is None else want
        y = _allocate(alloc, out_shape, ydt, device)
        yobj = y
        ky = alloc
    else:
        y = out
        ky = _kind(out)
    yp, ys, yst, ydt, ydev = _describe("out", y, ky, dl_stream, keep)
    if out is not None:
        if want is not None and want != ydt:
            raise ValueError(f"out_dtype = {_DTYPE_NAMES[want]} differs from out.dtype = {_DTYPE_NAMES[ydt]}")
        if tuple(ys) != out_shape:
            raise ValueError(f"out has shape {tuple(ys)}, expected {out_shape} (x.shape[:-1] + (N,))")
        if ydev != xdev:
            raise ValueError(f"out is on cuda:{ydev} but x is on cuda:{xdev}: all operands must be on one device")
    ym, yn, ldy = _matrix("out", ys, yst)

    _C.mm(xp, m, k, ldx, xdt, wp, n, kw, ldw, wdt, bp, bsize, bdt, yp, ym, yn, ldy, ydt, device, handle)

    if out is not None:
        return out
    if kx == "dlpack":
        return _to_framework_of(x, yobj)
    return yobj


def linear_torch(x, w, bias=None, out_dtype=None):
    """The body of torch.ops.tgemm.linear: torch tensors only, PyTorch's current stream, any strides (a layout the
    kernels cannot address is made contiguous first, as F.linear would)."""
    torch = sys.modules["torch"]
    codes = _torch_tables(torch)
    if x.device.type != "cuda" or w.device.type != "cuda" or (bias is not None and bias.device.type != "cuda"):
        bad = "x" if x.device.type != "cuda" else ("w" if w.device.type != "cuda" else "bias")
        dev = {"x": x, "w": w, "bias": bias}[bad].device
        raise ValueError(f"tgemm::linear: {bad} is on {dev}; tgemm needs tensors on a CUDA device")
    if x.dim() == 0:
        raise ValueError("tgemm::linear: x is a 0-d tensor")
    if x.shape[-1] > 1 and x.stride(-1) != 1:
        x = x.contiguous()
    try:
        m, k, ldx = _matrix("x", tuple(x.shape), x.stride())
    except ValueError:
        x = x.contiguous()
        m, k, ldx = _matrix("x", tuple(x.shape), x.stride())
    if w.dim() != 2:
        raise ValueError(f"tgemm::linear: w must be 2-D [N, K], got shape {tuple(w.shape)}")
    if w.shape[1] > 1 and w.stride(1) != 1:
        w = w.contiguous()
    n, kw, ldw = _matrix("w", tuple(w.shape), w.stride())
    xdt = codes.get(x.dtype)
    wdt = codes.get(w.dtype)
    if xdt is None or wdt is None:
        t = x.dtype if xdt is None else w.dtype
        raise ValueError(f"tgemm::linear: dtype {t} is not supported (torch.bfloat16 or torch.float16)")
    device = x.get_device()
    if w.get_device() != device or (bias is not None and bias.get_device() != device):
        raise ValueError("tgemm::linear: x, w and bias must be on one device")
    if bias is not None:
        if bias.dim() != 1:
            raise ValueError(f"tgemm::linear: bias must be 1-D [N], got shape {tuple(bias.shape)}")
        if bias.shape[0] > 1 and bias.stride(0) != 1:
            bias = bias.contiguous()
        bdt = codes.get(bias.dtype)
        if bdt is None:
            raise ValueError(f"tgemm::linear: bias dtype {bias.dtype} is not supported")
        bp, bsize = bias.data_ptr(), bias.shape[0]
    else:
        bp, bsize, bdt = 0, -1, 0
    ydt = xdt if out_dtype is None else codes.get(out_dtype)
    if ydt is None:
        raise ValueError(f"tgemm::linear: out_dtype {out_dtype} is not supported (bf16, fp16 or fp32)")
    y = torch.empty(tuple(x.shape[:-1]) + (n,), dtype=_torch_dtypes[ydt], device=x.device)
    handle = torch.cuda.current_stream(device).cuda_stream
    _C.mm(x.data_ptr(), m, k, ldx, xdt, w.data_ptr(), n, kw, ldw, wdt, bp, bsize, bdt, y.data_ptr(), m, n, max(n, 1),
          ydt, device, handle)
    return y


def explain(M, N, K, bias=False, dtype="bf16", out_dtype="bf16", kernel=None, *, bias_dtype=None, ldx=None,
            ldw=None, ldy=None, arch=None, sms=None):
    """What the dispatcher decides for Y[M,N] = X[M,K]·W[N,K]ᵀ (+ bias), and why: the text of `tgemm explain`
    (the tables, the decision chain with every limit check and its numbers, the pieces of a split plan).
    `kernel` forces a kernel to consider first; `arch`/`sms` plan for another device (default: the current one,
    or sm90 with 132 SMs where there is no GPU). Needs no GPU."""
    return _C.explain(int(M), int(N), int(K), bool(bias), parse_dtype(dtype, "dtype"),
                      parse_dtype(out_dtype, "out_dtype"),
                      None if bias_dtype is None else parse_dtype(bias_dtype, "bias_dtype"),
                      kernel, ldx, ldw, ldy, arch, sms)


def kernels():
    """Every registered kernel, with what it can address (index widths, TMA, alignment, M range, dtypes)."""
    return _C.kernels()


def load_config(paths=None):
    """Replaces the tuned tables with the given CSV file(s) (merged in order; a path or a list of paths), or with
    the shipped tables when `paths` is None or empty. Clears the plan cache. Returns the tables summary.
    Raises OSError for an unreadable file, ValueError for a malformed one (with file:line:column)."""
    if paths is None:
        lst = []
    elif isinstance(paths, (str, bytes, os.PathLike)):
        lst = [os.fsdecode(paths)]
    else:
        lst = [os.fsdecode(p) for p in paths]
    return _C.load_tables(lst)


def tables_summary():
    """Which tuned tables are loaded and how many rows."""
    return _C.tables_summary()
