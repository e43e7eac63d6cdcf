#!/usr/bin/env bash
# Where a kernel's SMs idle within one launch (run on the GPU machine after the build, e.g. device_run.sh with
# STEPS=" "): ncu's per-SM active and elapsed cycles (min / avg / max over the SMs) of cuBLASLt, the table's pick and
# a forced kernel at M x 6144 x 1280 with bias, with the card's clocks and at base clocks.
#   bash scripts/dev/ncu_idle_probe.sh 340000 sm90_bf16_128x192x64_s4_c1x1_pp_i64
# Run 414: every SM of the pick active for the same cycles while their elapsed cycles differ by 1.6% (data/run413_415).
set -uo pipefail
M="sm__cycles_active.min,sm__cycles_active.max,sm__cycles_active.avg,sm__cycles_elapsed.max,sm__cycles_elapsed.min,sm__cycles_elapsed.avg,gpc__cycles_elapsed.max,sys__cycles_elapsed.max,gpu__time_duration.sum,smsp__cycles_active.avg,sm__throughput.avg.pct_of_peak_sustained_elapsed"
f=/tmp/s.csv; { echo "M,N,K,bias,dtype,outdtype,scaleAB,bpreshuffle"; echo "$1,6144,1280,True,torch.bfloat16,torch.bfloat16,False,False"; } > $f
for cc in none base; do echo "### clock-control $cc M=$1"
ncu --clock-control $cc --kernel-name-base demangled --kernel-name regex:"sm90|nvjet|gemm_kernel" --launch-count 3 --metrics $M \
  ./build-dev/tgemm bench -i $f --kernel $2 --warmup 0 --iters 1 --timing plain --no-check --no-ceilings 2>&1 | grep -E "^  [a-zA-Z_].*\(|__" | sed 's/(.*Context.*//'
done
