#!/usr/bin/env bash
# The interleave order's effect on the timings (docs/benchmarks.md runs 163-164), on the GPU machine after a build
# (device_run.sh leaves build-dev): (1) one kernel registered three times (rows twins that never split) timed beside
# the pick and cuBLASLt, in the fixed and the shuffled order; (2) the seed shapes' 2-way bench, fixed A B A B against
# shuffled rounds, alternating processes. Logs under $1.
#   bash scripts/dev/order_ab.sh "$OUT"
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:?output folder}; mkdir -p "$out"
A=sm90_bf16_64x256x64_s5_c1x1_pp_i32; B=sm90_bf16_128x128x64_s5_c1x1_pp_i32
K="$A,${A}_rows4000000,${A}_rows5000000,$B,${B}_rows4000000"
for order in fixed shuffled; do
  arg=""; [ $order = shuffled ] && arg=--shuffle-order
  for r in 1 2; do
    TGEMM_SM90_ROWS_TWINS=4000000:5000000 ./build-dev/tgemm bench -i scripts/dev/order_twin_shapes.csv --no-ceilings \
      --kernel "$K" $arg --csv "$out/probe_${order}_r$r.csv" > "$out/probe_${order}_r$r.log" 2>&1
  done
done
python3 scripts/dev/probe_summary.py "$out"/probe_*_r*.csv | tee "$out/probe_summary.txt"
for r in 1 2; do
  for order in fixed shuffled; do
    arg=""; [ $order = shuffled ] && arg=--shuffle-order
    ./build-dev/tgemm bench -i shapes/seed.csv --no-ceilings $arg --csv "$out/seed_${order}_r$r.csv" > "$out/seed_${order}_r$r.log" 2>&1
    echo "seed $order r$r: $(grep -E '^(340000|360000|768000|8192),' "$out/seed_${order}_r$r.csv" | grep 'tgemm mm' | cut -d, -f1,13 | tr '\n' ' ')"
  done
done | tee "$out/seed_order.txt"
