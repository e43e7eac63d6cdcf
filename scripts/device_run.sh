#!/usr/bin/env bash
# One call on the GPU machine: build, GPU tests, benchmarks; logs under $OUT (the device tool's folder).
#   STEPS="tests bench" bash scripts/device_run.sh      (default: tests bench)
# Needs .deps/googletest (copied from /usr/src/googletest here) carried along: that machine has no GoogleTest.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/tgemm_out}
mkdir -p "$OUT"
STEPS=${STEPS:-"tests bench"}
export PATH=/usr/local/cuda/bin:$PATH
log() { echo "== $*" | tee -a "$OUT/summary.txt"; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv | tee "$OUT/gpu.txt"
GEN=""; command -v ninja >/dev/null && GEN="-G Ninja"
t0=$(date +%s)
cmake -S . -B build-dev $GEN -DCMAKE_BUILD_TYPE=Release -DTGEMM_BUILD_TESTS=ON -DTGEMM_GTEST_SOURCE="$PWD/.deps/googletest" \
  ${CMAKE_EXTRA:-} > "$OUT/build.log" 2>&1 &&
cmake --build build-dev -j 16 >> "$OUT/build.log" 2>&1
rc=$?
log "build rc=$rc in $(( $(date +%s) - t0 )) s"
[ $rc -eq 0 ] || { tail -40 "$OUT/build.log"; exit $rc; }
for step in $STEPS; do
  t0=$(date +%s); rc=0
  case $step in
    tests) ./build-dev/tests/tgemm_gpu_tests --gtest_color=no ${GTEST_ARGS:-} > "$OUT/gpu_tests.log" 2>&1; rc=$?
           grep -E "^\[  (PASSED|FAILED) |^\[  FAILED  \]|FAILED TEST|Failure|checked|cuBLASLt M=|mm M=" "$OUT/gpu_tests.log" | head -60 ;;
    bench) ./build-dev/tgemm bench -i shapes/seed.csv ${BENCH_ARGS:-} 2>&1 | tee "$OUT/bench_seed.log"; rc=$? ;;
    models) ./build-dev/tgemm bench -i shapes/models.csv --no-ceilings ${BENCH_ARGS:-} --csv "$OUT/bench_models.csv" > "$OUT/bench_models.log" 2>&1; rc=$?
           tail -5 "$OUT/bench_models.log" ;;
    repro) ./build-dev/tgemm repro 2>&1 | tee "$OUT/repro.log"; rc=$? ;;
    check) ./build-dev/tgemm check ${CHECK_ARGS:-} > "$OUT/check.log" 2>&1; rc=$?; grep -E "FAILED|^check:" "$OUT/check.log" | head -30 ;;
    sanitize) for k in ${SANITIZE_KERNELS:-}; do
                compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 ./build-dev/tgemm bench -i shapes/sanitizer.csv \
                  --warmup 0 --iters 1 --no-ceilings --kernel "$k" > "$OUT/sanitize_$k.log" 2>&1; r=$?; rc=$((rc|r))
                echo "memcheck $k rc=$r: $(grep -E 'ERROR SUMMARY' "$OUT/sanitize_$k.log" | tail -1)"
              done ;;
    *) log "unknown step $step"; rc=2 ;;
  esac
  log "$step rc=$rc in $(( $(date +%s) - t0 )) s"
done
cat "$OUT/summary.txt"
