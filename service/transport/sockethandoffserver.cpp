#include "service/transport/sockethandoffserver.h"

#include "service/core/logging.h"
#include "service/transport/tcpliveness.h"


#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

namespace coreflow {

SocketHandoffServer::SocketHandoffServer(QObject *parent) : QTcpServer(parent)
{
    // A reconnect wave brings every node at once (contract §3.4 "Count bounds"): Qt's default backlog
    // of 50 would leave the rest in SYN retransmits (1 s, 3 s, 7 s ...) before the relay sees them.
    setListenBacklogSize(kListenBacklog);
    openSpare();
    connect(this, &QTcpServer::acceptError, this, &SocketHandoffServer::onAcceptError);
}

SocketHandoffServer::~SocketHandoffServer()
{
    if (m_spare >= 0)
        ::close(m_spare);
}

void SocketHandoffServer::openSpare()
{
    if (m_spare < 0)
        m_spare = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
}

void SocketHandoffServer::onAcceptError(QAbstractSocket::SocketError)
{
    const int listening = int(socketDescriptor());
    if (listening >= 0) {
        if (m_spare >= 0) {
            ::close(m_spare);
            m_spare = -1;
        }
        for (int i = 0; i < 64; ++i) { // what waits in the backlog now, bounded per turn
            const int fd = ::accept4(listening, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
            if (fd < 0)
                break;
            ::close(fd);
            if (const qint64 n = ++m_dropped; (n & (n - 1)) == 0)
                qCWarning(logListener) << "connection dropped at the descriptor limit;" << n << "so far";
        }
        openSpare();
    }
    resumeAccepting();
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
    // A node that vanishes (power loss, expired NAT entry) ends the connection in the kernel too (§3.3).
    applyTcpLiveness(fd);
    Q_EMIT descriptorAccepted(fd);
}

} // namespace coreflow
