#pragma once
// PruneRequest: pruneClusterNodeArchive's request read exactly (docs/contract.md §13.3; CS-63, CS-64),
// the Corestore body it becomes (§15.1 POST /control/archive/prune) and Corestore's answer read back.
//
//   request  { nodeId: id, serviceId: id | null (null: every service), olderThan: integer ≥ 0 (Unix ms),
//              keepBackupIds: id[] (no id twice) }
//   answer   { prunedSnapshots: integer ≥ 0, freedBytes: integer ≥ 0 }  (exact keys)
#include "shared/contract/result.h"

#include <QByteArray>
#include <QJsonObject>
#include <QStringList>
#include <optional>

namespace coreflow {

struct PruneRequest {
    struct Pruned {
        qint64 prunedSnapshots = 0;
        qint64 freedBytes = 0;
    };

    QString nodeId;
    std::optional<QString> serviceId;
    qint64 olderThanMs = 0;
    QStringList keepBackupIds;

    static contract::Result<PruneRequest> read(const QJsonObject &request);
    // { serviceId, olderThan, keepBackupIds } (compact JSON).
    QByteArray corestoreBody() const;
    // Corestore's 2xx body; the refusal's reason is the problem ("field answer.freedBytes is missing").
    static contract::Result<Pruned> readAnswer(const QByteArray &body);
};

} // namespace coreflow
