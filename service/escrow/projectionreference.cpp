#include "service/escrow/projectionreference.h"

#include "shared/contract/exactkeyreader.h"

namespace coreflow {

using namespace contract;

namespace {
bool isLowerHexDigest(const QString &s)
{
    if (s.size() != 64)
        return false;
    for (const QChar c : s)
        if (!((c >= QLatin1Char('0') && c <= QLatin1Char('9')) || (c >= QLatin1Char('a') && c <= QLatin1Char('f'))))
            return false;
    return true;
}
} // namespace

Result<ProjectionReference> ProjectionReference::read(const QJsonObject &object, const QString &path, const QString &refusalName)
{
    ExactKeyReader r(object, path, refusalName);
    ProjectionReference p;
    p.id = r.requiredString(QStringLiteral("id"));
    p.generation = r.requiredInteger(QStringLiteral("generation"));
    p.digest = r.requiredString(QStringLiteral("digest"));
    if (!r.failed() && (p.id.isEmpty() || p.id.size() > 256))
        r.fail(QStringLiteral("id"), QStringLiteral("is not an id of 1..256 characters"));
    if (!r.failed() && p.generation < 0)
        r.fail(QStringLiteral("generation"), QStringLiteral("is negative"));
    if (!r.failed() && !isLowerHexDigest(p.digest))
        r.fail(QStringLiteral("digest"), QStringLiteral("is not a lowercase hex SHA-256 digest"));
    if (auto refusal = r.finish())
        return *refusal;
    return p;
}

QJsonObject ProjectionReference::toJson() const
{
    return QJsonObject{{QStringLiteral("id"), id},
                       {QStringLiteral("generation"), double(generation)},
                       {QStringLiteral("digest"), digest}};
}

} // namespace coreflow
