#pragma once
// Fixture snapshots for the console tests: fixed times and values, so text/JSON goldens and GUI
// assertions are stable.
#include "shared/status/relaystatus.h"

namespace coreflow::consoletest {

inline constexpr qint64 t0 = 1'700'000'000'000; // 2023-11-14T22:13:20Z

status::RelayStatus readyStatus();      // ready, 3 nodes, escrow, ingress bound, a binding, VPN bound
status::RelayStatus refusedStatus();    // not ready: two readiness refusals (cloudly, clusterIngress)
status::RelayStatus parkedStatus();     // parked with a line, not ready
status::RelayStatus fiftyNodesStatus(); // ready, 50 carried nodes

} // namespace coreflow::consoletest
