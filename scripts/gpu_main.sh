#!/usr/bin/env bash
# The main job, on a machine with an H100/H200: set-up, build, then `tgemm bench` over the seed's shapes
# (each beside cuBLASLt in the same run, checked against the reference).  Usage: bash scripts/gpu_main.sh [shapes.csv]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DTGEMM_BUILD_TESTS=OFF
cmake --build build -j "$(nproc)" --target tgemm_cli
./build/tgemm bench -i "${1:-shapes/seed.csv}"
