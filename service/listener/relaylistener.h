#pragma once
// RelayListener: the relay's one TLS port (seed "Cluster-side listener"). A WebSocket upgrade at "/"
// becomes a node (or ingress) session handed out by nodeSocketAccepted(); every other HTTP request goes
// to the ListenerHttpHandler (the /v2/ image pull endpoint) or, without one, is answered 404
// path-not-served. An upgrade on any other path is refused before the 101.
//
// Every accepted socket gets a ListenerRequestGuard (service/registry/listenerrequestguard.h) before
// the HTTP server reads from it: header blocks over 64 KiB and requests announcing a body are refused
// on the spot, so Qt never buffers a body (docs/contract.md §17).
//
// The bind address and port are daemon-local facts (COREFLOW_RELAY_BIND_HOSTNAME/_PORT), never cluster
// state. listen() failures are named (listener-bind-failed) with address, port and the socket error.
#include "contract/result.h"
#include "listenerhttphandler.h"

#include <QAbstractHttpServer>
#include <QHostAddress>
#include <QPointer>
#include <QSslConfiguration>
#include <QWebSocket>

class QSslServer;

namespace coreflow {

class RelayListener : public QAbstractHttpServer {
    Q_OBJECT
public:
    explicit RelayListener(QObject *parent = nullptr);
    ~RelayListener() override;

    // Binds hostname:port with TLS. hostname is an address literal, or a name resolved once at start.
    std::optional<contract::Refusal> listen(const QString &hostname, quint16 port, const QSslConfiguration &tls);
    // Stops accepting new connections (sessions already handed out are the forwarder's to close).
    void close();

    void setHttpHandler(ListenerHttpHandler *handler) { m_httpHandler = handler; }
    bool isListening() const;
    QString boundAddress() const { return m_boundAddress; }
    quint16 boundPort() const { return m_boundPort; }

Q_SIGNALS:
    // A WebSocket session at "/"; the receiver takes ownership.
    void nodeSocketAccepted(QWebSocket *socket);

protected:
    bool handleRequest(const QHttpServerRequest &request, QTcpSocket *socket) override;
    void missingHandler(const QHttpServerRequest &request, QTcpSocket *socket) override;

private:
    QPointer<QSslServer> m_server;
    ListenerHttpHandler *m_httpHandler = nullptr;
    QString m_boundAddress;
    quint16 m_boundPort = 0;
};

} // namespace coreflow
