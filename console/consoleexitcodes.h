#pragma once
// coreflow-console exit codes (also listed by --help; docs/contract.md §18.2).
namespace coreflow::console::exitcode {
inline constexpr int ok = 0;             // snapshot printed / window closed / --help / --version / --check: ready
inline constexpr int usage = 2;          // unknown option, conflicting modes, missing argument
inline constexpr int cannotConnect = 3;  // no relay listening at the socket path (or it went away first)
inline constexpr int accessRefused = 4;  // socket permission denied or status-access-denied refusal
inline constexpr int protocolError = 5;  // the peer did not speak the status protocol (version 1)
inline constexpr int outputFailed = 6;   // --metrics --output FILE or --screenshot FILE: the file could not be written

// --check only: the relay answered and is not ready. When several apply, the lowest code is reported
// (the hop an operator fixes first). ReadinessCheck maps the status object to one of these.
inline constexpr int notReadyCloudly = 10;      // hop "cloudly": no dispatchable Cloudly session
inline constexpr int notReadyParked = 11;       // registration parked (§6.6.1): needs an operator
inline constexpr int notReadyRegistration = 12; // hop "registration" refused, not parked
inline constexpr int notReadyListener = 13;     // a relay block is configured but no listener is bound
inline constexpr int notReadyPeerOffer = 14;    // hop "palletRuntime" or "clusterIngress" refused
inline constexpr int notReadyStarting = 15;     // hop "relay": the start has not completed
inline constexpr int notReadyOther = 16;        // not ready for a hop this console does not know
// --check only: ready, but the escrow suspects clock skew (§9.6, status member clockSkew). Higher than
// every not-ready code: a not-ready kind is reported first.
inline constexpr int readyClockSkew = 17;
} // namespace coreflow::console::exitcode
