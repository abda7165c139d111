#!/usr/bin/env bash
# bench/run.sh BUILD_DIR [--quick] [--nodes "100 1000 10000"] [--sat-seconds S] [--low-seconds S]
#
# The relay benchmarks (bench/README.md). Called by `./run bench` after a Release build. For every N it
# runs the same harness (bench/harness, coreflow-bench) three times, side by side:
#   direct    the harness straight to its lean Cloudly (no relay): the harness ceiling
#   coreflow  BUILD_DIR/service/coreflow
#   baseline  bench/baseline/relay.js (Node.js + ws; installed here with npm ci when missing)
# prints the table (every figure also as a ratio to the baseline) and writes bench/results/<timestamp>.json.
# --quick runs N=100 and 1000 only. Then bench/escrow/run.sh and bench/registry/run.sh, when present.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BUILD="$(cd "${1:?usage: bench/run.sh BUILD_DIR [--quick]}" && pwd)"
shift
# `bench/run.sh BUILD_DIR instructions BEFORE_RELAY [options]`: the issue-14 instruction-count check of
# BUILD_DIR's relay against another build's (bench/instructions/run.sh, bench/README.md).
if [ "${1:-}" = instructions ]; then
  shift
  exec bash "$here/instructions/run.sh" "${1:?usage: bench/run.sh BUILD_DIR instructions BEFORE_RELAY}" \
    "$BUILD/service/coreflow" --bench "$BUILD/bench/harness/coreflow-bench" "${@:2}"
fi
NODES="100 1000 10000"
SAT=5
LOW=10
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) NODES="100 1000" ;;
    --nodes) NODES="$2"; shift ;;
    --sat-seconds) SAT="$2"; shift ;;
    --low-seconds) LOW="$2"; shift ;;
    *) echo "bench: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done

BENCH="$BUILD/bench/harness/coreflow-bench"
RELAY="$BUILD/service/coreflow"
for bin in "$BENCH" "$RELAY"; do
  [ -x "$bin" ] || { echo "bench: $bin is missing (build BUILD_DIR first)" >&2; exit 1; }
done
command -v node >/dev/null || { echo "bench: node (Node.js >= 18) is required for the baseline" >&2; exit 1; }
if [ ! -f "$here/baseline/node_modules/ws/package.json" ]; then
  echo "bench: installing the baseline's npm dependencies (npm ci)"
  (cd "$here/baseline" && npm ci --no-audit --no-fund >/dev/null)
fi

# The harness raises its soft fd limit to the hard one; the relay it starts inherits it.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
HARD="$(ulimit -Hn)"

W="$(mktemp -d "${TMPDIR:-/tmp}/coreflow-bench.XXXXXX")"
trap 'rm -rf "$W"' EXIT
bash "$here/make-certs.sh" "$W/certs" >/dev/null
mkdir -p "$here/results"
STAMP="$(date -u +%Y%m%dT%H%M%SZ)"
OUT="$here/results/$STAMP.json"
LOGS="$here/results/$STAMP-logs"
mkdir -p "$LOGS"
echo "bench: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), fd limit $HARD; logs in $LOGS"
LOAD_START="$(cut -d' ' -f1 /proc/loadavg)"

runs=()
for n in $NODES; do
  if [ "$HARD" != unlimited ] && [ "$HARD" -lt $((n + 200)) ]; then
    echo "bench: N=$n skipped: the hard file-descriptor limit $HARD is too low"
    continue
  fi
  for target in direct coreflow baseline; do
    json="$W/$target-$n.json"
    args=(run --nodes "$n" --certs "$W/certs" --workdir "$LOGS" --out "$json" --label "$target"
      --sat-seconds "$SAT" --low-seconds "$LOW")
    case "$target" in
      direct) args+=(--target direct) ;;
      coreflow) args+=(--target relay -- "$RELAY" --ca-file "$W/certs/ca.pem") ;;
      baseline) args+=(--target relay -- node "$here/baseline/relay.js" --ca-file "$W/certs/ca.pem") ;;
    esac
    echo "bench: N=$n $target"
    if "$BENCH" "${args[@]}" 2> >(tee "$LOGS/harness-$target-$n.txt" >&2) && [ -s "$json" ]; then
      runs+=("$json")
    else
      echo "bench: N=$n $target FAILED (see $LOGS)" >&2
    fi
  done
done

node "$here/report.js" --out "$OUT" --load-start "$LOAD_START" --load-end "$(cut -d' ' -f1 /proc/loadavg)" "${runs[@]}"
echo "bench: results in $OUT"

status=0
if [ -f "$here/escrow/run.sh" ]; then
  bash "$here/escrow/run.sh" "$BUILD" || status=$?
fi
if [ -f "$here/vpn/run.sh" ]; then
  bash "$here/vpn/run.sh" "$BUILD" || status=$?
fi
if [ -f "$here/bindings/run.sh" ]; then
  bash "$here/bindings/run.sh" "$BUILD" || status=$?
fi
if [ -f "$here/registry/run.sh" ]; then
  bash "$here/registry/run.sh" "$BUILD" || status=$?
fi
exit "$status"
