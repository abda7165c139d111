// The backup lane's pure readers (docs/contract.md §13.1–§13.3, §15.1): the three Cloudly requests,
// the Corestore bodies they become and the Corestore answers read back. Rules: CS-63 (the node the
// request names is the one read), CS-79 (the snapshots answered carry nothing Corestore added),
// CS-81 (the restore's step order), CS-75 (replication replaces the node-local database step).
#include "service/backup/backupanswerreader.h"
#include "service/backup/backuprequest.h"
#include "service/backup/prunerequest.h"
#include "service/backup/restorerequest.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

using namespace coreflow;

namespace {

QJsonObject backupBody()
{
    return {{"nodeId", "node-a"}, {"serviceId", "svc-1"}, {"backupId", "b-1"}, {"database", true},
            {"volumes", QJsonArray{"data", "logs"}}, {"objectStorage", true}, {"replication", QJsonObject{{"enabled", true}}}};
}

QJsonObject restoreBody()
{
    return {{"nodeId", "node-a"}, {"serviceId", "svc-1"}, {"backupId", "b-1"},
            {"database", QJsonObject{{"snapshotId", "snap-db"}}},
            {"volumes", QJsonArray{QJsonObject{{"name", "data"}, {"snapshotId", "snap-v1"}},
                                   QJsonObject{{"name", "logs"}, {"snapshotId", "snap-v2"}}}},
            {"objectStorage", QJsonObject{{"snapshotId", "snap-os"}}},
            {"replication", QJsonObject{{"enabled", false}}}};
}

QJsonObject pruneBody()
{
    return {{"nodeId", "node-a"}, {"serviceId", QJsonValue::Null}, {"olderThan", 1700000000000LL}, {"keepBackupIds", QJsonArray{"b-1"}}};
}

QByteArray snapshotsAnswer(const QJsonValue &database, const QJsonArray &volumes, const QJsonValue &objectStorage)
{
    return QJsonDocument(QJsonObject{{"snapshots", QJsonObject{{"database", database}, {"volumes", volumes}, {"objectStorage", objectStorage}}}})
        .toJson(QJsonDocument::Compact);
}

QJsonObject snap(const QString &id, qint64 size = 10) { return {{"snapshotId", id}, {"sizeBytes", size}}; }
QJsonObject vol(const QString &name, const QString &id, qint64 size = 10) { return {{"name", name}, {"snapshotId", id}, {"sizeBytes", size}}; }

} // namespace

class TstBackupReaders : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // CS-63: the request names its node; the Corestore body carries exactly the §15.1 members.
    void backupRequestReadsExactly_CS63()
    {
        const auto read = BackupRequest::read(backupBody());
        QVERIFY(read);
        QCOMPARE(read->nodeId, QStringLiteral("node-a"));
        QCOMPARE(read->volumes, (QStringList{"data", "logs"}));
        QVERIFY(read->replication);
        const QJsonObject body = QJsonDocument::fromJson(read->corestoreBody()).object();
        QCOMPARE(body, (QJsonObject{{"serviceId", "svc-1"}, {"backupId", "b-1"}, {"database", true},
                                    {"volumes", QJsonArray{"data", "logs"}}, {"objectStorage", true}}));
    }

    void backupRequestRefusals_data()
    {
        QTest::addColumn<QString>("key");
        QTest::addColumn<QJsonValue>("value"); // Undefined: removed
        QTest::addColumn<QString>("reason");
        QTest::newRow("missing-node") << "nodeId" << QJsonValue(QJsonValue::Undefined) << "field request.nodeId is missing";
        QTest::newRow("empty-node") << "nodeId" << QJsonValue("") << "field request.nodeId is empty";
        QTest::newRow("unplain-backup") << "backupId" << QJsonValue("b 1\n") << "field request.backupId is not a plain name (1 to 64 of A-Z a-z 0-9 _ - .)";
        QTest::newRow("database-type") << "database" << QJsonValue("yes") << "field request.database is not a boolean";
        QTest::newRow("volume-type") << "volumes" << QJsonValue(QJsonArray{"a", 3}) << "field request.volumes[1] is not a string";
        QTest::newRow("volume-twice") << "volumes" << QJsonValue(QJsonArray{"a", "a"}) << "field request.volumes[1] repeats an earlier name";
        QTest::newRow("replication-missing") << "replication" << QJsonValue(QJsonValue::Undefined) << "field request.replication is missing";
        QTest::newRow("replication-extra") << "replication" << QJsonValue(QJsonObject{{"enabled", true}, {"target", "s3"}})
                                           << "field request.replication.target is unknown";
        QTest::newRow("replication-type") << "replication" << QJsonValue(QJsonObject{{"enabled", 1}})
                                          << "field request.replication.enabled is not a boolean";
        QTest::newRow("unknown") << "snapshotNow" << QJsonValue(true) << "field request.snapshotNow is unknown";
    }
    void backupRequestRefusals()
    {
        QFETCH(QString, key);
        QFETCH(QJsonValue, value);
        QFETCH(QString, reason);
        QJsonObject body = backupBody();
        if (value.isUndefined())
            body.remove(key);
        else
            body.insert(key, value);
        const auto read = BackupRequest::read(body);
        QVERIFY(!read);
        QCOMPARE(read.refusal().name, QStringLiteral("request-invalid"));
        QCOMPARE(read.refusal().reason, reason);
    }

    // CS-79: the snapshots are recomposed from the read members only; CS-63: checked against the request.
    void snapshotsAnswerReadAgainstTheRequest_CS79()
    {
        const auto request = BackupRequest::read(backupBody()).value();
        const auto ok = BackupAnswerReader::readSnapshots(
            snapshotsAnswer(snap("s-db"), QJsonArray{vol("logs", "s-l"), vol("data", "s-d")}, QJsonValue::Null), request);
        QVERIFY(ok);
        QCOMPARE(ok->value("database").toObject(), snap("s-db"));
        QCOMPARE(ok->value("volumes").toArray().size(), 2);
        QVERIFY(ok->value("objectStorage").isNull()); // asked for, none held: null is an answer

        const auto problemOf = [&](const QByteArray &body) {
            const auto read = BackupAnswerReader::readSnapshots(body, request);
            return read ? QString() : read.refusal().reason;
        };
        QCOMPARE(problemOf("[]"), QStringLiteral("the body is not a JSON object"));
        QCOMPARE(problemOf(snapshotsAnswer(snap("s", -1), {vol("data", "a"), vol("logs", "b")}, QJsonValue::Null)),
                 QStringLiteral("field answer.snapshots.database.sizeBytes is negative"));
        QCOMPARE(problemOf(snapshotsAnswer(snap("s"), {vol("data", "a")}, QJsonValue::Null)),
                 QStringLiteral("field answer.snapshots.volumes lacks 1 of the 2 volumes asked for"));
        QCOMPARE(problemOf(snapshotsAnswer(snap("s"), {vol("data", "a"), vol("data", "b")}, QJsonValue::Null)),
                 QStringLiteral("field answer.snapshots.volumes[1].name repeats an earlier volume"));
        QCOMPARE(problemOf(snapshotsAnswer(snap("s"), {vol("data", "a"), vol("other", "b")}, QJsonValue::Null)),
                 QStringLiteral("field answer.snapshots.volumes[1].name names a volume the request did not ask for"));
        QJsonObject extra = snap("s");
        extra.insert("path", "/var/lib/x");
        QCOMPARE(problemOf(snapshotsAnswer(extra, {vol("data", "a"), vol("logs", "b")}, QJsonValue::Null)),
                 QStringLiteral("field answer.snapshots.database.path is unknown"));

        BackupRequest onlyVolumes = request;
        onlyVolumes.database = false;
        const auto unasked = BackupAnswerReader::readSnapshots(snapshotsAnswer(snap("s"), {vol("data", "a"), vol("logs", "b")}, QJsonValue::Null),
                                                               onlyVolumes);
        QVERIFY(!unasked);
        QCOMPARE(unasked.refusal().reason, QStringLiteral("field answer.snapshots.database answers a snapshot the request did not ask for"));
    }

    // CS-81: closure, then each volume, then database, then object storage; CS-75: replication
    // replaces the node-local database step.
    void restoreStepsInTheDocumentedOrder_CS81_CS75()
    {
        auto plain = RestoreRequest::read(restoreBody());
        QVERIFY(plain);
        QCOMPARE(plain->steps(), (QStringList{"volume:data", "volume:logs", "database", "objectstorage"}));
        QJsonObject body = restoreBody();
        body.insert("replication", QJsonObject{{"enabled", true}});
        auto replicated = RestoreRequest::read(body);
        QVERIFY(replicated);
        QCOMPARE(replicated->steps(), (QStringList{"closure", "volume:data", "volume:logs", "objectstorage"}));
        body.insert("database", QJsonValue::Null);
        body.insert("objectStorage", QJsonValue::Null);
        body.insert("volumes", QJsonArray{});
        QCOMPARE(RestoreRequest::read(body)->steps(), QStringList{"closure"});
        body.insert("replication", QJsonObject{{"enabled", false}});
        QCOMPARE(RestoreRequest::read(body)->steps(), QStringList{});
    }

    void restoreRequestRefusals_data()
    {
        QTest::addColumn<QString>("key");
        QTest::addColumn<QJsonValue>("value");
        QTest::addColumn<QString>("reason");
        QTest::newRow("database-type") << "database" << QJsonValue("snap") << "field request.database is neither an object nor null";
        QTest::newRow("database-empty") << "database" << QJsonValue(QJsonObject{{"snapshotId", ""}}) << "field request.database.snapshotId is empty";
        QTest::newRow("database-extra") << "database" << QJsonValue(QJsonObject{{"snapshotId", "s"}, {"at", 1}}) << "field request.database.at is unknown";
        QTest::newRow("volume-not-object") << "volumes" << QJsonValue(QJsonArray{"data"}) << "field request.volumes[0] is not an object";
        QTest::newRow("volume-name") << "volumes" << QJsonValue(QJsonArray{QJsonObject{{"snapshotId", "s"}}}) << "field request.volumes[0].name is missing";
        QTest::newRow("volume-twice") << "volumes"
                                      << QJsonValue(QJsonArray{QJsonObject{{"name", "a"}, {"snapshotId", "s"}}, QJsonObject{{"name", "a"}, {"snapshotId", "t"}}})
                                      << "field request.volumes[1].name repeats an earlier volume";
        QTest::newRow("snapshot-long") << "objectStorage" << QJsonValue(QJsonObject{{"snapshotId", QString(257, 'x')}})
                                       << "field request.objectStorage.snapshotId is longer than 256 characters";
        QTest::newRow("objectstorage-missing") << "objectStorage" << QJsonValue(QJsonValue::Undefined) << "field request.objectStorage is missing";
    }
    void restoreRequestRefusals()
    {
        QFETCH(QString, key);
        QFETCH(QJsonValue, value);
        QFETCH(QString, reason);
        QJsonObject body = restoreBody();
        if (value.isUndefined())
            body.remove(key);
        else
            body.insert(key, value);
        const auto read = RestoreRequest::read(body);
        QVERIFY(!read);
        QCOMPARE(read.refusal().name, QStringLiteral("request-invalid"));
        QCOMPARE(read.refusal().reason, reason);
    }

    void restoreStepAnswers()
    {
        QVERIFY(BackupAnswerReader::readRestored(R"({"restored":true})"));
        QCOMPARE(BackupAnswerReader::readRestored(R"({"restored":false})").refusal().reason, QStringLiteral("field answer.restored is not true"));
        QCOMPARE(BackupAnswerReader::readRestored(R"({"restored":true,"x":1})").refusal().reason, QStringLiteral("field answer.x is unknown"));
        QCOMPARE(BackupAnswerReader::readVolume(R"({"name":"data","created":false})", "data").value(), false);
        QCOMPARE(BackupAnswerReader::readVolume(R"({"name":"logs","created":true})", "data").refusal().reason,
                 QStringLiteral("field answer.name is not the volume asked for"));
    }

    void pruneRequestAndAnswer_CS63()
    {
        const auto read = PruneRequest::read(pruneBody());
        QVERIFY(read);
        QVERIFY(!read->serviceId);
        QCOMPARE(QJsonDocument::fromJson(read->corestoreBody()).object(),
                 (QJsonObject{{"serviceId", QJsonValue::Null}, {"olderThan", 1700000000000LL}, {"keepBackupIds", QJsonArray{"b-1"}}}));
        QJsonObject body = pruneBody();
        body.insert("serviceId", "svc-1");
        QCOMPARE(*PruneRequest::read(body)->serviceId, QStringLiteral("svc-1"));
        body.insert("serviceId", 7);
        QCOMPARE(PruneRequest::read(body).refusal().reason, QStringLiteral("field request.serviceId is neither a string nor null"));
        body = pruneBody();
        body.insert("olderThan", -1);
        QCOMPARE(PruneRequest::read(body).refusal().reason, QStringLiteral("field request.olderThan is negative"));
        body = pruneBody();
        body.insert("olderThan", 1.5);
        QCOMPARE(PruneRequest::read(body).refusal().reason, QStringLiteral("field request.olderThan is not an integer"));
        body = pruneBody();
        body.remove("keepBackupIds");
        QCOMPARE(PruneRequest::read(body).refusal().reason, QStringLiteral("field request.keepBackupIds is missing"));

        QCOMPARE(PruneRequest::readAnswer(R"({"prunedSnapshots":3,"freedBytes":12288})")->freedBytes, 12288);
        QCOMPARE(PruneRequest::readAnswer(R"({"prunedSnapshots":-1,"freedBytes":0})").refusal().reason,
                 QStringLiteral("field answer.prunedSnapshots is negative"));
        QCOMPARE(PruneRequest::readAnswer(R"({"prunedSnapshots":1})").refusal().reason, QStringLiteral("field answer.freedBytes is missing"));
        QCOMPARE(PruneRequest::readAnswer("nope").refusal().reason, QStringLiteral("the body is not a JSON object"));
    }
};

QTEST_GUILESS_MAIN(TstBackupReaders)
#include "tst_backupreaders.moc"
