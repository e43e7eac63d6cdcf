#!/usr/bin/env bash
# The test command: set-up, build everything (CUDA included), run every test. GPU tests skip, saying so,
# where no CUDA device exists.  Usage: bash scripts/test.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
BUILD=${1:-build}
JOBS=${JOBS:-$(nproc)}
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DTGEMM_BUILD_TESTS=ON -DTGEMM_BUILD_PYTHON=ON
cmake --build "$BUILD" -j "$JOBS"
(cd "$BUILD" && ctest --output-on-failure --timeout 1800 -j "$JOBS")

# Reliability (issue 8), CPU only, each in its own build dir (TGEMM_RELIABILITY=0 skips it). sm90, the backend with
# the long CUDA compile, is left out: these builds check the host code (dispatcher, plan cache, untuned log, tables,
# split, validation, the skinny backend's host side, the CLI's parser), not the kernels.
if [ "${TGEMM_RELIABILITY:-1}" = 1 ]; then
  # 1. The CPU tests, the CLI tests and the fuzz corpus replays under ASan+UBSan, then under TSan.
  #    protect_shadow_gap=0: where a GPU exists, the CUDA driver maps memory in ASan's shadow gap.
  export ASAN_OPTIONS="protect_shadow_gap=0:detect_leaks=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
  export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1"
  for san in address thread; do
    t0=$(date +%s)
    SBUILD="$BUILD-$san"
    cmake -S . -B "$SBUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTGEMM_BUILD_TESTS=ON -DTGEMM_BUILD_PYTHON=OFF \
      -DTGEMM_SANITIZE="$san" -DTGEMM_EXCLUDE_BACKENDS="sm90" >/dev/null
    cmake --build "$SBUILD" -j "$JOBS" --target tgemm_cpu_tests tgemm_cli fuzz_table_replay fuzz_shapes_replay fuzz_cli_replay
    # Not here: the install check (slow, and the export would carry -fsanitize), the host-overhead timing (not
    # built, and sanitizers slow it by design), and the forced-sm90 explain (sm90 is left out of these builds).
    (cd "$SBUILD" && ctest -L cpu -E '^(install_consumer|host_overhead|cli_explain_forced_i32_split|cli_explain_sm90_twin_.*)$' --output-on-failure --timeout 600 -j "$JOBS")
    echo "test.sh: $san sanitizer build and CPU tests: $(($(date +%s) - t0)) s"
  done
  # 2. libFuzzer on the table loader, the shapes reader and the argument parser, FUZZ_SECONDS (default 60) each.
  t0=$(date +%s)
  TGEMM_FUZZ=1 bash fuzz/run.sh "$BUILD-fuzz"
  echo "test.sh: fuzzing: $(($(date +%s) - t0)) s"
fi
