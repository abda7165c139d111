#pragma once
// BackupFields: the field readers the three backup-lane request readers share (docs/contract.md
// §13.1–§13.3, §1 "Exact keys"). A problem is a request-invalid refusal naming the field by its path
// ("field request.volumes[1].name is empty"), never quoting the value.
//
//   id       a non-empty plain name (RefusalQuote::isPlain: 1..64 of [A-Za-z0-9_.-]). Node, service,
//            backup and volume names are written into log lines and refusal reasons (CS-78), so only
//            plain names are accepted (D-81).
//   opaque   a non-empty string of at most 256 characters, carried and never logged (snapshot ids).
//   idList   an array of ids, no name twice (volume names).
//   replication  `{ enabled: boolean }`, exactly that key.
//   snapshotRef  `{ snapshotId: opaque }`, exactly that key, or null (nullopt).
#include "shared/contract/exactkeyreader.h"
#include "shared/contract/result.h"

#include <QJsonValue>
#include <QString>
#include <QStringList>
#include <optional>

namespace coreflow {

class BackupFields {
public:
    static constexpr qsizetype kMaxOpaqueChars = 256;

    // Through an object's reader (the problem is recorded on r; the value is "" then).
    static QString id(contract::ExactKeyReader &r, const QString &key);
    static QString opaque(contract::ExactKeyReader &r, const QString &key);

    // A value at `path`; nullopt when it passes, else the problem ("is empty").
    static std::optional<QString> idProblem(const QJsonValue &value);
    static std::optional<QString> opaqueProblem(const QJsonValue &value);

    static contract::Result<QStringList> idList(const QJsonArray &array, const QString &path);
    static contract::Result<bool> replication(const QJsonObject &object, const QString &path);
    // nullopt inside the Result: null.
    static contract::Result<std::optional<QString>> snapshotRef(const QJsonValue &value, const QString &path);

    static contract::Refusal invalid(const QString &path, const QString &problem);
};

} // namespace coreflow
