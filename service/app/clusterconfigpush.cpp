#include "service/app/clusterconfigpush.h"

#include "shared/contract/envelope.h"
#include "shared/contract/exactkeyreader.h"
#include "shared/contract/refusalnames.h"


namespace coreflow {

using namespace contract;

Result<ClusterConfigPush::Read> ClusterConfigPush::read(const QJsonObject &request, const QList<Secret> &authorities)
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
        auto state = PlatformDesiredState::read(*desired, QStringLiteral("request.desiredState"), authorities);
        if (!state)
            return state.refusal();
        for (const auto &b : state->bindings)
            read.grants += b.grant ? 1 : 0;
        read.desiredState = std::move(state).value();
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
