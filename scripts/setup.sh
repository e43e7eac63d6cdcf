#!/usr/bin/env bash
# Installs what tgemm needs to build and test on a fresh Debian machine (CUDA toolkit with nvcc assumed):
# a C++20 compiler, GoogleTest from Debian, CMake >= 3.28, nanobind and pytest from PyPI.
set -euo pipefail
need_apt=()
command -v g++ >/dev/null || need_apt+=(g++)
command -v make >/dev/null || need_apt+=(make)
[ -f /usr/include/gtest/gtest.h ] || need_apt+=(libgtest-dev googletest)
command -v python3 >/dev/null || need_apt+=(python3 python3-pip)
# Fuzzing (TGEMM_FUZZ=1: scripts/test.sh, fuzz/run.sh): clang with libFuzzer and the sanitizer runtimes.
if [ "${TGEMM_FUZZ:-0}" = 1 ]; then
  probe=$(mktemp -d)
  echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' >"$probe/p.cpp"
  clang++ -fsanitize=fuzzer,address,undefined "$probe/p.cpp" -o "$probe/p" >/dev/null 2>&1 || need_apt+=(clang libclang-rt-dev)
  rm -rf "$probe"
fi
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}"
fi
cmake_ok() {
  command -v cmake >/dev/null && python3 - "$(cmake --version | head -1 | awk '{print $3}')" <<'PY'
import sys
v = tuple(int(x) for x in sys.argv[1].split(".")[:2])
sys.exit(0 if v >= (3, 28) else 1)
PY
}
pip_install() { python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore "$@" 2>/dev/null || python3 -m pip install -q "$@"; }
cmake_ok || pip_install "cmake>=3.28,<4"
hash -r
python3 -c "import nanobind" 2>/dev/null || pip_install nanobind
python3 -c "import pytest" 2>/dev/null || pip_install pytest
python3 -c "import numpy" 2>/dev/null || pip_install numpy
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
command -v nvcc >/dev/null || { echo "setup: nvcc not found (the CUDA toolkit is required)" >&2; exit 1; }
# cuobjdump and the nvdisasm it runs, for the SASS check (scripts/check_sass.py, ctest sass_sm90): NVIDIA's wheels
# where the toolkit lacks them (a toolkit without nvdisasm made the check fail rather than skip, session 13).
python3 "$(dirname "${BASH_SOURCE[0]}")/check_sass.py" --which >/dev/null ||
  pip_install --retries 1 --timeout 20 nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm ||
  echo "setup: no cuobjdump or nvdisasm; the SASS check will be skipped"
echo "setup: $(cmake --version | head -1), $(nvcc --version | tail -2 | head -1), g++ $(g++ -dumpversion)"
