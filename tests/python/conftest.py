"""pytest set-up for tgemm's Python tests.

    PYTHONPATH=build/python python3 -m pytest tests/python            # in-tree build (cmake -DTGEMM_BUILD_PYTHON=ON)
    python3 -m pytest tests/python                                     # installed package (pip install .)
    python3 -m pytest tests/python -m "not gpu"                        # CPU tests only

When `tgemm` is not importable, the first build*/python/ under the repository root holding a built module is
used. GPU tests are marked `gpu` and skip, saying why, where there is no CUDA device or no PyTorch.
"""

import glob
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _ensure_importable():
    try:
        import tgemm  # noqa: F401
        return
    except ImportError:
        pass
    for d in sorted(glob.glob(os.path.join(ROOT, "build*", "python"))):
        if glob.glob(os.path.join(d, "tgemm", "_tgemm*.so")):
            sys.path.insert(0, d)
            return


_ensure_importable()


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA device and PyTorch; skipped, saying why, where there is none")


def pytest_report_header(config):
    try:
        import tgemm
        return f"tgemm {tgemm.__version__} from {os.path.dirname(tgemm.__file__)}"
    except Exception as e:  # noqa: BLE001
        return f"tgemm: not importable ({e})"
