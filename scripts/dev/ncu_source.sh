#!/usr/bin/env bash
# ncu source-level (SASS) stall samples: rs m1 kernel vs the gemv_groups<1, 8, 4> probe (session 37 gemv_rows) at 1 x 4096 x 4096.
set -u
L=$OUT/ncu_src; mkdir -p $L
f=$(mktemp --suffix=.csv); printf 'M,N,K,bias,dtype,outdtype,scaleAB,bpreshuffle\n1,4096,4096,False,torch.bfloat16,torch.bfloat16,False,False\n' > $f
S="--section SourceCounters --section WarpStateStats --section SchedulerStats --section SpeedOfLight"
for k in skinny_bf16_m1_rs_i64 skinny_bf16_m1_rs_b128_i64; do
  ncu --clock-control none --kernel-name regex:skinny_rs --launch-count 1 $S build-dev/tgemm bench -i $f --kernel $k --warmup 0 --iters 1 --timing plain --no-check --no-ceilings > $L/$k.details.txt 2>&1
  ncu --clock-control none --kernel-name regex:skinny_rs --launch-count 1 --section SourceCounters --page source --print-source sass --csv build-dev/tgemm bench -i $f --kernel $k --warmup 0 --iters 1 --timing plain --no-check --no-ceilings > $L/$k.sass.csv 2>&1
done
nvcc -O3 -std=c++20 --expt-relaxed-constexpr -Isrc -Iinclude -gencode=arch=compute_90a,code=sm_90a scripts/dev/stream_probe.cu -o /tmp/sp > $L/sp_build.log 2>&1 || echo "probe build failed"
ncu --clock-control none --kernel-name regex:gemv_groups --launch-skip 40 --launch-count 1 $S /tmp/sp gemv > $L/gemv_rows.details.txt 2>&1
ncu --clock-control none --kernel-name regex:gemv_groups --launch-skip 40 --launch-count 1 --section SourceCounters --page source --print-source sass --csv /tmp/sp gemv > $L/gemv_rows.sass.csv 2>&1
ls -la $L; grep -E "Duration|DRAM Throughput|Memory Throughput" $L/*.details.txt
python3 scripts/dev/sass_stalls.py $L/*.sass.csv > $L/stalls.txt 2>&1
