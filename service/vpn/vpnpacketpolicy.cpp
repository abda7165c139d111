#include "service/vpn/vpnpacketpolicy.h"

#include "service/vpn/vpnwireconstants.h"

#include <QtEndian>

namespace coreflow::vpn {

namespace {
constexpr int kIpv4MinimumHeaderBytes = 20;
}

QString VpnPacketPolicy::verdictName(Verdict verdict)
{
    switch (verdict) {
    case Verdict::Forward: return QStringLiteral("forward");
    case Verdict::NotIpv4: return QStringLiteral("not-ipv4");
    case Verdict::SenderNotAdmitted: return QStringLiteral("sender-not-admitted");
    case Verdict::SpoofedSource: return QStringLiteral("spoofed-source");
    case Verdict::UnknownDestination: return QStringLiteral("unknown-destination");
    case Verdict::UngrantedPair: return QStringLiteral("ungranted-pair");
    case Verdict::DatagramTooLarge: return QStringLiteral("datagram-too-large");
    }
    return QStringLiteral("unknown");
}

VpnPacketPolicy::VpnPacketPolicy(const VpnNetworkAuthority &authority)
    : m_authority(authority)
{
}

VpnPacketPolicy::Decision VpnPacketPolicy::judge(const QString &senderNodeId, QByteArrayView packet, const DatagramLimit &limit)
{
    const Decision decision = decide(senderNodeId, packet, limit);
    ++m_counts[std::size_t(decision.verdict)];
    return decision;
}

VpnPacketPolicy::Decision VpnPacketPolicy::decide(const QString &senderNodeId, QByteArrayView packet, const DatagramLimit &limit) const
{
    Decision decision;
    if (packet.size() < kIpv4MinimumHeaderBytes)
        return decision;
    const auto *bytes = reinterpret_cast<const unsigned char *>(packet.data());
    const int headerBytes = (bytes[0] & 0x0f) * 4;
    if ((bytes[0] >> 4) != 4 || headerBytes < kIpv4MinimumHeaderBytes || headerBytes > packet.size()
        || qFromBigEndian<quint16>(bytes + 2) != packet.size())
        return decision;
    const ClusterVpnNetwork::Member *sender = m_authority.liveMemberByNodeId(senderNodeId);
    if (!sender) {
        decision.verdict = Verdict::SenderNotAdmitted;
        return decision;
    }
    if (qFromBigEndian<quint32>(bytes + 12) != sender->address) {
        decision.verdict = Verdict::SpoofedSource;
        return decision;
    }
    const ClusterVpnNetwork::Member *destination = m_authority.liveMemberByAddress(qFromBigEndian<quint32>(bytes + 16));
    if (!destination) {
        decision.verdict = Verdict::UnknownDestination;
        return decision;
    }
    if (!m_authority.held()->grants(sender->nodeId, destination->nodeId)) {
        decision.verdict = Verdict::UngrantedPair;
        return decision;
    }
    if (limit && packet.size() + kVpnDatagramOverheadBytes > limit(*destination)) {
        decision.verdict = Verdict::DatagramTooLarge;
        return decision;
    }
    decision.verdict = Verdict::Forward;
    decision.destination = destination;
    return decision;
}

} // namespace coreflow::vpn
