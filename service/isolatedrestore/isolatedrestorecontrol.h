#pragma once
// IsolatedRestoreControl: the exact-key reader of one isolated-restore control (docs/contract.md §14
// "IsolatedRestoreControl"; IR-04..IR-07). The control is judged here so that a body the node's
// Corestore would refuse is refused before anything is dialled; the bytes that travel are never these
// parsed values but the control exactly as Cloudly wrote it (IsolatedRestoreRequest keeps them).
//
// Rules (each failure is `restore-control-invalid: field <path> <problem>`, first problem wins):
//   operation         one of prepare|stage|progress|execute|cleanup, and the method's own (IR-04)
//   restoreId         an id (§1 "Strings")
//   grant             a non-empty string, opaque (never quoted, never logged: the control is a bearer)
//   expectedRevision  present; null for prepare, null or an integer >= 0 for progress, an integer >= 0
//                     for stage, execute and cleanup (passed on unchanged, IR-07)
//   manifest          prepare only, required there: { objects: [ { key: id, sizeBytes: integer >= 0,
//                     sha256: 64 lowercase hex } ] }, no key twice
//   chunk             stage only, required there: { objectKey: id, offset: integer >= 0,
//                     data: base64 (standard alphabet, padded) of at most 524288 decoded bytes (IR-05),
//                     chunkSha256: 64 lowercase hex equal to the SHA-256 of exactly the decoded bytes,
//                     verified here (IR-06) }
// Unknown members anywhere in the control are refused without their name (`field <path> has a member
// the contract does not name`, D-42: a bearer-carrying body). Reasons name fields, sizes and rules,
// never a value the control carries. Pure function: no clock, no log, no socket.
#include "shared/contract/result.h"

#include <QByteArray>
#include <QJsonObject>
#include <QString>
#include <optional>

namespace coreflow {

struct IsolatedRestoreControl {
    static constexpr qsizetype kMaxChunkBytes = 524288; // §14, IR-05: decoded bytes of one staged chunk

    QString operation;
    QString restoreId;
    QString grant;                        // kept only to withhold it from what the node says back
    std::optional<qint64> expectedRevision;
    qsizetype chunkBytes = -1;            // stage: decoded size of chunk.data; -1 otherwise

    // The operation word a method's control must carry ("" for a method that is not one of the five).
    static QString operationOf(const QString &method);
    // Reads `control` found at `path` (e.g. "request.control") for `operation`.
    static contract::Result<IsolatedRestoreControl> read(const QJsonObject &control, const QString &path,
                                                         const QString &operation);
};

} // namespace coreflow
