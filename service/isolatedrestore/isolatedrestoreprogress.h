#pragma once
// IsolatedRestoreProgress: the progress reader of the isolated-restore routes (docs/contract.md §14
// "Response", §15.1; IR-15..IR-17). Reads what a node's Corestore answered (a 2xx body) and composes
// the answer the relay gives Cloudly.
//
// Accepted (exact keys): { restoreId: id equal to the control's, revision: integer >= 0,
//   phase: "prepared"|"staging"|"staged"|"executing"|"restored"|"failed"|"cleaned",
//   stagedObject: { key: id, nextOffset: integer >= 0, sizeBytes: integer >= nextOffset } | null,
//   updatedAt: integer Unix ms, failure: string | null }
// plus Corestore's optional receivedObject, restoredMappings, deletedStaging (any JSON), which are
// dropped (IR-15). Refused `restore-progress-invalid: <problem>` (IR-16, IR-17), never repaired: a body
// that is not one JSON object, a key named twice, an unknown member (not named: the route carries a
// bearer), a member of the wrong type or range, a `nodeId` member (a node stating a node of its own),
// another restoreId, or a string repeating the control's grant (the control never returns in an
// answer, IR-03).
//
// answer(): the relay's response body, compact JSON in this order:
//   {"nodeId":<the node routed to>,"restoreId":…,"revision":…,"phase":…,"stagedObject":…,"updatedAt":…,"failure":…}
// revision is the node's number unchanged (IR-07). Pure function: no clock, no log, no socket.
#include "shared/contract/result.h"

#include <QByteArray>
#include <QString>
#include <optional>

namespace coreflow {

struct IsolatedRestoreProgress {
    struct StagedObject {
        QString key;
        qint64 nextOffset = 0;   // bytes the node holds of that object
        qint64 sizeBytes = 0;
    };

    QString restoreId;
    qint64 revision = 0;
    QString phase;
    std::optional<StagedObject> stagedObject;
    qint64 updatedAtMs = 0;
    std::optional<QString> failure;

    // restoreId and grant are the control's (the answer must be about that restore and must not repeat
    // that grant).
    static contract::Result<IsolatedRestoreProgress> read(const QByteArray &corestoreBody, const QString &restoreId,
                                                          const QString &grant);
    QByteArray answer(const QString &nodeId) const;
};

} // namespace coreflow
