#include "service/vpn/vpndropcounts.h"

namespace coreflow::vpn {

QString VpnDropCounts::causeName(Cause cause)
{
    switch (cause) {
    case Cause::NotIpv4: return QStringLiteral("not-ipv4");
    case Cause::SenderNotAdmitted: return QStringLiteral("sender-not-admitted");
    case Cause::SpoofedSource: return QStringLiteral("spoofed-source");
    case Cause::UnknownDestination: return QStringLiteral("unknown-destination");
    case Cause::UngrantedPair: return QStringLiteral("ungranted-pair");
    case Cause::DatagramTooLarge: return QStringLiteral("datagram-too-large");
    case Cause::DestinationNotConnected: return QStringLiteral("destination-not-connected");
    case Cause::QueueFull: return QStringLiteral("queue-full");
    case Cause::NoSession: return QStringLiteral("no-session");
    case Cause::HandshakeReplayed: return QStringLiteral("handshake-replayed");
    case Cause::Replayed: return QStringLiteral("replayed");
    case Cause::TooOld: return QStringLiteral("too-old");
    case Cause::AuthenticationFailed: return QStringLiteral("authentication-failed");
    case Cause::DatagramTooShort: return QStringLiteral("datagram-too-short");
    case Cause::KeysExpired: return QStringLiteral("keys-expired");
    case Cause::CounterExhausted: return QStringLiteral("counter-exhausted");
    }
    return QStringLiteral("unknown");
}

QMap<QString, qint64> VpnDropCounts::byName() const
{
    QMap<QString, qint64> named;
    for (int i = 0; i < kCauseCount; ++i)
        if (m_counts[std::size_t(i)] != 0)
            named.insert(causeName(Cause(i)), qint64(m_counts[std::size_t(i)]));
    return named;
}

} // namespace coreflow::vpn
