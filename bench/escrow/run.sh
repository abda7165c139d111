#!/bin/sh
# bench/escrow/run.sh BUILD_DIR — runs the escrow benchmark (10000 nodes x 32 renewals) and writes
# bench/results/escrow-<UTC timestamp>.json. Extra arguments go to the program (--nodes, --renewals).
set -eu
build="${1:?usage: bench/escrow/run.sh BUILD_DIR [--nodes N] [--renewals R]}"
shift
here="$(cd "$(dirname "$0")" && pwd)"
results="$here/../results"
mkdir -p "$results"
cmake --build "$build" --target coreflow-escrow-bench >/dev/null
exe="$(find "$build" -name coreflow-escrow-bench -type f -perm -u+x | head -n 1)"
[ -n "$exe" ] || { echo "coreflow-escrow-bench not found under $build" >&2; exit 1; }
exec "$exe" --json "$results/escrow-$(date -u +%Y%m%dT%H%M%SZ).json" "$@"
