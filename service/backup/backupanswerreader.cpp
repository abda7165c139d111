#include "service/backup/backupanswerreader.h"

#include "service/backup/backupfields.h"
#include "shared/contract/exactkeyreader.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QSet>

namespace coreflow {

using namespace contract;

namespace {

const QString kAnswerInvalid = QStringLiteral("answer-invalid");

Refusal problem(const QString &path, const QString &what)
{
    return Refusal{kAnswerInvalid, QStringLiteral("field %1 %2").arg(path, what)};
}

Result<QJsonObject> document(const QByteArray &body)
{
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(body, &error);
    if (error.error != QJsonParseError::NoError || !doc.isObject())
        return Refusal{kAnswerInvalid, QStringLiteral("the body is not a JSON object")};
    return doc.object();
}

// { snapshotId, sizeBytes } plus the members `extra` names as ids (a volume's name).
Result<QJsonObject> snapshot(const QJsonValue &value, const QString &path, bool withName)
{
    if (!value.isObject())
        return problem(path, QStringLiteral("is not an object"));
    ExactKeyReader r(value.toObject(), path, kAnswerInvalid);
    QJsonObject out;
    if (withName)
        out.insert(QStringLiteral("name"), BackupFields::id(r, QStringLiteral("name")));
    out.insert(QStringLiteral("snapshotId"), BackupFields::opaque(r, QStringLiteral("snapshotId")));
    const qint64 size = r.requiredInteger(QStringLiteral("sizeBytes"));
    if (!r.failed() && size < 0)
        r.fail(QStringLiteral("sizeBytes"), QStringLiteral("is negative"));
    if (auto refused = r.finish())
        return *refused;
    out.insert(QStringLiteral("sizeBytes"), size);
    return out;
}

Result<QJsonValue> nullableSnapshot(const QJsonValue &value, const QString &path, bool asked)
{
    if (value.isNull())
        return QJsonValue(QJsonValue::Null);
    if (!asked)
        return problem(path, QStringLiteral("answers a snapshot the request did not ask for"));
    auto read = snapshot(value, path, false);
    if (!read)
        return read.refusal();
    return QJsonValue(read.value());
}

} // namespace

Result<QJsonObject> BackupAnswerReader::readSnapshots(const QByteArray &body, const BackupRequest &request)
{
    auto root = document(body);
    if (!root)
        return root.refusal();
    ExactKeyReader top(root.value(), QStringLiteral("answer"), kAnswerInvalid);
    const QJsonObject snapshots = top.requiredObject(QStringLiteral("snapshots"));
    if (auto refused = top.finish())
        return *refused;
    const QString path = top.pathOf(QStringLiteral("snapshots"));
    ExactKeyReader r(snapshots, path, kAnswerInvalid);
    const QJsonValue database = r.requiredAny(QStringLiteral("database"));
    const QJsonArray volumes = r.requiredArray(QStringLiteral("volumes"));
    const QJsonValue objectStorage = r.requiredAny(QStringLiteral("objectStorage"));
    if (auto refused = r.finish())
        return *refused;

    const auto databaseRead = nullableSnapshot(database, r.pathOf(QStringLiteral("database")), request.database);
    if (!databaseRead)
        return databaseRead.refusal();
    QJsonArray volumesOut;
    QSet<QString> answered;
    const QSet<QString> asked(request.volumes.cbegin(), request.volumes.cend());
    for (qsizetype i = 0; i < volumes.size(); ++i) {
        const QString itemPath = QStringLiteral("%1[%2]").arg(r.pathOf(QStringLiteral("volumes"))).arg(i);
        auto volume = snapshot(volumes.at(i), itemPath, true);
        if (!volume)
            return volume.refusal();
        const QString name = volume->value(QStringLiteral("name")).toString();
        if (!asked.contains(name))
            return problem(itemPath + QStringLiteral(".name"), QStringLiteral("names a volume the request did not ask for"));
        if (answered.contains(name))
            return problem(itemPath + QStringLiteral(".name"), QStringLiteral("repeats an earlier volume"));
        answered.insert(name);
        volumesOut.append(volume.value());
    }
    if (answered.size() != asked.size())
        return problem(r.pathOf(QStringLiteral("volumes")),
                       QStringLiteral("lacks %1 of the %2 volumes asked for").arg(asked.size() - answered.size()).arg(asked.size()));
    const auto objectStorageRead = nullableSnapshot(objectStorage, r.pathOf(QStringLiteral("objectStorage")), request.objectStorage);
    if (!objectStorageRead)
        return objectStorageRead.refusal();
    return QJsonObject{{QStringLiteral("database"), databaseRead.value()},
                       {QStringLiteral("volumes"), volumesOut},
                       {QStringLiteral("objectStorage"), objectStorageRead.value()}};
}

Result<bool> BackupAnswerReader::readVolume(const QByteArray &body, const QString &name)
{
    auto root = document(body);
    if (!root)
        return root.refusal();
    ExactKeyReader r(root.value(), QStringLiteral("answer"), kAnswerInvalid);
    const QString answeredName = r.requiredString(QStringLiteral("name"));
    const bool created = r.requiredBool(QStringLiteral("created"));
    if (auto refused = r.finish())
        return *refused;
    if (answeredName != name)
        return problem(QStringLiteral("answer.name"), QStringLiteral("is not the volume asked for"));
    return created;
}

Result<bool> BackupAnswerReader::readRestored(const QByteArray &body)
{
    auto root = document(body);
    if (!root)
        return root.refusal();
    ExactKeyReader r(root.value(), QStringLiteral("answer"), kAnswerInvalid);
    const bool restored = r.requiredBool(QStringLiteral("restored"));
    if (auto refused = r.finish())
        return *refused;
    if (!restored)
        return problem(QStringLiteral("answer.restored"), QStringLiteral("is not true"));
    return true;
}

} // namespace coreflow
