#!/usr/bin/env bash
# One device call, with scripts/dev/patches/rs_consumer_refill.patch applied (git apply): the row-stream kernel with
# consumer refills (-DTGEMM_RS_CONSUMER_REFILL) against the default, in
# stream_probe's `rs` mode (two rounds, alternated), and the skinny GPU tests on a library built with refills.
set -uo pipefail
cd "$(dirname "$0")/../.."
O=${OUT:-/tmp/tgemm_out}; mkdir -p "$O/r"
NV="nvcc -O3 -std=c++20 --expt-relaxed-constexpr -Isrc -Iinclude -gencode=arch=compute_90a,code=sm_90a"
$NV scripts/dev/stream_probe.cu -o /tmp/sp & p1=$!
$NV -DTGEMM_RS_CONSUMER_REFILL scripts/dev/stream_probe.cu -o /tmp/spr & p2=$!
(cmake -S . -B build-refill -DCMAKE_BUILD_TYPE=Release -DTGEMM_BUILD_TESTS=ON -DTGEMM_GTEST_SOURCE="$PWD/.deps/googletest" \
   -DTGEMM_BUILD_PYTHON=OFF -DCMAKE_CUDA_FLAGS=-DTGEMM_RS_CONSUMER_REFILL > "$O/r/build.log" 2>&1 &&
 cmake --build build-refill -j 14 --target tgemm_gpu_tests >> "$O/r/build.log" 2>&1; echo "build rc=$?" >> "$O/r/build.log") & p3=$!
wait $p1 $p2
for r in 1 2; do
  timeout 60 /tmp/sp rs > "$O/r/rs_base_$r.csv" 2>&1; echo "base $r rc=$?"
  timeout 60 /tmp/spr rs > "$O/r/rs_refill_$r.csv" 2>&1; echo "refill $r rc=$?"
done
wait $p3; tail -1 "$O/r/build.log"
timeout 150 ./build-refill/tests/tgemm_gpu_tests --gtest_color=no --gtest_filter='Kernels.*:*Skinny*:*Rs*' > "$O/r/tests.log" 2>&1
echo "tests rc=$?"; grep -E "PASSED|FAILED" "$O/r/tests.log" | tail -4
tail -n +1 "$O"/r/rs_*.csv
tar czf "$O/refill.tgz" -C "$O/r" . && rm -rf "$O/r"
