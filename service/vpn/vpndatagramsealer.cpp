#include "service/vpn/vpndatagramsealer.h"

#include "service/vpn/noiseprimitives.h"
#include "service/vpn/vpnwireconstants.h"

#include <QtEndian>

namespace coreflow::vpn {

QString VpnDatagramSealer::outcomeName(Outcome outcome)
{
    switch (outcome) {
    case Outcome::Sealed: return QStringLiteral("sealed");
    case Outcome::KeysExpired: return QStringLiteral("keys-expired");
    case Outcome::CounterExhausted: return QStringLiteral("counter-exhausted");
    }
    return QStringLiteral("unknown");
}

VpnDatagramSealer::VpnDatagramSealer(Secret sendKey, const Clock &clock)
    : m_key(std::move(sendKey))
    , m_age(clock)
{
}

VpnDatagramSealer::Outcome VpnDatagramSealer::seal(QByteArrayView packet, QByteArray &datagram)
{
    if (m_age.expired()) {
        datagram.clear();
        return Outcome::KeysExpired;
    }
    if (m_nextCounter >= kVpnRejectAfterMessages) {
        datagram.clear();
        return Outcome::CounterExhausted;
    }
    datagram.resize(kVpnDatagramOverheadBytes + packet.size());
    qToBigEndian<quint64>(m_nextCounter, datagram.data());
    noise::aeadEncrypt(m_key, m_nextCounter, {}, packet, datagram.data() + kVpnDatagramCounterBytes);
    ++m_nextCounter;
    return Outcome::Sealed;
}

} // namespace coreflow::vpn
