#pragma once
// VpnDatagramOpener: one direction's receiving half of the data plane (docs/contract.md §11.5): reads
// the u64 big-endian counter, checks it against the replay window, opens the ChaCha20-Poly1305 IETF
// ciphertext under the receive key (empty associated data, Noise's nonce for that counter) and only
// after the tag authenticated records the counter in the window.
//
// Refusals (nothing changes: the window, the key and the counts of other datagrams stay as they
// were; the plaintext buffer is left empty): datagram-too-short (fewer than 24 bytes),
// keys-expired (180000 ms after the keys were made, §11.6), counter-exhausted (a counter at or above
// 2^64 - 2^13 - 1), replayed (counter already opened), too-old (more than 2048 counters behind the
// greatest opened), authentication-failed (wrong key, altered bytes or counter).
#include "service/vpn/vpnrekeyclock.h"
#include "service/vpn/vpnreplaywindow.h"
#include "shared/secret.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QString>
#include <cstdint>

namespace coreflow::vpn {

class VpnDatagramOpener {
public:
    enum class Outcome { Opened, DatagramTooShort, KeysExpired, CounterExhausted, Replayed, TooOld, AuthenticationFailed };
    // "opened", "datagram-too-short", "keys-expired", "counter-exhausted", "replayed", "too-old",
    // "authentication-failed".
    static QString outcomeName(Outcome outcome);

    // receiveKey: VpnTransportKeys::receiveKey (32 bytes); the keys are born at clock.nowMs().
    VpnDatagramOpener(Secret receiveKey, const Clock &clock);

    // packet is resized to datagram.size() - 24 and holds the opened IPv4 packet on Opened.
    Outcome open(QByteArrayView datagram, QByteArray &packet);
    const VpnRekeyClock &keyAge() const { return m_age; }
    const VpnReplayWindow &window() const { return m_window; }

private:
    Secret m_key;
    VpnRekeyClock m_age;
    VpnReplayWindow m_window;
};

} // namespace coreflow::vpn
