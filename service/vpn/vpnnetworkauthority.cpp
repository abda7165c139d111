#include "service/vpn/vpnnetworkauthority.h"

#include "shared/contract/refusalnames.h"

namespace coreflow::vpn {

using contract::Refusal;

VpnNetworkAuthority::VpnNetworkAuthority(const Clock &clock)
    : m_clock(clock)
{
}

contract::Result<VpnNetworkAuthority::Admission> VpnNetworkAuthority::admit(ClusterVpnNetwork network)
{
    Admission admission;
    if (!m_held) {
        admission.firstNetwork = true;
        m_held = std::move(network);
        return admission;
    }
    const ClusterVpnNetwork &held = *m_held;
    auto foreign = [](const char *field) {
        return Refusal{QString(contract::refusal::vpnNetworkAuthorityForeign),
                       QStringLiteral("%1 differs from the held network's").arg(QLatin1String(field))};
    };
    if (network.authorityId() != held.authorityId())
        return foreign("authority.id");
    if (network.authorityPublicKey() != held.authorityPublicKey())
        return foreign("authority.publicKey");
    if (network.prefixAddress() != held.prefixAddress() || network.prefixLength() != held.prefixLength())
        return foreign("controlPrefix");
    if (network.sameContent(held)) {
        admission.state = State::Replayed;
        return admission;
    }
    if (network.revision() <= held.revision())
        return Refusal{QString(contract::refusal::vpnNetworkRevisionStale),
                       QStringLiteral("revision %1 is behind the held %2").arg(network.revision()).arg(held.revision())};
    for (const ClusterVpnNetwork::Member &member : held.members()) {
        const ClusterVpnNetwork::Member *next = network.memberByNodeId(member.nodeId);
        if (!next || next->publicKey != member.publicKey)
            admission.withdrawnNodeIds.append(member.nodeId);
    }
    m_held = std::move(network);
    return admission;
}

std::optional<qint64> VpnNetworkAuthority::heldRevision() const
{
    if (!m_held)
        return std::nullopt;
    return m_held->revision();
}

bool VpnNetworkAuthority::networkLive() const
{
    return m_held && m_clock.nowMs() < m_held->expiresAtMs();
}

bool VpnNetworkAuthority::isLive(const ClusterVpnNetwork::Member &member) const
{
    return isLiveAt(member, m_clock.nowMs());
}

bool VpnNetworkAuthority::isLiveAt(const ClusterVpnNetwork::Member &member, qint64 nowMs) const
{
    return m_held && nowMs < m_held->expiresAtMs() && nowMs < member.expiresAtMs;
}

const ClusterVpnNetwork::Member *VpnNetworkAuthority::liveMemberByKey(const QByteArray &publicKey) const
{
    const ClusterVpnNetwork::Member *member = m_held ? m_held->memberByKey(publicKey) : nullptr;
    return member && isLive(*member) ? member : nullptr;
}

const ClusterVpnNetwork::Member *VpnNetworkAuthority::liveMemberByAddress(std::uint32_t address) const
{
    const ClusterVpnNetwork::Member *member = m_held ? m_held->memberByAddress(address) : nullptr;
    return member && isLive(*member) ? member : nullptr;
}

const ClusterVpnNetwork::Member *VpnNetworkAuthority::liveMemberByNodeId(const QString &nodeId) const
{
    const ClusterVpnNetwork::Member *member = m_held ? m_held->memberByNodeId(nodeId) : nullptr;
    return member && isLive(*member) ? member : nullptr;
}

qint64 VpnNetworkAuthority::nextExpiryMs() const
{
    if (!networkLive())
        return -1;
    const qint64 now = m_clock.nowMs();
    qint64 next = m_held->expiresAtMs();
    for (const ClusterVpnNetwork::Member &member : m_held->members())
        if (member.expiresAtMs > now && member.expiresAtMs < next)
            next = member.expiresAtMs;
    return next;
}

} // namespace coreflow::vpn
