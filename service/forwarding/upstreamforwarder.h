#pragma once
// UpstreamForwarder: node -> Cloudly (docs/contract.md §8.1). It serves the ten forwarded node methods
// on the listener's method table and carries each request's bytes untouched over the Cloudly session,
// under a correlation id of that hop; the answer (response, error, retry) goes back verbatim under the
// node's own id. Nothing is cached.
//
//  - registerPalletRuntimeSession: the offer is judged first (§2.2: protocol-offer-refused, nothing
//    forwarded; counted by name, never a readiness refusal, D-62), then request.nodeId must be a non-empty
//    string (request-invalid). Without a dispatchable session it waits up to registrationWaitMs (5000)
//    for one, then "cloudly-session-unavailable: no Cloudly session after waiting 5000 ms"; forwarded,
//    it is bounded by registrationBudgetMs (9000) counted from its arrival. Held registrations are
//    flushed in arrival order only while the session is not backlogged (§3.4, D-58); one still held
//    behind the backlog when its budget ends is refused "cloudly-forward-timeout: no answer from
//    Cloudly within 9000 ms". The answer's
//    response.session binds the connection in the NodeRegistry; an answer without a readable session
//    leaves it unbound (logged).
//  - the nine session requests pass the BindingGate first, are refused
//    "cloudly-session-unavailable: no Cloudly session" at once without a session, and are bounded at
//    forwardTimeoutMs (8000): "cloudly-forward-timeout: no answer from Cloudly within 8000 ms".
// A closed connection's waiting registrations are dropped and its forwards in flight cancelled.
// Log lines name a method and a node, never a body.
#include "service/cloudly/cloudlyconnector.h"
#include "service/core/methodtable.h"
#include "service/core/relaycounters.h"
#include "service/forwarding/bindinggate.h"
#include "shared/contract/timing.h"
#include "shared/util/clock.h"

#include <QList>
#include <QObject>
#include <memory>
#include <unordered_map>

namespace coreflow {

class NodeConnection;
class NodeRegistry;

class UpstreamForwarder : public QObject {
    Q_OBJECT
public:
    UpstreamForwarder(CloudlyConnector &cloudly, MethodTable &nodeMethods, NodeRegistry &registry, RelayCounters &counters,
                      Clock &clock, const contract::RelayTiming &timing, FrameRefusalLog &refusalLog,
                      QObject *parent = nullptr);
    ~UpstreamForwarder() override;

    // connection closed: its registrations waiting for a session are never sent and its forwards in
    // flight are no longer awaited (Cloudly must not issue a binding for a socket that is gone).
    void connectionClosed(NodeConnection *connection);
    // The stop (§19.3): from now on a node request is refused "cloudly-session-unavailable: the relay is
    // stopping"; what is waiting or in flight goes on to its answer or its bound.
    void stopAccepting() { m_stopping = true; }
    // Registrations waiting for a session plus forwards awaiting Cloudly's answer.
    int workInFlight() const { return int(m_inFlight.size()) + int(m_waitingForSession.size()); }

Q_SIGNALS:
    // A forward began or ended (status model, §18 `nodes`).
    void statusChanged();

private:
    struct Upstream;

    void forward(const contract::Frame &frame, NodeConnection *connection, const MethodTable::Reply &reply);
    bool admitRegistration(const contract::Frame &frame, NodeConnection *connection, const MethodTable::Reply &reply);
    void waitForSession(const std::shared_ptr<Upstream> &op);
    void flushHeld();
    void send(const std::shared_ptr<Upstream> &op);
    void finish(const std::shared_ptr<Upstream> &op, const CloudlyConnector::CallResult &result);
    void bindRegistration(NodeConnection *connection, const contract::Frame &answer);
    void refuse(const MethodTable::Reply &reply, const contract::Frame &frame, const contract::Refusal &refusal);

    CloudlyConnector &m_cloudly;
    MethodTable &m_nodeMethods;
    NodeRegistry &m_registry;
    RelayCounters &m_counters;
    Clock &m_clock;
    contract::RelayTiming m_timing;
    FrameRefusalLog &m_refusalLog;
    BindingGate m_gate;

    QList<std::shared_ptr<Upstream>> m_waitingForSession;
    std::unordered_map<Upstream *, std::shared_ptr<Upstream>> m_inFlight; // forwarded, answer pending
    bool m_stopping = false;
};

} // namespace coreflow
