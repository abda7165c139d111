#pragma once
// VpnPacketPolicy: whether the hub forwards one opened packet (docs/contract.md §11.1, §11.5). A
// packet is forwarded only when it is one IPv4 packet, its source is the sending member's own
// address, its destination is a live member's address and a grant lets the sender reach that member.
// Everything else is dropped and counted by its cause, checked in this order:
//   not-ipv4             not exactly one IPv4 packet (version 4, header length >= 20 bytes and
//                        within the packet, total length equal to the packet's size)
//   sender-not-admitted  the sending member is not live in the held network (withdrawn, expired)
//   spoofed-source       the source address is not the sender's own
//   unknown-destination  no live member holds the destination address
//   ungranted-pair       no grant from the sender to the destination member
//   datagram-too-large   the sealed datagram (packet + 24 bytes) would not fit the destination's
//                        path (the hub passes the destination connection's datagram limit)
// Counts are per cause since the policy was made; the hub adds per-member counts of its own.
//
// Keys (issue 21): members are named by their index into the held network's members() (the hub
// resolves a session's nodeId to it when a network is applied or a member authenticates), addresses
// as host-order quint32 and grants as index pairs, so judging a packet hashes no string; the clock
// is read once per packet.
#include "service/vpn/vpnnetworkauthority.h"

#include <QByteArrayView>
#include <QString>
#include <array>
#include <cstdint>
#include <functional>

namespace coreflow::vpn {

class VpnPacketPolicy {
public:
    enum class Verdict { Forward, NotIpv4, SenderNotAdmitted, SpoofedSource, UnknownDestination, UngrantedPair, DatagramTooLarge };
    static constexpr int kVerdictCount = 7;
    // "forward", "not-ipv4", "sender-not-admitted", "spoofed-source", "unknown-destination",
    // "ungranted-pair", "datagram-too-large".
    static QString verdictName(Verdict verdict);

    struct Decision {
        Verdict verdict = Verdict::NotIpv4;
        int destinationIndex = -1;                                // set with Forward: index into members()
        const ClusterVpnNetwork::Member *destination = nullptr;   // set with Forward
    };
    // The largest datagram (bytes) the destination member's connection carries now; the argument is
    // the destination's index into the held network's members().
    using DatagramLimit = std::function<qsizetype(int destinationIndex)>;

    explicit VpnPacketPolicy(const VpnNetworkAuthority &authority);

    // senderIndex: the sending member's index into the held network's members(), -1 for none (the
    // packet is then sender-not-admitted once it is one IPv4 packet).
    Decision judge(int senderIndex, QByteArrayView packet, const DatagramLimit &limit);
    std::uint64_t count(Verdict verdict) const { return m_counts[std::size_t(verdict)]; }

private:
    Decision decide(int senderIndex, QByteArrayView packet, const DatagramLimit &limit) const;

    const VpnNetworkAuthority &m_authority;
    std::array<std::uint64_t, kVerdictCount> m_counts{};
};

} // namespace coreflow::vpn
