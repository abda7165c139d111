#pragma once
// VpnDatagramSealer: one direction's sending half of the data plane (docs/contract.md §11.5). Each
// datagram is the counter as u64 big-endian, then ChaCha20-Poly1305 IETF of exactly one IPv4 packet
// under the send key with empty associated data and Noise's nonce for that counter (4 zero bytes,
// the counter little-endian): 24 bytes more than the packet.
//
// Counters start at 0 and increase by one per sealed datagram; none is ever used twice. Refusals
// (nothing is sealed, the counter does not move): keys-expired (180000 ms after the keys were made,
// §11.6), counter-exhausted (the counter reached 2^64 - 2^13 - 1). The caller sizes datagrams to its
// path (a packet whose datagram does not fit is the hub's datagram-too-large, not a sealer matter).
#include "service/vpn/vpnrekeyclock.h"
#include "shared/secret.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QString>
#include <cstdint>

namespace coreflow::vpn {

class VpnDatagramSealer {
public:
    enum class Outcome { Sealed, KeysExpired, CounterExhausted };
    static QString outcomeName(Outcome outcome);   // "sealed", "keys-expired", "counter-exhausted"

    // sendKey: VpnTransportKeys::sendKey (32 bytes); the keys are born at clock.nowMs().
    VpnDatagramSealer(Secret sendKey, const Clock &clock);

    // datagram is resized to packet.size() + 24 and filled; on a refusal it is left empty.
    Outcome seal(QByteArrayView packet, QByteArray &datagram);
    // The counter the next datagram carries (= datagrams sealed so far).
    std::uint64_t nextCounter() const { return m_nextCounter; }
    // True once the member should start a new handshake (§11.6).
    bool rekeyDue() const { return m_age.rekeyDue(m_nextCounter); }
    const VpnRekeyClock &keyAge() const { return m_age; }

private:
    Secret m_key;
    VpnRekeyClock m_age;
    std::uint64_t m_nextCounter = 0;
};

} // namespace coreflow::vpn
