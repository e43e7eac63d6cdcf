# Sourced by the scripts/dev/*_device.sh device calls: runs from the repository root; logs go to the work folder $D,
# packed into $OUT/<name>.tgz when the script exits (the device tool returns at most 8 files); the toolkit is on
# PATH; `el STEP RC` records a step's exit code and the seconds since the start in $D/times.txt.
#   source "$(dirname "$0")/device_logs.sh" ws_logs
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
FINAL=${OUT:-/tmp/tgemm_out}
D=/tmp/$1; rm -rf "$D"; mkdir -p "$D" "$FINAL"
trap "tar czf '$FINAL/$1.tgz' -C '$D' ." EXIT
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s)
el() { echo "$1 rc=$2 $(( $(date +%s) - t0 )) s" | tee -a "$D/times.txt"; }
