#!/usr/bin/env bash
# Executed count of every SASS instruction of one sm90 kernel launch (Nsight Compute's source page), to find where
# a kernel's instructions go. One device call (carry .deps):
#   SH_SHAPE="8192,6144,1280,True" SH_KERNEL=sm90_bf16_64x256x64_s5_c1x1_etma_pp_i64 bash scripts/dev/sass_hotspots.sh
# Writes $OUT/sass_<kernel>.csv (per instruction: address, source, executed count, ...) and the build log.
set -uo pipefail
cd "$(dirname "$0")/../.."
FINAL=${OUT:-/tmp/tgemm_out}; mkdir -p "$FINAL"
export PATH=/usr/local/cuda/bin:$PATH
GEN=""; command -v ninja >/dev/null && GEN="-G Ninja"
cmake -S . -B build-dev $GEN -DCMAKE_BUILD_TYPE=Release -DTGEMM_BUILD_TESTS=OFF -DTGEMM_BUILD_PYTHON=OFF > "$FINAL/build.log" 2>&1 &&
  cmake --build build-dev -j 16 --target tgemm_cli >> "$FINAL/build.log" 2>&1 || { tail -30 "$FINAL/build.log"; exit 1; }
f=$(mktemp --suffix=.csv)
{ echo "M,N,K,bias,dtype,outdtype,scaleAB,bpreshuffle"; echo "$SH_SHAPE,torch.bfloat16,torch.bfloat16,False,False"; } > "$f"
# An empty table: `tgemm mm` is then the untuned default, which never runs a TMA-store (EpiMode 2) kernel, so the
# first launch of one is the forced kernel (pass `_etma_` kernels).
echo "gfx,cu_num,M,N,K,bias,dtype,outdtype,scaleAB,bpreshuffle,libtype,solidx,splitK,us,kernelName,err_ratio,tflops,bw" > /tmp/empty.csv
for k in $SH_KERNEL; do
  TGEMM_CONFIG=/tmp/empty.csv ncu --clock-control none --section SourceCounters --section InstructionStats \
    --kernel-name-base demangled --kernel-name regex:"EpiMode.2" --launch-count 1 --page source --print-source sass --csv \
    ./build-dev/tgemm bench -i "$f" --kernel "$k" --warmup 0 --iters 1 --timing plain --no-check --no-ceilings \
    > "$FINAL/sass_$k.csv" 2> "$FINAL/ncu_$k.err"
  echo "$k rc=$? $(wc -l < "$FINAL/sass_$k.csv") lines"
done
