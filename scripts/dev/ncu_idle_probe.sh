#!/usr/bin/env bash
# Where a kernel's SMs idle within one launch (run on the GPU machine after the build, e.g. device_run.sh with
# STEPS=" "): ncu's per-SM active and elapsed cycles (min / avg / max over the SMs) of cuBLASLt, the table's pick and
# a forced kernel at M x 6144 x 1280 with bias, with the card's clocks and at base clocks (ncu_profile.sh's cases).
#   bash scripts/dev/ncu_idle_probe.sh 340000 sm90_bf16_128x192x64_s4_c1x1_pp_i64 [LOGDIR]
# Run 414: every SM of the pick active for the same cycles while their elapsed cycles differ by 1.6% (data/run413_415;
# runs 414-415 ran its first version, the same metrics through its own ncu call, before it reused ncu_profile.sh).
set -uo pipefail
cd "$(dirname "$0")/../.."
D=${3:-/tmp/ncu_idle}
M="sm__cycles_active.min,sm__cycles_active.max,sm__cycles_active.avg,sm__cycles_elapsed.max,sm__cycles_elapsed.min,sm__cycles_elapsed.avg,gpc__cycles_elapsed.max,sys__cycles_elapsed.max,gpu__time_duration.sum,smsp__cycles_active.avg,sm__throughput.avg.pct_of_peak_sustained_elapsed"
for cc in none base; do
  echo "### clock-control $cc M=$1"
  mkdir -p "$D/$cc"
  NCU_CLOCK=$cc NCU_SECTIONS="--metrics $M" NCU_CASES="$1,6144,1280,True|$2" bash scripts/dev/ncu_profile.sh build-dev "$D/$cc" > /dev/null
  grep -hE "^  [a-zA-Z_].*\(|__" "$D/$cc"/ncu_*.txt | sed 's/(.*Context.*//'
done
