#!/usr/bin/env bash
# The test command: set-up, build everything (CUDA included), run every test. GPU tests skip, saying so,
# where no CUDA device exists.  Usage: bash scripts/test.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
BUILD=${1:-build}
JOBS=${JOBS:-$(nproc)}
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DTGEMM_BUILD_TESTS=ON -DTGEMM_BUILD_PYTHON=ON
cmake --build "$BUILD" -j "$JOBS"
cd "$BUILD"
ctest --output-on-failure --timeout 1800 -j "$JOBS"
