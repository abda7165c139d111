#include "service/bindings/platformdesiredstate.h"

#include "shared/contract/exactkeyreader.h"
#include "shared/contract/refusalnames.h"
#include "shared/contract/secretstringtake.h"

#include <QJsonArray>

namespace coreflow {

using namespace contract;

namespace {

std::optional<QString> nullableString(ExactKeyReader &reader, const QString &key)
{
    const QJsonValue v = reader.requiredAny(key);
    if (v.isNull() || v.isUndefined())
        return std::nullopt;
    if (!v.isString()) {
        reader.fail(key, QStringLiteral("is not a string or null"));
        return std::nullopt;
    }
    return v.toString();
}

bool oneOf(const QString &value, std::initializer_list<const char *> words)
{
    for (const char *w : words)
        if (value == QLatin1String(w))
            return true;
    return false;
}

std::optional<Refusal> readBinding(const QJsonObject &object, const QString &path, PlatformBindingSpec &out)
{
    ExactKeyReader r(object, path);
    out.name = r.requiredString(QStringLiteral("name"));
    out.capability = r.requiredString(QStringLiteral("capability"));
    out.serviceId = r.requiredString(QStringLiteral("serviceId"));
    out.organizationId = nullableString(r, QStringLiteral("organizationId"));
    out.clusterId = nullableString(r, QStringLiteral("clusterId"));
    const std::optional<QJsonObject> retention = r.nullableObject(QStringLiteral("retention"));
    if (!r.failed() && !oneOf(out.capability, {"database", "objectstorage", "pushnotification"}))
        r.fail(QStringLiteral("capability"), QStringLiteral("is not database, objectstorage or pushnotification"));
    if (!r.failed() && (out.name.isEmpty() || out.serviceId.isEmpty()))
        r.fail(out.name.isEmpty() ? QStringLiteral("name") : QStringLiteral("serviceId"), QStringLiteral("is empty"));
    if (retention) {
        ExactKeyReader rr(*retention, r.pathOf(QStringLiteral("retention")));
        BindingRetention value;
        value.mode = rr.requiredString(QStringLiteral("mode"));
        value.days = rr.requiredInteger(QStringLiteral("days"));
        if (!rr.failed() && !oneOf(value.mode, {"none", "governance", "compliance"}))
            rr.fail(QStringLiteral("mode"), QStringLiteral("is not none, governance or compliance"));
        if (!rr.failed() && value.days < 0)
            rr.fail(QStringLiteral("days"), QStringLiteral("is negative"));
        if (auto refusal = rr.finish())
            return refusal;
        out.retention = value;
    }
    return r.finish();
}

std::optional<Refusal> readGrant(const QJsonObject &object, const QString &path, PublicationGrant &out)
{
    ExactKeyReader r(object, path);
    out.operation = r.requiredString(QStringLiteral("operation"));
    out.generation = r.requiredInteger(QStringLiteral("generation"));
    out.serviceId = r.requiredString(QStringLiteral("serviceId"));
    out.capability = r.requiredString(QStringLiteral("capability"));
    out.bindingName = r.requiredString(QStringLiteral("bindingName"));
    out.requestDigest = r.requiredString(QStringLiteral("requestDigest"));
    out.expiresAtMs = r.requiredInteger(QStringLiteral("expiresAt"));
    r.requiredString(QStringLiteral("authority")); // blanked text: its type only
    if (!r.failed() && out.operation.isEmpty())
        r.fail(QStringLiteral("operation"), QStringLiteral("is empty"));
    if (!r.failed() && out.generation < 0)
        r.fail(QStringLiteral("generation"), QStringLiteral("is negative"));
    if (!r.failed() && !oneOf(out.capability, {"database", "objectstorage"}))
        r.fail(QStringLiteral("capability"), QStringLiteral("is not database or objectstorage"));
    return r.finish();
}

} // namespace

bool PublicationGrant::sameAs(const PublicationGrant &o) const
{
    return operation == o.operation && generation == o.generation && serviceId == o.serviceId && capability == o.capability
           && bindingName == o.bindingName && requestDigest == o.requestDigest && expiresAtMs == o.expiresAtMs
           && authority.equals(o.authority);
}

Result<PlatformDesiredState> PlatformDesiredState::read(const QJsonObject &object, const QString &path, const QList<Secret> &authorities)
{
    ExactKeyReader top(object, path);
    const QJsonArray bindings = top.requiredArray(QStringLiteral("bindings"));
    if (auto refusal = top.finish())
        return *refusal;
    PlatformDesiredState state;
    state.bindings.reserve(bindings.size());
    for (qsizetype i = 0; i < bindings.size(); ++i) {
        const QString at = QStringLiteral("%1.bindings[%2]").arg(path).arg(i);
        if (!bindings.at(i).isObject())
            return Refusal{QString(refusal::requestInvalid), QStringLiteral("field %1 is not an object").arg(at)};
        ExactKeyReader r(bindings.at(i).toObject(), at);
        DesiredBinding entry;
        entry.nodeId = nullableString(r, QStringLiteral("nodeId"));
        const QJsonObject binding = r.requiredObject(QStringLiteral("binding"));
        const std::optional<QJsonObject> grant = r.nullableObject(QStringLiteral("grant"));
        if (auto refusal = r.finish())
            return *refusal;
        if (auto refusal = readBinding(binding, at + QStringLiteral(".binding"), entry.binding))
            return *refusal;
        if (grant) {
            PublicationGrant g;
            if (auto refusal = readGrant(*grant, at + QStringLiteral(".grant"), g))
                return *refusal;
            if (i < authorities.size())
                g.authority = authorities.at(i);
            entry.grant = std::move(g);
        }
        state.bindings.append(std::move(entry));
    }
    return state;
}

QList<Secret> PlatformDesiredState::takeAuthorities(QByteArray &json)
{
    auto taken = takeSecretStrings(json, {"desiredState", "bindings"}, {"grant", "authority"});
    return taken ? std::move(*taken) : QList<Secret>();
}

} // namespace coreflow
