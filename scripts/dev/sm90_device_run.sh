#!/usr/bin/env bash
# One device call of the sm90 harness: correctness of every configuration first, then the timings, each mode
# under its own timeout and all of them under one deadline (DEADLINE seconds from the start, default 140). A kernel
# that hangs or fails in `test` is left out of the timing modes (TGEMM_SM90_SKIP), so it cannot take them down.
# Logs go to $OUT. Run from the repository root.
#   MODES="test gtest few models seed clocks idx demo" (default: test gtest few models seed)
#   gtest: the library's Kernels.* GPU tests from a binary built on the CPU machine and carried in
#          scripts/dev/bin/gt (tgemm_gpu_tests + libtgemm.so*), so the call needs no build.
set -u
B=scripts/dev/bin/sm90_harness
OUT=${OUT:-/tmp/sm90_out}
MODES=${MODES:-"test gtest few models seed"}
END=$(( $(date +%s) + ${DEADLINE:-140} ))
mkdir -p "$OUT"
left() { local l=$(( END - $(date +%s) )); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader
SKIP=""
for m in $MODES; do
  t0=$(date +%s)
  case $m in
    test)
      timeout "$(left 60)" $B test > "$OUT/test.log" 2>&1
      echo "test rc=$? $(grep -E '^test:' "$OUT/test.log")"
      grep -E ' FAIL$|run failed|^HANG|not bit-identical' "$OUT/test.log" | head -20
      # kernels that hang, fail to run or are not deterministic leave the timing modes; tolerance FAILs are reported
      # above (the timing modes check every output against cuBLASLt's anyway)
      SKIP=$(grep -E 'run failed|^HANG|not bit-identical' "$OUT/test.log" | awk '{print $1}' | sed -E 's/^HANG: //; s/_i(32|64)(\/s[0-9]+)?$//' | sort -u | paste -sd, -)
      export TGEMM_SM90_SKIP="$SKIP"; echo "skip: $SKIP" ;;
    gtest)
      LD_LIBRARY_PATH=scripts/dev/bin/gt timeout "$(left 45)" scripts/dev/bin/gt/tgemm_gpu_tests --gtest_color=no \
        --gtest_filter='Kernels.*' > "$OUT/gtest.log" 2>&1
      echo "gtest rc=$?"; grep -E "^\[  (PASSED|FAILED) |Failure|checked|OK \]" "$OUT/gtest.log" | head -20 ;;
    few) timeout "$(left 50)" $B few > "$OUT/few.log" 2>&1; echo "few rc=$?" ;;
    models) timeout "$(left 100)" $B models shapes/models.csv "$OUT/models_rows.csv" > "$OUT/models.log" 2>&1
            echo "models rc=$?"; grep -E '^models|median' "$OUT/models.log" ;;
    seed) timeout "$(left 50)" $B seed > "$OUT/seed.log" 2>&1; echo "seed rc=$?"
          grep -E '^ceiling|^seed|^fp16' "$OUT/seed.log" ;;
    clocks) timeout "$(left 60)" $B clocks > "$OUT/clocks.log" 2>&1; echo "clocks rc=$?"; cat "$OUT/clocks.log" ;;
    idx) timeout "$(left 25)" $B idx > "$OUT/idx.log" 2>&1; echo "idx rc=$?" ;;
    demo) timeout "$(left 25)" $B demo > "$OUT/demo.log" 2>&1; echo "demo rc=$?"; grep -E 'demo:' "$OUT/demo.log" ;;
  esac
  echo "== $m $(( $(date +%s) - t0 )) s"
done
