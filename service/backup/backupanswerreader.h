#pragma once
// BackupAnswerReader: exact readers of the node Corestore's 2xx answers on the backup and restore
// routes (docs/contract.md §15.1, §13.1, §13.2). A refusal's reason is the problem, naming the field
// ("field answer.snapshots.volumes[0].sizeBytes is negative"); the caller states it as
// "CORESTORE_UNREACHABLE: <METHOD> <path> on node <id>: unreadable answer (<problem>)". No value of
// the answer is quoted.
//
//   readSnapshots(body, request)  POST /control/backups
//       { snapshots: { database: Snapshot | null, volumes: [ { name, snapshotId, sizeBytes } ],
//                      objectStorage: Snapshot | null } },  Snapshot = { snapshotId, sizeBytes }
//       snapshotId a non-empty string of at most 256 characters, sizeBytes an integer ≥ 0. Against the
//       request: database/objectStorage are null when not asked for (an asked-for one may be null: the
//       service has none); the volumes are exactly the asked-for names, each once, in any order (D-81).
//       Returns the snapshots object the relay answers Cloudly with, composed of the read members only.
//   readVolume(body, name)        POST /control/volumes      { name: <the name asked>, created: boolean }
//   readRestored(body)            POST /control/restores/*   { restored: true }
#include "service/backup/backuprequest.h"
#include "shared/contract/result.h"

#include <QByteArray>
#include <QJsonObject>

namespace coreflow {

class BackupAnswerReader {
public:
    static contract::Result<QJsonObject> readSnapshots(const QByteArray &body, const BackupRequest &request);
    // The value: Corestore's `created`.
    static contract::Result<bool> readVolume(const QByteArray &body, const QString &name);
    static contract::Result<bool> readRestored(const QByteArray &body);
};

} // namespace coreflow
