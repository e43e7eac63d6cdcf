#!/usr/bin/env bash
# Device call: the TMA skinny kernels under ConcurrencyGpu (8 host threads x 8 streams), alone and with each group of
# the other candidates (TGEMM_STRESS_SHAPES), also with the TMA kernel in the ws kernel's table row; then the kernel
# tests and a graph-replay bench of the ws kernels on the decode shapes.
#   bash scripts/dev/ws_race_device.sh   (carry .deps; logs in $OUT/race_logs.tgz)
# Run 26's version also ran racecheck/synccheck and dumped the SASS order of the loads and the slot release.
set -uo pipefail
source "$(dirname "$0")/device_logs.sh" race_logs
GEN=""; command -v ninja >/dev/null && GEN="-G Ninja"
cmake -S . -B build-dev $GEN -DCMAKE_BUILD_TYPE=Release -DTGEMM_BUILD_TESTS=ON -DTGEMM_GTEST_SOURCE="$PWD/.deps/googletest" \
  -DTGEMM_BUILD_PYTHON=OFF > $D/build.log 2>&1 && cmake --build build-dev -j 16 >> $D/build.log 2>&1 || { tail -30 $D/build.log; exit 1; }
T=./build-dev/tests/tgemm_gpu_tests
conc() {  # name shapes seconds env...
  local name=$1 shapes=$2 secs=$3; shift 3
  timeout -s KILL 60 env TGEMM_STRESS_SECONDS=$secs TGEMM_STRESS_SHAPES=$shapes "$@" $T --gtest_color=no \
    --gtest_filter=ConcurrencyGpu.EightThreads* > $D/conc_$name.log 2>&1
  echo "conc $name rc=$? failing calls=$(grep -c 'bit-identical\|not_close=[1-9]' $D/conc_$name.log); $(grep -h 'checked mm calls' $D/conc_$name.log)"
}
conc ws_alone 0 5
conc ws_skinny 0,1,2,3,4 5
conc ws_sm90 0,5,6,7,8,9 5
conc all "" 10
conc tma_all "" 10 TGEMM_CONFIG=scripts/dev/data/table_tma_at_1x4096.csv
timeout -s KILL 120 $T --gtest_color=no --gtest_filter='Kernels.*:ConcurrencyGpu.Persistent*' > $D/kernels.log 2>&1
echo "kernels+persistent rc=$? $(grep -E 'checked [0-9]+ kernels' $D/kernels.log)"; grep -E "^\[  FAILED|contention .*: [1-9]" $D/kernels.log | head
timeout -s KILL 90 ./build-dev/tgemm bench -i shapes/decode.csv --timing graph --iters 15 \
  --kernel "${RACE_BENCH_KERNELS:-skinny_bf16_m16_ws_skauto_i64,skinny_bf16_m16_ws_sk4_i64}" --csv $D/bench_ws.csv > $D/bench_ws.log 2>&1
echo "bench rc=$?"; grep -hE "ceilings|FAILED|not close" $D/bench_ws.log | head -3
