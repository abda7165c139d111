#pragma once
// ListenerHttpHandler: what the relay listener hands a plain HTTP request to (everything on the one TLS
// port that is not the WebSocket upgrade at "/"). Seed "Cluster-side listener": the listener's whole
// HTTP surface beside the upgrade is the image pull endpoint under /v2/.
//
// The handler owns the exchange from here: it answers through the responder now or later. A handler
// that answers late must guard the socket (QPointer<QTcpSocket> of responder.socket()), because the
// client may have gone away meanwhile.
#include <QHttpServerRequest>
#include <QHttpServerResponder>

namespace coreflow {

class ListenerHttpHandler {
public:
    virtual ~ListenerHttpHandler() = default;
    virtual void handleHttp(const QHttpServerRequest &request, QHttpServerResponder &&responder) = 0;
};

} // namespace coreflow
