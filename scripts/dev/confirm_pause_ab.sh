#!/usr/bin/env bash
# Does a pause before the tuner's confirm round make its picks hold in the 2-way bench (session 19's finding: the
# tune's final round runs 8-12% slower than the bench at M >= 512, at the power cap)? On the GPU machine after a
# build (device_run.sh leaves build-dev): the shapes of $SHAPES re-tuned into copies of the shipped table with
# --confirm-pause-ms $PAUSE (arm "pause") and without (arm "nopause"), then the two tables and the shipped one benched
# 2-way on those shapes, $REPS rounds in rotating order (each in its own process). Logs under $1.
#   bash scripts/dev/confirm_pause_ab.sh "$OUT/ab"
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:?output folder}; mkdir -p "$out"
SHAPES=${SHAPES:-scripts/dev/confirm_pause_shapes.csv}
PAUSE=${PAUSE:-200}
cp configs/sm90_132_bf16.csv "$out/shipped.csv"
for arm in pause nopause; do
  t0=$(date +%s)
  cp configs/sm90_132_bf16.csv "$out/$arm.csv"
  arg=""; [ $arm = pause ] && arg="--confirm-pause-ms $PAUSE"
  ./build-dev/tgemm tune -i "$SHAPES" -o "$out/$arm.csv" --retune --profile-file "$out/${arm}_profile.csv" $arg \
    > "$out/tune_$arm.log" 2> "$out/tune_$arm.err"
  echo "tune $arm rc=$? in $(( $(date +%s) - t0 )) s: $(tail -1 "$out/tune_$arm.log")"
done
order=(pause nopause shipped)
for r in $(seq 1 ${REPS:-3}); do
  for i in 0 1 2; do
    arm=${order[$(( (i + r - 1) % 3 ))]}
    TGEMM_CONFIG="$out/$arm.csv" ./build-dev/tgemm bench -i "$SHAPES" --no-ceilings --csv "$out/bench_${arm}_r$r.csv" \
      > "$out/bench_${arm}_r$r.log" 2>&1
    echo "bench $arm r$r rc=$?: $(tail -2 "$out/bench_${arm}_r$r.log" | head -1)"
  done
done
