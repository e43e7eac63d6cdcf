#!/usr/bin/env bash
# One device call for the persistent skinny kernel (skinny_ws_kernel.cuh): build, then `tgemm bench` on
# shapes/decode.csv with forced kernels beside cuBLASLt (graph replay; A/B runs with TGEMM_SKINNY_WS3=0 and a capped
# ring; plain launches), the untuned default (an empty table), the GPU kernel tests, and optional ncu cases.
#   WS_GRAPH=k1,k2 WS_AB=k1 WS_PLAIN=k1,k2 WS_DEFAULT=1 WS_TESTS=1|first WS_NCU="1,28672,4096,False|k" WS_ENV_KERNELS=k1,k2 \
#     bash scripts/dev/skinny_ws_device.sh        (carry .deps; logs in $OUT/ws_logs.tgz)
# Shorter calls: WS_EXCLUDE=sm90 leaves backends out of the build (no embedded tables then: `tgemm mm` is the
# untuned default), WS_TARGETS="tgemm_cli tgemm_gpu_tests" builds only those, WS_SPLITAB=k1 times k1 again with
# TGEMM_SKINNY_WS_SPLIT=0 (no split of K across blocks) and with it on WS_SPLITSHAPES, WS_TG=s the graph run's time limit.
set -uo pipefail
source "$(dirname "$0")/device_logs.sh" ws_logs
GEN=""; command -v ninja >/dev/null && GEN="-G Ninja"
TGT=""; for t in ${WS_TARGETS:-}; do TGT="$TGT --target $t"; done
cmake -S . -B build-dev $GEN -DCMAKE_BUILD_TYPE=Release -DTGEMM_BUILD_TESTS=ON -DTGEMM_GTEST_SOURCE="$PWD/.deps/googletest" \
  -DTGEMM_BUILD_PYTHON=OFF "-DTGEMM_EXCLUDE_BACKENDS=${WS_EXCLUDE:-}" > $D/build.log 2>&1 &&
  cmake --build build-dev -j 16 $TGT >> $D/build.log 2>&1 || { tail -30 $D/build.log; exit 1; }
el build 0
B=./build-dev/tgemm
S=${WS_SHAPES:-shapes/decode.csv}
IT=${WS_ITERS:-15}
bench() {  # name timeout env... -- args
  local name=$1 to=$2; shift 2
  timeout -s KILL $to env "$@" --csv $D/$name.csv > $D/$name.log 2>&1; el $name $?
}
[ -n "${WS_GRAPH:-}" ] && bench graph ${WS_TG:-40} $B bench -i $S --timing graph --iters $IT --kernel "$WS_GRAPH"
[ -n "${WS_AB:-}" ] && bench graph_no3d 25 TGEMM_SKINNY_WS3=0 $B bench -i $S --no-ceilings --timing graph --iters $IT --kernel "$WS_AB"
[ -n "${WS_AB:-}" ] && bench graph_st4 25 TGEMM_SKINNY_WS_STAGES=4 $B bench -i $S --no-ceilings --timing graph --iters $IT --kernel "$WS_AB"
if [ -n "${WS_SPLITAB:-}" ]; then  # the same kernels with and without the split across blocks, on WS_SPLITSHAPES
  bench graph_split 30 $B bench -i ${WS_SPLITSHAPES:-$S} --no-ceilings --timing graph --iters $IT --kernel "$WS_SPLITAB"
  bench graph_nosplit 30 TGEMM_SKINNY_WS_SPLIT=0 $B bench -i ${WS_SPLITSHAPES:-$S} --no-ceilings --timing graph --iters $IT --kernel "$WS_SPLITAB"
fi
[ -n "${WS_PLAIN:-}" ] && bench plain ${WS_TPL:-30} $B bench -i $S --no-ceilings --timing plain --iters $IT --kernel "$WS_PLAIN"
if [ -n "${WS_DEFAULT:-}" ]; then  # the untuned default: an empty table, mm only
  bench default_graph 25 TGEMM_CONFIG=scripts/dev/skinny_empty_table.csv $B bench -i $S --timing graph --iters $IT
  bench default_plain 25 TGEMM_CONFIG=scripts/dev/skinny_empty_table.csv $B bench -i $S --no-ceilings --timing plain --iters $IT
fi
# Environment A/B: each variant of WS_ENV_VARIANTS ("A=1,B=2 A=3 -": comma-separated assignments, "-" for none) times
# WS_ENV_KERNELS, the variants alternating, WS_ENV_REPS rounds (x cuBLASLt is interleaved inside each process);
# scripts/dev/env_ab_summary.py tabulates them.
# A second set, WS_ENV2_KERNELS / WS_ENV2_SHAPES / WS_ENV2_VARIANTS, runs after it the same way (logs env2_*).
env_ab() {  # prefix kernels shapes variants
  local prefix=$1 kernels=$2 shapes=$3 variants=$4
  for rep in $(seq 1 ${WS_ENV_REPS:-2}); do
    for v in $variants; do
      vars=""; [ "$v" != - ] && vars=${v//,/ }
      bench "${prefix}_${WS_ENV_MODE:-graph}_$(echo "$v" | sed 's/TGEMM_SKINNY_//g; s/TGEMM_//g' | tr -c 'A-Za-z0-9\n' _)_r$rep" ${WS_TP:-30} $vars \
        $B bench -i $shapes --no-ceilings --no-check --timing ${WS_ENV_MODE:-graph} --iters $IT --kernel "$kernels"
    done
  done
}
# WS_TESTS=1: the GPU tests after the timings; WS_TESTS=first: before them.
gpu_tests() {
  timeout -s KILL ${WS_T0:-70} env ${WS_TEST_ENV:-} ./build-dev/tests/tgemm_gpu_tests --gtest_color=no ${WS_GTEST:---gtest_filter=Kernels.*} > $D/gpu_tests.log 2>&1
  el tests $?
  grep -E "^\[  (PASSED|FAILED) |^\[  FAILED  \]|Failure|checked" $D/gpu_tests.log | head -20
}
[ "${WS_TESTS:-}" = first ] && gpu_tests
[ -n "${WS_ENV_KERNELS:-}" ] && env_ab env "$WS_ENV_KERNELS" $S "${WS_ENV_VARIANTS:--}"
[ -n "${WS_ENV2_KERNELS:-}" ] && env_ab env2 "$WS_ENV2_KERNELS" ${WS_ENV2_SHAPES:-$S} "${WS_ENV2_VARIANTS:--}"
[ -n "${WS_TESTS:-}" ] && [ "${WS_TESTS}" != first ] && gpu_tests
if [ -n "${WS_NCU:-}" ]; then
  NCU_CASES="$WS_NCU" timeout -s KILL ${WS_T3:-30} bash scripts/dev/ncu_profile.sh build-dev $D; el ncu $?
fi
grep -hE "ceilings|FAILED|not close|error" $D/*.log | head -8
