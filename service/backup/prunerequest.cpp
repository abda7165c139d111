#include "service/backup/prunerequest.h"

#include "service/backup/backupfields.h"
#include "shared/contract/envelope.h"
#include "shared/contract/exactkeyreader.h"

#include <QJsonArray>
#include <QJsonDocument>

namespace coreflow {

using namespace contract;

Result<PruneRequest> PruneRequest::read(const QJsonObject &request)
{
    ExactKeyReader r(request, QStringLiteral("request"));
    PruneRequest out;
    out.nodeId = BackupFields::id(r, QStringLiteral("nodeId"));
    const QJsonValue service = r.requiredAny(QStringLiteral("serviceId"));
    if (!r.failed() && !service.isNull()) {
        if (const auto problem = BackupFields::idProblem(service))
            r.fail(QStringLiteral("serviceId"), service.isString() ? *problem : QStringLiteral("is neither a string nor null"));
        else
            out.serviceId = service.toString();
    }
    out.olderThanMs = r.requiredInteger(QStringLiteral("olderThan"));
    if (!r.failed() && out.olderThanMs < 0)
        r.fail(QStringLiteral("olderThan"), QStringLiteral("is negative"));
    const QJsonArray keep = r.requiredArray(QStringLiteral("keepBackupIds"));
    if (auto refused = r.finish())
        return *refused;
    auto ids = BackupFields::idList(keep, r.pathOf(QStringLiteral("keepBackupIds")));
    if (!ids)
        return ids.refusal();
    out.keepBackupIds = ids.value();
    return out;
}

QByteArray PruneRequest::corestoreBody() const
{
    return Envelope::compact(QJsonObject{{QStringLiteral("serviceId"), serviceId ? QJsonValue(*serviceId) : QJsonValue(QJsonValue::Null)},
                                         {QStringLiteral("olderThan"), olderThanMs},
                                         {QStringLiteral("keepBackupIds"), QJsonArray::fromStringList(keepBackupIds)}});
}

Result<PruneRequest::Pruned> PruneRequest::readAnswer(const QByteArray &body)
{
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(body, &error);
    if (error.error != QJsonParseError::NoError || !document.isObject())
        return Refusal{QStringLiteral("answer-invalid"), QStringLiteral("the body is not a JSON object")};
    ExactKeyReader r(document.object(), QStringLiteral("answer"), QStringLiteral("answer-invalid"));
    Pruned out;
    out.prunedSnapshots = r.requiredInteger(QStringLiteral("prunedSnapshots"));
    if (!r.failed() && out.prunedSnapshots < 0)
        r.fail(QStringLiteral("prunedSnapshots"), QStringLiteral("is negative"));
    out.freedBytes = r.requiredInteger(QStringLiteral("freedBytes"));
    if (!r.failed() && out.freedBytes < 0)
        r.fail(QStringLiteral("freedBytes"), QStringLiteral("is negative"));
    if (auto refused = r.finish())
        return *refused;
    return out;
}

} // namespace coreflow
