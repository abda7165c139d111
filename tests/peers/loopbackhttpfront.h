#pragma once
// LoopbackHttpFront: the TLS front of a LoopbackCloudly that serves more than its WebSocket session on
// one origin, as Cloudly's public origin does: the relay dials its Cloudly session there, and pulls
// images from the registry Cloudly publishes at the same origin (docs/contract.md §17: the registry is
// CLOUDLY_URL's origin, the token realm is composed from it).
//
// It terminates TLS itself (QSslServer, the peer's certificate) and routes each connection by the path
// of its first request line:
//   - "/v2", "/v2/..." or one of the passthrough paths (the token realm path, e.g. "/token"), when a
//     passthrough is set: every byte of the connection, both ways, is piped to the passthrough backend
//     (plain TCP to 127.0.0.1:backendPort; e.g. tests/registry/peers/cloudly_registry_peer.py --plain,
//     which serves the token and forwards /v2/ to Debian's docker-registry). The backend closing its
//     side closes the client's once written; the client leaving aborts the backend connection.
//   - anything else: handed to the WebSocket server (upgradeRequested), which answers the upgrade at
//     "/" or refuses the request.
// The request line is only looked at (peeked, at most 8 KiB), never changed; nothing else is read.
// Loopback only; no backpressure (the tests move small images through it).
#include <QHostAddress>
#include <QObject>
#include <QSslConfiguration>
#include <QStringList>

class QSslServer;
class QSslSocket;
class QTcpSocket;

namespace coreflow::peers {

class LoopbackHttpFront : public QObject {
    Q_OBJECT
public:
    static constexpr int kMaxRequestLineBytes = 8192;

    explicit LoopbackHttpFront(const QSslConfiguration &tls, QObject *parent = nullptr);
    ~LoopbackHttpFront() override;

    bool listen(const QHostAddress &address, quint16 port);
    void close();
    bool isListening() const;
    quint16 port() const;
    QString errorString() const;

    // backendPort 0: no passthrough (every connection goes to the WebSocket server).
    void setPassthrough(quint16 backendPort, const QStringList &extraPaths);
    // The first request path of every connection piped so far, in order.
    const QStringList &pipedPaths() const { return m_pipedPaths; }
    // Connections handed to the WebSocket server so far.
    int upgradeConnections() const { return m_upgrades; }

Q_SIGNALS:
    // A connection for the WebSocket server (QWebSocketServer::handleConnection); its request bytes
    // are still unread.
    void upgradeRequested(QTcpSocket *socket);

private:
    void onEncrypted(QSslSocket *socket);
    void route(QSslSocket *socket);
    void pipe(QSslSocket *socket);

    QSslServer *m_server = nullptr;
    quint16 m_backendPort = 0;
    QStringList m_extraPaths;
    QStringList m_pipedPaths;
    int m_upgrades = 0;
};

} // namespace coreflow::peers
