"""Imports the C++ extension, finding the CUDA runtime libraries libtgemm needs when the dynamic linker cannot.

libtgemm.so needs libcudart and libcublasLt of the CUDA major version it was built with. They are found, in order,
through libtgemm's RUNPATH (the toolkit it was built against), LD_LIBRARY_PATH and the system's ldconfig cache, or
as libraries already loaded in the process (e.g. by PyTorch). When none has them, the loader looks in
$CUDA_HOME/lib64, /usr/local/cuda/lib64 and the `nvidia-*` pip packages, and preloads what the error names.
"""

import ctypes
import glob
import importlib
import os
import re
import sys

_MISSING = re.compile(r"(lib[\w.+-]+?\.so[\w.]*): cannot open shared object file")


def _candidate_dirs():
    dirs = []
    for var in ("CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"):
        root = os.environ.get(var)
        if root:
            dirs += [os.path.join(root, "lib64"), os.path.join(root, "lib"),
                     os.path.join(root, "targets", "x86_64-linux", "lib")]
    dirs += ["/usr/local/cuda/lib64", "/usr/local/cuda/lib", "/usr/local/cuda/targets/x86_64-linux/lib"]
    dirs += sorted(glob.glob("/usr/local/cuda-*/lib64"), reverse=True)
    for entry in sys.path:
        if entry and os.path.isdir(os.path.join(entry, "nvidia")):
            dirs += sorted(glob.glob(os.path.join(entry, "nvidia", "*", "lib")))
            dirs += sorted(glob.glob(os.path.join(entry, "nvidia", "*", "*", "lib")))
    return dirs


def _find(soname):
    for d in _candidate_dirs():
        path = os.path.join(d, soname)
        if os.path.isfile(path):
            return path
    return None


def load_extension():
    tried = set()
    while True:
        try:
            return importlib.import_module("tgemm._tgemm")
        except ImportError as e:
            m = _MISSING.search(str(e))
            if not m or m.group(1) in tried:
                raise
            soname = m.group(1)
            tried.add(soname)
            path = _find(soname)
            if path is None:
                raise ImportError(
                    f"tgemm: cannot load its C++ core: {soname} was not found (searched the dynamic linker's path, "
                    f"$CUDA_HOME, /usr/local/cuda and the nvidia-* pip packages). Install the CUDA toolkit it was "
                    f"built with or add its lib64 to LD_LIBRARY_PATH. Original error: {e}") from e
            ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
