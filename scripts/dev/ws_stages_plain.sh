#!/usr/bin/env bash
# The ws skinny kernels' ring depth (TGEMM_SKINNY_WS_STAGES, read once per process) timed on a shape list in one
# launch mode: one `tgemm bench` process per depth, the depths in turn for WS_ROUNDS rounds, each process interleaving
# the table's pick with cuBLASLt (so x cuBLASLt compares across processes). Depth 0 is the default
# (ws_default_stage_cap). On the GPU machine (run 388, session 46):
#   WS_SHAPES=scripts/dev/data/plain_losers_370.csv WS_STAGES="0 8 12 16" WS_TIMING=plain \
#     bash scripts/dev/ws_stages_plain.sh
# Logs in $OUT/stages.tgz.
set -uo pipefail
D=$OUT/stages; mkdir -p $D
SHAPES=${WS_SHAPES:-scripts/dev/data/plain_losers_370.csv}
GEN=""; command -v ninja >/dev/null && GEN="-G Ninja"
cmake -S . -B build-st $GEN -DCMAKE_BUILD_TYPE=Release -DTGEMM_BUILD_TESTS=OFF -DTGEMM_BUILD_PYTHON=OFF \
  > $D/build.log 2>&1 &&
  cmake --build build-st -j 16 --target tgemm_cli >> $D/build.log 2>&1 || { tail -20 $D/build.log; exit 1; }
for r in $(seq 1 ${WS_ROUNDS:-2}); do
  for s in ${WS_STAGES:-0 8 12 16}; do
    log=$D/s${s}_r$r
    TGEMM_SKINNY_WS_STAGES=$s timeout -s KILL 40 ./build-st/tgemm bench -i "$SHAPES" --no-ceilings \
      --timing ${WS_TIMING:-plain} --csv $log.csv > $log.log 2>&1
    echo "s$s r$r rc=$? $SECONDS s"
  done
done
cd $OUT && tar czf stages.tgz stages && rm -rf stages
