#!/usr/bin/env bash
# The sm90 stream-K tail at short K: the split-K kernels with the tail forced (TGEMM_SM90_TAIL_MIN_KSTEPS=0) and off
# (-1), beside their unsplit twins in each process (graph replay, 2 rounds), then one launch of each under Nsight
# Compute for the kernel's own duration (no graph, no memset node). After a build in build-dev; carry .deps.
#   TP_SHAPES=scripts/dev/tail_probe_shapes.csv bash scripts/dev/tail_probe.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
FINAL=${OUT:-/tmp/tgemm_out}; mkdir -p "$FINAL"
export PATH=/usr/local/cuda/bin:$PATH
S=${TP_SHAPES:-scripts/dev/tail_probe_shapes.csv}
P64=sm90_bf16_64x256x64_s5_c1x1_pp; E128=sm90_bf16_128x128x64_s5_c1x1_etma_pp
K=${P64}_i64,${P64}_skauto_i64,${E128}_i64,${E128}_skauto_i64
for r in 1 2; do
  for t in -1 0; do
    TGEMM_SM90_TAIL_MIN_KSTEPS=$t timeout 120 ./build-dev/tgemm bench -i $S --no-ceilings --iters 15 --kernel $K \
      --csv $FINAL/tp_t${t}_r$r.csv > $FINAL/tp_t${t}_r$r.log 2>&1; echo "bench tail_min=$t round $r rc=$?"
  done
done
f=$(mktemp --suffix=.csv)
{ echo "M,N,K,bias,dtype,outdtype,scaleAB,bpreshuffle"; echo "${TP_NCU_SHAPE:-8192,6144,1280,True},torch.bfloat16,torch.bfloat16,False,False"; } > "$f"
for k in ${P64}_i64 ${P64}_skauto_i64 ${E128}_i64 ${E128}_skauto_i64; do
  for t in -1 0; do
    TGEMM_SM90_TAIL_MIN_KSTEPS=$t ncu --clock-control none --kernel-name-base demangled --kernel-name regex:"nvjet|gemm_kernel" \
      --launch-skip 2 --launch-count 1 --csv --metrics gpu__time_duration.sum,sm__cycles_elapsed.max,dram__bytes.sum,lts__t_bytes.sum \
      ./build-dev/tgemm bench -i "$f" --kernel "$k" --warmup 0 --iters 1 --timing plain --no-check --no-ceilings \
      > $FINAL/ncu_${k}_t$t.csv 2> $FINAL/ncu_${k}_t$t.err
    echo "ncu $k tail_min=$t rc=$? $(grep -h gpu__time_duration $FINAL/ncu_${k}_t$t.csv | awk -F'","' '{print $NF}')"
    case $k in *skauto*) ;; *) break ;; esac
  done
done
