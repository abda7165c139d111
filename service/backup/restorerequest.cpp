#include "service/backup/restorerequest.h"

#include "service/backup/backupfields.h"
#include "shared/contract/exactkeyreader.h"

#include <QJsonArray>
#include <QSet>

namespace coreflow {

using namespace contract;

Result<RestoreRequest> RestoreRequest::read(const QJsonObject &request)
{
    ExactKeyReader r(request, QStringLiteral("request"));
    RestoreRequest out;
    out.nodeId = BackupFields::id(r, QStringLiteral("nodeId"));
    out.serviceId = BackupFields::id(r, QStringLiteral("serviceId"));
    out.backupId = BackupFields::id(r, QStringLiteral("backupId"));
    const QJsonValue database = r.requiredAny(QStringLiteral("database"));
    const QJsonArray volumes = r.requiredArray(QStringLiteral("volumes"));
    const QJsonValue objectStorage = r.requiredAny(QStringLiteral("objectStorage"));
    const QJsonObject replication = r.requiredObject(QStringLiteral("replication"));
    if (auto refused = r.finish())
        return *refused;

    const auto databaseRef = BackupFields::snapshotRef(database, r.pathOf(QStringLiteral("database")));
    if (!databaseRef)
        return databaseRef.refusal();
    out.databaseSnapshotId = databaseRef.value();

    QSet<QString> names;
    for (qsizetype i = 0; i < volumes.size(); ++i) {
        const QString path = QStringLiteral("%1[%2]").arg(r.pathOf(QStringLiteral("volumes"))).arg(i);
        if (!volumes.at(i).isObject())
            return BackupFields::invalid(path, QStringLiteral("is not an object"));
        ExactKeyReader v(volumes.at(i).toObject(), path);
        Volume volume;
        volume.name = BackupFields::id(v, QStringLiteral("name"));
        volume.snapshotId = BackupFields::opaque(v, QStringLiteral("snapshotId"));
        if (auto refused = v.finish())
            return *refused;
        if (names.contains(volume.name))
            return BackupFields::invalid(v.pathOf(QStringLiteral("name")), QStringLiteral("repeats an earlier volume"));
        names.insert(volume.name);
        out.volumes.append(volume);
    }

    const auto objectStorageRef = BackupFields::snapshotRef(objectStorage, r.pathOf(QStringLiteral("objectStorage")));
    if (!objectStorageRef)
        return objectStorageRef.refusal();
    out.objectStorageSnapshotId = objectStorageRef.value();

    const auto enabled = BackupFields::replication(replication, r.pathOf(QStringLiteral("replication")));
    if (!enabled)
        return enabled.refusal();
    out.replication = enabled.value();
    return out;
}

QStringList RestoreRequest::steps() const
{
    QStringList steps;
    if (replication)
        steps << QStringLiteral("closure");
    for (const Volume &volume : volumes)
        steps << QStringLiteral("volume:") + volume.name;
    if (!replication && databaseSnapshotId)
        steps << QStringLiteral("database");
    if (objectStorageSnapshotId)
        steps << QStringLiteral("objectstorage");
    return steps;
}

} // namespace coreflow
