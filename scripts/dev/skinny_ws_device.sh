#!/usr/bin/env bash
# One device call for the persistent skinny kernel (skinny_ws_kernel.cuh): build, optionally the GPU kernel tests,
# then `tgemm bench` on shapes/decode.csv with forced kernels beside cuBLASLt, graph replay and plain launches.
#   WS_TESTS=1 WS_GRAPH=k1,k2 WS_PLAIN=k1,k2 WS_ITERS=15 bash scripts/dev/skinny_ws_device.sh   (carry .deps)
set -uo pipefail
cd "$(dirname "$0")/../.."
FINAL=${OUT:-/tmp/tgemm_out}
D=/tmp/ws_logs; rm -rf $D; mkdir -p $D "$FINAL"
trap 'tar czf "$FINAL/ws_logs.tgz" -C $D .' EXIT
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s)
GEN=""; command -v ninja >/dev/null && GEN="-G Ninja"
cmake -S . -B build-dev $GEN -DCMAKE_BUILD_TYPE=Release -DTGEMM_BUILD_TESTS=ON -DTGEMM_GTEST_SOURCE="$PWD/.deps/googletest" \
  -DTGEMM_BUILD_PYTHON=OFF > $D/build.log 2>&1 && cmake --build build-dev -j 16 >> $D/build.log 2>&1 || { tail -30 $D/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s" | tee -a $D/times.txt
B=./build-dev/tgemm
if [ -n "${WS_TESTS:-}" ]; then
  timeout -s KILL ${WS_T0:-120} ./build-dev/tests/tgemm_gpu_tests --gtest_color=no ${WS_GTEST:---gtest_filter=Kernels.*:*Skinny*:*skinny*} > $D/gpu_tests.log 2>&1
  echo "tests rc=$? $(( $(date +%s) - t0 )) s" | tee -a $D/times.txt
  grep -E "^\[  (PASSED|FAILED) |^\[  FAILED  \]|Failure|checked" $D/gpu_tests.log | head -20
fi
IT=${WS_ITERS:-15}
[ -n "${WS_GRAPH:-}" ] && timeout -s KILL ${WS_T1:-100} $B bench -i ${WS_SHAPES:-shapes/decode.csv} --timing graph --iters $IT --kernel "$WS_GRAPH" \
  --csv $D/graph.csv > $D/graph.log 2>&1
echo "graph rc=$? $(( $(date +%s) - t0 )) s" | tee -a $D/times.txt
[ -n "${WS_PLAIN:-}" ] && timeout -s KILL ${WS_T2:-45} $B bench -i ${WS_SHAPES2:-shapes/decode.csv} --no-ceilings --timing plain --iters $IT \
  --kernel "$WS_PLAIN" --csv $D/plain.csv > $D/plain.log 2>&1
echo "plain rc=$? $(( $(date +%s) - t0 )) s" | tee -a $D/times.txt
grep -E "ceilings|copy|FAILED|error" $D/graph.log | head -5
