#!/usr/bin/env bash
# Builds the sm90 dev harness: scripts/dev/bin/sm90_harness. Run from the repository root.
set -euo pipefail
mkdir -p scripts/dev/bin/obj
FLAGS="-std=c++20 -O3 -gencode=arch=compute_90a,code=sm_90a --expt-relaxed-constexpr -Xcudafe --diag_suppress=177 -Iinclude -Isrc"
objs=()
for f in src/backends/sm90/*.cu scripts/dev/sm90_harness.cu; do
  o=scripts/dev/bin/obj/$(basename "$f" .cu).o
  objs+=("$o")
  nvcc $FLAGS -Xptxas -v -c "$f" -o "$o" > "$o.log" 2>&1 &
done
for f in src/core/limits.cpp src/core/types.cpp src/core/tensor_map.cpp; do
  o=scripts/dev/bin/obj/$(basename "$f" .cpp).o
  objs+=("$o")
  g++ -std=c++20 -O2 -Iinclude -Isrc -I/usr/local/cuda/include -c "$f" -o "$o" &
done
wait
for l in scripts/dev/bin/obj/*.log; do grep -q "error" "$l" && { cat "$l"; exit 1; }; done
nvcc -gencode=arch=compute_90a,code=sm_90a "${objs[@]}" -lcublasLt -o scripts/dev/bin/sm90_harness
grep -h "spill" scripts/dev/bin/obj/sm90_*.o.log | sort | uniq -c
