#pragma once
// VpnQueueBudget: how many member connections and queued datagrams the hub's QUIC server allows,
// sized from the memory the relay's cgroup may use (docs/contract.md §11.8 Bounds), never the host's
// RAM.
//
// memoryLimitBytes() reads cgroup v2's memory.max of the process's own cgroup (named by the `0::` line
// of /proc/self/cgroup), then the mount point's own memory.max (a container's namespace root), then
// cgroup v1's memory/memory.limit_in_bytes; the first that holds a positive byte count below 2^50
// wins. "max", a missing file, an empty or unreadable value, and v1's "no limit" (a number near
// 2^63) count as 1 GiB. CgroupPaths says where those files are (tests point it into a directory).
//
// limitsFor() gives the hub one sixteenth of that memory: half in connections at 64 KiB each
// (16..4096), the other half in queued datagrams of 1500 bytes spread over those connections
// (16..1024 per connection). A 1 GiB cgroup: 512 connections, 43 queued datagrams each. (A connected
// member measured about 115 KiB, D-119, so a full hub holds about twice its connection half.)
#include "service/vpn/vpnquicserver.h"

#include <QString>

namespace coreflow::vpn {

class VpnQueueBudget {
public:
    struct CgroupPaths {
        QString mountPoint = QStringLiteral("/sys/fs/cgroup");
        QString ownCgroupList = QStringLiteral("/proc/self/cgroup");
    };

    // Bytes; 1 GiB when no limit is found. Without paths: the process's real cgroup files.
    static qint64 memoryLimitBytes();
    static qint64 memoryLimitBytes(const CgroupPaths &paths);
    static VpnQuicServer::Limits limitsFor(qint64 memoryBytes);
};

} // namespace coreflow::vpn
