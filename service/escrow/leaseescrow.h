#pragma once
// LeaseEscrow: custody of the DNS lease renewal runs Cloudly signs ahead for each carried node, and
// their release while the relay has no Cloudly session (docs/contract.md
// §9; rules ES-01..ES-38, FW-24, D-07, D-08, D-10, D-11).
//
// Custody (ES-01, ES-02). Memory only, one run per node, nothing on disk; no key, no signature check.
// Renewal bytes are opaque and never logged; log lines name nodes, projections, sequences and times.
//
// hold() serves holdRuntimeNetworkDnsLeaseRenewals on the Cloudly method table only (ES-04 is the
// node lane's). Checks, in this order (§9.2): parked -> escrow-relay-parked (ES-35, D-10); the node's
// binding is read on arrival: not carried -> escrow-node-not-carried (ES-08); then the hold is queued and
// holds are applied one at a time in arrival order (ES-11): validation -> escrow-run-invalid (ES-05..07,
// DnsLeaseRenewalRun::read); the node's binding is read again and must equal the one read on arrival and
// request.session -> escrow-run-foreign-session (ES-09, also when only clusterId differs); scope ->
// escrow-run-foreign-session (ES-10); precedence (RunPrecedence, ES-13..17). Answer: { held: <count> }
// (ES-03; D-11: held is the integer number of renewals now held for the node, 0 for an empty run).
//
// Release (ES-18..29). Only between sessionLost() and sessionDispatchable(). The due renewal
// (RenewalWindows::dueIndex: notBefore + 30000 <= now < expiresAt, latest notBefore) is offered the
// moment the session is lost, at every window start + 30000 ms, and at once for a run accepted during
// the outage; as applyRuntimeNetworkDnsLeaseRenewal { session: <current binding>, renewal: <verbatim> }
// through the EscrowCourier, bounded at pushTimeoutMs (8000 ms). An ACK is bound by
// bindApplyRuntimeNetworkDnsLeaseRenewalResponse; a refused, failed or unbound offer is re-offered every
// escrowReofferIntervalMs (30000 ms) while now < RenewalWindows::reofferDeadlineMs. ONE ClockTimer,
// owned here, armed at the earliest next action of any node (so one node's re-offer never postpones
// another's window, ES-29), cleared when the session is back (ES-26) and by stop() (ES-27). Qt timers
// never keep the process alive.
//
// Drops (ES-31..38): nodeRegistered() with a different binding (identical keeps it); a projection ACK
// naming another id, a later generation or another digest at the run's generation (D-08);
// registrationRefused() for the registration refusals statesThisRelayIsNotDispatchedTo() names (drop,
// or park for the stale credential generation); a non-empty run whose last window ended (checked at
// every release and before a hold for the node is judged); stop(). Every other registration answer
// keeps custody (ES-36).
//
// Clock skew (§9.6, D-74). A non-empty run accepted whose first window opens more than
// escrowAdmissionMarginMs after the relay's now (run-signed-ahead), or a node refusing an offer with a
// name ending in "-not-yet-valid" (node-not-yet-valid; the relay offered it at notBefore + margin or
// later by its clock), is logged as one warning line starting "clock-skew-suspected:" (once per node,
// source and window) and kept as clockSkew() for the status. A later run accepted within the margin or
// an offer the node admits clears `suspected`; the fields keep the last observation.
//
// stop() (and the destructor) answers every hold still queued with escrow-node-not-carried "... the
// relay is stopping" (D-44), so each hold gets exactly one answer.
#include "service/core/methodtable.h"
#include "service/core/relaycounters.h"
#include "shared/contract/timing.h"
#include "service/escrow/dnsleaserenewalrun.h"
#include "service/escrow/escrowcourier.h"
#include "shared/status/relaystatus.h"
#include "shared/util/clock.h"

#include <QHash>
#include <QList>
#include <QObject>
#include <memory>

namespace coreflow {

class LeaseEscrow : public QObject {
    Q_OBJECT
public:
    LeaseEscrow(EscrowCourier &courier, Clock &clock, const contract::RelayTiming &timing,
                RelayCounters *counters = nullptr, QObject *parent = nullptr);
    ~LeaseEscrow() override;

    // holdRuntimeNetworkDnsLeaseRenewals (Cloudly lane). reply gets exactly one answer frame, possibly
    // after this returns (holds are applied one at a time, from the event loop, in arrival order).
    void hold(const contract::Frame &request, MethodTable::Reply reply);

    // Cloudly session facts (CloudlyConnector::sessionLost / dispatchable).
    void sessionLost();
    void sessionDispatchable();

    // Node facts from the forwarding lane (NodeRegistry::nodeRegistered, PushRouter::pushAnswered): a
    // registration answered with this binding; a push acknowledged.
    void nodeRegistered(const contract::SessionBinding &binding);
    void projectionAcknowledged(const QString &nodeId, const ProjectionReference &acknowledged);
    // Reads { projection: ProjectionReference, ... } from an applyRuntimeNetworkProjection ACK (FW-24,
    // D-07); every other push is ignored.
    void pushAnswered(const QString &nodeId, const contract::Frame &push, const contract::Frame &answer);

    // Registration outcomes (RelayRegistration). Exact match of relay-cluster-not-enabled,
    // relay-node-foreign, relay-node-unknown, relay-sequence-not-advancing,
    // relay-credential-generation-stale (data.clusterRelayUndispatchedRefusals; ES-33). The list is
    // contract::refusal::statesThisRelayIsNotDispatchedTo (shared with RelayRegistration).
    static bool statesThisRelayIsNotDispatchedTo(const QString &refusalName);
    // Drops every run for the first four, parks for relay-credential-generation-stale; every other name
    // keeps custody (ES-36). Returns whether custody was given up.
    bool registrationRefused(const QString &refusalName);
    // Drops every run; later holds are accepted again (ES-34).
    void dropAll(const QString &reason);
    // Drops every run and refuses every later hold with escrow-relay-parked for the rest of the process
    // (ES-35). Idempotent: a second call (RelayRegistration::parked after registrationRefused) says nothing.
    void park();
    // Drops every run, clears the timer, refuses later holds (ES-27, ES-38). Call before the forwarder
    // empties its registry.
    void stop();

    bool isParked() const { return m_parked; }
    bool isStopped() const { return m_stopped; }
    bool isReleasing() const { return m_releasing; }
    bool holdsRunFor(const QString &nodeId) const { return m_runs.contains(nodeId); }
    int runCount() const { return int(m_runs.size()); }
    qint64 renewalCount() const;
    qsizetype retainedBytes() const;
    // The release timer's deadline (clock ms), -1 when not armed.
    qint64 releaseDueMs() const;
    int queuedHolds() const { return int(m_queue.size()); }
    // Status: one row per held run, by nodeId; no renewal body.
    QList<status::EscrowRun> statusRuns() const;
    // Status: the last clock skew observation (§18.1 clockSkew).
    status::ClockSkew clockSkew() const { return m_skew; }
    // Whether a node's refusal name says the renewal is not valid yet by the node's clock (D-74).
    static bool refusesAsNotYetValid(const QString &refusalName);

Q_SIGNALS:
    void statusChanged();
    // One value-free line per event, the same text as the log line (status socket events).
    void eventLine(const QString &line);

private:
    enum class Outcome { None, InFlight, Delivered, Failed };
    struct Entry {
        contract::SessionBinding binding;
        DnsLeaseRenewalRun run;
        int offeredIndex = -1;
        Outcome outcome = Outcome::None;
        qint64 lastOfferAtMs = 0;
        quint64 offerToken = 0;
        qint64 nextActionMs = -1;
        QString lastOfferResult;
    };
    struct QueuedHold {
        contract::Frame frame;
        MethodTable::Reply reply;
        QString nodeId;
        contract::SessionBinding arrivalBinding;
    };

    void drain();
    void answerQueuedAsStopping();
    void apply(QueuedHold &item);
    void refuse(const MethodTable::Reply &reply, const contract::Frame &frame, const contract::Refusal &refusal);
    void release();
    void step(const QString &nodeId, Entry &entry, qint64 nowMs);
    void offer(const QString &nodeId, Entry &entry, int index, qint64 nowMs);
    void offerAnswered(const QString &nodeId, quint64 token, int index, const contract::Frame *answer,
                       const contract::Refusal *refusal);
    qint64 nextActionMs(const Entry &entry, qint64 nowMs) const;
    void arm();
    void armIfEarlier(qint64 atMs);
    void drop(const QString &nodeId, const QString &why);
    void say(const QString &line, bool warning = false);
    void suspectSkew(const QString &source, const QString &nodeId, qint64 nowMs, qint64 windowStartMs, qint64 skewMs,
                     const QString &line);
    void skewNotSeen();

    EscrowCourier &m_courier;
    Clock &m_clock;
    contract::RelayTiming m_timing;
    RelayCounters *m_counters;
    std::unique_ptr<ClockTimer> m_timer;
    QHash<QString, Entry> m_runs;
    QList<QueuedHold> m_queue;
    bool m_drainScheduled = false;
    bool m_releasing = false;
    bool m_parked = false;
    bool m_stopped = false;
    quint64 m_nextToken = 1;
    status::ClockSkew m_skew;
};

} // namespace coreflow
