#!/usr/bin/env bash
# One device call for the skinny work (issue 4): build + skinny/kernel/graph GPU tests (scripts/device_run.sh),
# the m8 kernel's SASS, then `tgemm bench` on shapes/decode.csv with forced skinny kernels beside cuBLASLt:
# graph replay (all listed kernels, with the copy ceiling), plain launches, and graph replay without PDL.
#   SK_GRAPH=k1,k2 SK_PLAIN=k1,k2 SK_NOPDL=k1,k2 SK_ITERS=20 bash scripts/dev/skinny_device.sh   (carry .deps)
set -uo pipefail
cd "$(dirname "$0")/../.."
FINAL=${OUT:-/tmp/tgemm_out}
timeout ${SK_T0:-110} env STEPS="${SK_STEPS:-tests}" GTEST_ARGS="${SK_GTEST:---gtest_filter=*Kernel*:*Skinny*:*skinny*:*Graph*}" bash scripts/device_run.sh
D=/tmp/skinny_logs; rm -rf $D; mkdir -p $D
B=./build-dev/tgemm
[ -x $B ] || exit 1
SASS=$(find build-dev -name 'skinny_bf16.cu.o' | head -1)
cuobjdump -sass -fun '_ZN5tgemm6skinny18skinny_gemm_kernelI13__nv_bfloat16Li8ELb1EEEvNS0_6ParamsE' "$SASS" > $D/sass_m8.txt 2>&1
IT=${SK_ITERS:-20}
t0=$(date +%s)
[ -n "${SK_GRAPH:-}" ] && timeout ${SK_T1:-70} $B bench -i ${SK_SHAPES:-shapes/decode.csv} --timing graph --iters $IT --kernel "$SK_GRAPH" \
  --csv $D/graph.csv > $D/graph.log 2>&1
echo "graph rc=$? $(( $(date +%s) - t0 )) s" | tee -a $D/times.txt
[ -n "${SK_PLAIN:-}" ] && timeout ${SK_T2:-35} $B bench -i ${SK_SHAPES:-shapes/decode.csv} --no-ceilings --timing plain --iters $IT \
  --kernel "$SK_PLAIN" --csv $D/plain.csv > $D/plain.log 2>&1
echo "plain rc=$? $(( $(date +%s) - t0 )) s" | tee -a $D/times.txt
[ -n "${SK_NOPDL:-}" ] && env ${SK_ENV3:-TGEMM_SKINNY_PDL=0} timeout ${SK_T3:-25} $B bench -i ${SK_SHAPES:-shapes/decode.csv} --no-ceilings --timing graph \
  --iters $IT --kernel "$SK_NOPDL" --csv $D/nopdl.csv > $D/nopdl.log 2>&1
echo "nopdl rc=$? $(( $(date +%s) - t0 )) s" | tee -a $D/times.txt
grep -E "ceilings|FAILED" $D/graph.log | head -5
tar czf "$FINAL/skinny_logs.tgz" -C $D .
