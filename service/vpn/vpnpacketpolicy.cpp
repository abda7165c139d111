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

VpnPacketPolicy::Decision VpnPacketPolicy::judge(int senderIndex, QByteArrayView packet, const DatagramLimit &limit)
{
    const Decision decision = decide(senderIndex, packet, limit);
    ++m_counts[std::size_t(decision.verdict)];
    return decision;
}

VpnPacketPolicy::Decision VpnPacketPolicy::decide(int senderIndex, QByteArrayView packet, const DatagramLimit &limit) const
{
    Decision decision;
    if (packet.size() < kIpv4MinimumHeaderBytes)
        return decision;
    const auto *bytes = reinterpret_cast<const unsigned char *>(packet.data());
    const int headerBytes = (bytes[0] & 0x0f) * 4;
    if ((bytes[0] >> 4) != 4 || headerBytes < kIpv4MinimumHeaderBytes || headerBytes > packet.size()
        || qFromBigEndian<quint16>(bytes + 2) != packet.size())
        return decision;
    const std::optional<ClusterVpnNetwork> &held = m_authority.held();
    const qint64 now = m_authority.nowMs();
    if (!held || senderIndex < 0 || senderIndex >= held->members().size()
        || !m_authority.isLiveAt(held->members().at(senderIndex), now)) {
        decision.verdict = Verdict::SenderNotAdmitted;
        return decision;
    }
    const ClusterVpnNetwork::Member &sender = held->members().at(senderIndex);
    if (qFromBigEndian<quint32>(bytes + 12) != sender.address) {
        decision.verdict = Verdict::SpoofedSource;
        return decision;
    }
    const int destinationIndex = held->indexOfAddress(qFromBigEndian<quint32>(bytes + 16));
    if (destinationIndex < 0 || !m_authority.isLiveAt(held->members().at(destinationIndex), now)) {
        decision.verdict = Verdict::UnknownDestination;
        return decision;
    }
    if (!held->grantsByIndex(senderIndex, destinationIndex)) {
        decision.verdict = Verdict::UngrantedPair;
        return decision;
    }
    if (limit && packet.size() + kVpnDatagramOverheadBytes > limit(destinationIndex)) {
        decision.verdict = Verdict::DatagramTooLarge;
        return decision;
    }
    decision.verdict = Verdict::Forward;
    decision.destinationIndex = destinationIndex;
    decision.destination = &held->members().at(destinationIndex);
    return decision;
}

} // namespace coreflow::vpn
