#pragma once
// VpnHandshakeTimestamps: the hub's answer to a replayed message 1 (docs/contract.md §11.4, D-98).
//
// Message 1's encrypted payload is the member's 12-byte TAI64N timestamp (8 bytes big-endian seconds
// label, 4 bytes big-endian nanoseconds). The hub keeps, per member static key, the greatest timestamp
// it accepted and takes a message 1 only when its timestamp is strictly greater, compared as one
// 96-bit big-endian number. So a message 1 someone captured and sends again, though it authenticates
// (they are the member's own bytes), cannot displace the member's live connection.
//
// admit() is called after message 1 authenticated completely and named a live member: it records the
// timestamp and answers Accepted, or changes nothing and answers NotNewer (the hub closes that
// connection with 0x105 handshake-replayed) or Malformed (a payload other than 12 bytes: 0x103).
// Entries are never forgotten while the hub lives: forgetting a key would let its old message 1 in
// again once Cloudly re-admits it. The hub's static key is new on every start (VH-18), so a message 1
// captured before a restart does not authenticate after it; that is why nothing is persisted.
// Only authenticated members make entries, so the table is bounded by the keys Cloudly admitted.
#include <QByteArray>
#include <QByteArrayView>
#include <QHash>

namespace coreflow::vpn {

class VpnHandshakeTimestamps {
public:
    enum class Verdict { Accepted, NotNewer, Malformed };
    // §11.4: the payload of message 1, bytes.
    static constexpr int kTimestampBytes = 12;

    // staticKey: the member's 32-byte Noise static public key; payload: message 1's decrypted payload.
    Verdict admit(const QByteArray &staticKey, QByteArrayView payload);
    qsizetype size() const { return m_greatest.size(); }

private:
    QHash<QByteArray, QByteArray> m_greatest;
};

} // namespace coreflow::vpn
