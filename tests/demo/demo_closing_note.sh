#!/usr/bin/env bash
# demo_closing_note (issue 24, "Done when": "the closing note shows the overview in text and points at
# the screenshots"): the demo (resources/demo.sh) is run for real, like demo_without_registry (no VPN
# address: tests use loopback only). What it prints after its last step ("== summary" to the end) must
# hold the console's OVERVIEW in text and name at least one screenshot file (.png) that exists.
#   demo_closing_note.sh BUILD_DIR DEMO_SCRIPT
set -euo pipefail
BUILD_DIR="$1"
DEMO="$2"
work="$(mktemp -d "${TMPDIR:-/tmp}/demo-closing-note.XXXXXX")"
trap 'rm -rf "$work"' EXIT
rc=0
COREFLOW_DEMO_VPN_ADDRESS=none TMPDIR="$work" QT_QPA_PLATFORM=offscreen \
  timeout 240 bash "$DEMO" "$BUILD_DIR" >"$work/out.txt" 2>&1 || rc=$?
fail() {
  echo "FAIL: $*" >&2
  echo "---- demo output after '== summary' ----" >&2
  sed -n '/^== summary$/,$p' "$work/out.txt" >&2
  exit 1
}
[ "$rc" -eq 0 ] || fail "the demo exited $rc"
sed -n '/^== summary$/,$p' "$work/out.txt" >"$work/closing.txt"
[ -s "$work/closing.txt" ] || fail "no '== summary' closing note"
grep -q '^OVERVIEW$' "$work/closing.txt" || fail "the closing note does not show the console's OVERVIEW"
grep -q '^  health ' "$work/closing.txt" || fail "the closing note's overview has no health line"
found=""
while read -r png; do
  [ -f "$png" ] && found="$png"
done < <(grep -oE '[^ ]*[.]png' "$work/closing.txt" || true)
[ -n "$found" ] || fail "the closing note points at no screenshot (.png) that exists"
echo "PASS: the closing note shows the overview and points at $found"
