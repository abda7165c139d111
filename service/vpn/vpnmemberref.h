#pragma once
// VpnMemberRef: the member a handshake authenticated, as the membership check names it (the hub
// answers it from the held ClusterVpnNetwork, docs/contract.md §11.1): value-free facts only.
#include <QString>
#include <cstdint>

namespace coreflow::vpn {

struct VpnMemberRef {
    QString nodeId;
    std::uint32_t address = 0;   // the member's IPv4 address inside the control prefix, host order
    bool operator==(const VpnMemberRef &) const = default;
};

} // namespace coreflow::vpn
