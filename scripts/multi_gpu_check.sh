#!/usr/bin/env bash
# Issue 9 on a machine with two GPUs (docs/multi_gpu.md):
#  1. tune: `tgemm tune` over a fixed list of 38 shapes (shapes/seed.csv, plus shapes/models.csv at M = 1, 2048 and
#     65536), once with --gpus 0 and once with --gpus 0,1, the same --warmup/--iters; both timed; then
#     scripts/compare_tables.py: the same winner per shape, or winners within 3% (noise), and the speed-up;
#  2. example: examples/vit_multi_gpu.py (full size): the ViT encoder tensor parallel and data parallel over NCCL;
#  (3. pytest, when named in STEPS: tests/python/test_multi_gpu.py, the example with --quick.)
#
#   bash scripts/multi_gpu_check.sh [BUILD_DIR]     BUILD_DIR (default build-dev) holds ./tgemm and, for the example,
#                                                   python/tgemm (configured with -DTGEMM_BUILD_PYTHON=ON)
#   STEPS="tune example [pytest]"  WARMUP=10 ITERS=50  GPUS=0,1  EXAMPLE_ARGS="--log-plans"  OUT=/tmp/mgpu_out
#
# $OUT gets summary.txt, compare.txt, vit_multi_gpu.log, the two tables and logs.tgz (shapes, profiles, tune logs,
# nvidia-smi topology). Exit status 0 when every step passed. NVLink multicast stays off (never use it there).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1
BUILD=${1:-build-dev}
OUT=${OUT:-/tmp/mgpu_out}
STEPS=${STEPS:-"tune example"}
WARMUP=${WARMUP:-10}
ITERS=${ITERS:-50}
GPUS=${GPUS:-0,1}
EXAMPLE_ARGS=${EXAMPLE_ARGS:---log-plans}
FIRST_GPU=${GPUS%%,*}
case $BUILD in /*) BUILD_ABS=$BUILD ;; *) BUILD_ABS=$PWD/$BUILD ;; esac
mkdir -p "$OUT"
: > "$OUT/summary.txt"
WORK=$(mktemp -d /tmp/mgpu_work.XXXXXX)
trap 'tar czf "$OUT/logs.tgz" -C "$WORK" . 2>/dev/null; rm -rf "$WORK"' EXIT
log() { echo "== $*" | tee -a "$OUT/summary.txt"; }
seconds() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
failed=0

nvidia-smi --query-gpu=index,name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv | tee "$WORK/gpus.txt"
nvidia-smi topo -m > "$WORK/topo.txt" 2>&1 && { echo "GPU links (nvidia-smi topo -m):"; cat "$WORK/topo.txt"; } | tee -a "$OUT/summary.txt"
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
if [ "$ngpu" -lt 2 ]; then
  log "needs 2 GPUs, this machine has $ngpu"
  exit 2
fi
log "build dir $BUILD; steps: $STEPS; NCCL_NVLS_ENABLE=$NCCL_NVLS_ENABLE TORCH_SYMM_MEM_DISABLE_MULTICAST=$TORCH_SYMM_MEM_DISABLE_MULTICAST NVSHMEM_DISABLE_NVLS=$NVSHMEM_DISABLE_NVLS"

for step in $STEPS; do
  case $step in
    tune)
      if [ ! -x "$BUILD/tgemm" ]; then
        log "tune: $BUILD/tgemm is missing (build first: cmake --build $BUILD)"; failed=1; continue
      fi
      # The shapes: the seed's (M = 340000, 360000, 768000, 8192), and every layer of shapes/models.csv at M = 1
      # (decode), 2048 (prefill) and 65536 (vision encoders).
      { cat shapes/seed.csv; awk -F, 'NR > 1 && ($1 == 1 || $1 == 2048 || $1 == 65536)' shapes/models.csv; } > "$WORK/shapes.csv"
      log "tune: $(( $(wc -l < "$WORK/shapes.csv") - 1 )) shapes, --warmup $WARMUP --iters $ITERS; first --gpus $FIRST_GPU, then --gpus $GPUS"
      declare -A took rcs
      for run in one two; do
        gpus=$FIRST_GPU; [ $run = two ] && gpus=$GPUS
        rm -f "$WORK/tune_$run.csv" "$WORK/profile_$run.csv"
        t0=$(date +%s.%N)
        "$BUILD/tgemm" tune -i "$WORK/shapes.csv" -o "$WORK/tune_$run.csv" --profile-file "$WORK/profile_$run.csv" \
          --gpus "$gpus" --warmup "$WARMUP" --iters "$ITERS" > "$WORK/tune_$run.log" 2> "$WORK/tune_$run.err"
        rcs[$run]=$?
        took[$run]=$(seconds "$t0" "$(date +%s.%N)")
        tail -n 2 "$WORK/tune_$run.log"
        tail -c 400 "$WORK/tune_$run.err" | tr '\r' '\n' | grep -v '^\[' | grep -v '^ *$' | tail -n 5
        log "tune --gpus $gpus: rc=${rcs[$run]} in ${took[$run]} s"
        cp "$WORK/tune_$run.csv" "$OUT/tune_gpus_${gpus//,/_}.csv" 2>/dev/null
      done
      python3 scripts/compare_tables.py "$WORK/tune_one.csv" "$WORK/tune_two.csv" \
        --profile1 "$WORK/profile_one.csv" --profile2 "$WORK/profile_two.csv" --shapes "$WORK/shapes.csv" \
        --gpus2 "$GPUS" --time1 "${took[one]}" --time2 "${took[two]}" --progress1 "$WORK/tune_one.err" \
        --label1 "GPU $FIRST_GPU" --label2 "GPUs $GPUS" | tee "$OUT/compare.txt"
      rc=${PIPESTATUS[0]}
      [ "${rcs[one]}" -eq 0 ] && [ "${rcs[two]}" -eq 0 ] || rc=1
      log "$(grep -E '^tune time:' "$OUT/compare.txt")"
      log "$(grep -E '^VERDICT:' "$OUT/compare.txt")"
      log "tune step rc=$rc"
      [ "$rc" -eq 0 ] || failed=1
      ;;
    example)
      if ! ls "$BUILD"/python/tgemm/_tgemm*.so > /dev/null 2>&1; then
        log "example: $BUILD/python/tgemm has no built module: configure with -DTGEMM_BUILD_PYTHON=ON and build"
        failed=1; continue
      fi
      t0=$(date +%s.%N)
      # shellcheck disable=SC2086
      PYTHONPATH="$BUILD_ABS/python${PYTHONPATH:+:$PYTHONPATH}" python3 examples/vit_multi_gpu.py $EXAMPLE_ARGS \
        2>&1 | tee "$OUT/vit_multi_gpu.log"
      rc=${PIPESTATUS[0]}
      log "example (examples/vit_multi_gpu.py $EXAMPLE_ARGS): rc=$rc in $(seconds "$t0" "$(date +%s.%N)") s"
      grep -E '^(RESULT|1 GPU |tensor parallel |data parallel )' "$OUT/vit_multi_gpu.log" | tee -a "$OUT/summary.txt"
      [ "$rc" -eq 0 ] || failed=1
      ;;
    pytest)  # the multi-GPU test (the example with --quick), as CI-style pytest would run it
      t0=$(date +%s.%N)
      PYTHONPATH="$BUILD_ABS/python${PYTHONPATH:+:$PYTHONPATH}" python3 -m pytest -q -p no:cacheprovider -m gpu \
        tests/python/test_multi_gpu.py -rs > "$WORK/pytest_multi_gpu.log" 2>&1
      rc=$?
      tail -n 5 "$WORK/pytest_multi_gpu.log"
      log "pytest tests/python/test_multi_gpu.py: rc=$rc in $(seconds "$t0" "$(date +%s.%N)") s: $(tail -n 1 "$WORK/pytest_multi_gpu.log")"
      [ "$rc" -eq 0 ] || failed=1
      ;;
    *) log "unknown step $step"; failed=1 ;;
  esac
done
log "multi_gpu_check: $([ $failed -eq 0 ] && echo PASS || echo FAIL)"
exit $failed
