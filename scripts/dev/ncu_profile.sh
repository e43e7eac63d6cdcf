#!/usr/bin/env bash
# Nsight Compute profiles of tgemm kernels beside cuBLASLt's, one shape at a time: each case runs `tgemm bench`
# once (no warm-up, one plain launch per candidate, no reference check), so ncu sees cuBLASLt, the table's pick
# and the forced kernel. Run on the GPU machine after the build (device_run.sh's `ncu` step):
#   NCU_CASES="8192,6144,1280,True|sm90_bf16_64x256x64_s5_c2x1_pp_i32 ..." bash scripts/dev/ncu_profile.sh build-dev LOGDIR
# A case is "M,N,K,bias|kernel" (bf16 in and out). NCU_CLOCK: ncu's --clock-control (default none, the card's own
# clocks as in the benchmarks; base locks them).
set -uo pipefail
BUILD=${1:-build-dev}; LOG=${2:-/tmp/tgemm_logs}
# NCU_SECTIONS replaces the default set (fewer replay passes: each saves and restores every buffer the kernel writes).
SECTIONS="${NCU_SECTIONS:---section SpeedOfLight --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section LaunchStats --section Occupancy} ${NCU_SECTIONS_EXTRA:-}"
rc=0
for c in ${NCU_CASES:-}; do
  shape=${c%%|*}; kernel=${c#*|}
  f=$(mktemp --suffix=.csv)
  { echo "M,N,K,bias,dtype,outdtype,scaleAB,bpreshuffle"; echo "$shape,torch.bfloat16,torch.bfloat16,False,False"; } > "$f"
  name="ncu_${shape//,/x}_${kernel}.txt"
  # --clock-control none: the card's own clocks, as in the benchmarks (H200.md). The regex skips operand set-up.
  ncu --clock-control ${NCU_CLOCK:-none} --kernel-name-base demangled --kernel-name regex:"sm90|skinny|nvjet|xmma|gemv|cutlass|splitK|reduce" \
      --launch-count 6 $SECTIONS \
      "$BUILD/tgemm" bench -i "$f" --kernel "$kernel" --warmup 0 --iters 1 --timing plain --no-check --no-ceilings \
      > "$LOG/$name" 2>&1; r=$?; rc=$((rc|r))
  echo "ncu $shape $kernel rc=$r: $(grep -cE '^  [^ ].*\(' "$LOG/$name") kernels profiled"
done
exit $rc
