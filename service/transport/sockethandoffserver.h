#pragma once
// SocketHandoffServer: the relay listener's accepting socket (docs/contract.md D-53). listen() as
// usual; every accepted descriptor is emitted raw by descriptorAccepted() (non-blocking,
// close-on-exec, TCP_NODELAY, TCP keepalive and TCP_USER_TIMEOUT: applyTcpLiveness, §3.3) instead of becoming a QTcpSocket: the listener runs TLS and HTTP on it
// itself.
#include <QTcpServer>

namespace coreflow {

// Descriptor exhaustion (docs/contract.md §3.4, D-59): QTcpServer stops accepting for good when
// accept() fails with EMFILE/ENFILE (it pauses and emits acceptError). This server keeps one spare
// descriptor (/dev/null) for that moment: on the error it closes the spare, accepts the waiting
// connection and closes it at once (the newcomer sees a closed connection instead of a hang and the
// backlog drains), reopens the spare and resumes accepting. Dropped connections are counted, and
// logged one line per doubling of the count.
class SocketHandoffServer : public QTcpServer {
    Q_OBJECT
public:
    // Connections the kernel queues before accept (the listen backlog; capped by net.core.somaxconn).
    static constexpr int kListenBacklog = 1024;

    explicit SocketHandoffServer(QObject *parent = nullptr);
    ~SocketHandoffServer() override;
    qint64 droppedAtDescriptorLimit() const { return m_dropped; }

Q_SIGNALS:
    // A new non-blocking, close-on-exec TCP descriptor; the receiver owns it.
    void descriptorAccepted(int descriptor);

protected:
    void incomingConnection(qintptr descriptor) override;

private:
    void onAcceptError(QAbstractSocket::SocketError error);
    void openSpare();
    int m_spare = -1;
    qint64 m_dropped = 0;
};

} // namespace coreflow
