#include "service/backup/backuprequest.h"

#include "service/backup/backupfields.h"
#include "shared/contract/envelope.h"
#include "shared/contract/exactkeyreader.h"

#include <QJsonArray>

namespace coreflow {

using namespace contract;

Result<BackupRequest> BackupRequest::read(const QJsonObject &request)
{
    ExactKeyReader r(request, QStringLiteral("request"));
    BackupRequest out;
    out.nodeId = BackupFields::id(r, QStringLiteral("nodeId"));
    out.serviceId = BackupFields::id(r, QStringLiteral("serviceId"));
    out.backupId = BackupFields::id(r, QStringLiteral("backupId"));
    out.database = r.requiredBool(QStringLiteral("database"));
    const QJsonArray volumes = r.requiredArray(QStringLiteral("volumes"));
    out.objectStorage = r.requiredBool(QStringLiteral("objectStorage"));
    const QJsonObject replication = r.requiredObject(QStringLiteral("replication"));
    if (auto refused = r.finish())
        return *refused;
    auto names = BackupFields::idList(volumes, r.pathOf(QStringLiteral("volumes")));
    if (!names)
        return names.refusal();
    out.volumes = names.value();
    const auto enabled = BackupFields::replication(replication, r.pathOf(QStringLiteral("replication")));
    if (!enabled)
        return enabled.refusal();
    out.replication = enabled.value();
    return out;
}

QByteArray BackupRequest::corestoreBody() const
{
    return Envelope::compact(QJsonObject{{QStringLiteral("serviceId"), serviceId},
                                         {QStringLiteral("backupId"), backupId},
                                         {QStringLiteral("database"), database},
                                         {QStringLiteral("volumes"), QJsonArray::fromStringList(volumes)},
                                         {QStringLiteral("objectStorage"), objectStorage}});
}

} // namespace coreflow
