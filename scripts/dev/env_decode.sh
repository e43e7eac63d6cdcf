#!/usr/bin/env bash
# The decode bench (graph replay, or TIMING=plain) under each of ENVS (space-separated; "a=1,b=2" sets two; "-" none), alternated REPS
# rounds, and one decode report with a section per (env, round). Run after device_run.sh has built build-dev:
#   OUT=... ENVS="- TGEMM_SKINNY_WS_W_EARLY=1" REPS=2 bash scripts/dev/env_decode.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
D=${OUT:-/tmp/tgemm_out}/env_decode; mkdir -p "$D"
args=()
for r in $(seq 1 ${REPS:-2}); do
  for v in ${ENVS:--}; do
    lab=$( [ "$v" = - ] && echo none || printf %s "$v" | sed "s/TGEMM_SKINNY_//g" | tr -c "A-Za-z0-9." _)
    env $( [ "$v" = - ] || echo "$v" | tr , ' ') ./build-dev/tgemm bench -i ${SHAPES:-shapes/decode.csv} --timing ${TIMING:-graph} \
      --csv "$D/${lab}_r$r.csv" > "$D/${lab}_r$r.log" 2>&1 || echo "env_decode: $v round $r failed (rc $?)"
    args+=(--bench "${lab}_r$r=$D/${lab}_r$r.csv")
  done
done
python3 scripts/decode_report.py "${args[@]}" --copy-from-log "$D/$(ls "$D" | grep '\.log$' | head -1)" -o "$D/report.md" > /dev/null
grep -E "^## |^- >= " "$D/report.md"
# The device tool returns a few files only: everything in one archive.
tar czf "${OUT:-/tmp/tgemm_out}/env_decode.tgz" -C "$D" . && rm -rf "$D"
