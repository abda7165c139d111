#!/usr/bin/env bash
# demo_without_registry (DM-01, issue 24): the demo's branch for a host without docker-registry or
# skopeo, run for real. The demo (resources/demo.sh) runs with a PATH that holds every program of the
# test's PATH except those two, and with COREFLOW_DEMO_VPN_ADDRESS=none (tests use loopback only, and the
# hub refuses loopback, D-20). It must still end "demo: OK", say plainly on the step and in the summary
# what it skipped and why, start no registry and pull nothing.
#   demo_without_registry.sh BUILD_DIR DEMO_SCRIPT
set -euo pipefail
BUILD_DIR="$1"
DEMO="$2"
work="$(mktemp -d "${TMPDIR:-/tmp}/demo-no-registry.XXXXXX")"
trap 'rm -rf "$work"' EXIT

mkdir "$work/bin"
IFS=: read -ra dirs <<<"$PATH"
for d in "${dirs[@]}"; do
  [ -d "$d" ] || continue
  # One ln per directory; a name an earlier directory already gave is kept (PATH order), its error dropped.
  find "$d" -maxdepth 1 \( -type f -o -type l \) -executable ! -name skopeo ! -name docker-registry \
    -exec ln -s -t "$work/bin" {} + 2>/dev/null || true
done
if PATH="$work/bin" command -v skopeo >/dev/null 2>&1 || PATH="$work/bin" command -v docker-registry >/dev/null 2>&1; then
  echo "FAIL: the reduced PATH still finds skopeo or docker-registry" >&2
  exit 1
fi

rc=0
PATH="$work/bin" COREFLOW_DEMO_VPN_ADDRESS=none TMPDIR="$work" QT_QPA_PLATFORM=offscreen \
  timeout 240 bash "$DEMO" "$BUILD_DIR" >"$work/out.txt" 2>&1 || rc=$?
fail() {
  echo "FAIL: $*" >&2
  echo "---- demo output ----" >&2
  cat "$work/out.txt" >&2
  exit 1
}
[ "$rc" -eq 0 ] || fail "the demo exited $rc"
expect_line() { grep -qxF -- "$1" "$work/out.txt" || fail "no line: $1"; }
grep -qE "^== 1/12 starting node-a's loopback Corestore, no registry \(see step 8\) and the loopback Cloudly" "$work/out.txt" \
  || fail "step 1 does not say that no registry is started"
expect_line "== 8/12 an image pull through the relay (SKIPPED), and node-a's Corestore through the relay"
expect_line "==== console: no image pulled (skipped), Corestore asked ===="
expect_line "== 9/12 the VPN hub: Cloudly pushes a network, two members connect and send a packet each way (SKIPPED)"
expect_line "image pull SKIPPED: docker-registry or skopeo is not installed (Debian packages docker-registry, skopeo): no image is pulled through the relay in this run (the test suite's tst_relayimagepull pulls through a running relay)"
expect_line "VPN hub SKIPPED: COREFLOW_DEMO_VPN_ADDRESS=none: the relay runs without a hub in this run (the test suite's tst_vpnhub binds one on loopback)"
grep -qE '^  image pull through the relay: +SKIPPED: docker-registry or skopeo is not installed' "$work/out.txt" \
  || fail "the summary does not say the image pull was skipped"
grep -qE '^  VPN hub: +SKIPPED: COREFLOW_DEMO_VPN_ADDRESS=none$' "$work/out.txt" || fail "the summary does not say the VPN hub was skipped"
[ "$(tail -n1 "$work/out.txt")" = "demo: OK (skipped: image pull, VPN hub; see the SKIPPED lines above)" ] \
  || fail "the last line is not the OK line naming both skipped steps: $(tail -n1 "$work/out.txt")"
! grep -q 'skopeo pulled' "$work/out.txt" || fail "the demo claims a pull"
! grep -q '^\[registry' "$work/out.txt" || fail "a registry process was started"
! grep -q 'coreflow_relay_registry_' "$work/out.txt" || fail "registry counters were printed as if a pull had run"
# The steps that do not need a registry still ran and were checked.
grep -qE '^  binding svc-demo/files: +1 ready report\(s\)$' "$work/out.txt" || fail "the binding step did not report ready"
grep -qE '^  replicated backup closures received: +1$' "$work/out.txt" || fail "the backup step did not carry its closure"
echo "PASS: demo without docker-registry and skopeo: OK, both skips said plainly"
