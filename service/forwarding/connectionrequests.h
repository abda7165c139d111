#pragma once
// ConnectionRequests: the requests the relay itself sends to listener connections — Cloudly's pushes
// (docs/contract.md §8.3), the escrow's renewal offers (§9.4) and the ingress hints and statistics
// reads (§10.4, §10.6) — and the answers that end them.
//
// send() writes one request frame under a relay-side correlation id ("p1", "p2", ...) and keeps only
// the callback, the method name and the deadline; the request bytes are not kept. Each request ends
// exactly once: answered() with the connection's response frame, after timeoutMs (ms) with
// node-push-timeout "<who> did not answer <method> within <timeoutMs> ms", or by connectionLost() with
// node-connection-lost "<who> closed its connection before it answered <method>". One clock timer
// (a DeadlineQueue) bounds them all.
#include "service/forwarding/listenersessions.h"
#include "shared/util/clock.h"
#include "shared/util/deadlinequeue.h"

#include <QHash>
#include <QPointer>
#include <functional>
#include <memory>

namespace coreflow {

class NodeConnection;

class ConnectionRequests {
public:
    using AnswerCallback = ListenerSessions::AnswerCallback;

    explicit ConnectionRequests(Clock &clock);
    ~ConnectionRequests();
    ConnectionRequests(const ConnectionRequests &) = delete;
    ConnectionRequests &operator=(const ConnectionRequests &) = delete;

    // Returns the relay-side correlation id.
    QString send(NodeConnection *connection, const QString &method, QByteArrayView rawRequest, qint64 timeoutMs,
                 AnswerCallback callback);
    // A response-phase frame from connection: ends the request it answers. False when connection has
    // no request pending under that correlation id (the caller logs it; nothing changes).
    bool answered(NodeConnection *connection, const contract::Frame &answer);
    // connection closed: every request pending on it ends with node-connection-lost.
    void connectionLost(NodeConnection *connection);
    // Requests sent and not ended yet (the stop's drain, §19.3).
    int pendingCount() const { return int(m_pending.size()); }
    // Called each time the last pending request ended.
    void setIdleCallback(std::function<void()> idle) { m_idle = std::move(idle); }

private:
    struct Pending;
    void finish(const QString &requestId, const contract::Frame *answer, const contract::Refusal *refusal);

    QHash<QString, std::shared_ptr<Pending>> m_pending; // relay-side id -> request to a connection
    DeadlineQueue m_deadlines;
    quint64 m_nextId = 1;
    std::function<void()> m_idle;
};

} // namespace coreflow
