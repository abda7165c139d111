#pragma once
// ClusterVpnNetwork: the whole network Cloudly's authority compiled for this cluster, as the hub holds
// it (docs/contract.md §11.1): read with exact keys at every level and validated by read(). Pure: no
// socket, no clock, no log line.
//
// read() refuses with request-invalid and the FIRST failure, in this order: exact keys and types at
// every level (document order); authority.id an id, authority.publicKey non-empty base64; revision
// >= 1; controlPrefix an IPv4 CIDR "a.b.c.d/n" with n in 1..32 and no host bits set; expiresAt >= 0;
// per member: nodeId an id, publicKey base64 of exactly 32 bytes, address an IPv4 literal inside the
// prefix, expiresAt >= 0; nodeIds, publicKeys and addresses each unique; per grant: from and to name
// listed members. A reason names paths and indices only ("field request.network.members[2].address
// lies outside controlPrefix"), never a value it found.
//
// What is held is the contract's own shape: Unix-ms expiries and presence-only membership (VH-21),
// public keys only (VH-03). Lookups by key, address and nodeId and the grant test are O(1).
#include "shared/contract/result.h"

#include <QByteArray>
#include <QHash>
#include <QJsonObject>
#include <QList>
#include <QSet>
#include <QString>
#include <cstdint>
#include <optional>

namespace coreflow::vpn {

class ClusterVpnNetwork {
public:
    struct Member {
        QString nodeId;
        QByteArray publicKey;     // 32 bytes (decoded)
        std::uint32_t address = 0; // host order
        qint64 expiresAtMs = 0;
        bool operator==(const Member &) const = default;
    };
    struct Grant {
        QString from;
        QString to;
        bool operator==(const Grant &) const = default;
    };

    // path: where the network sits in its frame ("request.network", "response.network").
    static contract::Result<ClusterVpnNetwork> read(const QJsonObject &network, const QString &path);
    // The body that carries a network, exactly { network: ClusterVpnNetwork } (applyClusterVpnNetwork's
    // request) or { network: ClusterVpnNetwork | null } (nullable: getClusterVpnNetwork's answer). The
    // network object is returned unread (nullopt for null).
    static contract::Result<std::optional<QJsonObject>> readCarrier(const QJsonObject &body, const QString &path, bool nullable);

    const QString &authorityId() const { return m_authorityId; }
    const QString &authorityPublicKey() const { return m_authorityPublicKey; }   // as sent (base64)
    qint64 revision() const { return m_revision; }
    std::uint32_t prefixAddress() const { return m_prefixAddress; }
    int prefixLength() const { return m_prefixLength; }
    const QString &controlPrefix() const { return m_controlPrefix; }              // as sent
    qint64 expiresAtMs() const { return m_expiresAtMs; }
    const QList<Member> &members() const { return m_members; }
    const QList<Grant> &grants() const { return m_grants; }

    const Member *memberByKey(const QByteArray &publicKey) const;
    const Member *memberByAddress(std::uint32_t address) const;
    const Member *memberByNodeId(const QString &nodeId) const;
    // Whether a grant lets packets flow from → to (nodeIds).
    bool grants(const QString &fromNodeId, const QString &toNodeId) const;

    // The packet path's integer keys (issue 21): a member's index into members(), fixed for as long as
    // this network is held, so the hub resolves a nodeId once when a network is applied or a member
    // authenticates, never per packet. -1: no such member.
    int indexOfNodeId(const QString &nodeId) const;
    int indexOfAddress(std::uint32_t address) const;
    // Whether a grant lets packets flow from the member at index `from` to the one at `to`.
    bool grantsByIndex(int from, int to) const;
    // Same authority, revision, prefix, expiry, members and grants (order of grants ignored,
    // duplicates folded; members compared by nodeId).
    bool sameContent(const ClusterVpnNetwork &other) const;
    // "revision 7 (3 members, 2 grants)": value-free, for log lines and status.
    QString describe() const;

    // Dotted-quad IPv4 literal, each octet 0..255 without leading zeros.
    static std::optional<std::uint32_t> parseIpv4(const QString &text);
    // "a.b.c.d" of a host-order address.
    static QString formatIpv4(std::uint32_t address);

private:
    ClusterVpnNetwork() = default;

    QString m_authorityId;
    QString m_authorityPublicKey;
    qint64 m_revision = 0;
    QString m_controlPrefix;
    std::uint32_t m_prefixAddress = 0;
    int m_prefixLength = 0;
    qint64 m_expiresAtMs = 0;
    QList<Member> m_members;
    QList<Grant> m_grants;
    QHash<QByteArray, int> m_byKey;
    QHash<std::uint32_t, int> m_byAddress;
    QHash<QString, int> m_byNodeId;
    QSet<std::uint64_t> m_grantPairs;   // (from index << 32) | to index
};

} // namespace coreflow::vpn
