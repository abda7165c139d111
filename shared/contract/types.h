#pragma once
// Contract types the relay reads, each with an exact-key reader. Shapes are documented in
// docs/contract.md; units are stated per field.
#include "shared/contract/result.h"
#include "shared/secret.h"

#include <QJsonObject>
#include <QList>
#include <QString>
#include <QUrl>
#include <optional>

namespace coreflow::contract {

// The binding Cloudly issues for one physical node runtime session (docs/contract.md §8). Value-free: it
// names, it does not authorise. Wire:
//   { nodeId: string, clusterId: string, sessionId: string, relayRegistrationGeneration: integer >= 0 }
struct SessionBinding {
    QString nodeId;
    QString clusterId;
    QString sessionId;
    qint64 relayRegistrationGeneration = 0;

    static Result<SessionBinding> read(const QJsonObject &object, const QString &path);
    QJsonObject toJson() const;
    bool operator==(const SessionBinding &) const = default;
};

// The identity Cloudly exchanges the relay bearer for (exchangeClusterRelayAuthorization,
// refreshClusterIdentity). Wire: { token: string (secret), clusterId: string, expiresAt: integer Unix ms }
struct ClusterIdentity {
    Secret token;
    QString clusterId;
    qint64 expiresAtMs = 0;

    static Result<ClusterIdentity> read(const QJsonObject &object, const QString &path);
};

// ICluster.data.relay (docs/contract.md §4, §6.4; LO-08). Wire: { origin: "https://host[:port]" }
struct ClusterRelayBlock {
    QUrl origin;
    QString domain() const { return origin.host(); }
    // The port the origin names; nullopt when it names none (then no port is checked, Decision D-19).
    std::optional<int> originPort() const { return origin.port() < 0 ? std::nullopt : std::optional<int>(origin.port()); }
    static Result<ClusterRelayBlock> read(const QJsonObject &object, const QString &path);
};

// One node of the cluster document. Wire:
//   { id: string, corestore: { endpoint: string(URL) } | null, corestoreDatabase: { host, port } | null }
struct ClusterNode {
    QString id;
    std::optional<QUrl> corestoreEndpoint;
    std::optional<QString> corestoreDatabaseHost;
    std::optional<int> corestoreDatabasePort;
    static Result<ClusterNode> read(const QJsonObject &object, const QString &path);
};

// getClusterConfig answer's cluster. Wire:
//   { id: string, name: string, relay: ClusterRelayBlock | null, nodes: ClusterNode[] }
struct ClusterConfig {
    QString id;
    QString name;
    std::optional<ClusterRelayBlock> relay;
    QList<ClusterNode> nodes;
    static Result<ClusterConfig> read(const QJsonObject &object, const QString &path);
};

// getClusterRelayCertificate answer's certificate. Wire:
//   { domain: string, certificatePem: string (leaf first, then chain), privateKeyPem: string (secret) }
struct RelayCertificateMaterial {
    QString domain;
    QByteArray certificatePem;
    Secret privateKeyPem;
    static Result<RelayCertificateMaterial> read(const QJsonObject &object, const QString &path);
};

} // namespace coreflow::contract
