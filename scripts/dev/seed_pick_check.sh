#!/usr/bin/env bash
# The seed picks of two tables side by side (run 166): the old and new picks forced, shuffled rounds, and the
# 2-way A B A B bench of the table in configs/; on the GPU machine, logs under $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
STEPS="build" bash scripts/device_run.sh >/dev/null 2>&1
K=sm90_bf16_64x256x64_s5_c1x1_pp_i32,sm90_bf16_128x128x64_s5_c1x1_pp_i32,sm90_bf16_64x256x64_s5_c1x1_pp_i64,sm90_bf16_64x256x64_s5_c2x1_pp_i64
for r in 1 2; do
  ./build-dev/tgemm bench -i shapes/seed.csv --no-ceilings --shuffle-order --kernel $K --csv $OUT/seed_picks_shuffled_r$r.csv > $OUT/seed_picks_shuffled_r$r.log 2>&1
  ./build-dev/tgemm bench -i shapes/seed.csv --csv $OUT/seed_2way_r$r.csv > $OUT/seed_2way_r$r.log 2>&1
done
python3 scripts/dev/probe_summary.py $OUT/seed_picks_shuffled_r*.csv 2>&1 | tail -12
for r in 1 2; do echo "2way r$r: $(grep 'tgemm mm' $OUT/seed_2way_r$r.csv | cut -d, -f1,8,13 | tr '\n' ' ')"; grep ceilings $OUT/seed_2way_r$r.log; done
