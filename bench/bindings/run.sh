#!/usr/bin/env bash
# bench/bindings/run.sh BUILD_DIR [--bindings N] [--nodes M]: issue 18's figure, N platform bindings
# (default 1000) over M nodes (default 50) reconciled and published through BUILD_DIR/service/coreflow;
# writes bench/results/bindings-<UTC timestamp>.json.
set -euo pipefail
build="${1:?usage: bench/bindings/run.sh BUILD_DIR [--bindings N] [--nodes M]}"
shift
here="$(cd "$(dirname "$0")" && pwd)"
results="$here/../results"
mkdir -p "$results"
exe="$build/bench/bindings/coreflow-bench-bindings"
if [ ! -x "$exe" ]; then
  echo "bench/bindings: $exe is not built (needs the tests and Qt HttpServer, qt6-httpserver-dev)" >&2
  exit 1
fi
echo "bench: bindings, load average $(cut -d' ' -f1-3 /proc/loadavg)"
exec "$exe" --relay "$build/service/coreflow" --json "$results/bindings-$(date -u +%Y%m%dT%H%M%SZ).json" "$@"
