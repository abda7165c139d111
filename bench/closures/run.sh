#!/usr/bin/env bash
# bench/closures/run.sh BUILD_DIR [sendMiB 1024] [restoreMiB 1024] [fairMiB 256] [slowMiB 256] [loadMiB 1024]
# [slowBytesPerSecond 10000000]: database closures through a running BUILD_DIR/service/coreflow against a
# plain TLS copy of the same bytes (bench/README.md). COREFLOW_BENCH_NICE=0 runs it at normal priority.
set -euo pipefail
build="$(cd "${1:?build directory}" && pwd)"
shift
bin="$build/bench/closures/coreflow-bench-closures"
[ -x "$bin" ] || { echo "bench/closures: $bin is missing (a Release build with COREFLOW_BUILD_BENCH=ON and the tests)" >&2; exit 1; }
exec nice -n "${COREFLOW_BENCH_NICE:-10}" "$bin" --relay "$build/service/coreflow" "$@"
