#include "service/vpn/vpndatagramopener.h"

#include "service/vpn/noiseprimitives.h"
#include "service/vpn/vpnwireconstants.h"

#include <QtEndian>

namespace coreflow::vpn {

QString VpnDatagramOpener::outcomeName(Outcome outcome)
{
    switch (outcome) {
    case Outcome::Opened: return QStringLiteral("opened");
    case Outcome::DatagramTooShort: return QStringLiteral("datagram-too-short");
    case Outcome::KeysExpired: return QStringLiteral("keys-expired");
    case Outcome::CounterExhausted: return QStringLiteral("counter-exhausted");
    case Outcome::Replayed: return QStringLiteral("replayed");
    case Outcome::TooOld: return QStringLiteral("too-old");
    case Outcome::AuthenticationFailed: return QStringLiteral("authentication-failed");
    }
    return QStringLiteral("unknown");
}

VpnDatagramOpener::VpnDatagramOpener(Secret receiveKey, const Clock &clock)
    : m_key(std::move(receiveKey))
    , m_age(clock)
{
}

VpnDatagramOpener::Outcome VpnDatagramOpener::open(QByteArrayView datagram, QByteArray &packet)
{
    packet.resize(0); // keeps the capacity: clear() would free it, a malloc and a free per packet
    if (datagram.size() < kVpnDatagramOverheadBytes)
        return Outcome::DatagramTooShort;
    if (m_age.expired())
        return Outcome::KeysExpired;
    const std::uint64_t counter = qFromBigEndian<quint64>(datagram.data());
    if (counter >= kVpnRejectAfterMessages)
        return Outcome::CounterExhausted;
    switch (m_window.check(counter)) {
    case VpnReplayWindow::Verdict::Replayed: return Outcome::Replayed;
    case VpnReplayWindow::Verdict::TooOld: return Outcome::TooOld;
    case VpnReplayWindow::Verdict::Fresh: break;
    }
    packet.resize(datagram.size() - kVpnDatagramOverheadBytes);
    if (!noise::aeadDecrypt(m_key, counter, {}, datagram.sliced(kVpnDatagramCounterBytes), packet.data())) {
        packet.resize(0);
        return Outcome::AuthenticationFailed;
    }
    m_window.accept(counter);
    return Outcome::Opened;
}

} // namespace coreflow::vpn
