#pragma once
// SessionForwarder: carries node runtime sessions both ways and caches nothing (docs/contract.md §8, rules
// FW-01..FW-25).
//
// Upstream (node -> Cloudly), the six node methods, request bytes untouched, correlation ids mapped
// per hop:
//  - registerPalletRuntimeSession waits up to registrationWaitMs (5000) for a reconnecting session,
//    then forwards inside registrationBudgetMs (9000, counted from arrival). No session after the wait:
//    "cloudly-session-unavailable: no Cloudly session after waiting 5000 ms". The answer's
//    response.session binds this connection (and supersedes an older connection of the same node).
//  - every other node method must carry request.session equal to the binding registered on this very
//    connection, else session-binding-refused before forwarding; bounded at forwardTimeoutMs (8000).
// Downstream (Cloudly -> node), the four pushes: routed by request.session.nodeId to that node's
// connection, bounded at pushTimeoutMs (8000), the node's answer returned verbatim; unknown node:
// "node-not-connected: node <id> is not connected to this relay". A connection's close drops its entry.
// Log lines name a method and a node, never a body.
#include "service/core/methodtable.h"
#include "service/core/relaycounters.h"
#include "service/cloudly/cloudlyconnector.h"
#include "shared/contract/timing.h"
#include "service/forwarding/nodeconnection.h"
#include "shared/status/relaystatus.h"
#include "shared/util/clock.h"
#include "shared/util/deadlinequeue.h"

#include <QHash>
#include <QList>
#include <memory>
#include <unordered_map>

namespace coreflow {

class SessionForwarder : public QObject, private NodeConnection::Owner {
    Q_OBJECT
public:
    SessionForwarder(CloudlyConnector &cloudly, MethodTable &nodeMethods, MethodTable &cloudlyMethods,
                     RelayCounters &counters, Clock &clock, const contract::RelayTiming &timing,
                     QObject *parent = nullptr);
    ~SessionForwarder() override;

    // Takes ownership of a WebSocket session accepted by the listener (RelayListener::nodeSessionAccepted).
    void adoptSession(WebSocketSession *session);
    // The four pushes are answered while the listener runs and detached when it stops (FW-11, FW-12).
    void attachPushHandlers();
    void detachPushHandlers();
    // Closes every node session (stop).
    void closeAll(const QString &reason);

    // Sends a request to one listener connection and routes its answer back: answer set, or refusal set
    // (node-push-timeout after timeoutMs naming timeoutWhat, node-connection-lost when it closes first).
    // Returns the relay-side correlation id. Used by the pushes and by other lanes on the listener.
    using AnswerCallback = std::function<void(const contract::Frame *answer, const contract::Refusal *refusal)>;
    QString requestConnection(NodeConnection *connection, const QString &method, QByteArrayView rawRequest,
                              qint64 timeoutMs, AnswerCallback callback);

    NodeConnection *carriedNode(const QString &nodeId) const { return m_registry.value(nodeId); }
    QList<NodeConnection *> carriedConnections() const { return m_registry.values(); }
    int connectionCount() const { return int(m_connections.size()); }
    QList<status::CarriedNode> carriedNodes() const;

Q_SIGNALS:
    void statusChanged();
    // Cluster-hop negotiation for palletRuntime (docs/contract.md §2.2): a node's offer was refused
    // (offers as "kind@release") or a servable offer arrived (which clears the refusal at once, PV-24).
    void offerRefused(const QString &peerOffer, const QString &ownOffer, const QString &line);
    void offerServed();
    void nodeRegistered(const QString &nodeId);
    void nodeGone(const QString &nodeId);
    // A node acknowledged (or refused) a push; answer is its response-phase frame. Value-free facts such
    // as an acknowledged projection are read from it by whoever needs them (the escrow).
    void pushAnswered(const QString &nodeId, const coreflow::contract::Frame &push, const coreflow::contract::Frame &answer);
    // Any listener connection closed (registered or not), before it is deleted.
    void connectionClosed(NodeConnection *connection);

private:
    struct Upstream;
    struct PendingRequest;

    void nodeFrame(NodeConnection *connection, const QByteArray &utf8) override { onFrame(connection, utf8); }
    void nodeClosed(NodeConnection *connection) override { onClosed(connection); }
    void onFrame(NodeConnection *connection, const QByteArray &utf8);
    void onClosed(NodeConnection *connection);
    void forwardUpstream(const contract::Frame &frame, NodeConnection *connection, const MethodTable::Reply &reply);
    void sendUpstream(const std::shared_ptr<Upstream> &op);
    void finishUpstream(const std::shared_ptr<Upstream> &op, const CloudlyConnector::CallResult &result);
    void onDispatchable();
    void pushDownstream(const contract::Frame &frame, const MethodTable::Reply &reply);
    void finishRequest(const QString &requestId, const contract::Frame *answer, const contract::Refusal *refusal);
    std::optional<contract::Refusal> checkBinding(const NodeConnection *connection,
                                                  const contract::SessionBinding &binding) const;
    void refuse(const MethodTable::Reply &reply, const contract::Frame &frame, const contract::Refusal &refusal);
    void answerUnreadable(NodeConnection *connection, const QByteArray &utf8, const contract::Refusal &refusal);

    CloudlyConnector &m_cloudly;
    MethodTable &m_nodeMethods;
    MethodTable &m_cloudlyMethods;
    RelayCounters &m_counters;
    Clock &m_clock;
    contract::RelayTiming m_timing;

    QHash<quint64, NodeConnection *> m_connections;   // owned (parented to this)
    QHash<QString, NodeConnection *> m_registry;      // nodeId -> connection that registered it last
    QList<std::shared_ptr<Upstream>> m_waitingForSession;
    std::unordered_map<Upstream *, std::shared_ptr<Upstream>> m_inFlight; // forwarded, answer pending
    QHash<QString, std::shared_ptr<PendingRequest>> m_requests; // relay-side id -> request to a connection
    DeadlineQueue m_requestDeadlines{m_clock}; // one clock timer for every request to a connection
    quint64 m_nextConnectionId = 1;
    quint64 m_nextRequestId = 1;
};

} // namespace coreflow
