#!/usr/bin/env bash
# bench/instructions/run.sh BEFORE_RELAY AFTER_RELAY [--bench COREFLOW_BENCH] [--runs 3] [--nodes 100]
#                           [--sat-seconds 8] [--out DIR] [--labels "before after"] [--resume]
#
# Instruction counts of two relay binaries under the same load (bench/README.md, "Issue 14 check"):
# each relay runs under callgrind (valgrind), driven by one coreflow-bench binary for both, in
# alternating runs (before, after, before, ...); every scenario is one callgrind dump (phases.py);
# analyze.py prints Ir per forwarded request, per fan-out push and per connect+register, the medians
# and after / before. Counts, not times: this machine's CPU times spread by more than the 5 % asked
# for, and the VM exposes no hardware counters. About 2-3 minutes per run at N = 100.
# `./run bench instructions BEFORE_RELAY` runs this with AFTER_RELAY = the Release build's coreflow.
# --resume (with --out): runs whose directory already holds the harness's result.json are kept, not
# run again (an interrupted series goes on where it stopped, in the same order).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
usage() { sed -n '2,3p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[ $# -ge 2 ] || usage
BEFORE="$(realpath "$1")"
AFTER="$(realpath "$2")"
shift 2
BENCH=""
RUNS=3
NODES=100
SAT=8
OUT=""
LABELS="before after"
RESUME=0
while [ $# -gt 0 ]; do
  case "$1" in
    --bench) BENCH="$(realpath "$2")"; shift ;;
    --runs) RUNS="$2"; shift ;;
    --nodes) NODES="$2"; shift ;;
    --sat-seconds) SAT="$2"; shift ;;
    --out) OUT="$2"; shift ;;
    --labels) LABELS="$2"; shift ;;
    --resume) RESUME=1 ;;
    *) echo "instructions: unknown argument $1" >&2; usage ;;
  esac
  shift
done
# The harness of the tree AFTER_RELAY was built in, unless named.
[ -n "$BENCH" ] || BENCH="$(dirname "$(dirname "$AFTER")")/bench/harness/coreflow-bench"
for bin in "$BEFORE" "$AFTER" "$BENCH"; do
  [ -x "$bin" ] || { echo "instructions: $bin is missing or not executable" >&2; exit 1; }
done
for tool in valgrind callgrind_control callgrind_annotate; do
  command -v "$tool" >/dev/null || { echo "instructions: $tool is missing (Debian package valgrind)" >&2; exit 1; }
done
read -r LABEL_A LABEL_B <<<"$LABELS"
[ -n "$OUT" ] || OUT="$here/../results/instructions-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$OUT"
OUT="$(realpath "$OUT")"
echo "$LABEL_A $LABEL_B" >"$OUT/labels"
printf '%s %s\n%s %s\nharness %s\n' "$LABEL_A" "$BEFORE" "$LABEL_B" "$AFTER" "$BENCH" >"$OUT/binaries"
echo "instructions: $RUNS runs each, N=$NODES, saturation ${SAT}s, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); out $OUT"

ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
[ -f "$OUT/certs/ca.pem" ] || bash "$here/../make-certs.sh" "$OUT/certs" >/dev/null
for run in $(seq 1 "$RUNS"); do
  for label in "$LABEL_A" "$LABEL_B"; do
    [ "$label" = "$LABEL_A" ] && relay="$BEFORE" || relay="$AFTER"
    if [ "$RESUME" = 1 ] && [ -f "$OUT/$label-$run/result.json" ]; then
      echo "instructions: $label run $run is done (kept)"
      continue
    fi
    echo "instructions: $label run $run"
    rm -rf "$OUT/$label-$run"
    /usr/bin/python3 "$here/phases.py" --bench "$BENCH" --relay "$relay" --workdir "$OUT/$label-$run" \
      --label "$label" --nodes "$NODES" --sat-seconds "$SAT" --certs "$OUT/certs" \
      || echo "instructions: $label run $run did not complete (kept, left out of the medians)"
  done
done
/usr/bin/python3 "$here/analyze.py" --nodes "$NODES" summary "$OUT"
