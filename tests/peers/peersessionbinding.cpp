#include "tests/peers/peersessionbinding.h"

#include <QJsonValue>

namespace coreflow::peers {

PeerResult<PeerSessionBinding> PeerSessionBinding::read(const QJsonObject &object, const QString &path)
{
    const auto invalid = [&](const char *member, const char *what) {
        return PeerRefusal{QStringLiteral("request-invalid"),
                           QStringLiteral("field %1.%2 %3").arg(path, QLatin1String(member), QLatin1String(what))};
    };
    for (const char *member : {"nodeId", "clusterId", "sessionId"})
        if (!object.value(QLatin1String(member)).isString())
            return invalid(member, "is not a string");
    const QJsonValue generation = object.value(QStringLiteral("relayRegistrationGeneration"));
    if (!generation.isDouble() || generation.toDouble() != double(qint64(generation.toDouble())))
        return invalid("relayRegistrationGeneration", "is not an integer");
    PeerSessionBinding b{object.value(QStringLiteral("nodeId")).toString(), object.value(QStringLiteral("clusterId")).toString(),
                         object.value(QStringLiteral("sessionId")).toString(), qint64(generation.toDouble())};
    if (b.nodeId.isEmpty())
        return invalid("nodeId", "is empty");
    if (b.relayRegistrationGeneration < 0)
        return invalid("relayRegistrationGeneration", "is negative");
    return b;
}

QJsonObject PeerSessionBinding::toJson() const
{
    return QJsonObject{{QStringLiteral("nodeId"), nodeId},
                       {QStringLiteral("clusterId"), clusterId},
                       {QStringLiteral("sessionId"), sessionId},
                       {QStringLiteral("relayRegistrationGeneration"), double(relayRegistrationGeneration)}};
}

} // namespace coreflow::peers
