#pragma once
// SocketHandoffServer: a QTcpServer used two ways by the relay listener (docs/contract.md D-53).
//  - Accepting: listen() as usual; every accepted descriptor is emitted raw by descriptorAccepted()
//    (the listener runs TLS on it itself) instead of becoming a QTcpSocket.
//  - Handing off (never listening): handOff(socket) queues an already-connected socket and emits
//    pendingConnectionAvailable(); hasPendingConnections()/nextPendingConnection() serve that queue.
//    This is how a QAbstractHttpServer bound to this server receives the listener's plain HTTP
//    exchanges from the bridge. attachTo() binds the server without Qt's "not listening" warning.
#include <QList>
#include <QPointer>
#include <QTcpServer>
#include <QTcpSocket>

class QAbstractHttpServer;

namespace coreflow {

class SocketHandoffServer : public QTcpServer {
    Q_OBJECT
public:
    using QTcpServer::QTcpServer;

    // Hand-off role: binds this server to httpServer (which takes it as a child).
    void attachTo(QAbstractHttpServer *httpServer);
    void handOff(QTcpSocket *socket);

    bool hasPendingConnections() const override;
    QTcpSocket *nextPendingConnection() override;

Q_SIGNALS:
    // A new non-blocking, close-on-exec TCP descriptor; the receiver owns it.
    void descriptorAccepted(int descriptor);

protected:
    void incomingConnection(qintptr descriptor) override;

private:
    QList<QPointer<QTcpSocket>> m_handedOff;
};

} // namespace coreflow
