#pragma once
// ListenerHttpServer: the Qt HTTP server behind the relay listener's plain HTTP requests (everything
// on the one TLS port that is not the WebSocket upgrade at "/"; seed "Cluster-side listener",
// docs/contract.md §17 and D-53). The listener keeps TLS; adopt() bridges a connection into this
// server over a local socket pair (BridgedHttpConnection), where Qt parses HTTP and the handler
// (the /v2/ image pull endpoint) answers.
//
// Without a handler every request is answered 404 path-not-served in the registry error shape. A
// WebSocket upgrade arriving here (a later request on a kept-alive connection) closes the connection
// without an answer (one could overtake answers to earlier pipelined requests): sessions start on a
// new connection at "/".
// Every bridged socket gets a ListenerRequestGuard first (header blocks over 64 KiB and requests
// announcing a body are refused by name before Qt buffers them).
#include "listenerhttphandler.h"
#include "tlsconnection.h"

#include <QAbstractHttpServer>

namespace coreflow {

class SocketHandoffServer;

class ListenerHttpServer : public QAbstractHttpServer {
    Q_OBJECT
public:
    explicit ListenerHttpServer(QObject *parent = nullptr);
    ~ListenerHttpServer() override;

    void setHttpHandler(ListenerHttpHandler *handler) { m_httpHandler = handler; }
    // Takes ownership of tls; bytesSoFar are the request bytes already read from it.
    void adopt(TlsConnection *tls, const QByteArray &bytesSoFar);

protected:
    bool handleRequest(const QHttpServerRequest &request, QTcpSocket *socket) override;
    void missingHandler(const QHttpServerRequest &request, QTcpSocket *socket) override;

private:
    SocketHandoffServer *m_handoff;
    ListenerHttpHandler *m_httpHandler = nullptr;
};

} // namespace coreflow
