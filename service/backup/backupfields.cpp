#include "service/backup/backupfields.h"

#include "shared/contract/refusalnames.h"
#include "shared/contract/refusalquote.h"

#include <QSet>

namespace coreflow {

using namespace contract;

Refusal BackupFields::invalid(const QString &path, const QString &problem)
{
    return Refusal{QString(refusal::requestInvalid), QStringLiteral("field %1 %2").arg(path, problem)};
}

std::optional<QString> BackupFields::idProblem(const QJsonValue &value)
{
    if (!value.isString())
        return QStringLiteral("is not a string");
    const QString text = value.toString();
    if (text.isEmpty())
        return QStringLiteral("is empty");
    if (!RefusalQuote::isPlain(text))
        return QStringLiteral("is not a plain name (1 to %1 of A-Z a-z 0-9 _ - .)").arg(RefusalQuote::maxQuotedChars);
    return std::nullopt;
}

std::optional<QString> BackupFields::opaqueProblem(const QJsonValue &value)
{
    if (!value.isString())
        return QStringLiteral("is not a string");
    const QString text = value.toString();
    if (text.isEmpty())
        return QStringLiteral("is empty");
    if (text.size() > kMaxOpaqueChars)
        return QStringLiteral("is longer than %1 characters").arg(kMaxOpaqueChars);
    return std::nullopt;
}

QString BackupFields::id(ExactKeyReader &r, const QString &key)
{
    const QJsonValue value = r.requiredAny(key);
    if (r.failed())
        return {};
    if (const auto problem = idProblem(value)) {
        r.fail(key, *problem);
        return {};
    }
    return value.toString();
}

QString BackupFields::opaque(ExactKeyReader &r, const QString &key)
{
    const QJsonValue value = r.requiredAny(key);
    if (r.failed())
        return {};
    if (const auto problem = opaqueProblem(value)) {
        r.fail(key, *problem);
        return {};
    }
    return value.toString();
}

Result<QStringList> BackupFields::idList(const QJsonArray &array, const QString &path)
{
    QStringList names;
    QSet<QString> seen;
    for (qsizetype i = 0; i < array.size(); ++i) {
        const QString itemPath = QStringLiteral("%1[%2]").arg(path).arg(i);
        if (const auto problem = idProblem(array.at(i)))
            return invalid(itemPath, *problem);
        const QString name = array.at(i).toString();
        if (seen.contains(name))
            return invalid(itemPath, QStringLiteral("repeats an earlier name"));
        seen.insert(name);
        names.append(name);
    }
    return names;
}

Result<bool> BackupFields::replication(const QJsonObject &object, const QString &path)
{
    ExactKeyReader r(object, path);
    const bool enabled = r.requiredBool(QStringLiteral("enabled"));
    if (auto refused = r.finish())
        return *refused;
    return enabled;
}

Result<std::optional<QString>> BackupFields::snapshotRef(const QJsonValue &value, const QString &path)
{
    if (value.isNull())
        return std::optional<QString>{};
    if (!value.isObject())
        return invalid(path, QStringLiteral("is neither an object nor null"));
    ExactKeyReader r(value.toObject(), path);
    const QString snapshotId = opaque(r, QStringLiteral("snapshotId"));
    if (auto refused = r.finish())
        return *refused;
    return std::optional<QString>(snapshotId);
}

} // namespace coreflow
