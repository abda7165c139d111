#!/usr/bin/env bash
# Coreflow relay demo: `./run demo` builds, then runs   bash resources/demo.sh BUILD_DIR
#
#   loopback Cloudly  <-- one TLS WebSocket session --  coreflow relay  <-- TLS WebSocket --  node-a, node-b, node-c
#
# 1. A loopback Cloudly starts with a fresh test CA (ca.pem) and a random relay bearer.
# 2. The relay starts: CLOUDLY_URL points at the loopback Cloudly, the bearer arrives through a
#    systemd-style credentials directory, and it serves its node listener on 127.0.0.1:<relay port> with
#    the certificate Cloudly issues for "localhost".
# 3. Three simulated Pallet nodes dial the relay and register. Cloudly pushes applyRuntimeAssignment to
#    each through the relay; each node acknowledges.
# 4. The operator console prints the relay's status, then everything is stopped.
#
# Every process's output is shown prefixed with its name. Exit 0 on success; on any failure a message
# naming the step, non-zero exit, and the logs are kept (their directory is printed). Child processes
# are always stopped (trap). COREFLOW_DEMO_KEEP=1 keeps the temporary directory after a success too.
set -euo pipefail

BUILD_DIR="${1:-}"
if [ -z "$BUILD_DIR" ] || [ ! -d "$BUILD_DIR" ]; then
  echo "usage: $0 BUILD_DIR   (the CMake build directory, e.g. ./build)" >&2
  exit 2
fi
BUILD_DIR="$(cd "$BUILD_DIR" && pwd)"

CLOUDLY_BIN="$BUILD_DIR/tests/peers/coreflow-loopback-cloudly"
PALLET_BIN="$BUILD_DIR/tests/peers/coreflow-simulated-pallet"
RELAY_BIN="$BUILD_DIR/service/coreflow"
CONSOLE_BIN="$BUILD_DIR/console/coreflow-console"
NODES=(node-a node-b node-c)
RELAY_READY_LINE="the relay is open for Cloudly dispatch"
READY_TIMEOUT=30      # seconds for the relay to open
ACK_TIMEOUT=30        # seconds for all nodes to acknowledge
STOP_TIMEOUT=10       # seconds each process gets to exit after SIGTERM

for bin in "$CLOUDLY_BIN" "$PALLET_BIN" "$RELAY_BIN" "$CONSOLE_BIN"; do
  if [ ! -x "$bin" ]; then
    echo "demo: FAILED: $bin is missing or not executable (did the build succeed?)" >&2
    exit 1
  fi
done

TMP="$(mktemp -d "${TMPDIR:-/tmp}/coreflow-demo.XXXXXX")"
declare -A PID=()          # name -> pid
ORDER=()                   # start order, for a reverse-order stop
FAILED=""

say() { printf '\n== %s\n' "$*"; }

die() {
  FAILED="$*"
  echo "demo: FAILED: $*" >&2
  exit 1
}

# Reads a process's merged stdout/stderr: shows each line as "[name] line" and appends it to its log.
prefix() {
  local name="$1" log="$2" line
  while IFS= read -r line || [ -n "$line" ]; do
    printf '%s\n' "$line" >>"$log"
    printf '[%-7s] %s\n' "$name" "$line"
  done
}

# start NAME COMMAND...   runs COMMAND in the background, output prefixed and logged to $TMP/NAME.log
start() {
  local name="$1"; shift
  local log="$TMP/$name.log"
  : >"$log"
  "$@" > >(prefix "$name" "$log") 2>&1 &
  PID[$name]=$!
  ORDER+=("$name")
}

alive() { kill -0 "${PID[$1]}" 2>/dev/null; }

# wait_for NAME EXTENDED-REGEX COUNT TIMEOUT   waits until NAME's log has COUNT lines matching
wait_for() {
  local name="$1" pattern="$2" count="$3" timeout="$4"
  local deadline=$((SECONDS + timeout)) n
  while :; do
    n="$(grep -cE -- "$pattern" "$TMP/$name.log" 2>/dev/null || true)"
    [ "${n:-0}" -ge "$count" ] && return 0
    alive "$name" || die "$name exited before printing '$pattern' (see $TMP/$name.log)"
    [ "$SECONDS" -ge "$deadline" ] && return 1
    sleep 0.2
  done
}

# stop NAME   SIGTERM, wait up to STOP_TIMEOUT, then SIGKILL. Sets STOP_RC to the exit status.
stop() {
  local name="$1" pid="${PID[$1]}" waited=0
  STOP_RC=0
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt $((STOP_TIMEOUT * 10)) ]; do
      sleep 0.1
      waited=$((waited + 1))
    done
    if kill -0 "$pid" 2>/dev/null; then
      echo "demo: $name did not exit within ${STOP_TIMEOUT}s of SIGTERM; killing it" >&2
      kill -KILL "$pid" 2>/dev/null || true
    fi
  fi
  wait "$pid" 2>/dev/null || STOP_RC=$?
  unset "PID[$name]"
}

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  local i name
  for ((i = ${#ORDER[@]} - 1; i >= 0; i--)); do
    name="${ORDER[$i]}"
    [ -n "${PID[$name]:-}" ] && stop "$name"
  done
  sleep 0.2 # let the output prefixers drain
  if [ "$rc" -ne 0 ]; then
    echo "demo: FAILED${FAILED:+: $FAILED}" >&2
    echo "demo: logs kept in $TMP" >&2
  elif [ "${COREFLOW_DEMO_KEEP:-0}" = 1 ]; then
    echo "demo: files kept in $TMP"
  else
    rm -rf "$TMP"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'FAILED="interrupted"; exit 130' INT
trap 'FAILED="terminated"; exit 143' TERM

# A free TCP port on 127.0.0.1 for the relay listener (nothing answers a connect on it).
free_port() {
  local p _
  for _ in $(seq 1 100); do
    p=$((20000 + RANDOM % 40000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
      echo "$p"
      return 0
    fi
  done
  return 1
}

random_token() { od -An -tx1 -N32 /dev/urandom | tr -d ' \n'; }

RELAY_PORT="$(free_port)" || die "no free port found for the relay listener"
RELAY_ORIGIN="https://localhost:$RELAY_PORT"
BEARER="$(random_token)"
mkdir -p "$TMP/creds" "$TMP/ca"
chmod 700 "$TMP/creds"
# systemd-style credential: the file name is the credential name, the content the value (no newline).
printf '%s' "$BEARER" >"$TMP/creds/SERVEZONE_CLUSTER_RELAY_AUTHORIZATION"
printf '%s' "$BEARER" >"$TMP/cloudly-bearer"
chmod 600 "$TMP/creds/SERVEZONE_CLUSTER_RELAY_AUTHORIZATION" "$TMP/cloudly-bearer"

echo "Coreflow relay demo (working directory $TMP)"

say "1/5 starting the loopback Cloudly (relay origin $RELAY_ORIGIN, ${#NODES[@]} nodes expected)"
start cloudly "$CLOUDLY_BIN" --port 0 --bearer-file "$TMP/cloudly-bearer" --relay-origin "$RELAY_ORIGIN" \
  --ca-dir "$TMP/ca" --nodes "${#NODES[@]}"
wait_for cloudly '^cloudly listening at wss://' 1 10 || die "the loopback Cloudly did not start listening within 10s"
CLOUDLY_URL="$(sed -n 's/^cloudly listening at //p' "$TMP/cloudly.log" | head -n1)"
CA_FILE="$TMP/ca/ca.pem"
[ -s "$CA_FILE" ] || die "the loopback Cloudly did not write $CA_FILE"

say "2/5 starting the relay (CLOUDLY_URL=$CLOUDLY_URL, listener 127.0.0.1:$RELAY_PORT)"
start relay env \
  CLOUDLY_URL="$CLOUDLY_URL" \
  CREDENTIALS_DIRECTORY="$TMP/creds" \
  COREFLOW_NODE_ID=node-a \
  COREFLOW_RELAY_BIND_HOSTNAME=127.0.0.1 \
  COREFLOW_RELAY_BIND_PORT="$RELAY_PORT" \
  "$RELAY_BIN" --ca-file "$CA_FILE" --status-socket "$TMP/status.sock"
wait_for relay "$RELAY_READY_LINE" 1 "$READY_TIMEOUT" \
  || die "the relay did not print '$RELAY_READY_LINE' within ${READY_TIMEOUT}s"

say "3/5 starting ${#NODES[@]} simulated Pallet nodes: ${NODES[*]}"
for node in "${NODES[@]}"; do
  start "$node" "$PALLET_BIN" --url "wss://localhost:$RELAY_PORT/" --ca-file "$CA_FILE" --node-id "$node" \
    --bearer "$node-$(random_token)"
done

say "4/5 waiting for Cloudly's applyRuntimeAssignment to reach every node through the relay"
wait_for cloudly '^node .* acknowledged applyRuntimeAssignment$' "${#NODES[@]}" "$ACK_TIMEOUT" \
  || die "Cloudly saw fewer than ${#NODES[@]} acknowledgements within ${ACK_TIMEOUT}s"

say "5/5 the operator console's view of the relay"
CONSOLE_RC=0
QT_QPA_PLATFORM="${QT_QPA_PLATFORM:-offscreen}" timeout 20 "$CONSOLE_BIN" --text --socket "$TMP/status.sock" > >(prefix console "$TMP/console.log") 2>&1 \
  || CONSOLE_RC=$?
sleep 0.2
[ "$CONSOLE_RC" -eq 0 ] || die "the console exited with status $CONSOLE_RC"
grep -Eq '^ +ready +yes' "$TMP/console.log" || die "the console does not show the relay as ready"
grep -q "NODES (${#NODES[@]})" "$TMP/console.log" || die "the console does not show ${#NODES[@]} carried nodes"

say "stopping"
declare -A EXIT_RC=()
for ((i = ${#ORDER[@]} - 1; i >= 0; i--)); do
  name="${ORDER[$i]}"
  stop "$name"
  EXIT_RC[$name]=$STOP_RC
done
sleep 0.2

say "summary"
ACKS="$(grep -cE '^node .* acknowledged applyRuntimeAssignment$' "$TMP/cloudly.log" || true)"
SESSIONS="$(grep -c '^relay session registered' "$TMP/cloudly.log" || true)"
row() { printf '  %-44s %s\n' "$1" "$2"; }
row "Cloudly sessions registered by the relay:" "$SESSIONS"
row "nodes registered through the relay:" "$(grep -c '^node .* registered:' "$TMP/cloudly.log" || true)"
row "applyRuntimeAssignment acknowledgements:" "$ACKS of ${#NODES[@]}"
BAD=""
for name in "${ORDER[@]}"; do
  row "$name exit status after SIGTERM:" "${EXIT_RC[$name]}"
  [ "${EXIT_RC[$name]}" -eq 0 ] || BAD="$BAD $name"
done
[ -z "$BAD" ] || die "these processes did not exit cleanly on SIGTERM:$BAD"
echo "demo: OK"
