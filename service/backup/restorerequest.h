#pragma once
// RestoreRequest: restoreClusterService's request read exactly (docs/contract.md §13.2; CS-75,
// CS-80, CS-81) and the steps it asks for, in the one order a restore runs them.
//
//   { nodeId: id, serviceId: id, backupId: id,
//     database: { snapshotId: opaque } | null,
//     volumes: [ { name: id, snapshotId: opaque } ]   (no name twice),
//     objectStorage: { snapshotId: opaque } | null,
//     replication: { enabled: boolean } }
//
// Every member is required and no other is accepted (BackupFields; ids are plain names, D-81).
//
// steps(): with replication.enabled, "closure" first (the database comes from Cloudly's closure and
// the node-local "database" step does not run, whatever `database` says: D-82); then "volume:<name>"
// per volume in request order (each: the volume created, then restored into); then "database" (no
// replication, database given); then "objectstorage" (objectStorage given). A request asking for no
// step at all is valid and answers steps: [].
#include "shared/contract/result.h"

#include <QJsonObject>
#include <QList>
#include <QStringList>
#include <optional>

namespace coreflow {

struct RestoreRequest {
    struct Volume {
        QString name;
        QString snapshotId;
    };

    QString nodeId;
    QString serviceId;
    QString backupId;
    std::optional<QString> databaseSnapshotId;
    QList<Volume> volumes;
    std::optional<QString> objectStorageSnapshotId;
    bool replication = false;

    static contract::Result<RestoreRequest> read(const QJsonObject &request);
    QStringList steps() const;
};

} // namespace coreflow
