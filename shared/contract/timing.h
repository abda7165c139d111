#pragma once
// Timing constants of the contract and of this relay, in milliseconds, read from this one place.
// Tests construct a RelayTiming with the same defaults and drive it with a ManualClock; nothing in
// the suite sleeps for real seconds.
#include <QtGlobal>

namespace coreflow::contract {

struct RelayTiming {
    // docs/contract.md §8
    qint64 registrationWaitMs = 5000;   // FW-02: wait for a reconnecting Cloudly session
    qint64 registrationBudgetMs = 9000; // FW-03: whole budget of a registration, counted from arrival
                                        //        (includes the wait; Decision D-05)
    qint64 forwardTimeoutMs = 8000;     // FW-04: every other node -> Cloudly forward
    qint64 pushTimeoutMs = 8000;        // FW-14: Cloudly -> node push
    // docs/contract.md §2: the contract's refusedOfferRetryIntervalMs
    qint64 refusedOfferRetryIntervalMs = 300000;
    // docs/contract.md §8.4
    qint64 reregistrationSpacingMs = 75;
    qint64 reregistrationWindowMs = 5000;
    // docs/contract.md §9
    qint64 escrowAdmissionMarginMs = 30000;
    qint64 escrowReofferIntervalMs = 30000;
    // docs/contract.md §10
    qint64 ingressRetryAfterMs = 5000;
    qint64 ingressRequestTimeoutMs = 8000; // route-table hint and traffic-statistics bound (CI-11, CI-20)
    // Cloudly session (docs/contract.md §20.1; D-11)
    qint64 reconnectInitialBackoffMs = 500;
    qint64 reconnectMaxBackoffMs = 30000;
    double reconnectJitter = 0.2;            // +/- 20 %
    qint64 identityRenewalLeadMs = 60000;    // renew this long before expiresAt ...
    double identityRenewalMaxFraction = 0.8; // ... or at 80 % of the lifetime, whichever is earlier
    qint64 cloudlyCallTimeoutMs = 8000;      // the relay's own calls (identity, config, certificate)
    qint64 cloudlyHandshakeTimeoutMs = 10000;
    // Longest a stop may take before it is reported failed (exit 1); systemd's TimeoutStopSec= bounds
    // the process beyond that. Every Cloudly call in flight is itself bounded (<= 9000 ms).
    qint64 stopDeadlineMs = 15000;
    // The stop's drain (docs/contract.md §19.3): node sessions stay open this long at most for the
    // requests in flight on them (pushes and hints sent to nodes, node requests forwarded to Cloudly),
    // each of which ends by its own bound first (<= 9000 ms); then they are closed.
    qint64 stopDrainMs = 10000;
    // Silent peers on both hops (docs/contract.md §3.3, §20.1; Decision D-56). Every WebSocket session
    // of the relay (its Cloudly session, every node and ingress session on the listener) sends a Ping
    // once nothing was received for sessionPingIntervalMs, again every sessionPingIntervalMs while the
    // peer stays quiet, and is lost when no byte of any frame (a Pong or anything else) arrived for
    // sessionSilenceDeadlineMs. A lost session ends as a closed one. 0 in either turns the rule off
    // (tests of other rules whose ManualClock jumps minutes without an event-loop turn).
    qint64 sessionPingIntervalMs = 15000;
    qint64 sessionSilenceDeadlineMs = 45000;
    // A listener session that has not registered within registrationDeadlineMs of its upgrade is closed
    // 1008 registration-deadline (docs/contract.md §3.4, D-59). 0 turns the rule off (tests of other
    // rules whose ManualClock jumps minutes with unregistered connections open).
    qint64 registrationDeadlineMs = 60000;
};

// TCP liveness on every socket of both hops (set with setsockopt on the descriptor, real kernel time,
// not the injected clock; docs/contract.md §3.3, D-56): keepalive probes after tcpKeepaliveIdleMs of
// an idle connection, every tcpKeepaliveIntervalMs, tcpKeepaliveProbes of them; TCP_USER_TIMEOUT ends
// a connection whose sent bytes stay unacknowledged for tcpUserTimeoutMs. Both stay at the WebSocket
// silence deadline, so the kernel never keeps a dead peer longer than the session rule would.
inline constexpr qint64 tcpKeepaliveIdleMs = 15000;
inline constexpr qint64 tcpKeepaliveIntervalMs = 5000;
inline constexpr int tcpKeepaliveProbes = 6;
inline constexpr qint64 tcpUserTimeoutMs = 45000;

inline constexpr int maximumEscrowedRenewals = 32;
inline constexpr qint64 maximumEscrowHorizonMs = 4LL * 60 * 60 * 1000;

} // namespace coreflow::contract
