#!/usr/bin/env bash
# One device call that A/B-times a compile-time switch: two builds of tgemm_cli (A: as is; B: with AB_FLAGS added to
# the CUDA and the C++ flags, so that host and device agree on constants such as TGEMM_RS_GROUPS), then `tgemm bench`
# with the same forced kernels from each build in turn (AB_REPS rounds, A first, each process interleaving its kernels
# with cuBLASLt, so x cuBLASLt compares across the builds), and optional ncu cases (M,N,K,bias|kernel) from each
# build. Logs in $OUT/ab_logs.tgz.
#   AB_FLAGS="-DTGEMM_MBAR_SUSPEND_NS=10000000" AB_SHAPES=a.csv AB_KERNELS=k1,k2 [AB_SHAPES2=b.csv AB_KERNELS2=k3] \
#     [AB_NCU="8192,6144,1280,True|k1"] [AB_TESTS="--gtest_filter=Kernels.*" AB_TEST_BUILDS="a b"] bash scripts/dev/build_ab_device.sh
#   (carry .deps); AB_TIMING="graph plain" times each set in both launch modes (default graph; plain into <set>_plain_*)
# AB_A_SRC=dir builds A from another source tree (e.g. `git archive HEAD` unpacked, untracked, so that the device copy
# has it): the committed code against a working tree's change. AB_C=1 adds a third build C (the working tree with
# AB_C_FLAGS, default none), benched and tested beside A and B.
set -uo pipefail
source "$(dirname "$0")/device_logs.sh" ab_logs
GEN=""; command -v ninja >/dev/null && GEN="-G Ninja"
TGT="--target tgemm_cli"; [ -n "${AB_TESTS:-}" ] && TGT="$TGT --target tgemm_gpu_tests"
VS="a b"; [ "${AB_C:-0}" = 1 ] && VS="a b c"
for v in $VS; do
  flags=""; src=.
  case $v in a) src=${AB_A_SRC:-.} ;; b) flags="${AB_FLAGS:-}" ;; c) flags="${AB_C_FLAGS:-}" ;; esac
  cmake -S $src -B build-ab-$v $GEN -DCMAKE_BUILD_TYPE=Release -DTGEMM_BUILD_TESTS=ON -DTGEMM_GTEST_SOURCE="$PWD/.deps/googletest" \
    -DTGEMM_BUILD_PYTHON=OFF "-DCMAKE_CUDA_FLAGS=$flags" "-DCMAKE_CXX_FLAGS=$flags" > $D/build_$v.log 2>&1 &&
    cmake --build build-ab-$v -j 16 $TGT >> $D/build_$v.log 2>&1 || { tail -30 $D/build_$v.log; exit 1; }
  el build_$v 0
done
if [ -n "${AB_TESTS:-}" ]; then
  for v in ${AB_TEST_BUILDS:-a b}; do
    timeout -s KILL ${AB_T0:-90} ./build-ab-$v/tests/tgemm_gpu_tests --gtest_color=no $AB_TESTS > $D/gpu_tests_$v.log 2>&1; el tests_$v $?
    grep -E "^\[  (PASSED|FAILED) |^\[  FAILED  \]|checked" $D/gpu_tests_$v.log | head -8
  done
fi
run() {  # tag shapes kernels
  for r in $(seq 1 ${AB_REPS:-2}); do
    for t in ${AB_TIMING:-graph}; do
      local g=$1; [ "$t" = graph ] || g=$1_$t
      for v in $VS; do
        timeout -s KILL ${AB_TP:-120} ./build-ab-$v/tgemm bench -i $2 --no-ceilings --no-check --timing $t --iters ${AB_ITERS:-15} \
          --kernel "$3" --csv $D/${g}_${v}_r$r.csv > $D/${g}_${v}_r$r.log 2>&1; el ${g}_${v}_r$r $?
      done
    done
  done
}
[ -n "${AB_KERNELS:-}" ] && run set1 "$AB_SHAPES" "$AB_KERNELS"
[ -n "${AB_KERNELS2:-}" ] && run set2 "$AB_SHAPES2" "$AB_KERNELS2"
for v in $VS; do
  [ -n "${AB_NCU:-}" ] && { NCU_CASES="$AB_NCU" NCU_SECTIONS_EXTRA="--section InstructionStats" timeout -s KILL ${AB_T3:-60} \
    bash scripts/dev/ncu_profile.sh build-ab-$v $D > $D/ncu_run_$v.out 2>&1; el ncu_$v $?
    for f in $D/ncu_*x*.txt; do [ -f "$f" ] && mv "$f" "${f%.txt}_$v.log"; done; }
done
exit 0
