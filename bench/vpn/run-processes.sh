#!/usr/bin/env bash
# bench/vpn/run-processes.sh BUILD_DIR [seconds] [packetBytes] [window] [members...]
# The hub and the members in separate processes: for each member count, the VPN hub and then a plain
# UDP forwarder in the same run, members in pairs (even indices drive, odd ones echo; one member
# alone is idle). Prints the hub's `result` lines (packets/s, CPU per packet, RSS per member).
set -euo pipefail
build="${1:?build directory}"
seconds="${2:-5}"
bytes="${3:-1376}"
window="${4:-32}"
shift $(( $# < 4 ? $# : 4 ))
counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=(2 10 100)
bin="$build/bench/vpn"
run_one() { # members mode(hub|plain)
  local n="$1" mode="$2" out pids=() port key line
  out=$(mktemp)
  if [ "$mode" = plain ]; then "$bin/coreflow-vpn-bench-hub" "$n" "$seconds" plain >"$out" & else "$bin/coreflow-vpn-bench-hub" "$n" "$seconds" >"$out" & fi
  local hub=$!
  for _ in $(seq 100); do line=$(head -n1 "$out" 2>/dev/null || true); [ -n "$line" ] && break; sleep 0.1; done
  port=$(echo "$line" | awk '{print $2}'); key=$(echo "$line" | awk '{print $4}')
  local extra=(); [ "$mode" = plain ] && extra=(plain)
  if [ "$n" -eq 1 ]; then
    "$bin/coreflow-vpn-bench-member" "$port" "$key" 0 1 idle "$bytes" "$window" 1000 "${extra[@]}" & pids+=($!)
  else
    # One process drives the even members, another echoes for the odd ones.
    "$bin/coreflow-vpn-bench-member" "$port" "$key" 0 $(( n / 2 )) drive "$bytes" "$window" 1000 "${extra[@]}" & pids+=($!)
    "$bin/coreflow-vpn-bench-member" "$port" "$key" 1 $(( n / 2 )) echo "$bytes" "$window" 1000 "${extra[@]}" & pids+=($!)
  fi
  wait "$hub" || true
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  grep '^result' "$out" || { echo "no result ($mode, $n members):"; cat "$out"; }
  rm -f "$out"
}
for n in "${counts[@]}"; do
  run_one "$n" hub
  run_one "$n" plain
done
