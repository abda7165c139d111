#pragma once
// VpnQueueBudget: how many member connections and queued datagrams the hub's QUIC server allows,
// sized from the memory the relay's cgroup may use (docs/contract.md §11.3), never the host's RAM.
//
// memoryLimitBytes() reads cgroup v2's memory.max (then v1's memory.limit_in_bytes) of the process's
// own cgroup; "max", a missing file or an unreadable value count as 1 GiB. limitsFor() gives the hub
// one sixteenth of that: every connection costs about 64 KiB of ngtcp2 and GnuTLS state plus its
// datagram queue of 1500-byte entries. Connections: 16..4096; queued datagrams per connection:
// 16..1024.
#include "service/vpn/vpnquicserver.h"

namespace coreflow::vpn {

class VpnQueueBudget {
public:
    static qint64 memoryLimitBytes();
    static VpnQuicServer::Limits limitsFor(qint64 memoryBytes);
};

} // namespace coreflow::vpn
