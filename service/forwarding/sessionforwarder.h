#pragma once
// SessionForwarder: the forwarding lane's coordinator (docs/contract.md §8). It adopts the WebSocket
// sessions the listener accepts as NodeConnections, reads each text frame once and hands it on, and
// ends a closed connection in every part, in this order: the NodeRegistry (its node is no longer
// carried), the UpstreamForwarder (its waits and forwards in flight end), the ConnectionRequests (its
// pending requests end node-connection-lost), then connectionClosed, then the connection retires.
//
// Frames: a response-phase frame answers one of ConnectionRequests' requests (an answer to nothing
// pending is logged and dropped); a request-phase frame is dispatched on the listener's method table
// (the UpstreamForwarder serves the forwarded node methods, other lanes theirs). A frame that is not
// the envelope is refused by name when its correlation id is readable, else the connection is closed
// (1009 frame-too-large, otherwise 1002; §3). Refused frames are logged as FrameRefusalLog allows
// (per connection and overall, §3.1, D-61).
//
// Upstream backpressure (§3.4, D-58): while the Cloudly session is backlogged
// (CloudlyConnector::isSendBacklogged) no node socket is read, newly adopted ones included; all resume
// together when it drained, each then read one TLS record per turn as before, so no node is
// preferred. The Cloudly session is never closed for what nodes send.
//
// Registration deadline (§3.4, D-59): a connection not admitted as registered within
// RelayTiming::registrationDeadlineMs of its adoption (on the injected clock) is closed 1008
// registration-deadline.
//
// It is the relay's ListenerSessions: other lanes ask connections through it and hear their closes.
#include "service/core/methodtable.h"
#include "service/core/relaycounters.h"
#include "service/cloudly/cloudlyconnector.h"
#include "service/forwarding/connectionrequests.h"
#include "service/forwarding/framerefusallog.h"
#include "service/forwarding/listenersessions.h"
#include "service/forwarding/nodeconnection.h"
#include "service/forwarding/noderegistry.h"
#include "service/forwarding/pushrouter.h"
#include "service/forwarding/upstreamforwarder.h"
#include "shared/contract/timing.h"
#include "shared/status/relaystatus.h"
#include "shared/util/clock.h"
#include "shared/util/deadlinequeue.h"

namespace coreflow {

class SessionForwarder : public ListenerSessions, private NodeConnection::Owner {
    Q_OBJECT
public:
    SessionForwarder(CloudlyConnector &cloudly, MethodTable &nodeMethods, MethodTable &cloudlyMethods,
                     RelayCounters &counters, Clock &clock, const contract::RelayTiming &timing,
                     RefusalLogBound &refusalLogBound, QObject *parent = nullptr);
    ~SessionForwarder() override;

    // Takes ownership of a WebSocket session accepted by the listener (RelayListener::nodeSessionAccepted).
    void adoptSession(WebSocketSession *session);
    // The four pushes are answered while the listener runs and detached when it stops (§8.3).
    void attachPushHandlers() { m_pushes.attach(); }
    void detachPushHandlers() { m_pushes.detach(); }
    // Closes every node session (stop, §19.3).
    void closeAll(const QString &reason);
    // The stop's drain (§19.3): no new node request is accepted (UpstreamForwarder::stopAccepting);
    // `drained` is called (once, from the event loop) when no request is in flight any more. The caller
    // bounds the wait.
    void drain(std::function<void()> drained);
    // Requests sent to nodes and not answered, plus node requests waiting for or forwarded to Cloudly.
    int workInFlight() const { return m_requests.pendingCount() + m_upstream.workInFlight(); }

    QString requestConnection(NodeConnection *connection, const QString &method, QByteArrayView rawRequest,
                              qint64 timeoutMs, AnswerCallback callback) override
    {
        return m_requests.send(connection, method, rawRequest, timeoutMs, std::move(callback));
    }
    FrameRefusalLog &refusalLog() override { return m_refusalLog; }

    NodeRegistry &registry() { return m_registry; }
    const NodeRegistry &registry() const { return m_registry; }
    UpstreamForwarder &upstream() { return m_upstream; }
    PushRouter &pushes() { return m_pushes; }
    int connectionCount() const { return m_registry.connectionCount(); }
    QList<status::CarriedNode> carriedNodes() const { return m_registry.carriedNodes(); }

Q_SIGNALS:
    // A connection was adopted or ended (status model, §18).
    void statusChanged();

private:
    void nodeFrame(NodeConnection *connection, const QByteArray &utf8) override;
    void nodeClosed(NodeConnection *connection) override;
    void pauseReading(bool paused);
    void answerUnreadable(NodeConnection *connection, const QByteArray &utf8, const contract::Refusal &refusal);
    void checkDrained();

    CloudlyConnector &m_cloudly;
    MethodTable &m_nodeMethods;
    RelayCounters &m_counters;
    Clock &m_clock;
    // Refused frames of all connections share one log bound (docs/contract.md §3.1, D-61).
    FrameRefusalLog m_refusalLog;
    // Declared in the order they are built; destroyed in reverse (the handlers leave the tables first).
    NodeRegistry m_registry;
    ConnectionRequests m_requests;
    UpstreamForwarder m_upstream;
    PushRouter m_pushes;
    quint64 m_nextConnectionId = 1;
    qint64 m_registrationDeadlineMs;
    DeadlineQueue m_registrationDeadlines;
    std::function<void()> m_drained;
};

} // namespace coreflow
