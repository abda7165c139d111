#!/usr/bin/env bash
# bench/vpn/profile-hub.sh BUILD_DIR perf|callgrind OUT [members] [seconds] [window]
# The hub of the multi-process bench (as run-processes.sh runs it, members in two more processes)
# under a profiler:
#   perf       perf record -e cpu-clock -g (the software clock: this VM has no hardware counters)
#              into OUT; read it with `perf report -i OUT --no-children --sort dso,sym -g none`.
#   callgrind  valgrind --tool=callgrind collecting only inside VpnHub::datagramReceived (one call
#              per datagram a member sent: open, policy, seal, hand to QUIC) into OUT; divide a
#              function's inclusive Ir by its calls for instructions per datagram.
# Prints the hub's `result` line (under callgrind its rates are valgrind's, not the relay's).
set -euo pipefail
build="${1:?build directory}"; tool="${2:?perf or callgrind}"; out="${3:?output file}"
n="${4:-2}"; seconds="${5:-8}"; window="${6:-32}"
bin="$build/bench/vpn"
log=$(mktemp)
case "$tool" in
  perf) perf record -e cpu-clock -g -o "$out" -- "$bin/coreflow-vpn-bench-hub" "$n" "$seconds" >"$log" 2>/dev/null & ;;
  callgrind) valgrind --tool=callgrind --callgrind-out-file="$out" --collect-atstart=no \
      --toggle-collect='coreflow::vpn::VpnHub::datagramReceived(*' "$bin/coreflow-vpn-bench-hub" "$n" "$seconds" >"$log" 2>/dev/null & ;;
  *) echo "profile-hub.sh: perf or callgrind, not $tool" >&2; exit 2 ;;
esac
hub=$!
line=""
for _ in $(seq 600); do line=$(grep '^port' "$log" 2>/dev/null | head -n1 || true); [ -n "$line" ] && break; sleep 0.1; done
[ -n "$line" ] || { echo "profile-hub.sh: the hub printed no port"; kill "$hub" 2>/dev/null || true; exit 1; }
port=$(echo "$line" | awk '{print $2}'); key=$(echo "$line" | awk '{print $4}')
pids=()
"$bin/coreflow-vpn-bench-member" "$port" "$key" 0 $(( n / 2 )) drive 1376 "$window" 1000 & pids+=($!)
"$bin/coreflow-vpn-bench-member" "$port" "$key" 1 $(( n / 2 )) echo 1376 "$window" 1000 & pids+=($!)
wait "$hub" || true
for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
grep '^result' "$log" || cat "$log"
rm -f "$log"
