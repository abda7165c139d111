#!/usr/bin/env bash
# bench/soak/run.sh BUILD_DIR [--minutes 30] [--nodes 1000] [more coreflow-bench soak options]
#
# The soak of issue 23 (bench/README.md "Soak"; never part of ctest): coreflow-bench soak drives N nodes
# through BUILD_DIR/service/coreflow for M minutes with forwards, pushes and escrow holds while the
# loopback Cloudly is killed and restarted every 5 minutes and 1 % of the nodes are dropped per minute.
# Writes bench/results/soak-<timestamp>.csv (one row per 10 s sample), -summary.txt (the driver's
# summary and a table of one sample per minute) and -logs/ (the relay's log).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$(cd "${1:?usage: bench/soak/run.sh BUILD_DIR [--minutes M] [--nodes N]}" && pwd)"
shift
MINUTES=30
NODES=1000
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) MINUTES="$2"; shift 2 ;;
    --nodes) NODES="$2"; shift 2 ;;
    *) extra+=("$1"); shift ;;
  esac
done
BENCH="$BUILD/bench/harness/coreflow-bench"
RELAY="$BUILD/service/coreflow"
CONSOLE="$BUILD/console/coreflow-console"
for bin in "$BENCH" "$RELAY"; do
  [ -x "$bin" ] || { echo "soak: $bin is missing (build BUILD_DIR first)" >&2; exit 1; }
done
console_args=()
[ -x "$CONSOLE" ] && console_args=(--console "$CONSOLE")
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

W="$(mktemp -d "${TMPDIR:-/tmp}/coreflow-soak.XXXXXX")"
trap 'rm -rf "$W"' EXIT
bash "$here/make-certs.sh" "$W/certs" >/dev/null
mkdir -p "$here/results"
STAMP="$(date -u +%Y%m%dT%H%M%SZ)"
CSV="$here/results/soak-$STAMP.csv"
SUMMARY="$here/results/soak-$STAMP-summary.txt"
LOGS="$here/results/soak-$STAMP-logs"
mkdir -p "$LOGS"
{
  echo "soak: $STAMP, $NODES nodes, $MINUTES min, $(nproc) cores, load average at start $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "soak: commit $(git -C "$here/.." rev-parse --short HEAD 2>/dev/null || echo unknown), relay $RELAY"
} | tee "$SUMMARY"
status=0
"$BENCH" soak --nodes "$NODES" --minutes "$MINUTES" --certs "$W/certs" --workdir "$LOGS" --csv "$CSV" \
  "${console_args[@]}" "${extra[@]}" -- "$RELAY" --ca-file "$W/certs/ca.pem" 2> >(tee "$LOGS/harness.txt" >&2) | tee -a "$SUMMARY" || status=$?
echo "soak: load average at the end $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$SUMMARY"
/usr/bin/python3 "$here/soak/table.py" "$CSV" | tee -a "$SUMMARY"
echo "soak: $CSV, $SUMMARY"
exit "$status"
