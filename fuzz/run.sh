#!/usr/bin/env bash
# Builds the fuzz targets with clang (libFuzzer + ASan + UBSan, host sources only: no CUDA compile) and runs
# each for a bounded time, all at once; fails on any crash, leak, sanitizer report, broken property
# (FUZZ_CHECK) or slow input. Then replays the corpus and regression inputs (ctest in the build dir).
#
#   bash fuzz/run.sh [build-dir]        (default build-fuzz)
#   FUZZ_SECONDS=60                     seconds per target
#   FUZZ_TARGETS="table shapes cli"     which targets
#   FUZZ_CXX=clang++                    the compiler (needs libFuzzer: Debian's clang + libclang-rt-dev)
#
# New inputs libFuzzer finds go to <build-dir>/work/<target>/, never into fuzz/corpus/. A crash leaves its input in
# <build-dir>/artifacts/; fix the bug, then keep the input as fuzz/regressions/<target>/<name> (replayed by ctest).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=${1:-build-fuzz}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
SECS=${FUZZ_SECONDS:-60}
TARGETS=${FUZZ_TARGETS:-table shapes cli}
CXX_FUZZ=${FUZZ_CXX:-clang++}

have_libfuzzer() {
  command -v "$CXX_FUZZ" >/dev/null || return 1
  local tmp
  tmp=$(mktemp -d)
  printf '#include <cstdint>\n#include <cstddef>\nextern "C" int LLVMFuzzerTestOneInput(const uint8_t*, size_t) { return 0; }\n' >"$tmp/t.cpp"
  "$CXX_FUZZ" -fsanitize=fuzzer,address,undefined "$tmp/t.cpp" -o "$tmp/t" >/dev/null 2>&1
  local rc=$?
  rm -rf "$tmp"
  return $rc
}
if ! have_libfuzzer; then
  echo "fuzz: $CXX_FUZZ with libFuzzer not found; installing clang (scripts/setup.sh, TGEMM_FUZZ=1)"
  TGEMM_FUZZ=1 bash scripts/setup.sh
  have_libfuzzer || { echo "fuzz: FAILED: no clang++ with -fsanitize=fuzzer" >&2; exit 1; }
fi

t0=$(date +%s)
mkdir -p "$BUILD"
cmake -S fuzz -B "$BUILD" -DCMAKE_CXX_COMPILER="$CXX_FUZZ" -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$BUILD/configure.log" 2>&1 ||
  { cat "$BUILD/configure.log"; exit 1; }
cmake --build "$BUILD" -j "${JOBS:-$(nproc)}"
t1=$(date +%s)
echo "fuzz: built in $((t1 - t0)) s"

# libFuzzer flags: per-input timeout (a hang counts as a failure), memory cap, inputs up to 4 KiB while mutating
# (the corpus' larger files still seed it and are replayed whole below).
pids=()
for t in $TARGETS; do
  mkdir -p "$BUILD/work/$t" "$BUILD/artifacts"
  inputs=("$BUILD/work/$t" "$ROOT/fuzz/corpus/$t")
  [ -d "$ROOT/fuzz/regressions/$t" ] && inputs+=("$ROOT/fuzz/regressions/$t")
  # A watchdog above libFuzzer's own -max_total_time, in case the process itself wedges.
  timeout --signal=KILL $((SECS + 300)) "$BUILD/fuzz_$t" -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
    -print_final_stats=1 -dict="$ROOT/fuzz/$t.dict" -artifact_prefix="$BUILD/artifacts/$t-" "${inputs[@]}" \
    >"$BUILD/fuzz_$t.log" 2>&1 &
  pids+=($!)
done
fail=0
i=0
for t in $TARGETS; do
  if wait "${pids[$i]}"; then
    runs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$BUILD/fuzz_$t.log" | awk '{print $2}')
    cov=$(grep -o 'DONE *cov: [0-9]*' "$BUILD/fuzz_$t.log" | awk '{print $3}')
    echo "fuzz: $t: ok, ${runs:-?} inputs in ${SECS} s, coverage ${cov:-?} edges"
  else
    fail=1
    echo "fuzz: $t: FAILED (log $BUILD/fuzz_$t.log)"
    grep -E 'FUZZ_CHECK|ERROR|runtime error|SUMMARY|Test unit written' "$BUILD/fuzz_$t.log" | head -20 || true
  fi
  i=$((i + 1))
done
if [ $fail != 0 ]; then
  echo "fuzz: crashing inputs are in $BUILD/artifacts/: fix the bug, then add the input under fuzz/regressions/<target>/" >&2
  ls -l "$BUILD/artifacts/" >&2 || true
  exit 1
fi

# Every corpus and regression input once more, through the ASan+UBSan replay executables.
(cd "$BUILD" && ctest --output-on-failure)
echo "fuzz: total $(($(date +%s) - t0)) s"
