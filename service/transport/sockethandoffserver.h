#pragma once
// SocketHandoffServer: the relay listener's accepting socket (docs/contract.md D-53). listen() as
// usual; every accepted descriptor is emitted raw by descriptorAccepted() (non-blocking,
// close-on-exec, TCP_NODELAY, TCP keepalive and TCP_USER_TIMEOUT: applyTcpLiveness, §3.3) instead of becoming a QTcpSocket: the listener runs TLS and HTTP on it
// itself.
#include <QTcpServer>

namespace coreflow {

class SocketHandoffServer : public QTcpServer {
    Q_OBJECT
public:
    using QTcpServer::QTcpServer;

Q_SIGNALS:
    // A new non-blocking, close-on-exec TCP descriptor; the receiver owns it.
    void descriptorAccepted(int descriptor);

protected:
    void incomingConnection(qintptr descriptor) override;
};

} // namespace coreflow
