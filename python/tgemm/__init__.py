"""tgemm: tuned GEMM for NVIDIA Hopper, Y = X·Wᵀ (+ bias), the F.linear contract.

    import tgemm
    y = tgemm.mm(x, w, bias)          # any CUDA DLPack tensors (PyTorch, CuPy, JAX); x: [..., K], w: [N, K]
    print(tgemm.explain(768000, 6144, 1280, bias=True))   # what the dispatcher decides and why (no GPU needed)
    tgemm.kernels()                   # every kernel with what it can address
    tgemm.load_config("tuned.csv")    # replace the tuned tables

PyTorch (imported only when used): `tgemm.torch` registers `torch.ops.tgemm.linear` (traceable by torch.compile,
capturable in CUDA graphs) and `tgemm.torch.patch_linear(model)` routes a model's nn.Linear layers through it.
It is registered automatically when torch was imported before tgemm.

Environment: TGEMM_CONFIG=a.csv:b.csv (tables), TGEMM_LOG=1 (log each new plan), TGEMM_UNTUNED_LOG=path.
"""

import sys as _sys

from ._core import _C, explain, kernels, load_config, mm, tables_summary

__version__ = _C.__version__
__all__ = ["mm", "explain", "kernels", "load_config", "tables_summary", "__version__"]


def __getattr__(name):
    # `tgemm.torch` on first use, so `import tgemm` never needs PyTorch.
    if name == "torch":
        import importlib
        return importlib.import_module(".torch", __name__)
    raise AttributeError(f"module 'tgemm' has no attribute {name!r}")


if "torch" in _sys.modules:  # PyTorch already loaded: make torch.ops.tgemm.linear available right away
    try:
        from . import torch as _torch_integration  # noqa: F401
    except Exception as _e:  # noqa: BLE001 - never let the integration break `import tgemm`
        import warnings as _warnings
        _warnings.warn(f"tgemm: the PyTorch integration could not be registered: {_e}", RuntimeWarning, stacklevel=2)
