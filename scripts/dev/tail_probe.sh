#!/usr/bin/env bash
# The sm90 stream-K tail at short and long K: the split-K kernels with the tail forced on every shape
# (TGEMM_SM90_TAIL_MIN_KSTEPS=0) and with no tail (-1), each process timing the unsplit twins too (graph replay,
# TP_REPS rounds); then one launch of each variant at TP_NCU_SHAPE under Nsight Compute (the kernel's own duration and
# L2 traffic). After a build in build-dev; carry .deps. Everything in $OUT/tail_probe.tgz. (Run 135 also timed the
# split units after the whole tiles, a build switch since removed: docs/benchmarks.md.)
#   TP_SHAPES=scripts/dev/tail_probe_shapes.csv bash scripts/dev/tail_probe.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
FINAL=${OUT:-/tmp/tgemm_out}; mkdir -p "$FINAL"
D=/tmp/tail_probe; rm -rf $D; mkdir -p $D
trap 'tar czf "$FINAL/tail_probe.tgz" -C $D .' EXIT
export PATH=/usr/local/cuda/bin:$PATH
S=${TP_SHAPES:-scripts/dev/tail_probe_shapes.csv}
P64=sm90_bf16_64x256x64_s5_c1x1_pp; E128=sm90_bf16_128x128x64_s5_c1x1_etma_pp
K=${P64}_i64,${P64}_skauto_i64,${E128}_i64,${E128}_skauto_i64
variants="none:-1 first:0"
for r in $(seq 1 ${TP_REPS:-2}); do
  for v in $variants; do
    IFS=: read name tmin <<< "$v"
    TGEMM_SM90_TAIL_MIN_KSTEPS=$tmin timeout 150 ./build-dev/tgemm bench -i $S --no-ceilings \
      --iters 15 --kernel $K --csv $D/tp_${name}_r$r.csv > $D/tp_${name}_r$r.log 2>&1; echo "bench $name round $r rc=$?"
  done
done
f=$D/ncu_shape.csv
{ echo "M,N,K,bias,dtype,outdtype,scaleAB,bpreshuffle"; echo "${TP_NCU_SHAPE:-8192,6144,1280,True},torch.bfloat16,torch.bfloat16,False,False"; } > "$f"
for k in ${P64}_skauto_i64 ${E128}_skauto_i64; do
  for v in $variants; do
    IFS=: read name tmin <<< "$v"
    TGEMM_SM90_TAIL_MIN_KSTEPS=$tmin ncu --clock-control none --kernel-name-base demangled \
      --kernel-name regex:"nvjet|gemm_kernel" --launch-skip 2 --launch-count 1 --csv \
      --metrics gpu__time_duration.sum,sm__cycles_elapsed.max,dram__bytes.sum,lts__t_sectors.sum \
      ./build-dev/tgemm bench -i "$f" --kernel "$k" --warmup 0 --iters 1 --timing plain --no-check --no-ceilings \
      > $D/ncu_${k}_$name.csv 2> $D/ncu_${k}_$name.err
    echo "ncu $k $name rc=$? $(grep -h -E 'gpu__time_duration|dram__bytes|lts__t_sectors' $D/ncu_${k}_$name.csv | awk -F'","' '{printf "%s=%s ", $(NF-2), $NF}')"
  done
done
