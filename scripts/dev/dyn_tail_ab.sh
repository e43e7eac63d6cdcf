#!/usr/bin/env bash
# The sm90 dynamic tail (scripts/dev/patches/sm90_dyn_tail.patch, applied first; TGEMM_SM90_DYN_TWINS) on the GPU
# machine, one call: build, the twins against
# the reference (Kernels.EveryKernelMatchesReference), then each seed pick beside its _dyn<R> twins, interleaved in
# one process (plain launches and graph replay), logs under $OUT.
#   DYN_ROUNDS="8 32 1000" DYN_KERNELS="a b" DYN_SHAPES=shapes/seed.csv bash scripts/dev/dyn_tail_ab.sh   (carry .deps)
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/dyn_out}; mkdir -p "$OUT"
ROUNDS=${DYN_ROUNDS:-"8 32 1000"}
KERNELS=${DYN_KERNELS:-"sm90_bf16_128x192x64_s4_c1x1_pp_i64"}
export TGEMM_SM90_DYN_TWINS=$(echo $ROUNDS | tr ' ' ',')
STEPS=" " bash scripts/device_run.sh > "$OUT/build.txt" 2>&1; tail -1 /tmp/tgemm_logs/summary.txt
timeout ${DYN_TEST_TIMEOUT:-240} ./build-dev/tests/tgemm_gpu_tests --gtest_color=no --gtest_filter=Kernels.EveryKernelMatchesReference \
  > "$OUT/gpu_test_dyn.log" 2>&1; echo "dyn twins vs reference rc=$?: $(grep -E 'checked|PASSED|FAILED' "$OUT/gpu_test_dyn.log" | tr '\n' ' ')"
list=""
for k in $KERNELS; do list="$list,$k"; for r in $ROUNDS; do list="$list,${k}_dyn$r"; done; done
list=${list#,}
for t in ${DYN_TIMING:-plain graph}; do
  ./build-dev/tgemm bench -i ${DYN_SHAPES:-shapes/seed.csv} --kernel "$list" --timing $t --shuffle-order --no-ceilings \
    --iters ${DYN_ITERS:-20} > "$OUT/ab_$t.log" 2>&1
  echo "== $t"; grep -E "\| " "$OUT/ab_$t.log" | sed -E 's/ +/ /g' | cut -c1-150 | head -40
done
