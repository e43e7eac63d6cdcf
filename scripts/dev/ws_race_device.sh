#!/usr/bin/env bash
# Device call: the persistent skinny kernel under ConcurrencyGpu (8 threads x 8 streams) with its launch options
# toggled one at a time, plus racecheck/synccheck and the SASS order of its loads and barrier arrivals.
#   bash scripts/dev/ws_race_device.sh   (carry .deps; logs in $OUT/race_logs.tgz)
set -uo pipefail
cd "$(dirname "$0")/../.."
FINAL=${OUT:-/tmp/tgemm_out}
D=/tmp/race_logs; rm -rf $D; mkdir -p $D "$FINAL"
trap 'tar czf "$FINAL/race_logs.tgz" -C $D .' EXIT
export PATH=/usr/local/cuda/bin:$PATH
GEN=""; command -v ninja >/dev/null && GEN="-G Ninja"
cmake -S . -B build-dev $GEN -DCMAKE_BUILD_TYPE=Release -DTGEMM_BUILD_TESTS=ON -DTGEMM_GTEST_SOURCE="$PWD/.deps/googletest" \
  -DTGEMM_BUILD_PYTHON=OFF > $D/build.log 2>&1 && cmake --build build-dev -j 16 >> $D/build.log 2>&1 || { tail -30 $D/build.log; exit 1; }
T=./build-dev/tests/tgemm_gpu_tests
K=${RACE_KERNEL:-skinny_bf16_m16_ws_sk4_i64}
conc() {  # name env...
  local name=$1; shift
  timeout -s KILL 40 env TGEMM_STRESS_SECONDS=${RACE_SECONDS:-4} "$@" $T --gtest_color=no --gtest_filter=ConcurrencyGpu.EightThreads* > $D/conc_$name.log 2>&1
  echo "conc $name rc=$? failures=$(grep -c 'Failure' $D/conc_$name.log) $(grep -m1 -o 'not_close=[0-9]*' $D/conc_$name.log)"
}
conc default
conc nopdl TGEMM_SKINNY_PDL=0
conc no3d TGEMM_SKINNY_WS3=0
conc st8 TGEMM_SKINNY_WS_STAGES=8
for extra in ${RACE_EXTRA:-}; do conc "$extra" $extra; done
printf 'M,N,K,bias,dtype,outdtype,scaleAB,bpreshuffle\n1,4096,4096,False,torch.bfloat16,torch.bfloat16,False,False\n' > $D/one.csv
for tool in racecheck synccheck; do
  timeout -s KILL 60 compute-sanitizer --tool $tool --error-exitcode 9 ./build-dev/tgemm bench -i $D/one.csv --warmup 0 --iters 1 \
    --no-ceilings --kernel "$K" > $D/$tool.log 2>&1; echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $D/$tool.log | tail -1)"
done
O=$(find build-dev -name 'skinny_bf16.cu.o' | head -1)
cuobjdump -sass -fun '_ZN5tgemm6skinny16skinny_ws_kernelI13__nv_bfloat16Li16EEEvNS0_9TmaParamsE' "$O" > $D/ws_m16.sass 2>&1
grep -nE 'LDSM|SYNCS|WARPSYNC|HMMA|BAR|DEPBAR|MEMBAR|FENCE' $D/ws_m16.sass | head -80 > $D/ws_m16_order.txt
wc -l $D/ws_m16.sass
