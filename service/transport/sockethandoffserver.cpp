#include "service/transport/sockethandoffserver.h"

#include "service/transport/tcpliveness.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

namespace coreflow {

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
