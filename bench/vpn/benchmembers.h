#pragma once
// The multi-process VPN bench's shared numbering (bench only): member i's static key, address and
// partner, the same in coreflow-vpn-bench-hub (which builds the network) and coreflow-vpn-bench-member
// (which dials as those members). Bench keys are derived from the index and are no secrets.
#include "tests/peers/peernoiseinitiator.h"

#include <QCryptographicHash>
#include <QHostAddress>
#include <QString>

namespace coreflow::bench {

inline QByteArray benchMemberPrivateKey(int index)
{
    return QCryptographicHash::hash(QByteArrayLiteral("coreflow-vpn-bench-member-") + QByteArray::number(index), QCryptographicHash::Sha256);
}

inline QByteArray benchMemberPublicKey(int index) { return peers::PeerNoiseInitiator::publicKeyOf(benchMemberPrivateKey(index)); }

// 100.96.0.0/16: member i at 100.96.(i / 250).(i % 250 + 1).
inline QString benchMemberAddress(int index) { return QStringLiteral("100.96.%1.%2").arg(index / 250).arg(index % 250 + 1); }

inline QString benchMemberNodeId(int index) { return QStringLiteral("member-%1").arg(index); }

// Pairs (0,1), (2,3), ...: a member sends to its partner and its partner echoes.
inline int benchMemberPartner(int index) { return index ^ 1; }

} // namespace coreflow::bench
