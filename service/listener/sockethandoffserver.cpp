#include "sockethandoffserver.h"

#include <QAbstractHttpServer>
#include <QMetaMethod>

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

namespace coreflow {

void SocketHandoffServer::attachTo(QAbstractHttpServer *httpServer)
{
    // QAbstractHttpServer::bind() only warns about a server that is not listening; a loopback port
    // open for the duration of the call (and closed before any connection could be taken) avoids a
    // misleading warning in the operator's journal.
    const bool opened = listen(QHostAddress::LocalHost, 0);
    httpServer->bind(this);
    if (opened)
        close();
}

void SocketHandoffServer::handOff(QTcpSocket *socket)
{
    m_handedOff.append(socket);
    // pendingConnectionAvailable() is a private signal of QTcpServer; emitting it through its meta
    // method is what addPendingConnection() would do, without Qt's listening-state bookkeeping.
    static const QMetaMethod signal = QMetaMethod::fromSignal(&QTcpServer::pendingConnectionAvailable);
    signal.invoke(this, Qt::DirectConnection);
}

bool SocketHandoffServer::hasPendingConnections() const
{
    for (const auto &socket : m_handedOff)
        if (socket)
            return true;
    return QTcpServer::hasPendingConnections();
}

QTcpSocket *SocketHandoffServer::nextPendingConnection()
{
    while (!m_handedOff.isEmpty()) {
        QPointer<QTcpSocket> socket = m_handedOff.takeFirst();
        if (socket)
            return socket;
    }
    return QTcpServer::nextPendingConnection();
}

void SocketHandoffServer::incomingConnection(qintptr descriptor)
{
    const int fd = int(descriptor);
    const int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
        ::close(fd);
        return;
    }
    fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) | FD_CLOEXEC);
    // Frames are small request/answer pairs: without TCP_NODELAY, Nagle holds an answer back until
    // the peer's delayed ACK (milliseconds of added latency per hop; bench/README.md).
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    Q_EMIT descriptorAccepted(fd);
}

} // namespace coreflow
