#include "service/app/clusterconfigpush.h"

#include "shared/contract/envelope.h"
#include "shared/contract/exactkeyreader.h"
#include "shared/contract/refusalnames.h"

#include <QJsonArray>

namespace coreflow {

using namespace contract;

Result<ClusterConfigPush::Read> ClusterConfigPush::read(const QJsonObject &request)
{
    ExactKeyReader r(request, QStringLiteral("request"));
    const QJsonObject cluster = r.requiredObject(QStringLiteral("cluster"));
    const std::optional<QJsonObject> desired = r.nullableObject(QStringLiteral("desiredState"));
    if (auto refused = r.finish())
        return *refused;
    auto config = ClusterConfig::read(cluster, QStringLiteral("request.cluster"));
    if (!config)
        return config.refusal();
    Read read;
    read.cluster = config.value();
    if (desired) {
        ExactKeyReader d(*desired, QStringLiteral("request.desiredState"));
        const QJsonArray bindings = d.requiredArray(QStringLiteral("bindings"));
        if (auto refused = d.finish())
            return *refused;
        for (qsizetype i = 0; i < bindings.size(); ++i) {
            const QString path = QStringLiteral("request.desiredState.bindings[%1]").arg(i);
            if (!bindings.at(i).isObject())
                return Refusal{QString(refusal::requestInvalid), QStringLiteral("field %1 is not an object").arg(path)};
            ExactKeyReader b(bindings.at(i).toObject(), path);
            const QJsonValue nodeId = b.requiredAny(QStringLiteral("nodeId"));
            if (!b.failed() && !nodeId.isNull() && !nodeId.isString())
                b.fail(QStringLiteral("nodeId"), QStringLiteral("is not a string or null"));
            b.requiredObject(QStringLiteral("binding"));
            const std::optional<QJsonObject> grant = b.nullableObject(QStringLiteral("grant"));
            if (auto refused = b.finish())
                return *refused;
            read.grants += grant ? 1 : 0;
        }
    }
    return read;
}

QString ClusterConfigPush::relayBlockWord(const std::optional<ClusterRelayBlock> &held, const std::optional<ClusterRelayBlock> &pushed)
{
    if (!held && !pushed)
        return QStringLiteral("unchanged");
    if (!held)
        return QStringLiteral("added-not-adopted");
    if (!pushed)
        return QStringLiteral("removed-not-adopted");
    return held->origin == pushed->origin ? QStringLiteral("unchanged") : QStringLiteral("changed-not-adopted");
}

QByteArray ClusterConfigPush::answer(int nodes, int corestoreEndpoints, int grants, const QString &relayBlock, bool reconciling)
{
    return Envelope::compact(QJsonObject{
        {QStringLiteral("adopted"), QJsonObject{{QStringLiteral("nodes"), nodes},
                                                {QStringLiteral("corestoreEndpoints"), corestoreEndpoints},
                                                {QStringLiteral("grants"), grants}}},
        {QStringLiteral("relayBlock"), relayBlock},
        {QStringLiteral("reconciling"), reconciling}});
}

} // namespace coreflow
