#!/usr/bin/env bash
# The seed's 2-way bench (tgemm bench: the pick against cuBLASLt, interleaved pairs) with the shipped table and with
# copies of it whose rows at SEED_AB_MS run one of SEED_AB_KERNELS instead, the tables in turn for SEED_AB_REPS
# rounds; then, with SEED_AB_POWER=1, power_probe.py (energy per FLOP at the power cap) on the shipped pick and the
# same kernels. On the GPU machine after a build into build-dev (device_run.sh); logs in $OUT/seed_ab.tgz.
#   SEED_AB_KERNELS="sm90_bf16_128x192x64_s4_c1x1_pp_i64" bash scripts/dev/seed_table_ab.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
D=${OUT:-/tmp/tgemm_out}/seed_ab
mkdir -p "$D"
MS=${SEED_AB_MS:-"340000 360000 768000"}
KS=${SEED_AB_KERNELS:?names of the kernels to put on the seed rows}
# table_<i>.csv: the shipped table with kernel i on the seed rows at MS (rows keyed as the table keys them);
# pick.txt: the shipped table's pick on the first of those rows.
python3 - "$D" "$MS" $KS <<'EOF' || exit 1
import csv
import sys
sys.path.insert(0, "scripts")
from table_rows import key, read_table, set_pick, write_table
d, ms, kernels = sys.argv[1], sys.argv[2].split(), sys.argv[3:]
with open("shapes/seed.csv", newline="") as f:
    seed = {key(r) for r in csv.DictReader(f) if r["M"] in ms}
assert len(seed) == len(ms), f"seed shapes at M = {ms}: {len(seed)} found"
for i, kernel in enumerate(kernels, 1):
    fields, rows = read_table("configs/sm90_132_bf16.csv")
    mine = [r for r in rows if key(r) in seed]
    assert len(mine) == len(seed), f"{len(mine)} table rows for {len(seed)} seed shapes"
    for r in mine:
        set_pick(r, kernel, float(r["us"]))
    with open(f"{d}/table_{i}.csv", "w", newline="") as f:
        write_table(fields, rows, f)
with open(f"{d}/pick.txt", "w") as f:
    print(next(r["kernelName"] for r in read_table("configs/sm90_132_bf16.csv")[1] if key(r) in seed), file=f)
EOF
tables="configs/sm90_132_bf16.csv"
for i in $(seq 1 $(echo $KS | wc -w)); do tables="$tables $D/table_$i.csv"; done
for r in $(seq 1 ${SEED_AB_REPS:-3}); do
  t=0
  for T in $tables; do
    TGEMM_CONFIG="$T" ./build-dev/tgemm bench -i shapes/seed.csv --no-ceilings --csv "$D/t${t}_r$r.csv" > "$D/t${t}_r$r.log" 2>&1
    t=$((t + 1))
  done
done
# x cuBLASLt per table and shape, each round, and the median.
python3 - "$D" $tables <<'EOF'
import csv, glob, statistics, sys
d, tables = sys.argv[1], sys.argv[2:]
for t, path in enumerate(tables):
    by = {}
    for f in sorted(glob.glob(f"{d}/t{t}_r*.csv")):
        for row in csv.DictReader(open(f)):
            if row["what"] == "tgemm mm":
                by.setdefault(row["M"], []).append((float(row["x_cublaslt"]), row["kernel"]))
    print(f"table {t} ({path}):")
    for m, v in by.items():
        xs = [x for x, _ in v]
        print(f"  M={m:>7} {v[0][1]:<48} x cuBLASLt " + " ".join(f"{x:.3f}" for x in xs) + f"  median {statistics.median(xs):.3f}")
EOF
if [ "${SEED_AB_POWER:-0}" = 1 ]; then
  PYTHONPATH=build-dev/python python3 scripts/dev/power_probe.py --kernels "$(cat "$D/pick.txt"),$(echo $KS | tr ' ' ,)" \
    ${SEED_AB_POWER_SHAPES:-340000,6144,1280,1 360000,6144,1280,1} > "$D/power.txt" 2> "$D/power.err"
  cat "$D/power.txt"; tail -3 "$D/power.err"
fi
# The device tool returns at most 8 files: the rounds' CSVs and logs in one archive.
tar czf "$D.tgz" -C "$D" . && rm -rf "$D"
