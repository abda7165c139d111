#pragma once
// BackupRequest: backupClusterService's request read exactly (docs/contract.md §13.1; CS-63, CS-74)
// and the body it becomes on the node's Corestore (§15.1 POST /control/backups).
//
//   { nodeId: id, serviceId: id, backupId: id, database: boolean, volumes: id[] (no name twice),
//     objectStorage: boolean, replication: { enabled: boolean } }
//
// Every member is required and no other is accepted; ids are BackupFields::id (plain names, D-81).
// A request failing the reader is refused request-invalid naming the field, and nothing is dialled.
#include "shared/contract/result.h"

#include <QByteArray>
#include <QJsonObject>
#include <QStringList>

namespace coreflow {

struct BackupRequest {
    QString nodeId;
    QString serviceId;
    QString backupId;
    bool database = false;
    QStringList volumes;
    bool objectStorage = false;
    bool replication = false;

    static contract::Result<BackupRequest> read(const QJsonObject &request);
    // { serviceId, backupId, database, volumes, objectStorage } (compact JSON).
    QByteArray corestoreBody() const;
};

} // namespace coreflow
