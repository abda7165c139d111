#pragma once
// VpnNetworkAuthority: the one network the hub serves and the admission rule of
// docs/contract.md §11.2 (VH-08..VH-14), with expiries on the injected clock. Pure: no socket, no log
// line; the hub logs the outcome, binds on the first Applied and cuts what withdrawnNodeIds names.
//
// admit(), against the held network:
//   none held, or same authority.id, authority.publicKey and controlPrefix with a greater revision
//     → Applied (the whole network replaces the held one, never a patch: VH-08, VH-10);
//   identical content → Replayed, nothing changes (VH-09);
//   authority.id or authority.publicKey differs, or controlPrefix differs (a moved prefix is an
//     authority change, D-09) → refusal `vpn-network-authority-foreign: <field> differs from the held
//     network's` (VH-11, VH-12);
//   same authority, revision smaller than held, or equal with other content → refusal
//     `vpn-network-revision-stale: revision <r> is behind the held <h>` (VH-13).
// A refusal applies nothing (VH-14). Nothing is persisted (VH-17); clear() forgets the held network
// when the hub goes (VH-19).
//
// Liveness: a member forwards and handshakes only while now < its expiresAt and now < the network's
// expiresAt (§11.1); nextExpiryMs() is when the next member or the network stops, for the hub's timer.
#include "service/vpn/clustervpnnetwork.h"
#include "shared/contract/result.h"
#include "shared/util/clock.h"

#include <QStringList>
#include <optional>

namespace coreflow::vpn {

class VpnNetworkAuthority {
public:
    enum class State { Applied, Replayed };
    struct Admission {
        State state = State::Applied;
        // Members of the previous network that this one leaves out, or lists with another public key
        // (their connections authenticated a key that is no longer theirs): cut at once, close 0x101.
        QStringList withdrawnNodeIds;
        bool firstNetwork = false;   // nothing was held before: the hub binds with controlPrefix
    };

    explicit VpnNetworkAuthority(const Clock &clock);

    contract::Result<Admission> admit(ClusterVpnNetwork network);
    void clear() { m_held.reset(); }

    const std::optional<ClusterVpnNetwork> &held() const { return m_held; }
    // The held revision, for applyClusterVpnNetwork's answer; nullopt when none is held.
    std::optional<qint64> heldRevision() const;

    bool networkLive() const;
    // A member of the held network that is live now (nullptr otherwise). Pointers stay valid until
    // the next admit() or clear().
    const ClusterVpnNetwork::Member *liveMemberByKey(const QByteArray &publicKey) const;
    const ClusterVpnNetwork::Member *liveMemberByAddress(std::uint32_t address) const;
    const ClusterVpnNetwork::Member *liveMemberByNodeId(const QString &nodeId) const;
    bool isLive(const ClusterVpnNetwork::Member &member) const;
    // The same at a time the caller read once (the packet path reads the clock once per packet).
    bool isLiveAt(const ClusterVpnNetwork::Member &member, qint64 nowMs) const;
    qint64 nowMs() const { return m_clock.nowMs(); }
    // The earliest expiresAt (Unix ms) still ahead of now among the network and its members; -1 when
    // nothing is held or everything has expired.
    qint64 nextExpiryMs() const;

private:
    const Clock &m_clock;
    std::optional<ClusterVpnNetwork> m_held;
};

} // namespace coreflow::vpn
