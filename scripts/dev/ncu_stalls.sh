#!/usr/bin/env bash
# Warp stall reasons and per-instruction executed counts (Nsight Compute) of sm90 kernels, one launch each, to
# compare two variants of a kernel. One device call (carry .deps), after a build in build-dev:
#   NS_SHAPE="8192,6144,1280,True" NS_KERNELS="sm90_bf16_64x256x64_s5_c1x1_pp_i64 ..." bash scripts/dev/ncu_stalls.sh
# Writes $OUT/stalls_<kernel>.csv (raw metrics) and $OUT/src_<kernel>.csv (SASS source page).
set -uo pipefail
cd "$(dirname "$0")/../.."
FINAL=${OUT:-/tmp/tgemm_out}; mkdir -p "$FINAL"
export PATH=/usr/local/cuda/bin:$PATH
f=$(mktemp --suffix=.csv)
{ echo "M,N,K,bias,dtype,outdtype,scaleAB,bpreshuffle"; echo "$NS_SHAPE,torch.bfloat16,torch.bfloat16,False,False"; } > "$f"
# The forced kernel is the last launch of the bench (cuBLASLt, `tgemm mm`, then the forced one): profile launch 3.
for k in $NS_KERNELS; do
  args=(./build-dev/tgemm bench -i "$f" --kernel "$k" --warmup 0 --iters 1 --timing plain --no-check --no-ceilings)
  ncu --clock-control none --kernel-name-base demangled --kernel-name regex:"nvjet|gemm_kernel" --launch-skip 2 --launch-count 1 --csv \
    --metrics "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,sm__inst_executed.sum,sm__cycles_elapsed.avg,smsp__inst_executed.sum,lts__t_requests.sum,lts__t_sectors_srcunit_tex.sum,lts__t_sectors.sum" \
    "${args[@]}" > "$FINAL/stalls_$k.csv" 2> "$FINAL/stalls_$k.err"
  echo "$k stalls rc=$? $(wc -l < "$FINAL/stalls_$k.csv") lines"
  ncu --clock-control none --kernel-name-base demangled --kernel-name regex:"nvjet|gemm_kernel" --launch-skip 2 --launch-count 1 --section SourceCounters --section WarpStateStats \
    --page source --print-source sass --csv "${args[@]}" > "$FINAL/src_$k.csv" 2> "$FINAL/src_$k.err"
  echo "$k source rc=$? $(wc -l < "$FINAL/src_$k.csv") lines"
done
