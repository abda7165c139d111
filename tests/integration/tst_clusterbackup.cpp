// Backup, restore and archive pruning through a running relay (docs/contract.md §13.1–§13.3, §13.7,
// §15.1): Cloudly is the LoopbackCloudly (which also enrolls the Corestore control credential for
// real), each node's Corestore a LoopbackCorestore (Qt HttpServer, HTTPS on 127.0.0.1) that records
// what it received and in which order, both written from the contract. The database closure's
// transfer (§13.4) is behind the ClosureTransfer seam; most tests give the composition root a
// ScriptedClosureTransfer, so they see when the relay asks for a closure and what it does with the
// outcome; the end-to-end tests run the relay's own ClosureStreams against the loopback Cloudly's
// closure side (LoopbackClosureStore). Rules: CS-63, CS-64, CS-74..CS-83, CS-09 (the control token
// appears nowhere).
#include "tests/support/epolltestmain.h"
#include "tests/integration/logcapture.h"
#include "tests/integration/relayfixture.h"
#include "tests/integration/scriptedclosuretransfer.h"
#include "tests/peers/loopbackclosurestore.h"
#include "tests/peers/loopbackcorestore.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QSignalSpy>
#include <QTest>
#include <QUuid>

using namespace coreflow;
using namespace coreflow::testing;
using peers::LoopbackCorestore;
using Behaviour = peers::LoopbackCorestore::Behaviour;

namespace {

// Written out from docs/contract.md §13 (the relay spells them in shared/contract/methods.h).
const QString kBackup = QStringLiteral("backupClusterService");
const QString kRestore = QStringLiteral("restoreClusterService");
const QString kPrune = QStringLiteral("pruneClusterNodeArchive");

QJsonObject nodeWithEndpoint(const QString &id, const QUrl &endpoint)
{
    return QJsonObject{{"id", id}, {"corestore", QJsonObject{{"endpoint", endpoint.toString()}}}, {"corestoreDatabase", QJsonValue::Null}};
}
QJsonObject nodeWithout(const QString &id)
{
    return QJsonObject{{"id", id}, {"corestore", QJsonValue::Null}, {"corestoreDatabase", QJsonValue::Null}};
}

QJsonObject backupRequest(const QString &node, bool replication, const QString &backupId = QStringLiteral("b-1"))
{
    return {{"nodeId", node}, {"serviceId", "svc-1"}, {"backupId", backupId}, {"database", true},
            {"volumes", QJsonArray{"data", "logs"}}, {"objectStorage", true}, {"replication", QJsonObject{{"enabled", replication}}}};
}

QJsonObject restoreRequest(const QString &node, bool replication)
{
    return {{"nodeId", node}, {"serviceId", "svc-1"}, {"backupId", "b-1"},
            {"database", QJsonObject{{"snapshotId", "snap-b-1-database"}}},
            {"volumes", QJsonArray{QJsonObject{{"name", "data"}, {"snapshotId", "snap-b-1-volume-data"}},
                                   QJsonObject{{"name", "logs"}, {"snapshotId", "snap-b-1-volume-logs"}}}},
            {"objectStorage", QJsonObject{{"snapshotId", "snap-b-1-objectstorage"}}},
            {"replication", QJsonObject{{"enabled", replication}}}};
}

QJsonObject pruneRequest(const QString &node)
{
    return {{"nodeId", node}, {"serviceId", "svc-1"}, {"olderThan", QDateTime::currentMSecsSinceEpoch() + 60000}, {"keepBackupIds", QJsonArray{"b-keep"}}};
}

struct Lane {
    LogCapture &log;
    RelayFixture f;
    LoopbackCorestore a;
    LoopbackCorestore b;
    ScriptedClosureTransfer closures;
    QByteArray token = QByteArrayLiteral("canary-control-token-") + QUuid::createUuid().toByteArray(QUuid::WithoutBraces);
    QList<peers::PeerFrame> answers;

    explicit Lane(LogCapture &capture) : log(capture), a(f.ca), b(f.ca)
    {
        if (!a.listen() || !b.listen())
            qFatal("loopback Corestore cannot listen");
        a.setAcceptedToken(token);
        b.setAcceptedToken(token);
        f.cloudly->corestoreRecipients().setToken(token);
        f.cloudly->options().clusterNodes = QJsonArray{nodeWithEndpoint("node-a", a.endpoint()), nodeWithEndpoint("node-b", b.endpoint()),
                                                       nodeWithout("node-c")};
        // The seam's observer: how many requests each Corestore had seen when a closure was asked for.
        closures.corestoreRequests = [this] { return a.totalRequestCount() + b.totalRequestCount(); };
    }

    // scripted: the ScriptedClosureTransfer; otherwise the relay's own closure streams.
    bool start(bool scripted = true)
    {
        f.makeRelay(f.configuration());
        if (scripted)
            f.relay->setClosureTransfer(&closures);
        return f.startRelay();
    }

    std::optional<peers::PeerFrame> ask(const QString &method, const QJsonObject &request, int waitMs = 15000)
    {
        std::optional<peers::PeerFrame> answer;
        f.cloudly->push(method, request, [&](const peers::PeerFrame &frame) { answer = frame; });
        (void)QTest::qWaitFor([&] { return answer.has_value(); }, waitMs);
        if (answer)
            answers.append(*answer);
        return answer;
    }
    static QJsonObject responseOf(const std::optional<peers::PeerFrame> &frame)
    {
        return frame ? QJsonDocument::fromJson(frame->response.toByteArray()).object() : QJsonObject{};
    }
    // CS-09: the control token is never in a log line, the status or an answer.
    void verifyTokenNowhere()
    {
        for (const QString &line : log.lines())
            QVERIFY2(!line.contains(QString::fromUtf8(token)), qPrintable(line));
        QVERIFY(!QJsonDocument(f.relay->statusSnapshot().toJson()).toJson().contains(token));
        for (const auto &answer : answers)
            QVERIFY(!answer.raw.contains(token));
    }
    int corestoreRequests() const { return a.totalRequestCount() + b.totalRequestCount(); }
};

QStringList routesOf(const QStringList &log, const QString &prefix = QStringLiteral("POST /control/"))
{
    QStringList out;
    for (const QString &route : log)
        if (route.startsWith(prefix))
            out << route;
    return out;
}

} // namespace

class TstClusterBackup : public QObject {
    Q_OBJECT
    LogCapture log;

private Q_SLOTS:
    void init()
    {
        log.install();
        log.clear();
    }

    // CS-63, CS-79: the backup acts on the node it names (only that node's Corestore is called), the
    // Corestore body is §15.1's, the answer is the snapshots and carries no replication field.
    void backupActsOnTheNamedNode_CS63_CS79()
    {
        Lane lane(log);
        QVERIFY(lane.start());
        const auto answer = lane.ask(kBackup, backupRequest("node-b", false));
        QVERIFY(answer);
        QVERIFY2(!answer->hasError(), answer->raw.constData());
        QCOMPARE(lane.a.totalRequestCount(), 0);
        QCOMPARE(lane.b.requestCount(LoopbackCorestore::backupsRoute), 1);
        const auto seen = lane.b.lastRequest(LoopbackCorestore::backupsRoute);
        QCOMPARE(QJsonDocument::fromJson(seen->body).object(),
                 (QJsonObject{{"serviceId", "svc-1"}, {"backupId", "b-1"}, {"database", true},
                              {"volumes", QJsonArray{"data", "logs"}}, {"objectStorage", true}}));
        QCOMPARE(seen->header("Content-Type"), QByteArray("application/json"));
        const QJsonObject response = Lane::responseOf(answer);
        QCOMPARE(QStringList(response.keys()), (QStringList{"backupId", "completedAt", "nodeId", "serviceId", "snapshots"}));
        QCOMPARE(response.value("nodeId").toString(), QStringLiteral("node-b"));
        QCOMPARE(qint64(response.value("completedAt").toDouble()), lane.f.clock.nowMs());
        const QJsonObject snapshots = response.value("snapshots").toObject();
        QCOMPARE(snapshots.value("database").toObject(), (QJsonObject{{"snapshotId", "snap-b-1-database"}, {"sizeBytes", 4096}}));
        QCOMPARE(snapshots.value("volumes").toArray().size(), 2);
        QCOMPARE(snapshots.value("objectStorage").toObject().value("snapshotId").toString(), QStringLiteral("snap-b-1-objectstorage"));
        QCOMPARE(lane.closures.calls.size(), 0); // no replication asked: no closure
        lane.verifyTokenNowhere();
    }

    // CS-64: each condition is its own named refusal, for each of the three methods; a node without
    // an endpoint dials nothing and enrolls nothing.
    void refusalsByName_CS64_data()
    {
        QTest::addColumn<QString>("method");
        QTest::newRow("backup") << kBackup;
        QTest::newRow("restore") << kRestore;
        QTest::newRow("prune") << kPrune;
    }
    void refusalsByName_CS64()
    {
        QFETCH(QString, method);
        const auto body = [&](const QString &node) {
            return method == kBackup ? backupRequest(node, false) : method == kRestore ? restoreRequest(node, false) : pruneRequest(node);
        };
        Lane lane(log);
        QVERIFY(lane.start());
        // No endpoint published: CORESTORE_ENDPOINT_UNKNOWN, nothing dialled, nothing enrolled.
        auto answer = lane.ask(method, body("node-c"));
        QVERIFY(answer);
        QCOMPARE(answer->errorRefusal().name, QStringLiteral("CORESTORE_ENDPOINT_UNKNOWN"));
        QCOMPARE(answer->errorRefusal().reason, QStringLiteral("node node-c publishes no Corestore endpoint"));
        QCOMPARE(lane.f.cloudly->corestoreRecipients().beginCount(), 0);

        // No control credential (Cloudly refuses the enrollment): named, nothing sent to the node.
        lane.f.cloudly->corestoreRecipients().refuseStep(QStringLiteral("beginCorestoreControlRecipientEnrollment"), QStringLiteral("INTERNAL_ERROR"));
        answer = lane.ask(method, body("node-a"));
        QVERIFY(answer);
        QCOMPARE(answer->errorRefusal().name, QStringLiteral("CorestoreCredentialEnrollmentError"));
        QCOMPARE(lane.corestoreRequests(), 0);

        // Enrolled, but the node cannot be reached (its Corestore answers 503): CORESTORE_UNREACHABLE.
        lane.f.cloudly->corestoreRecipients().refuseStep(QStringLiteral("beginCorestoreControlRecipientEnrollment"), QString());
        lane.f.clock.advance(1000); // past the enrollment backoff (500 ms after one failure)
        for (const char *route : {LoopbackCorestore::backupsRoute, LoopbackCorestore::volumesRoute, LoopbackCorestore::pruneRoute})
            lane.a.setStanding(route, Behaviour::serverError(503));
        answer = lane.ask(method, body("node-a"));
        QVERIFY(answer);
        const QString unreachable = method == kRestore ? QStringLiteral("restore-step-failed") : QStringLiteral("CORESTORE_UNREACHABLE");
        QCOMPARE(answer->errorRefusal().name, unreachable);
        QVERIFY2(answer->errorRefusal().text().contains(QStringLiteral("CORESTORE_UNREACHABLE: POST /corestore/control/")),
                 qPrintable(answer->errorRefusal().text()));
        QVERIFY(answer->errorRefusal().text().endsWith(QStringLiteral("on node node-a: 503")));

        // A Corestore that refuses (4xx): corestore-refused with its code.
        for (const char *route : {LoopbackCorestore::backupsRoute, LoopbackCorestore::volumesRoute, LoopbackCorestore::pruneRoute})
            lane.a.setStanding(route, Behaviour::answer(409, R"({"error":{"code":"backup-running","reason":"x"}})"));
        answer = lane.ask(method, body("node-a"));
        QVERIFY(answer);
        QVERIFY2(answer->errorRefusal().text().contains(QStringLiteral("corestore-refused: POST /corestore/control/")),
                 qPrintable(answer->errorRefusal().text()));
        QVERIFY(answer->errorRefusal().text().endsWith(QStringLiteral("answered 409: backup-running")));
        QCOMPARE(lane.b.totalRequestCount(), 0);
        lane.verifyTokenNowhere();
    }

    // request-invalid names the field and dials nothing.
    void requestInvalidNamesTheField()
    {
        Lane lane(log);
        QVERIFY(lane.start());
        QJsonObject body = backupRequest("node-a", true);
        body.insert("replication", QJsonObject{{"enabled", true}, {"target", "s3"}});
        auto answer = lane.ask(kBackup, body);
        QCOMPARE(answer->errorRefusal().text(), QStringLiteral("request-invalid: field request.replication.target is unknown"));
        body = restoreRequest("node-a", false);
        body.remove("objectStorage");
        answer = lane.ask(kRestore, body);
        QCOMPARE(answer->errorRefusal().text(), QStringLiteral("request-invalid: field request.objectStorage is missing"));
        body = pruneRequest("node-a");
        body.insert("olderThan", "yesterday");
        answer = lane.ask(kPrune, body);
        QCOMPARE(answer->errorRefusal().text(), QStringLiteral("request-invalid: field request.olderThan is not an integer"));
        QCOMPARE(lane.corestoreRequests(), 0);
        QCOMPARE(lane.f.cloudly->corestoreRecipients().beginCount(), 0);
        QCOMPARE(lane.closures.calls.size(), 0);
    }

    // CS-74, CS-79, CS-77: a replicated backup sends the closure after the snapshots and before the
    // answer (the answer waits for the transfer), and says that it carries the database closure only.
    void replicatedBackupSendsTheClosureBeforeAnswering_CS74_CS79_CS77()
    {
        Lane lane(log);
        QVERIFY(lane.start());
        lane.closures.hold = true;
        std::optional<peers::PeerFrame> answer;
        lane.f.cloudly->push(kBackup, backupRequest("node-a", true), [&](const peers::PeerFrame &frame) { answer = frame; });
        QTRY_COMPARE_WITH_TIMEOUT(lane.closures.calls.size(), 1, 15000);
        const auto call = lane.closures.calls.first();
        QCOMPARE(call.direction, QStringLiteral("send"));
        QCOMPARE(call.nodeId, QStringLiteral("node-a"));
        QCOMPARE(call.serviceId, QStringLiteral("svc-1"));
        QCOMPARE(call.backupId, QStringLiteral("b-1"));
        QCOMPARE(call.corestoreRequestsBefore, 1); // after the snapshots
        QCOMPARE(lane.a.requestLog(), QStringList{LoopbackCorestore::backupsRoute});
        // The closure is still crossing: no answer yet.
        QVERIFY(lane.f.settleCloudlyHop());
        QVERIFY(!answer);
        lane.closures.release();
        QTRY_VERIFY_WITH_TIMEOUT(answer.has_value(), 10000);
        QVERIFY2(!answer->hasError(), answer->raw.constData());
        const QJsonObject response = Lane::responseOf(answer);
        QVERIFY(!response.contains("replication"));
        QVERIFY(!answer->response.toByteArray().contains("replication"));
        QCOMPARE(response.value("snapshots").toObject().value("database").toObject().value("snapshotId").toString(),
                 QStringLiteral("snap-b-1-database"));
        QVERIFY(log.contains(QStringLiteral("backup b-1: replication carries the database closure of service svc-1 to Cloudly and nothing more; "
                                            "volume and object-storage snapshots stay on node node-a")));
        QVERIFY(log.contains(QStringLiteral("backup b-1: the database closure of service svc-1 was accepted by Cloudly")));
        lane.answers.append(*answer);
        lane.verifyTokenNowhere();
    }

    // CS-78: a failed transfer does not fail the backup: the snapshot ids are answered, the closure's
    // refusal is logged with the backup id.
    void failedClosureStillAnswersTheSnapshots_CS78()
    {
        Lane lane(log);
        QVERIFY(lane.start());
        lane.closures.sendFailure = contract::Refusal{QStringLiteral("closure-transfer-stalled"),
                                                      QStringLiteral("node went quiet after 65536 of 1048576 bytes")};
        const auto answer = lane.ask(kBackup, backupRequest("node-a", true, QStringLiteral("b-stalled")));
        QVERIFY(answer);
        QVERIFY2(!answer->hasError(), answer->raw.constData());
        const QJsonObject snapshots = Lane::responseOf(answer).value("snapshots").toObject();
        QCOMPARE(snapshots.value("database").toObject().value("snapshotId").toString(), QStringLiteral("snap-b-stalled-database"));
        QCOMPARE(snapshots.value("volumes").toArray().size(), 2);
        QVERIFY(!Lane::responseOf(answer).contains("replication"));
        QCOMPARE(lane.closures.calls.size(), 1);
        QVERIFY(log.contains(QStringLiteral("backup b-stalled: the database closure of service svc-1 was refused: closure-transfer-stalled: "
                                            "node went quiet after 65536 of 1048576 bytes; the backup answers its snapshots")));
        lane.verifyTokenNowhere();
    }

    // CS-76: a service without a database has no closure, and the relay says so.
    void serviceWithoutDatabaseSaysSo_CS76()
    {
        Lane lane(log);
        QVERIFY(lane.start());
        lane.a.setServiceWithoutDatabase(QStringLiteral("svc-1"));
        lane.closures.sendFailure = contract::Refusal{QStringLiteral("closure-absent"), QStringLiteral("service svc-1 has no database")};
        const auto answer = lane.ask(kBackup, backupRequest("node-a", true));
        QVERIFY(answer);
        QVERIFY(!answer->hasError());
        QVERIFY(Lane::responseOf(answer).value("snapshots").toObject().value("database").isNull());
        QVERIFY(log.contains(QStringLiteral("backup b-1: service svc-1 has no database; no closure to carry")));
        QVERIFY(!log.contains(QStringLiteral("was refused")));
    }

    // A failed snapshot fails the backup and no closure is asked for.
    void failedSnapshotSendsNoClosure_CS74()
    {
        Lane lane(log);
        QVERIFY(lane.start());
        lane.a.script(LoopbackCorestore::backupsRoute, Behaviour::answer(200, R"({"snapshots":{"database":null,"volumes":[]}})"));
        const auto answer = lane.ask(kBackup, backupRequest("node-a", true));
        QVERIFY(answer);
        QCOMPARE(answer->errorRefusal().text(),
                 QStringLiteral("CORESTORE_UNREACHABLE: POST /corestore/control/backups on node node-a: unreadable answer "
                                "(field answer.snapshots.objectStorage is missing)"));
        QCOMPARE(lane.closures.calls.size(), 0);
    }

    // CS-81: the steps as Corestore saw them: each volume created then restored, then the database,
    // then object storage; the answer lists the steps in that order.
    void restoreRunsInTheDocumentedOrder_CS81()
    {
        Lane lane(log);
        QVERIFY(lane.start());
        const auto answer = lane.ask(kRestore, restoreRequest("node-a", false));
        QVERIFY(answer);
        QVERIFY2(!answer->hasError(), answer->raw.constData());
        QCOMPARE(lane.a.requestLog(),
                 (QStringList{LoopbackCorestore::volumesRoute, LoopbackCorestore::restoreVolumeRoute, LoopbackCorestore::volumesRoute,
                              LoopbackCorestore::restoreVolumeRoute, LoopbackCorestore::restoreDatabaseRoute,
                              LoopbackCorestore::restoreObjectStorageRoute}));
        QCOMPARE(lane.a.restoreLog(), (QStringList{"volume:svc-1:b-1:data:snap-b-1-volume-data", "volume:svc-1:b-1:logs:snap-b-1-volume-logs",
                                                   "database:svc-1:b-1:snap-b-1-database", "objectstorage:svc-1:b-1:snap-b-1-objectstorage"}));
        QCOMPARE(lane.a.volumes(QStringLiteral("svc-1")).size(), 2);
        const QJsonObject response = Lane::responseOf(answer);
        QCOMPARE(response.value("nodeId").toString(), QStringLiteral("node-a"));
        QCOMPARE(response.value("backupId").toString(), QStringLiteral("b-1"));
        QCOMPARE(qint64(response.value("completedAt").toDouble()), lane.f.clock.nowMs());
        QStringList steps;
        for (const QJsonValue &step : response.value("steps").toArray()) {
            QCOMPARE(step.toObject().value("state").toString(), QStringLiteral("done"));
            steps << step.toObject().value("step").toString();
        }
        QCOMPARE(steps, (QStringList{"volume:data", "volume:logs", "database", "objectstorage"}));
        QCOMPARE(lane.b.totalRequestCount(), 0); // CS-63
        QCOMPARE(lane.closures.calls.size(), 0);
        lane.verifyTokenNowhere();
    }

    // CS-75, CS-81: a replicated restore takes the database from Cloudly's closure, first, before any
    // Corestore step, and the node-local database snapshot is not restored.
    void replicatedRestoreTakesTheClosureFirst_CS75_CS81()
    {
        Lane lane(log);
        QVERIFY(lane.start());
        const auto answer = lane.ask(kRestore, restoreRequest("node-a", true));
        QVERIFY(answer);
        QVERIFY2(!answer->hasError(), answer->raw.constData());
        QCOMPARE(lane.closures.calls.size(), 1);
        QCOMPARE(lane.closures.calls.first().direction, QStringLiteral("restore"));
        QCOMPARE(lane.closures.calls.first().nodeId, QStringLiteral("node-a"));
        QCOMPARE(lane.closures.calls.first().corestoreRequestsBefore, 0);
        QCOMPARE(routesOf(lane.a.requestLog()),
                 (QStringList{LoopbackCorestore::volumesRoute, LoopbackCorestore::restoreVolumeRoute, LoopbackCorestore::volumesRoute,
                              LoopbackCorestore::restoreVolumeRoute, LoopbackCorestore::restoreObjectStorageRoute}));
        QStringList steps;
        for (const QJsonValue &step : Lane::responseOf(answer).value("steps").toArray())
            steps << step.toObject().value("step").toString();
        QCOMPARE(steps, (QStringList{"closure", "volume:data", "volume:logs", "objectstorage"}));
    }

    // §18.1 backups.operations (D-96): a replicated backup is in the status while it carries its
    // closure (step "closure"), and leaves it once answered.
    void backupInFlightIsInTheStatus_D96()
    {
        Lane lane(log);
        lane.closures.hold = true;
        QVERIFY(lane.start());
        std::optional<peers::PeerFrame> answer;
        lane.f.cloudly->push(kBackup, backupRequest("node-a", true, "b-held"), [&](const peers::PeerFrame &frame) { answer = frame; });
        QVERIFY(QTest::qWaitFor([&] { return lane.closures.held() == 1; }, 15000));
        const auto ops = lane.f.relay->statusSnapshot().backups.operations;
        QCOMPARE(ops.size(), 1);
        QCOMPARE(ops.first().kind, QStringLiteral("backup"));
        QCOMPARE(ops.first().nodeId, QStringLiteral("node-a"));
        QCOMPARE(ops.first().backupId, QStringLiteral("b-held"));
        QCOMPARE(ops.first().step, QStringLiteral("closure"));
        lane.closures.release();
        QVERIFY(QTest::qWaitFor([&] { return answer.has_value(); }, 15000));
        QVERIFY2(!answer->hasError(), answer->raw.constData());
        QVERIFY(lane.f.relay->statusSnapshot().backups.operations.isEmpty());
        lane.verifyTokenNowhere();
    }

    // §13.2 (D-95): while a restore of a service runs, a second one of the same service (here on
    // another node) is refused restore-in-progress before anything is dialled; a restore of another
    // service runs meanwhile; once the first answered, the service may be restored again.
    void secondRestoreOfOneServiceIsRefused_D95()
    {
        Lane lane(log);
        lane.closures.hold = true;
        QVERIFY(lane.start());
        std::optional<peers::PeerFrame> first;
        lane.f.cloudly->push(kRestore, restoreRequest("node-a", true), [&](const peers::PeerFrame &frame) { first = frame; });
        QVERIFY(QTest::qWaitFor([&] { return lane.closures.held() == 1; }, 15000));
        const int dialled = lane.corestoreRequests();
        // §18.1 backups.operations (D-96): the running restore, at its closure step.
        const auto ops = lane.f.relay->statusSnapshot().backups.operations;
        QCOMPARE(ops.size(), 1);
        QCOMPARE(ops.first(), (status::BackupOperationStatus{QStringLiteral("restore"), QStringLiteral("node-a"), QStringLiteral("svc-1"),
                                                             QStringLiteral("b-1"), ops.first().startedAtMs, QStringLiteral("closure"), 0, 4}));
        QVERIFY(ops.first().startedAtMs > 0);
        auto second = lane.ask(kRestore, restoreRequest("node-b", false));
        QVERIFY(second);
        QCOMPARE(second->errorRefusal().text(),
                 QStringLiteral("restore-in-progress: a restore of service svc-1 is already running (backup b-1 on node node-a)"));
        QCOMPARE(lane.corestoreRequests(), dialled);
        QCOMPARE(lane.closures.calls.size(), 1);
        QVERIFY(!first);
        // Another service is not held up by it.
        QJsonObject other = restoreRequest("node-b", false);
        other["serviceId"] = "svc-2";
        auto third = lane.ask(kRestore, other);
        QVERIFY(third);
        QVERIFY2(!third->hasError(), third->raw.constData());
        // The first one is unharmed by the refusal and answers its steps.
        lane.closures.release();
        QVERIFY(QTest::qWaitFor([&] { return first.has_value(); }, 15000));
        QVERIFY2(!first->hasError(), first->raw.constData());
        QCOMPARE(Lane::responseOf(first).value("steps").toArray().size(), 4);
        QVERIFY(lane.f.relay->statusSnapshot().backups.operations.isEmpty());
        // Finished: the service may be restored again.
        lane.closures.hold = false;
        auto again = lane.ask(kRestore, restoreRequest("node-a", false));
        QVERIFY(again);
        QVERIFY2(!again->hasError(), again->raw.constData());
    }

    // CS-80: every precondition is checked before the first step; each refusal dials nothing and asks
    // for no closure.
    void preconditionsBeforeTheFirstStep_CS80()
    {
        Lane lane(log);
        QVERIFY(lane.start());
        // No endpoint.
        auto answer = lane.ask(kRestore, restoreRequest("node-c", true));
        QCOMPARE(answer->errorRefusal().name, QStringLiteral("CORESTORE_ENDPOINT_UNKNOWN"));
        // Replication without a dispatchable Cloudly session.
        lane.closures.dispatchable = false;
        answer = lane.ask(kRestore, restoreRequest("node-a", true));
        QCOMPARE(answer->errorRefusal().text(),
                 QStringLiteral("cloudly-session-unavailable: no dispatchable Cloudly session for the closure of backup b-1"));
        QCOMPARE(lane.f.cloudly->corestoreRecipients().beginCount(), 0);
        lane.closures.dispatchable = true;
        // No control credential.
        lane.f.cloudly->corestoreRecipients().refuseStep(QStringLiteral("beginCorestoreControlRecipientEnrollment"), QStringLiteral("INTERNAL_ERROR"));
        answer = lane.ask(kRestore, restoreRequest("node-a", true));
        QCOMPARE(answer->errorRefusal().text(),
                 QStringLiteral("CorestoreCredentialEnrollmentError: INTERNAL_ERROR: begin: Cloudly refused it"));
        QCOMPARE(lane.corestoreRequests(), 0);
        QCOMPARE(lane.closures.calls.size(), 0);
        // Without replication the session is no precondition: a restore runs with the credential only.
        lane.f.cloudly->corestoreRecipients().refuseStep(QStringLiteral("beginCorestoreControlRecipientEnrollment"), QString());
        lane.f.clock.advance(1000);
        lane.closures.dispatchable = false;
        answer = lane.ask(kRestore, restoreRequest("node-a", false));
        QVERIFY2(!answer->hasError(), answer->raw.constData());
        lane.verifyTokenNowhere();
    }

    // CS-82: a refusal names the step that ended the restore and the steps already done.
    void refusalNamesTheStep_CS82()
    {
        Lane lane(log);
        QVERIFY(lane.start());
        // The second volume's restore fails.
        lane.a.script(LoopbackCorestore::restoreVolumeRoute, Behaviour::answer(200, R"({"restored":true})"));
        lane.a.script(LoopbackCorestore::restoreVolumeRoute, Behaviour::serverError(500));
        auto answer = lane.ask(kRestore, restoreRequest("node-a", false));
        QVERIFY(answer);
        auto refused = answer->errorRefusal();
        QCOMPARE(refused.name, QStringLiteral("restore-step-failed"));
        QCOMPARE(refused.reason, QStringLiteral("step volume:logs failed: CORESTORE_UNREACHABLE: POST /corestore/control/restores/volume on node node-a: 500"));
        QCOMPARE(refused.data.value("step").toString(), QStringLiteral("volume:logs"));
        QCOMPARE(refused.data.value("completedSteps").toArray(), QJsonArray{"volume:data"});
        // Nothing after the failed step ran.
        QCOMPARE(lane.a.requestCount(LoopbackCorestore::restoreDatabaseRoute), 0);
        QCOMPARE(lane.a.requestCount(LoopbackCorestore::restoreObjectStorageRoute), 0);
        QVERIFY(log.contains(QStringLiteral("restore of backup b-1: service svc-1 on node node-a: step volume:logs failed after [volume:data]")));

        // The closure step fails: nothing on the node ran.
        lane.a.resetObservations();
        lane.closures.restoreFailure = contract::Refusal{QStringLiteral("NOT_FOUND"), QStringLiteral("no closure for backup b-1")};
        answer = lane.ask(kRestore, restoreRequest("node-a", true));
        refused = answer->errorRefusal();
        QCOMPARE(refused.text(), QStringLiteral("restore-step-failed: step closure failed: NOT_FOUND: no closure for backup b-1"));
        QCOMPARE(refused.data.value("completedSteps").toArray(), QJsonArray{});
        QCOMPARE(lane.a.totalRequestCount(), 0);

        // An unreadable step answer fails its step too.
        lane.closures.restoreFailure.reset();
        lane.a.script(LoopbackCorestore::restoreObjectStorageRoute, Behaviour::answer(200, R"({"restored":false})"));
        answer = lane.ask(kRestore, restoreRequest("node-a", true));
        refused = answer->errorRefusal();
        QCOMPARE(refused.data.value("step").toString(), QStringLiteral("objectstorage"));
        QCOMPARE(refused.data.value("completedSteps").toArray(), (QJsonArray{"closure", "volume:data", "volume:logs"}));
        QVERIFY(refused.reason.endsWith(QStringLiteral("unreadable answer (field answer.restored is not true)")));
        lane.verifyTokenNowhere();
    }

    // CS-63: pruning reaches the named node with §15.1's body and answers Corestore's counts.
    void pruneActsOnTheNamedNode_CS63()
    {
        Lane lane(log);
        QVERIFY(lane.start());
        QVERIFY(!lane.ask(kBackup, backupRequest("node-a", false, QStringLiteral("b-old")))->hasError());
        QVERIFY(!lane.ask(kBackup, backupRequest("node-a", false, QStringLiteral("b-keep")))->hasError());
        const QJsonObject request = pruneRequest("node-a");
        const auto answer = lane.ask(kPrune, request);
        QVERIFY(answer);
        QVERIFY2(!answer->hasError(), answer->raw.constData());
        QCOMPARE(Lane::responseOf(answer), (QJsonObject{{"nodeId", "node-a"}, {"prunedSnapshots", 4}, {"freedBytes", 4 * 4096}}));
        QCOMPARE(QJsonDocument::fromJson(lane.a.lastRequest(LoopbackCorestore::pruneRoute)->body).object(),
                 (QJsonObject{{"serviceId", "svc-1"}, {"olderThan", request.value("olderThan")}, {"keepBackupIds", QJsonArray{"b-keep"}}}));
        QCOMPARE(lane.b.totalRequestCount(), 0);
        lane.verifyTokenNowhere();
    }

    // CS-09: a Corestore quoting the bearer back as its error code does not put it into an answer.
    void tokenQuotedBackIsWithheld_CS09()
    {
        Lane lane(log);
        QVERIFY(lane.start());
        const QByteArray quoting = QJsonDocument(QJsonObject{{"error", QJsonObject{{"code", QString::fromUtf8(lane.token)}, {"reason", "x"}}}})
                                       .toJson(QJsonDocument::Compact);
        lane.a.setStanding(LoopbackCorestore::backupsRoute, Behaviour::answer(400, quoting));
        lane.a.setStanding(LoopbackCorestore::volumesRoute, Behaviour::answer(400, quoting));
        QVERIFY(lane.ask(kBackup, backupRequest("node-a", true))->hasError());
        QVERIFY(lane.ask(kRestore, restoreRequest("node-a", false))->hasError());
        lane.verifyTokenNowhere();
    }

    // End to end with the relay's own closure streams (CS-74, CS-79, CS-66, CS-67): the replicated
    // backup's closure crossed to Cloudly and Cloudly issued its receipt before the backup answered.
    void replicatedBackupEndToEnd_CS74_CS79()
    {
        Lane lane(log);
        peers::LoopbackClosureStore store(*lane.f.cloudly);
        lane.a.setClosureSizeBytes(3 * 1024 * 1024 + 17);
        QVERIFY(lane.start(false));
        std::optional<peers::PeerFrame> answer;
        int receiptsWhenAnswered = -1;
        lane.f.cloudly->push(kBackup, backupRequest("node-a", true), [&](const peers::PeerFrame &frame) {
            answer = frame;
            receiptsWhenAnswered = 0;
            for (const auto &in : store.incoming())
                receiptsWhenAnswered += in.completed ? 1 : 0;
        });
        QTRY_VERIFY_WITH_TIMEOUT(answer.has_value(), 60000);
        QVERIFY2(!answer->hasError(), answer->raw.constData());
        QCOMPARE(receiptsWhenAnswered, 1); // the closure was stored before the answer (CS-79)
        const auto incoming = store.incoming();
        QCOMPARE(incoming.size(), 1);
        QCOMPARE(incoming.first().backupId, QStringLiteral("b-1"));
        QCOMPARE(incoming.first().receivedBytes, 3 * 1024 * 1024 + 17);
        QCOMPARE(incoming.first().computedSha256, lane.a.closureSha256(QStringLiteral("svc-1"), QStringLiteral("b-1")));
        QVERIFY(incoming.first().violation.isEmpty());
        // The export came after the snapshots.
        QCOMPARE(routesOf(lane.a.requestLog()), (QStringList{LoopbackCorestore::backupsRoute, LoopbackCorestore::closureExportRoute}));
        QVERIFY(!Lane::responseOf(answer).contains("replication"));
        QVERIFY(log.contains(QStringLiteral("backup b-1: the database closure of service svc-1 was accepted by Cloudly")));

        // Cloudly refusing the completion: the backup still answers its snapshots (CS-78, CS-67).
        store.refuseCompletions(true);
        const auto refused = lane.ask(kBackup, backupRequest("node-a", true, QStringLiteral("b-2")), 60000);
        QVERIFY(refused);
        QVERIFY2(!refused->hasError(), refused->raw.constData());
        QCOMPARE(Lane::responseOf(refused).value("snapshots").toObject().value("database").toObject().value("snapshotId").toString(),
                 QStringLiteral("snap-b-2-database"));
        QVERIFY(log.contains(QStringLiteral("backup b-2: the database closure of service svc-1 was refused: closure-refused")));

        // A service without a database (Corestore's no-database): closure-absent, said as such (CS-76).
        lane.a.setServiceWithoutDatabase(QStringLiteral("svc-1"));
        QVERIFY(!lane.ask(kBackup, backupRequest("node-a", true, QStringLiteral("b-3")), 60000)->hasError());
        QVERIFY(log.contains(QStringLiteral("backup b-3: service svc-1 has no database; no closure to carry")));
        lane.verifyTokenNowhere();
    }

    // End to end (CS-75, CS-81): a replicated restore pulls the closure from Cloudly into the node's
    // Corestore before any other step, then the volumes and object storage; no node-local database.
    void replicatedRestoreEndToEnd_CS75_CS81()
    {
        Lane lane(log);
        peers::LoopbackClosureStore store(*lane.f.cloudly);
        const qint64 size = 2 * 1024 * 1024 + 5;
        store.holdClosure(QStringLiteral("svc-1"), QStringLiteral("b-1"), QStringLiteral("node-a"), size, 11, "receipt:svc-1:b-1");
        QVERIFY(lane.start(false));
        const auto answer = lane.ask(kRestore, restoreRequest("node-a", true), 60000);
        QVERIFY(answer);
        QVERIFY2(!answer->hasError(), answer->raw.constData());
        QCOMPARE(routesOf(lane.a.requestLog()),
                 (QStringList{LoopbackCorestore::closureRestoreRoute, LoopbackCorestore::volumesRoute, LoopbackCorestore::restoreVolumeRoute,
                              LoopbackCorestore::volumesRoute, LoopbackCorestore::restoreVolumeRoute,
                              LoopbackCorestore::restoreObjectStorageRoute}));
        const auto restored = lane.a.restoredClosures();
        QCOMPARE(restored.size(), 1);
        QCOMPARE(restored.first().sizeBytes, size);
        QCOMPARE(restored.first().sha256, peers::LoopbackClosureStore::sha256Of(size, 11));
        QStringList steps;
        for (const QJsonValue &step : Lane::responseOf(answer).value("steps").toArray())
            steps << step.toObject().value("step").toString();
        QCOMPARE(steps, (QStringList{"closure", "volume:data", "volume:logs", "objectstorage"}));

        // Cloudly holding no closure for the backup: the restore ends at its first step, nothing on the node ran.
        lane.a.resetObservations();
        QJsonObject other = restoreRequest("node-a", true);
        other.insert("backupId", "b-missing");
        const auto missing = lane.ask(kRestore, other, 60000);
        QVERIFY(missing);
        QCOMPARE(missing->errorRefusal().name, QStringLiteral("restore-step-failed"));
        QCOMPARE(missing->errorRefusal().data.value("step").toString(), QStringLiteral("closure"));
        QCOMPARE(missing->errorRefusal().data.value("completedSteps").toArray(), QJsonArray{});
        QCOMPARE(routesOf(lane.a.requestLog()), QStringList{});
        lane.verifyTokenNowhere();
    }

    // CS-83: the node-tag routed names stay unregistered (method-not-served, not a named retirement).
    void nodeTagRoutedMethodsAreNotServed_CS83()
    {
        Lane lane(log);
        QVERIFY(lane.start());
        for (const char *method : {"executeServiceBackup", "executeServiceRestore", "coreflowPruneNodeArchive", "coreflowGetCorestoreInventory"}) {
            const auto answer = lane.ask(QString::fromLatin1(method), backupRequest("node-a", true));
            QVERIFY(answer);
            QCOMPARE(answer->errorRefusal().text(), QStringLiteral("method-not-served: the Cloudly session serves no method ") + method);
        }
        QCOMPARE(lane.corestoreRequests(), 0);
        QCOMPARE(lane.closures.calls.size(), 0);
    }

    // The node lane does not serve Cloudly's methods (CL-01): a node asking for a backup, a restore or
    // a prune is refused by name and no Corestore is called.
    void nodeLaneRefusesCloudlysMethods_CL01()
    {
        Lane lane(log);
        QVERIFY(lane.start());
        auto node = lane.f.registeredNode(QStringLiteral("node-a"));
        QVERIFY(node);
        for (const QString &method : {kBackup, kRestore, kPrune}) {
            std::optional<peers::PeerFrame> answer;
            node->call(method, QJsonDocument(backupRequest("node-a", true)).toJson(QJsonDocument::Compact),
                       [&](const peers::PeerFrame &frame) { answer = frame; });
            QTRY_VERIFY(answer);
            QCOMPARE(answer->errorRefusal().name, QStringLiteral("method-not-served"));
            QCOMPARE(answer->errorRefusal().reason, QStringLiteral("the relay listener serves no method ") + method);
        }
        QCOMPARE(lane.corestoreRequests(), 0);
        QCOMPARE(lane.closures.calls.size(), 0);
    }
};

COREFLOW_EPOLL_TEST_MAIN(TstClusterBackup)
#include "tst_clusterbackup.moc"
