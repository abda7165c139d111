#include "service/transport/tcpliveness.h"

#include "shared/contract/timing.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

namespace coreflow {

bool applyTcpLiveness(int fd)
{
    using namespace contract;
    const int on = 1;
    const int idleSeconds = int(tcpKeepaliveIdleMs / 1000);
    const int intervalSeconds = int(tcpKeepaliveIntervalMs / 1000);
    const int probes = tcpKeepaliveProbes;
    const unsigned int userTimeoutMs = static_cast<unsigned int>(tcpUserTimeoutMs);
    bool ok = ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on) == 0;
    ok = ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idleSeconds, sizeof idleSeconds) == 0 && ok;
    ok = ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intervalSeconds, sizeof intervalSeconds) == 0 && ok;
    ok = ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &probes, sizeof probes) == 0 && ok;
    ok = ::setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &userTimeoutMs, sizeof userTimeoutMs) == 0 && ok;
    return ok;
}

} // namespace coreflow
