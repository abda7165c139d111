#include "shared/contract/types.h"

#include "shared/contract/exactkeyreader.h"

namespace coreflow::contract {

Result<SessionBinding> SessionBinding::read(const QJsonObject &object, const QString &path)
{
    ExactKeyReader r(object, path);
    SessionBinding b;
    b.nodeId = r.requiredString(QStringLiteral("nodeId"));
    b.clusterId = r.requiredString(QStringLiteral("clusterId"));
    b.sessionId = r.requiredString(QStringLiteral("sessionId"));
    b.relayRegistrationGeneration = r.requiredInteger(QStringLiteral("relayRegistrationGeneration"));
    if (!r.failed() && b.nodeId.isEmpty())
        r.fail(QStringLiteral("nodeId"), QStringLiteral("is empty"));
    if (!r.failed() && b.relayRegistrationGeneration < 0)
        r.fail(QStringLiteral("relayRegistrationGeneration"), QStringLiteral("is negative"));
    if (auto refusal = r.finish())
        return *refusal;
    return b;
}

QJsonObject SessionBinding::toJson() const
{
    return QJsonObject{{QStringLiteral("nodeId"), nodeId},
                       {QStringLiteral("clusterId"), clusterId},
                       {QStringLiteral("sessionId"), sessionId},
                       {QStringLiteral("relayRegistrationGeneration"), double(relayRegistrationGeneration)}};
}

Result<ClusterIdentity> ClusterIdentity::read(const QJsonObject &object, const QString &path)
{
    ExactKeyReader r(object, path);
    ClusterIdentity id;
    id.token = Secret::fromText(r.requiredString(QStringLiteral("token")));
    id.clusterId = r.requiredString(QStringLiteral("clusterId"));
    id.expiresAtMs = r.requiredInteger(QStringLiteral("expiresAt"));
    if (!r.failed() && id.token.isEmpty())
        r.fail(QStringLiteral("token"), QStringLiteral("is empty"));
    if (auto refusal = r.finish())
        return *refusal;
    return id;
}

Result<ClusterRelayBlock> ClusterRelayBlock::read(const QJsonObject &object, const QString &path)
{
    ExactKeyReader r(object, path);
    ClusterRelayBlock block;
    const QString origin = r.requiredString(QStringLiteral("origin"));
    if (!r.failed()) {
        block.origin = QUrl(origin, QUrl::StrictMode);
        if (!block.origin.isValid() || block.origin.scheme() != QLatin1String("https") || block.origin.host().isEmpty()
            || !(block.origin.path().isEmpty() || block.origin.path() == QLatin1String("/")) || block.origin.hasQuery()
            || block.origin.hasFragment() || !block.origin.userInfo().isEmpty())
            r.fail(QStringLiteral("origin"), QStringLiteral("is not an https origin (scheme, host and optional port)"));
    }
    if (auto refusal = r.finish())
        return *refusal;
    return block;
}

Result<ClusterNode> ClusterNode::read(const QJsonObject &object, const QString &path)
{
    ExactKeyReader r(object, path);
    ClusterNode node;
    node.id = r.requiredString(QStringLiteral("id"));
    if (auto cs = r.nullableObject(QStringLiteral("corestore"))) {
        ExactKeyReader c(*cs, r.pathOf(QStringLiteral("corestore")));
        const QUrl url(c.requiredString(QStringLiteral("endpoint")), QUrl::StrictMode);
        if (!c.failed() && (!url.isValid() || url.host().isEmpty()))
            c.fail(QStringLiteral("endpoint"), QStringLiteral("is not a URL"));
        if (auto refusal = c.finish())
            return *refusal;
        node.corestoreEndpoint = url;
    }
    if (auto db = r.nullableObject(QStringLiteral("corestoreDatabase"))) {
        ExactKeyReader d(*db, r.pathOf(QStringLiteral("corestoreDatabase")));
        node.corestoreDatabaseHost = d.requiredString(QStringLiteral("host"));
        node.corestoreDatabasePort = int(d.requiredInteger(QStringLiteral("port")));
        if (auto refusal = d.finish())
            return *refusal;
    }
    if (auto refusal = r.finish())
        return *refusal;
    return node;
}

Result<ClusterConfig> ClusterConfig::read(const QJsonObject &object, const QString &path)
{
    ExactKeyReader r(object, path);
    ClusterConfig config;
    config.id = r.requiredString(QStringLiteral("id"));
    config.name = r.requiredString(QStringLiteral("name"));
    if (auto relay = r.nullableObject(QStringLiteral("relay"))) {
        auto block = ClusterRelayBlock::read(*relay, r.pathOf(QStringLiteral("relay")));
        if (!block)
            return block.refusal();
        config.relay = block.value();
    }
    const QJsonArray nodes = r.requiredArray(QStringLiteral("nodes"));
    if (auto refusal = r.finish())
        return *refusal;
    for (qsizetype i = 0; i < nodes.size(); ++i) {
        const QString nodePath = QStringLiteral("%1.nodes[%2]").arg(path).arg(i);
        if (!nodes.at(i).isObject())
            return Refusal{QString(QLatin1StringView("request-invalid")), QStringLiteral("field %1 is not an object").arg(nodePath)};
        auto node = ClusterNode::read(nodes.at(i).toObject(), nodePath);
        if (!node)
            return node.refusal();
        config.nodes.append(node.value());
    }
    return config;
}

Result<RelayCertificateMaterial> RelayCertificateMaterial::read(const QJsonObject &object, const QString &path)
{
    ExactKeyReader r(object, path);
    RelayCertificateMaterial m;
    m.domain = r.requiredString(QStringLiteral("domain"));
    m.certificatePem = r.requiredString(QStringLiteral("certificatePem")).toUtf8();
    m.privateKeyPem = Secret::fromText(r.requiredString(QStringLiteral("privateKeyPem")));
    if (auto refusal = r.finish())
        return *refusal;
    return m;
}

} // namespace coreflow::contract
