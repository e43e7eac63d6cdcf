"""PyTorch integration: the custom op `torch.ops.tgemm.linear` and `patch_linear`.

    import tgemm.torch
    y = torch.ops.tgemm.linear(x, w, bias)            # = F.linear(x, w, bias), through tgemm
    y = torch.ops.tgemm.linear(x, w, bias, torch.float32)   # fp32 output
    handle = tgemm.torch.patch_linear(model)          # every nn.Linear with bf16/fp16 CUDA weights -> tgemm
    ...
    handle.undo()                                     # (or handle(), or `with tgemm.torch.patch_linear(model):`)

The op is registered with torch.library (a custom op with a fake implementation), so torch.compile(fullgraph=True)
traces models that use it. Its CUDA implementation allocates only the output (through PyTorch's caching allocator)
and never synchronises, so it can be captured in a CUDA graph (after one warm-up call of the shape, as usual). It
runs on PyTorch's current stream. It has a backward (computed with PyTorch matmuls) so training graphs still work.
"""

import torch
import torch.nn.functional as F

from . import _core

__all__ = ["linear", "patch_linear", "LinearPatch"]

_SCHEMA = "(Tensor x, Tensor w, Tensor? bias=None, ScalarType? out_dtype=None) -> Tensor"
_HALF = (torch.bfloat16, torch.float16)


def _fake(x, w, bias=None, out_dtype=None):
    torch._check(x.dim() >= 1, lambda: "tgemm::linear: x must have at least one dimension")
    torch._check(w.dim() == 2, lambda: f"tgemm::linear: w must be 2-D [N, K], got {w.dim()}-D")
    torch._check(x.shape[-1] == w.shape[1],
                 lambda: f"tgemm::linear: x.shape[-1] = {x.shape[-1]} (K) differs from w.shape[1] = {w.shape[1]}")
    if bias is not None:
        torch._check(bias.dim() == 1 and bias.shape[0] == w.shape[0],
                     lambda: f"tgemm::linear: bias must be [N] = [{w.shape[0]}], got {tuple(bias.shape)}")
    dtype = x.dtype if out_dtype is None else out_dtype
    return x.new_empty((*x.shape[:-1], w.shape[0]), dtype=dtype)


def _setup_context(ctx, inputs, output):
    x, w, bias, _ = inputs
    ctx.save_for_backward(x, w)
    ctx.bias_dtype = None if bias is None else bias.dtype


def _backward(ctx, grad):
    x, w = ctx.saved_tensors
    gx = gw = gb = None
    g = grad.to(x.dtype)
    if ctx.needs_input_grad[0]:
        gx = g.matmul(w)
    if ctx.needs_input_grad[1]:
        gw = g.reshape(-1, g.shape[-1]).t().matmul(x.reshape(-1, x.shape[-1]))
    if ctx.bias_dtype is not None and ctx.needs_input_grad[2]:
        gb = grad.reshape(-1, grad.shape[-1]).sum(0).to(ctx.bias_dtype)
    return gx, gw, gb, None


def _registered():
    try:
        torch.ops.tgemm.linear  # noqa: B018
        return True
    except (AttributeError, RuntimeError):
        return False


_lib = None  # keeps a torch.library.Library alive on PyTorch < 2.4


def _register():
    global _lib
    if _registered():  # e.g. this module reloaded
        return
    if hasattr(torch.library, "custom_op"):  # PyTorch >= 2.4
        op = torch.library.custom_op("tgemm::linear", _core.linear_torch, mutates_args=(), schema=_SCHEMA)
        op.register_fake(_fake)
        op.register_autograd(_backward, setup_context=_setup_context)
    else:
        _lib = torch.library.Library("tgemm", "DEF")
        _lib.define("linear" + _SCHEMA)
        _lib.impl("linear", _core.linear_torch, "CompositeExplicitAutograd")
        _lib.impl("linear", _fake, "Meta")


_register()


def linear(x, w, bias=None, out_dtype=None):
    """torch.ops.tgemm.linear: F.linear(x, w, bias) through tgemm, optionally with another output dtype."""
    return torch.ops.tgemm.linear(x, w, bias, out_dtype)


def _tgemm_forward(self, input):
    w = self.weight
    if input.is_cuda and w.is_cuda and w.dtype in _HALF and input.dtype == w.dtype and w.dim() == 2:
        return torch.ops.tgemm.linear(input, w, self.bias)
    return F.linear(input, w, self.bias)


class LinearPatch:
    """What patch_linear changed. undo() (or calling it, or leaving its `with` block) restores the originals."""

    def __init__(self, entries, skipped):
        self._entries = entries  # (name, module)
        self.skipped = skipped  # (name, why) for nn.Linear layers left alone

    @property
    def modules(self):
        return [name for name, _ in self._entries]

    def __len__(self):
        return len(self._entries)

    def undo(self):
        while self._entries:
            _, m = self._entries.pop()
            fwd = m.__dict__.get("forward")
            if getattr(fwd, "__func__", None) is _tgemm_forward:
                del m.__dict__["forward"]

    __call__ = undo

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.undo()
        return False

    def __repr__(self):
        return f"<tgemm LinearPatch: {len(self._entries)} nn.Linear routed through tgemm, {len(self.skipped)} skipped>"


def patch_linear(model, filter=None):  # noqa: A002 - the natural name
    """Routes the forward of every nn.Linear in `model` (and `model` itself if it is one) through
    torch.ops.tgemm.linear. At each call a layer uses tgemm when its weight is a bf16/fp16 CUDA tensor and the input
    has the same dtype; otherwise it runs F.linear as before. `filter(name, module) -> bool` limits which layers are
    patched. Subclasses that override forward, and layers already patched, are left alone. Returns a LinearPatch
    whose undo() restores the original forwards."""
    import types

    entries, skipped = [], []
    for name, m in model.named_modules():
        if not isinstance(m, torch.nn.Linear):
            continue
        if "forward" in m.__dict__:
            skipped.append((name, "its forward is already overridden on the instance"))
            continue
        if type(m).forward is not torch.nn.Linear.forward:
            skipped.append((name, f"{type(m).__name__} overrides forward"))
            continue
        if filter is not None and not filter(name, m):
            skipped.append((name, "filtered out"))
            continue
        m.forward = types.MethodType(_tgemm_forward, m)
        entries.append((name, m))
    return LinearPatch(entries, skipped)
