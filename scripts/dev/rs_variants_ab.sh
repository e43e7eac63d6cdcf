#!/usr/bin/env bash
# One device call for compile-time variants of the row-stream kernel (skinny_rs_kernel.cuh): stream_probe's `rs` mode
# (the library's m1 kernel beside gemv_groups<4, 4, 2>, 1 x N x 4096 at 16-64 MiB, graph replay) built once per
# variant and run RS_REPS rounds (default 2) in turn; then, if AB_FLAGS is set, scripts/dev/build_ab_device.sh (the
# library as is against the library with AB_FLAGS: its AB_* variables, GPU tests, bench of forced kernels).
#   RS_VARIANTS="base= xreg=-DTGEMM_RS_XREG lean=-DTGEMM_RS_LEAN_TILE both=-DTGEMM_RS_XREG,-DTGEMM_RS_LEAN_TILE" \
#     AB_FLAGS=... AB_SHAPES=... AB_KERNELS=... AB_TESTS=... bash scripts/dev/rs_variants_ab.sh   (carry .deps)
# RS_TRACE_VARIANTS="name ..." also builds those variants with -DRS_TRACE and runs `stream_probe rstrace` on each
# (rs_trace_summary.py's timeline in $D/trace_<name>/summary.txt).
# Logs: $OUT/rs_variants.tgz (and build_ab_device.sh's $OUT/ab_logs.tgz).
set -uo pipefail
source "$(dirname "$0")/device_logs.sh" rs_variants
NV="nvcc -O3 -std=c++20 --expt-relaxed-constexpr -Isrc -Iinclude -gencode=arch=compute_90a,code=sm_90a"
names=(); traced=()
for v in ${RS_VARIANTS:-base=}; do
  n=${v%%=*}; f=${v#*=}; names+=("$n")
  $NV ${f//,/ } scripts/dev/stream_probe.cu -o /tmp/sp_$n > $D/build_$n.log 2>&1 &
  case " ${RS_TRACE_VARIANTS:-} " in *" $n "*)  # the trace build beside the others, not after the timing
    traced+=("$n"); mkdir -p $D/trace_$n
    $NV -DRS_TRACE ${f//,/ } scripts/dev/stream_probe.cu -o /tmp/sptr_$n > $D/trace_$n/build.log 2>&1 & ;;
  esac
done
wait; el probe_builds 0
for r in $(seq 1 ${RS_REPS:-2}); do
  for n in "${names[@]}"; do timeout 90 /tmp/sp_$n rs > $D/rs_${n}_r$r.csv 2>&1; el rs_${n}_r$r $?; done
done
for n in "${names[@]}"; do echo "== $n"; cat $D/rs_${n}_r*.csv | grep -v size_MB; done
for n in "${traced[@]}"; do
  (cd $D/trace_$n && timeout 120 /tmp/sptr_$n rstrace > run.log 2>&1); el trace_$n $?
  python3 scripts/dev/rs_trace_summary.py $D/trace_$n/rsclk_*_32.csv > $D/trace_$n/summary.txt 2>&1
  gzip -q $D/trace_$n/rsclk_*.csv; cat $D/trace_$n/summary.txt
done
[ -n "${AB_FLAGS:-}" ] && bash scripts/dev/build_ab_device.sh
exit 0
