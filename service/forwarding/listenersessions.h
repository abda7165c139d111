#pragma once
// ListenerSessions: what a lane beside forwarding may do with the sessions on the relay listener, and
// nothing more (docs/architecture.md "Narrow interfaces between lanes"). The ingress lane uses it: a
// cluster ingress is a listener session of the clusterIngress kind (docs/contract.md §10.2), asked
// bounded requests (§10.4 hints, §10.6 traffic statistics). The relay's implementation is the
// forwarding lane's SessionForwarder.
#include "service/forwarding/framerefusallog.h"
#include "shared/contract/envelope.h"

#include <QByteArrayView>
#include <QObject>
#include <functional>

namespace coreflow {

class NodeConnection;

class ListenerSessions : public QObject {
    Q_OBJECT
public:
    // Exactly one of answer (the connection's response-phase frame, which may carry its error) or
    // refusal (the relay's own) is set.
    using AnswerCallback = std::function<void(const contract::Frame *answer, const contract::Refusal *refusal)>;

    using QObject::QObject;
    ~ListenerSessions() override = default;

    // Sends method with rawRequest (the request member's bytes, sent untouched) to one open connection
    // under a relay-side correlation id, which it returns. callback runs once: with the answer, or with
    // node-push-timeout after timeoutMs (ms, naming the method) or node-connection-lost when the
    // connection closes first (docs/contract.md §8.3). Never before this call returns.
    virtual QString requestConnection(NodeConnection *connection, const QString &method, QByteArrayView rawRequest,
                                      qint64 timeoutMs, AnswerCallback callback) = 0;
    // The bound on log lines that refusals of listener connections cause (docs/contract.md §3.1).
    virtual FrameRefusalLog &refusalLog() = 0;

Q_SIGNALS:
    // Any listener connection closed (registered or not), after its requests ended and before it is
    // deleted.
    void connectionClosed(coreflow::NodeConnection *connection);
};

} // namespace coreflow
