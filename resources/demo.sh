#!/usr/bin/env bash
# Coreflow relay demo: `./run demo [--keep]` builds, then runs   bash resources/demo.sh BUILD_DIR [--keep]
#
#   loopback Cloudly  <-- one TLS WebSocket session --  coreflow relay  <-- TLS WebSocket --  node-a, node-b, node-c
#     (and /v2/ -> docker-registry)  <-- image pulls --                  <-- ingress-1, skopeo
#                                           coreflow relay  -- HTTPS -->  node-a's loopback Corestore
#
# The outage story, with the operator console's overview printed after each step (between ==== lines,
# apart from the processes' own [name]-prefixed log lines):
#  1. A loopback Cloudly starts (a fresh test CA, a random relay bearer, a demo route table); its cluster
#     document names node-a's loopback Corestore (coreflow-loopback-corestore) and, when docker-registry
#     and skopeo are installed, its origin also serves a local docker-registry under /v2/.
#  2. The relay starts: CLOUDLY_URL points at it, the bearer comes from a systemd-style credentials
#     directory, the listener serves 127.0.0.1:<port> with the certificate Cloudly issues for localhost.
#  3. Three simulated Pallet nodes register through the relay; Cloudly pushes applyRuntimeAssignment
#     to each through the relay and each acknowledges.
#  4. Cloudly hands the relay a DNS lease renewal run per node (the escrow holds them).
#  5. Cloudly goes away: the console shows NOT READY, and the escrow releases each node's current
#     renewal, which the node takes.
#  6. Cloudly comes back: the relay reconnects and its re-registration wave asks every node to register
#     again under the new session; they do.
#  7. An ingress registers through the relay and pulls its route table.
#  8. skopeo pulls a small image through the relay's /v2/ (from the docker-registry behind Cloudly's
#     origin); without docker-registry or skopeo the demo says so and goes on. Cloudly asks node-a's
#     Corestore for its inventory through the relay; the console shows the Corestore node.
#  9. The VPN hub: Cloudly pushes a network of node-a and node-b; the hub binds, two simulated members
#     (coreflow-simulated-vpn-member) connect, authenticate and send a packet each way through it. The
#     hub refuses a loopback address (D-20), so it binds the host's first global IPv4 address
#     (COREFLOW_DEMO_VPN_ADDRESS overrides it; "none" leaves the step out, said as such).
# 10. A platform binding: Cloudly pushes a config whose desired state holds one objectstorage binding
#     on node-a under a publication grant; the relay reconciles it with node-a's Corestore, seals the
#     material to Cloudly (which opens it) and reports the binding ready.
# 11. A backup with replication: Cloudly asks for a backup of a service on node-a; the relay has the
#     Corestore snapshot it and carries the database closure to Cloudly, which checks size and SHA-256
#     and issues its receipt before the backup answers; the relay's status (`backups.recent`, D-96)
#     shows the closure stored with all its bytes, beside Cloudly's receipt and the relay's log line.
# 12. `coreflow-console --check` and `--metrics`, then everything is stopped; with --keep (or
#     COREFLOW_DEMO_KEEP=1) the pieces keep running and the demo prints how to look and how to stop.
#
# Each step is checked against the relay's status (`coreflow-console --json`, read with jq) or, where
# the status has no member for it, against what a peer received; "demo: OK" means every step shown
# happened, and names the steps it left out and why.
#
# Exit 0 on success; on any failure a message naming the step, non-zero exit, and the logs are kept
# (their directory is printed). Child processes are always stopped (trap) unless kept.
set -euo pipefail

BUILD_DIR="${1:-}"
KEEP="${COREFLOW_DEMO_KEEP:-0}"
[ "${2:-}" = "--keep" ] && KEEP=1
if [ -z "$BUILD_DIR" ] || [ ! -d "$BUILD_DIR" ] || { [ -n "${2:-}" ] && [ "${2:-}" != "--keep" ]; }; then
  echo "usage: $0 BUILD_DIR [--keep]   (BUILD_DIR: the CMake build directory, e.g. ./build)" >&2
  exit 2
fi
BUILD_DIR="$(cd "$BUILD_DIR" && pwd)"

CLOUDLY_BIN="$BUILD_DIR/tests/peers/coreflow-loopback-cloudly"
PALLET_BIN="$BUILD_DIR/tests/peers/coreflow-simulated-pallet"
RELAY_BIN="$BUILD_DIR/service/coreflow"
CONSOLE_BIN="$BUILD_DIR/console/coreflow-console"
INGRESS_BIN="$BUILD_DIR/tests/peers/coreflow-loopback-ingress"
VPN_MEMBER_BIN="$BUILD_DIR/tests/peers/coreflow-simulated-vpn-member"
CORESTORE_BIN="$BUILD_DIR/tests/peers/coreflow-loopback-corestore"
SOURCE_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MAKE_IMAGE="$SOURCE_DIR/tests/registry/peers/make_oci_layout.py"
NODES=(node-a node-b node-c)
RELAY_READY_LINE="the relay is open for Cloudly dispatch"
READY_TIMEOUT=30      # seconds for the relay to open
ACK_TIMEOUT=30        # seconds for all nodes to acknowledge
STOP_TIMEOUT=10       # seconds each process gets to exit after SIGTERM

for bin in "$CLOUDLY_BIN" "$PALLET_BIN" "$RELAY_BIN" "$CONSOLE_BIN" "$INGRESS_BIN" "$CORESTORE_BIN" "$VPN_MEMBER_BIN"; do
  if [ ! -x "$bin" ]; then
    echo "demo: FAILED: $bin is missing or not executable (did the build succeed?)" >&2
    exit 1
  fi
done
command -v jq >/dev/null 2>&1 || { echo "demo: FAILED: jq is missing (Debian package jq): the demo reads the relay's status with it" >&2; exit 1; }

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
    # After a --keep demo has ended the pieces go on logging to their files only.
    [ -e "$TMP/quiet" ] || printf '[%-9s] %s\n' "$name" "$line"
  done
}

# start NAME COMMAND...   runs COMMAND in the background, output prefixed and logged to $TMP/NAME.log
start() {
  local name="$1"; shift
  local log="$TMP/$name.log"
  : >"$log"
  # A background command's stdin is /dev/null unless given explicitly: START_INPUT names a file (FIFO).
  "$@" <"${START_INPUT:-/dev/null}" > >(prefix "$name" "$log") 2>&1 &
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
  if [ "$rc" -eq 0 ] && [ "$KEEP" = 1 ] && [ -n "${KEPT:-}" ]; then
    exit 0
  fi
  local i name
  for ((i = ${#ORDER[@]} - 1; i >= 0; i--)); do
    name="${ORDER[$i]}"
    [ -n "${PID[$name]:-}" ] && stop "$name"
  done
  sleep 0.2 # let the output prefixers drain
  if [ "$rc" -ne 0 ]; then
    echo "demo: FAILED${FAILED:+: $FAILED}" >&2
    echo "demo: logs kept in $TMP" >&2
  elif [ "$KEEP" = 1 ]; then
    echo "demo: files kept in $TMP"
  else
    rm -rf "$TMP"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'FAILED="interrupted"; exit 130' INT
trap 'FAILED="terminated"; exit 143' TERM

# A free TCP port on 127.0.0.1 for the relay listener (nothing answers a connect on it), below the
# kernel's ephemeral range: a port an outgoing connection holds answers no connect but cannot be bound.
EPHEMERAL_LOW="$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)"
[ "${EPHEMERAL_LOW:-0}" -gt 21000 ] 2>/dev/null || EPHEMERAL_LOW=32768
random_port() { echo $((20000 + RANDOM % (EPHEMERAL_LOW - 20000))); }
free_port() {
  local p _
  for _ in $(seq 1 100); do
    p="$(random_port)"
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

# The registry behind Cloudly's origin, when docker-registry and skopeo are installed (never installed
# by the demo: Debian's docker-registry package starts a system service where systemd runs).
REGISTRY_PORT=""
PULL_SKIPPED=""
if ! command -v docker-registry >/dev/null 2>&1 || ! command -v skopeo >/dev/null 2>&1; then
  PULL_SKIPPED="docker-registry or skopeo is not installed (Debian packages docker-registry, skopeo)"
elif [ ! -x /usr/bin/python3 ] || [ ! -f "$MAKE_IMAGE" ]; then
  PULL_SKIPPED="/usr/bin/python3 or $MAKE_IMAGE is missing"
fi

# The VPN hub's address: D-20 refuses loopback, so the host's first global IPv4 address (only this
# host's own members dial it).
VPN_SKIPPED=""
VPN_ADDRESS="${COREFLOW_DEMO_VPN_ADDRESS:-}"
if [ -z "$VPN_ADDRESS" ]; then
  VPN_ADDRESS="$(ip -4 -o addr show scope global 2>/dev/null | awk '{print $4}' | cut -d/ -f1 | head -n1 || true)"
  [ -n "$VPN_ADDRESS" ] || VPN_ADDRESS="$(hostname -I 2>/dev/null | tr ' ' '\n' | grep -E '^[0-9]+(\.[0-9]+){3}$' | grep -v '^127\.' | head -n1 || true)"
  [ -n "$VPN_ADDRESS" ] || VPN_SKIPPED="this host has no global IPv4 address, and the hub refuses a loopback one (D-20)"
elif [ "$VPN_ADDRESS" = none ]; then
  VPN_SKIPPED="COREFLOW_DEMO_VPN_ADDRESS=none"
fi
VPN_ENV=()
if [ -z "$VPN_SKIPPED" ]; then
  VPN_PORT="$(random_port)"
  VPN_ENV=(COREFLOW_VPN_BIND_HOSTNAME="$VPN_ADDRESS" COREFLOW_VPN_QUIC_PORT="$VPN_PORT")
fi
SKIPPED_STEPS=()
[ -z "$PULL_SKIPPED" ] || SKIPPED_STEPS+=("image pull")
[ -z "$VPN_SKIPPED" ] || SKIPPED_STEPS+=("VPN hub")

# status JQ-FILTER   true when the relay's status object (coreflow-console --json) passes the filter
status() {
  "$CONSOLE_BIN" --json --socket "$TMP/status.sock" 2>/dev/null >"$TMP/status.json" || return 1
  jq -e "$1" "$TMP/status.json" >/dev/null
}

# wait_status JQ-FILTER TIMEOUT   waits until the status passes the filter
wait_status() {
  local deadline=$((SECONDS + $2))
  until status "$1"; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep 0.2
  done
}

# overview TITLE   the console's overview (the OVERVIEW section of --text), set apart from the log lines
overview() {
  local out rc=0
  out="$(QT_QPA_PLATFORM="${QT_QPA_PLATFORM:-offscreen}" timeout 20 "$CONSOLE_BIN" --text --socket "$TMP/status.sock" 2>&1)" || rc=$?
  printf '%s\n' "$out" >>"$TMP/console.log"
  [ "$rc" -eq 0 ] || die "the console exited with status $rc: $out"
  {
    printf '\n==== console: %s ====\n' "$1"
    printf '%s\n' "$out" | sed -n '/^OVERVIEW/,/^$/p' | sed '/^$/d'
    printf '%s\n' "$out" | sed -n "${2:-/^XXXX/}"',/^$/p' | sed '/^$/d'
    printf '====\n\n'
  } >"$TMP/overview.txt"
  cat "$TMP/overview.txt"
  LAST_VIEW="$out"
}

# The closing line: OK, and which steps this run left out (each said where it was skipped).
demo_ok() {
  if [ "${#SKIPPED_STEPS[@]}" -eq 0 ]; then
    echo "demo: OK"
  else
    local list="" step
    for step in "${SKIPPED_STEPS[@]}"; do list="${list:+$list, }$step"; done
    echo "demo: OK (skipped: $list; see the SKIPPED lines above)"
  fi
}

# cloudly_count PATTERN   lines of the Cloudly log matching PATTERN
cloudly_count() { grep -cE -- "$1" "$TMP/cloudly.log" 2>/dev/null || true; }

mkfifo "$TMP/cloudly.ctl"
exec 7<>"$TMP/cloudly.ctl" # held open read-write: the loopback Cloudly reads its commands from it
tell_cloudly() { printf '%s\n' "$1" >&7; }

REGISTRY_WORDS="the registry"
[ -z "$PULL_SKIPPED" ] || REGISTRY_WORDS="no registry (see step 8)"
say "1/12 starting node-a's loopback Corestore, $REGISTRY_WORDS and the loopback Cloudly (relay origin $RELAY_ORIGIN)"
random_token >"$TMP/corestore-token"
chmod 600 "$TMP/corestore-token"
start corestore "$CORESTORE_BIN" --port 0 --token-file "$TMP/corestore-token" --ca-dir "$TMP/corestore-ca" --closure-bytes 3000000
wait_for corestore '^corestore listening at https://' 1 10 || die "the loopback Corestore did not start listening within 10s"
CORESTORE_ENDPOINT="$(sed -n 's/^corestore listening at //p' "$TMP/corestore.log" | head -n1)"
CLOUDLY_REGISTRY=()
if [ -z "$PULL_SKIPPED" ]; then
  REGISTRY_PORT="$(free_port)" || die "no free port found for the registry"
  mkdir -p "$TMP/registry"
  printf 'version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: %s\nhttp:\n  addr: 127.0.0.1:%s\n' \
    "$TMP/registry" "$REGISTRY_PORT" >"$TMP/registry.yml"
  start registry docker-registry serve "$TMP/registry.yml"
  CLOUDLY_REGISTRY=(--registry-port "$REGISTRY_PORT")
fi
START_INPUT="$TMP/cloudly.ctl" start cloudly "$CLOUDLY_BIN" --port 0 --bearer-file "$TMP/cloudly-bearer" \
  --relay-origin "$RELAY_ORIGIN" --ca-dir "$TMP/ca" --nodes "${#NODES[@]}" \
  --corestore "node-a=$CORESTORE_ENDPOINT" --corestore-token-file "$TMP/corestore-token" "${CLOUDLY_REGISTRY[@]}"
wait_for cloudly '^cloudly listening at wss://' 1 10 || die "the loopback Cloudly did not start listening within 10s"
CLOUDLY_URL="$(sed -n 's/^cloudly listening at //p' "$TMP/cloudly.log" | head -n1)"
[ -s "$TMP/ca/ca.pem" ] || die "the loopback Cloudly did not write $TMP/ca/ca.pem"
[ -s "$TMP/corestore-ca/ca.pem" ] || die "the loopback Corestore did not write $TMP/corestore-ca/ca.pem"
# The relay trusts both test CAs (Cloudly's issued the listener certificate, the Corestore's its own).
CA_FILE="$TMP/relay-ca.pem"
cat "$TMP/ca/ca.pem" "$TMP/corestore-ca/ca.pem" >"$CA_FILE"

say "2/12 starting the relay (CLOUDLY_URL=$CLOUDLY_URL, listener 127.0.0.1:$RELAY_PORT${VPN_PORT:+, VPN hub $VPN_ADDRESS:$VPN_PORT/udp})"
start relay env "${VPN_ENV[@]}" \
  CLOUDLY_URL="$CLOUDLY_URL" \
  CREDENTIALS_DIRECTORY="$TMP/creds" \
  COREFLOW_NODE_ID=node-a \
  COREFLOW_RELAY_BIND_HOSTNAME=127.0.0.1 \
  COREFLOW_RELAY_BIND_PORT="$RELAY_PORT" \
  "$RELAY_BIN" --ca-file "$CA_FILE" --status-socket "$TMP/status.sock"
NODE_CA="$TMP/ca/ca.pem"
wait_for relay "$RELAY_READY_LINE" 1 "$READY_TIMEOUT" \
  || die "the relay did not print '$RELAY_READY_LINE' within ${READY_TIMEOUT}s"

say "3/12 starting ${#NODES[@]} simulated Pallet nodes: ${NODES[*]}"
for node in "${NODES[@]}"; do
  start "$node" "$PALLET_BIN" --url "wss://localhost:$RELAY_PORT/" --ca-file "$NODE_CA" --node-id "$node" \
    --bearer "$node-$(random_token)"
done
wait_for cloudly '^node .* acknowledged applyRuntimeAssignment$' "${#NODES[@]}" "$ACK_TIMEOUT" \
  || die "Cloudly saw fewer than ${#NODES[@]} acknowledgements within ${ACK_TIMEOUT}s"
sleep 0.3
overview "nodes registered, pushes acknowledged" '/^NODES/'
grep -Eq '^  health +HEALTHY' <<<"$LAST_VIEW" || die "the console does not show the relay as healthy"
grep -q "NODES (${#NODES[@]})" <<<"$LAST_VIEW" || die "the console does not show ${#NODES[@]} carried nodes"

say "4/12 Cloudly hands the relay a DNS lease renewal run for each node (the escrow)"
tell_cloudly hold
wait_for cloudly '^relay holds [0-9]+ renewals for node ' "${#NODES[@]}" 10 || die "the relay did not hold the renewal runs"

say "5/12 Cloudly goes away"
REGISTERED_BEFORE="$(cloudly_count '^node .* registered:')"
tell_cloudly away
wait_for relay 'Cloudly session lost' 1 10 || die "the relay did not notice that Cloudly went away"
for node in "${NODES[@]}"; do
  wait_for "$node" 'took DNS lease renewal sequence' 1 10 || die "$node was not offered its renewal by the escrow"
done
sleep 0.3
overview "Cloudly away: NOT READY, the escrow holds and releases renewals" '/^ESCROW/'
grep -Eq '^! health +NOT READY' <<<"$LAST_VIEW" || die "the console does not show NOT READY while Cloudly is away"
CHECK_RC=0
"$CONSOLE_BIN" --check --socket "$TMP/status.sock" 2>"$TMP/check.txt" >/dev/null || CHECK_RC=$?
echo "coreflow-console --check: exit $CHECK_RC: $(cat "$TMP/check.txt")"
[ "$CHECK_RC" -eq 10 ] || die "--check exited $CHECK_RC, not 10 (no Cloudly session)"
sleep 2 # the relay keeps redialling (backoff) meanwhile

say "6/12 Cloudly comes back: the relay reconnects and its re-registration wave runs"
tell_cloudly back
wait_for relay 'nodes registered under an older carrier are asked to register again' 1 30 \
  || die "the relay did not start a re-registration wave"
deadline=$((SECONDS + 20))
while [ "$(cloudly_count '^node .* registered:')" -lt $((REGISTERED_BEFORE + ${#NODES[@]})) ]; do
  [ "$SECONDS" -lt "$deadline" ] || die "the nodes did not all register again within 20s"
  sleep 0.2
done
sleep 0.3
overview "Cloudly back, nodes registered again" '/^CLOUDLY SESSION/'
grep -Eq '^  health +HEALTHY' <<<"$LAST_VIEW" || die "the console does not show the relay healthy again"

say "7/12 an ingress registers through the relay and pulls its route table"
start ingress "$INGRESS_BIN" --url "wss://localhost:$RELAY_PORT/" --ca-file "$NODE_CA" --ingress-id ingress-1 --node-id node-a
wait_for ingress '^ingress ingress-1 pulled route table revision 1: 2 routes' 1 15 || die "the ingress did not pull its route table"
sleep 0.3
overview "ingress bound, route table pulled" '/^INGRESS/'

if [ -n "$PULL_SKIPPED" ]; then
  say "8/12 an image pull through the relay (SKIPPED), and node-a's Corestore through the relay"
else
  say "8/12 an image pull through the relay, and node-a's Corestore through the relay"
fi
if [ -n "$PULL_SKIPPED" ]; then
  echo "image pull SKIPPED: $PULL_SKIPPED: no image is pulled through the relay in this run (the test suite's tst_relayimagepull pulls through a running relay)"
else
  deadline=$((SECONDS + 10))
  until (exec 3<>"/dev/tcp/127.0.0.1/$REGISTRY_PORT") 2>/dev/null; do
    [ "$SECONDS" -lt "$deadline" ] || die "docker-registry did not listen on 127.0.0.1:$REGISTRY_PORT within 10s"
    sleep 0.2
  done
  /usr/bin/python3 "$MAKE_IMAGE" "$TMP/image" v1 1000000 >/dev/null || die "could not build the demo image"
  # Pushed straight to the registry (plain HTTP on loopback), then pulled by a node's client through
  # the relay's listener: https://localhost:<relay port>/v2/..., trusting the relay's CA.
  timeout 60 skopeo copy --quiet --preserve-digests --dest-tls-verify=false "oci:$TMP/image:v1" \
    "docker://127.0.0.1:$REGISTRY_PORT/demo/app:v1" >"$TMP/skopeo-push.log" 2>&1 \
    || die "skopeo could not push the demo image to the registry (see $TMP/skopeo-push.log)"
  mkdir -p "$TMP/pull-certs" && cp "$NODE_CA" "$TMP/pull-certs/ca.crt"
  timeout 60 skopeo copy --quiet --src-cert-dir "$TMP/pull-certs" "docker://localhost:$RELAY_PORT/demo/app:v1" \
    "dir:$TMP/pulled" >"$TMP/skopeo-pull.log" 2>&1 \
    || die "skopeo could not pull the demo image through the relay (see $TMP/skopeo-pull.log)"
  echo "skopeo pulled demo/app:v1 through the relay: $(du -sk "$TMP/pulled" | cut -f1) KiB in $(ls "$TMP/pulled" | wc -l) files"
fi
tell_cloudly "inventory node-a"
wait_for cloudly '^corestore inventory of node node-a' 1 15 || die "Cloudly got no Corestore inventory answer for node-a"
grep -q '^corestore inventory of node node-a: [0-9]* services' "$TMP/cloudly.log" \
  || die "node-a's Corestore inventory was not answered: $(grep '^corestore inventory' "$TMP/cloudly.log")"
sleep 0.3
if [ -n "$PULL_SKIPPED" ]; then
  overview "no image pulled (skipped), Corestore asked" '/^CORESTORE/'
else
  overview "image pulled, Corestore asked" '/^CORESTORE/'
fi
grep -Eq '^  +node-a +yes +answered' <<<"$LAST_VIEW" || die "the console does not show node-a's Corestore as answered"
if [ -z "$PULL_SKIPPED" ]; then
  "$CONSOLE_BIN" --metrics --socket "$TMP/status.sock" | grep -E '^coreflow_relay_registry_(requests|body_bytes)_total' \
    || die "--metrics shows no registry counters"
fi

say "9/12 the VPN hub: Cloudly pushes a network, two members connect and send a packet each way${VPN_SKIPPED:+ (SKIPPED)}"
if [ -n "$VPN_SKIPPED" ]; then
  echo "VPN hub SKIPPED: $VPN_SKIPPED: the relay runs without a hub in this run (the test suite's tst_vpnhub binds one on loopback)"
else
  HUB_KEY="$(sed -n 's/^relay advertises its VPN hub at .*, public key //p' "$TMP/cloudly.log" | tail -n1)"
  [ -n "$HUB_KEY" ] || die "the relay advertised no VPN hub in registerClusterRelay"
  for m in node-a node-b; do
    "$VPN_MEMBER_BIN" --key-file "$TMP/vpn-$m.key" --print-public-key >"$TMP/vpn-$m.pub" || die "could not make $m's VPN key"
  done
  tell_cloudly "vpn node-a=$(cat "$TMP/vpn-node-a.pub")@100.96.0.10 node-b=$(cat "$TMP/vpn-node-b.pub")@100.96.0.11"
  wait_for cloudly '^relay answered applyClusterVpnNetwork revision 1' 1 10 || die "the relay did not answer the VPN network push"
  grep -q '^relay answered applyClusterVpnNetwork revision 1: applied$' "$TMP/cloudly.log" \
    || die "the relay did not apply the VPN network: $(grep '^relay answered applyClusterVpnNetwork' "$TMP/cloudly.log" | tail -n1)"
  start vpn-a "$VPN_MEMBER_BIN" --key-file "$TMP/vpn-node-a.key" --node-id node-a --hub "$VPN_ADDRESS:$VPN_PORT" \
    --hub-public-key "$HUB_KEY" --address 100.96.0.10 --send-to 100.96.0.11
  start vpn-b "$VPN_MEMBER_BIN" --key-file "$TMP/vpn-node-b.key" --node-id node-b --hub "$VPN_ADDRESS:$VPN_PORT" \
    --hub-public-key "$HUB_KEY" --address 100.96.0.11 --send-to 100.96.0.10
  wait_for vpn-a 'received a [0-9]+-byte packet from 100.96.0.11' 1 15 || die "node-a's VPN member got no packet from node-b through the hub"
  wait_for vpn-b 'received a [0-9]+-byte packet from 100.96.0.10' 1 15 || die "node-b's VPN member got no packet from node-a through the hub"
  wait_status '.vpn.state == "bound" and .vpn.networkRevision == 1 and .vpn.membersConnected == 2
               and ([.vpn.members[] | select(.connected and .packetsIn >= 1 and .packetsOut >= 1)] | length) == 2' 10 \
    || die "the relay's status does not show the hub bound with both members connected and packets relayed: $(jq -c .vpn "$TMP/status.json")"
  sleep 0.3
  overview "VPN hub bound, two members connected" '/^VPN HUB/'
fi

say "10/12 a platform binding: Cloudly grants one, the relay reconciles it with node-a's Corestore and publishes it"
tell_cloudly "binding node-a svc-demo files"
wait_for cloudly '^binding svc-demo/files on node node-a reported ' 1 20 || die "the relay reported nothing for binding svc-demo/files"
wait_status '[.bindings[] | select(.name == "files" and .serviceId == "svc-demo" and .nodeId == "node-a" and .status == "ready")] | length == 1' 20 \
  || die "the relay's status does not show binding svc-demo/files ready: $(jq -c .bindings "$TMP/status.json")"
grep -q '^relay published the credential material of binding svc-demo/files: envelope opened$' "$TMP/cloudly.log" \
  || die "Cloudly did not open a published envelope for binding svc-demo/files"
grep -q '^binding svc-demo/files on node node-a reported ready$' "$TMP/cloudly.log" || die "the relay did not report binding svc-demo/files ready"
sleep 0.3
overview "binding reconciled, published and reported ready" '/^BINDINGS/'

say "11/12 a backup with replication: node-a's Corestore snapshots, the relay carries the database closure to Cloudly"
tell_cloudly "backup node-a svc-demo demo-backup-1"
wait_for cloudly '^backup demo-backup-1 of service svc-demo on node node-a ' 1 30 || die "the backup was not answered within 30s"
grep -Eq '^backup demo-backup-1 of service svc-demo on node node-a answered: database snapshot [^ ]+; closure received: 3000000 bytes, sha256 [0-9a-f]{64}, receipt issued$' "$TMP/cloudly.log" \
  || die "the backup's closure did not reach Cloudly whole: $(grep '^backup demo-backup-1' "$TMP/cloudly.log")"
wait_for relay 'backup demo-backup-1: the database closure of service svc-demo was accepted by Cloudly' 1 5 \
  || die "the relay did not log the closure's acceptance"
echo "Cloudly: $(grep '^backup demo-backup-1' "$TMP/cloudly.log")"
wait_status '[.backups.recent[] | select(.backupId == "demo-backup-1" and .serviceId == "svc-demo" and .nodeId == "node-a"
               and .direction == "send" and .outcome == "stored" and .bytesMoved == 3000000)] | length == 1' 10 \
  || die "the relay's status does not show backup demo-backup-1's closure stored: $(jq -c .backups "$TMP/status.json")"
echo "relay status: backups.recent holds demo-backup-1's closure, stored, 3000000 bytes sent"

say "12/12 monitoring: --check and --metrics"
"$CONSOLE_BIN" --check --socket "$TMP/status.sock" || die "--check does not say ready"
"$CONSOLE_BIN" --metrics --socket "$TMP/status.sock" | grep -E '^coreflow_relay_(ready|nodes_carried|escrow_offers_total|reregistration_waves_total|cloudly_reconnects_total|certificate_expiry_seconds)' \
  || die "--metrics printed no relay metrics"

# The closing note's material, taken while the relay still runs: the final overview in text and a
# screenshot of the window's overview (coreflow-console --screenshot, offscreen: no display needed).
# The screenshot lies beside the demo's directory, so a successful run (which deletes it) keeps it.
FINAL_VIEW="$(timeout 20 "$CONSOLE_BIN" --text --socket "$TMP/status.sock" 2>&1)" || die "the console could not read the final status: $FINAL_VIEW"
SCREENSHOT="$(mktemp --suffix=.png "$(dirname "$TMP")/coreflow-demo-overview.XXXXXX")"
SHOT_OUT="$(QT_QPA_PLATFORM="${COREFLOW_DEMO_SCREENSHOT_PLATFORM:-offscreen}" timeout 30 "$CONSOLE_BIN" --screenshot "$SCREENSHOT" \
  --socket "$TMP/status.sock" 2>&1)" || { rm -f "$SCREENSHOT"; SCREENSHOT=""; echo "screenshot: not written: $SHOT_OUT"; }
[ -z "$SCREENSHOT" ] || [ -s "$SCREENSHOT" ] || { rm -f "$SCREENSHOT"; SCREENSHOT=""; echo "screenshot: the console wrote an empty file"; }

if [ "$KEEP" = 1 ]; then
  touch "$TMP/quiet"
  KEPT=1
  PIDS=""
  for name in "${ORDER[@]}"; do PIDS="$PIDS ${PID[$name]}"; done
  say "kept running (logs in $TMP/*.log)"
  echo "  look:   $CONSOLE_BIN --socket $TMP/status.sock          (the window; --watch in a terminal)"
  echo "          $CONSOLE_BIN --text --socket $TMP/status.sock"
  echo "  stop:   kill$PIDS; rm -rf $TMP"
  demo_ok
  exit 0
fi

say "stopping"
declare -A EXIT_RC=()
for ((i = ${#ORDER[@]} - 1; i >= 0; i--)); do
  name="${ORDER[$i]}"
  stop "$name"
  EXIT_RC[$name]=$STOP_RC
done
sleep 0.2

say "summary"
row() { printf '  %-44s %s\n' "$1" "$2"; }
row "Cloudly sessions registered by the relay:" "$(cloudly_count '^relay session registered')"
row "node registrations through the relay:" "$(cloudly_count '^node .* registered:')"
row "applyRuntimeAssignment acknowledgements:" "$(cloudly_count '^node .* acknowledged applyRuntimeAssignment$')"
row "renewals released by the escrow:" "$(cat "$TMP"/node-*.log | grep -c 'took DNS lease renewal' || true)"
row "image pull through the relay:" "${PULL_SKIPPED:+SKIPPED: }${PULL_SKIPPED:-demo/app:v1 pulled by skopeo}"
row "Corestore inventory through the relay:" "$(grep -c '^corestore inventory of node node-a: [0-9]* services' "$TMP/cloudly.log" || true) answer(s)"
row "VPN hub:" "${VPN_SKIPPED:+SKIPPED: }${VPN_SKIPPED:-bound, 2 members connected, packets relayed both ways}"
row "binding svc-demo/files:" "$(grep -c '^binding svc-demo/files on node node-a reported ready$' "$TMP/cloudly.log" || true) ready report(s)"
row "replicated backup closures received:" "$(grep -c '^backup demo-backup-1 .* receipt issued$' "$TMP/cloudly.log" || true)"
BAD=""
for name in "${ORDER[@]}"; do
  row "$name exit status after SIGTERM:" "${EXIT_RC[$name]}"
  # docker-registry is not ours: how it exits on SIGTERM is its own business.
  [ "$name" = registry ] || [ "${EXIT_RC[$name]}" -eq 0 ] || BAD="$BAD $name"
done
[ -z "$BAD" ] || die "these processes did not exit cleanly on SIGTERM:$BAD"
echo
echo "The relay's final overview (coreflow-console --text, taken before the stop):"
printf '%s\n' "$FINAL_VIEW" | sed -n '/^OVERVIEW/,/^$/p' | sed '/^$/d'
echo
if [ -n "$SCREENSHOT" ]; then
  echo "Screenshot of the console window's overview: $SCREENSHOT"
else
  echo "Screenshot of the console window's overview: none (see the line above)"
fi
demo_ok
