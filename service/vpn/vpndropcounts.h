#pragma once
// VpnDropCounts: the hub's dropped packets and datagrams by cause (docs/contract.md §11.8), counted on
// the packet path by an enum index into a fixed array (no string, no map per drop) and named only when
// the status is read.
#include <QMap>
#include <QString>
#include <array>
#include <cstdint>

namespace coreflow::vpn {

class VpnDropCounts {
public:
    // The causes of §11.8, in the order the contract lists them.
    enum class Cause : std::uint8_t {
        NotIpv4,
        SenderNotAdmitted,
        SpoofedSource,
        UnknownDestination,
        UngrantedPair,
        DatagramTooLarge,
        DestinationNotConnected,
        QueueFull,
        NoSession,
        HandshakeReplayed,
        Replayed,
        TooOld,
        AuthenticationFailed,
        DatagramTooShort,
        KeysExpired,
        CounterExhausted,
    };
    static constexpr int kCauseCount = 16;
    // "not-ipv4", "sender-not-admitted", ... as the status and §11.8 name them.
    static QString causeName(Cause cause);

    void add(Cause cause) { ++m_counts[std::size_t(cause)]; }
    std::uint64_t count(Cause cause) const { return m_counts[std::size_t(cause)]; }
    // The causes counted at least once, by name (what the status shows).
    QMap<QString, qint64> byName() const;

private:
    std::array<std::uint64_t, kCauseCount> m_counts{};
};

} // namespace coreflow::vpn
