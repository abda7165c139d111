#!/usr/bin/env bash
# bench/vpn/run.sh BUILD_DIR [seconds] [packetBytes]: the VPN hub against a plain UDP forwarder.
set -euo pipefail
build="${1:?build directory}"
"$build/bench/vpn/coreflow-vpn-bench" "${2:-5}" "${3:-1376}"
