// The Corestore lane through a running relay (docs/contract.md §12 intro, §12.1, §12.6, §12.7, §15,
// §18.1 corestore; D-72): the loopback Cloudly verifies the enrollment for real (the sealed
// challenge, the keyed BLAKE2b proof, the sealed token material), each node's Corestore is a
// LoopbackCorestore (Qt HttpServer, HTTPS on 127.0.0.1) — both written from the contract, neither
// sharing code with the relay's client. Real sockets; the relay's clock is a ManualClock.
// Rules: CS-01..CS-14, CS-56..CS-62, CS-83, ON-04, ON-05.
#include "tests/support/epolltestmain.h"
#include "tests/integration/logcapture.h"
#include "tests/integration/relayfixture.h"
#include "tests/peers/loopbackcorestore.h"

#include "service/corestore/corestoreclient.h"
#include "service/corestore/corestorecredential.h"
#include "service/registration/relayregistration.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QTest>
#include <QUuid>

using namespace coreflow;
using namespace coreflow::testing;
using peers::LoopbackCorestore;
using Behaviour = peers::LoopbackCorestore::Behaviour;

namespace {

// Written out from docs/contract.md §12.1 (the peer spells them itself too).
const QString kBegin = QStringLiteral("beginCorestoreControlRecipientEnrollment");
const QString kComplete = QStringLiteral("completeCorestoreControlRecipientEnrollment");
const QString kMaterial = QStringLiteral("getCorestoreControlCredentialMaterial");
const QString kState = QStringLiteral("getCorestoreControlRecipientState");
const QString kInventory = QStringLiteral("getClusterCorestoreInventory");
const QString kLegacy = QStringLiteral("getClusterCorestoreLegacyResources");

QJsonObject nodeWithEndpoint(const QString &id, const QUrl &endpoint)
{
    return QJsonObject{{"id", id}, {"corestore", QJsonObject{{"endpoint", endpoint.toString()}}}, {"corestoreDatabase", QJsonValue::Null}};
}
QJsonObject nodeWithout(const QString &id)
{
    return QJsonObject{{"id", id}, {"corestore", QJsonValue::Null}, {"corestoreDatabase", QJsonValue::Null}};
}

struct Lane {
    LogCapture &log;
    RelayFixture f;
    LoopbackCorestore a;
    LoopbackCorestore b;
    QByteArray token = QByteArrayLiteral("canary-corestore-token-") + QUuid::createUuid().toByteArray(QUuid::WithoutBraces);

    explicit Lane(LogCapture &capture) : log(capture), a(f.ca), b(f.ca)
    {
        if (!a.listen() || !b.listen())
            qFatal("loopback Corestore cannot listen");
        a.setAcceptedToken(token);
        b.setAcceptedToken(token);
        f.cloudly->corestoreRecipients().setToken(token);
        f.cloudly->options().clusterNodes = QJsonArray{nodeWithEndpoint("node-a", a.endpoint()), nodeWithout("node-b")};
    }

    // Cloudly dispatches method { nodeId } and waits for the answer (real sockets, no clock step).
    std::optional<peers::PeerFrame> ask(const QString &method, const QString &nodeId, int waitMs = 10000)
    {
        std::optional<peers::PeerFrame> answer;
        f.cloudly->push(method, QJsonObject{{"nodeId", nodeId}}, [&](const peers::PeerFrame &frame) { answer = frame; });
        (void)QTest::qWaitFor([&] { return answer.has_value(); }, waitMs); // the caller checks the optional
        return answer;
    }
    static QJsonObject responseOf(const std::optional<peers::PeerFrame> &frame)
    {
        return frame ? QJsonDocument::fromJson(frame->response.toByteArray()).object() : QJsonObject{};
    }
    QStringList cloudlyOrder() const
    {
        QStringList order;
        for (const auto &frame : f.cloudly->frames())
            if (frame.phase == peers::Phase::Request
                && (frame.method == kBegin || frame.method == kComplete || frame.method == kMaterial || frame.method == kState))
                order << frame.method;
        return order;
    }
    QString statusJson() const
    {
        return QString::fromUtf8(QJsonDocument(f.relay->statusSnapshot().toJson()).toJson(QJsonDocument::Compact));
    }
    // The token never appears in a log line, the status or an answer the relay composed (CS-09).
    void verifyTokenNowhere(const QList<peers::PeerFrame> &answers = {})
    {
        for (const QString &line : log.lines())
            QVERIFY2(!line.contains(QString::fromUtf8(token)), qPrintable(line));
        QVERIFY(!statusJson().contains(QString::fromUtf8(token)));
        for (const auto &answer : answers)
            QVERIFY(!answer.raw.contains(token));
    }
};

} // namespace

class TstCorestore : public QObject {
    Q_OBJECT
    LogCapture log;

private Q_SLOTS:
    void init()
    {
        log.install();
        log.clear();
    }

    // CS-07: a relay that makes no Corestore call enrolls nothing.
    void noEnrollmentAtStart_CS07()
    {
        Lane lane(log);
        QVERIFY(lane.f.startRelay());
        QVERIFY(lane.f.settleCloudlyHop());
        QCOMPARE(lane.f.cloudly->corestoreRecipients().beginCount(), 0);
        QCOMPARE(lane.cloudlyOrder(), QStringList{});
        QCOMPARE(lane.f.relay->statusSnapshot().corestore.credential, QStringLiteral("none"));
        QCOMPARE(lane.a.totalRequestCount(), 0);
    }

    // CS-01, CS-02, CS-06, CS-08, CS-10, CS-56: the first call enrolls (begin, complete with the proof
    // the loopback Cloudly verifies, material), the opened token is the bearer, an empty Corestore is
    // reachable with services [].
    void enrollsAndUsesTheTokenAsBearer_CS01_CS02_CS06_CS08_CS10_CS56()
    {
        Lane lane(log);
        QVERIFY(lane.f.startRelay());
        const auto answer = lane.ask(kInventory, "node-a");
        QVERIFY(answer);
        QVERIFY(!answer->hasError());
        const QJsonObject response = Lane::responseOf(answer);
        QCOMPARE(response.value("reachable"), QJsonValue(true));
        QCOMPARE(response.value("services"), QJsonValue(QJsonArray{}));
        QCOMPARE(response.value("nodeId").toString(), QStringLiteral("node-a"));
        QVERIFY(response.value("checkedAt").toDouble() > 0);
        auto &recipients = lane.f.cloudly->corestoreRecipients();
        QCOMPARE(recipients.completedCount(), 1);
        QCOMPARE(recipients.proofsRejected(), 0);
        QCOMPARE(lane.cloudlyOrder(), (QStringList{kBegin, kComplete, kMaterial}));
        const QString keyId = recipients.enrolledKeyIds().value(0);
        QVERIFY(QRegularExpression("^relay-corestore-control:[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
                    .match(keyId)
                    .hasMatch());
        // The proof is the 44-character base64 digest, never the challenge (D-72).
        const auto complete = lane.f.cloudly->lastRequest(kComplete);
        QVERIFY(complete);
        const QJsonObject completeBody = QJsonDocument::fromJson(complete->rawRequest).object();
        QCOMPARE(completeBody.value("proof").toString().size(), 44);
        const auto seen = lane.a.lastRequest(LoopbackCorestore::inventoryRoute);
        QVERIFY(seen);
        QCOMPARE(seen->header("authorization"), QByteArrayLiteral("Bearer ") + lane.token);
        QCOMPARE(seen->path, QStringLiteral("/corestore/control/inventory"));
        QCOMPARE(lane.a.rejectedBearerCount(), 0);
        QVERIFY(!lane.a.sawRequestWithoutBearer());
        QCOMPARE(lane.b.totalRequestCount(), 0); // CS-01: only node A's Corestore is dialled
        const auto status = lane.f.relay->statusSnapshot().corestore;
        QCOMPARE(status.credential, QStringLiteral("held"));
        QCOMPARE(status.recipientKeyId, keyId);
        QCOMPARE(status.recipientGeneration, 1);
        QVERIFY(status.enrolledAtMs > 0);
        QCOMPARE(status.nodes.size(), 2);
        QCOMPARE(status.nodes[0].nodeId, QStringLiteral("node-a"));
        QVERIFY(status.nodes[0].endpointPublished);
        QCOMPARE(status.nodes[0].lastCallOutcome, QStringLiteral("answered"));
        QVERIFY(!status.nodes[1].endpointPublished);
        lane.verifyTokenNowhere({*answer});
    }

    // CS-10, CS-11: a second relay process enrolls a fresh key under a fresh id (nothing kept).
    void everyRelayEnrollsAFreshKey_CS10_CS11()
    {
        Lane lane(log);
        QVERIFY(lane.f.startRelay());
        QVERIFY(lane.ask(kInventory, "node-a"));
        const QString first = lane.f.cloudly->corestoreRecipients().enrolledKeyIds().value(0);
        const QByteArray firstKey = lane.f.cloudly->corestoreRecipients().publicKeyOf(first);
        QVERIFY(lane.f.stopRelay());
        lane.f.relay.reset();
        QVERIFY(lane.f.startRelay());
        const auto answer = lane.ask(kInventory, "node-a");
        QCOMPARE(Lane::responseOf(answer).value("reachable"), QJsonValue(true));
        const QStringList ids = lane.f.cloudly->corestoreRecipients().enrolledKeyIds();
        QCOMPARE(ids.size(), 2);
        QVERIFY(ids[1] != first);
        QVERIFY(lane.f.cloudly->corestoreRecipients().publicKeyOf(ids[1]) != firstKey);
        QCOMPARE(lane.f.cloudly->corestoreRecipients().retiredKeyIds(), QStringList{first});
    }

    // CS-08: concurrent first calls share one enrollment.
    void concurrentFirstCallsShareOneEnrollment_CS08()
    {
        Lane lane(log);
        QVERIFY(lane.f.startRelay());
        int answered = 0;
        for (int i = 0; i < 3; ++i)
            lane.f.cloudly->push(kInventory, QJsonObject{{"nodeId", "node-a"}}, [&](const peers::PeerFrame &frame) {
                answered += Lane::responseOf(frame).value("reachable").toBool() ? 1 : 0;
            });
        QTRY_COMPARE_WITH_TIMEOUT(answered, 3, 10000);
        QCOMPARE(lane.f.cloudly->corestoreRecipients().beginCount(), 1);
        QCOMPARE(lane.f.cloudly->corestoreRecipients().materialsSealed(), 1);
    }

    // CS-04, CS-57, CS-60, §12.1 "When it enrolls": a node without an endpoint is answered
    // CORESTORE_ENDPOINT_UNKNOWN, nothing is dialled and nothing enrolled; an unreachable Corestore is
    // CORESTORE_UNREACHABLE; neither is the empty answer.
    void endpointUnknownAndUnreachableAreDifferentAnswers_CS04_CS57_CS60()
    {
        Lane lane(log);
        QVERIFY(lane.f.startRelay());
        const QJsonObject unknown = Lane::responseOf(lane.ask(kInventory, "node-b"));
        QCOMPARE(unknown.value("reachable"), QJsonValue(false));
        QCOMPARE(unknown.value("code").toString(), QStringLiteral("CORESTORE_ENDPOINT_UNKNOWN"));
        QCOMPARE(unknown.value("reason").toString(), QStringLiteral("CORESTORE_ENDPOINT_UNKNOWN: node node-b publishes no Corestore endpoint"));
        QVERIFY(!unknown.contains("services"));
        QCOMPARE(lane.f.cloudly->corestoreRecipients().beginCount(), 0);
        const QJsonObject notInCluster = Lane::responseOf(lane.ask(kLegacy, "node-zz"));
        QCOMPARE(notInCluster.value("code").toString(), QStringLiteral("CORESTORE_ENDPOINT_UNKNOWN"));
        QCOMPARE(lane.f.cloudly->corestoreRecipients().beginCount(), 0);

        lane.a.script(LoopbackCorestore::inventoryRoute, Behaviour::serverError(503));
        const QJsonObject unreachable = Lane::responseOf(lane.ask(kInventory, "node-a"));
        QCOMPARE(unreachable.value("reachable"), QJsonValue(false));
        QCOMPARE(unreachable.value("code").toString(), QStringLiteral("CORESTORE_UNREACHABLE"));
        QCOMPARE(unreachable.value("reason").toString(),
                 QStringLiteral("CORESTORE_UNREACHABLE: GET /corestore/control/inventory on node node-a: 503"));
        QVERIFY(!unreachable.contains("services"));
        const QJsonObject empty = Lane::responseOf(lane.ask(kInventory, "node-a"));
        QCOMPARE(empty.value("reachable"), QJsonValue(true));
        QVERIFY(empty != unreachable && empty != unknown);
        const auto status = lane.f.relay->statusSnapshot().corestore;
        QCOMPARE(status.nodes[1].lastCallOutcome, QStringLiteral("endpoint-unknown"));
        // request-invalid for a body that is not { nodeId }.
        std::optional<peers::PeerFrame> refused;
        lane.f.cloudly->push(kInventory, QByteArray(R"({"nodeId":"node-a","extra":1})"), [&](const peers::PeerFrame &frame) { refused = frame; });
        QTRY_VERIFY(refused);
        QCOMPARE(refused->errorRefusal().name, QStringLiteral("request-invalid"));
    }

    // CS-12, ON-04, ON-05: a refused enrollment names Cloudly's code in every call it stops, is logged
    // once per attempt, sends nothing to Corestore (even with token variables in the environment) and
    // is tried again only after the backoff's wait.
    void failedEnrollmentFailsClosed_CS12_ON04_ON05()
    {
        qputenv("CORESTORE_API_TOKEN", "env-token-must-be-ignored");
        qputenv("CORESTORE_CONTROL_URL", "https://127.0.0.1:1/");
        Lane lane(log);
        lane.f.cloudly->corestoreRecipients().refuseStep(kBegin, QStringLiteral("INTERNAL_ERROR"));
        QVERIFY(lane.f.startRelay());
        const QString expected = QStringLiteral("CorestoreCredentialEnrollmentError: INTERNAL_ERROR: begin: Cloudly refused it");
        const QJsonObject first = Lane::responseOf(lane.ask(kInventory, "node-a"));
        QCOMPARE(first.value("code").toString(), QStringLiteral("CORESTORE_UNREACHABLE"));
        QCOMPARE(first.value("reason").toString(), expected);
        QCOMPARE(lane.f.relay->statusSnapshot().corestore.credential, QStringLiteral("failed"));
        QCOMPARE(lane.f.relay->statusSnapshot().corestore.failureCode, QStringLiteral("INTERNAL_ERROR"));
        const QJsonObject second = Lane::responseOf(lane.ask(kLegacy, "node-a"));
        QCOMPARE(second.value("reason").toString(), expected);
        QCOMPARE(lane.f.cloudly->callCount(kBegin), 1); // within the backoff: no attempt
        QCOMPARE(log.count(expected), 1);
        QCOMPARE(lane.a.totalRequestCount(), 0);
        QVERIFY(!lane.a.sawRequestWithoutBearer());
        // After the backoff's first wait (500 ms) the next call enrolls.
        lane.f.cloudly->corestoreRecipients().refuseStep(kBegin, QString());
        lane.f.clock.advance(499);
        QCOMPARE(Lane::responseOf(lane.ask(kInventory, "node-a")).value("reason").toString(), expected);
        QCOMPARE(lane.f.cloudly->callCount(kBegin), 1);
        lane.f.clock.advance(1);
        QCOMPARE(Lane::responseOf(lane.ask(kInventory, "node-a")).value("reachable"), QJsonValue(true));
        QCOMPARE(lane.f.cloudly->callCount(kBegin), 2);
        QCOMPARE(lane.a.lastRequest(LoopbackCorestore::inventoryRoute)->header("authorization"), QByteArrayLiteral("Bearer ") + lane.token);
        qunsetenv("CORESTORE_API_TOKEN");
        qunsetenv("CORESTORE_CONTROL_URL");
    }

    // D-72: a challenge that does not open to exactly 32 bytes is not answered.
    void challengeOfAnotherLengthIsNotAnswered_D72_CS08()
    {
        Lane lane(log);
        lane.f.cloudly->corestoreRecipients().setChallengeBytes(64);
        QVERIFY(lane.f.startRelay());
        const QJsonObject answer = Lane::responseOf(lane.ask(kInventory, "node-a"));
        QVERIFY(answer.value("reason").toString().startsWith(
            QStringLiteral("CorestoreCredentialEnrollmentError: enrollment-challenge-invalid: complete:")));
        QCOMPARE(lane.f.cloudly->callCount(kComplete), 0);
        QCOMPARE(lane.a.totalRequestCount(), 0);
    }

    // A refused completion and a refused material read are named with Cloudly's code.
    void refusedCompleteAndMaterialNameTheCode_CS12_data()
    {
        QTest::addColumn<QString>("method");
        QTest::addColumn<QString>("code");
        QTest::addColumn<QString>("step");
        QTest::newRow("complete") << kComplete << "PROOF_REJECTED" << "complete";
        QTest::newRow("material") << kMaterial << "RECIPIENT_NOT_ACTIVE" << "material";
    }
    void refusedCompleteAndMaterialNameTheCode_CS12()
    {
        QFETCH(QString, method);
        QFETCH(QString, code);
        QFETCH(QString, step);
        Lane lane(log);
        lane.f.cloudly->corestoreRecipients().refuseStep(method, code);
        QVERIFY(lane.f.startRelay());
        const QJsonObject answer = Lane::responseOf(lane.ask(kLegacy, "node-a"));
        QCOMPARE(answer.value("reason").toString(),
                 QStringLiteral("CorestoreCredentialEnrollmentError: %1: %2: Cloudly refused it").arg(code, step));
        QCOMPARE(lane.a.totalRequestCount(), 0);
    }

    // CS-13: a 401 and a 403 drop the token and read it again, then the call is repeated once.
    void unauthorizedAndForbiddenReread_CS13_data()
    {
        QTest::addColumn<bool>("forbidden");
        QTest::newRow("401") << false;
        QTest::newRow("403") << true;
    }
    void unauthorizedAndForbiddenReread_CS13()
    {
        QFETCH(bool, forbidden);
        Lane lane(log);
        QVERIFY(lane.f.startRelay());
        QCOMPARE(Lane::responseOf(lane.ask(kInventory, "node-a")).value("reachable"), QJsonValue(true));
        auto &recipients = lane.f.cloudly->corestoreRecipients();
        QCOMPARE(recipients.materialsSealed(), 1);
        lane.a.script(LoopbackCorestore::inventoryRoute, forbidden ? Behaviour::forbidden() : Behaviour::unauthorized());
        QCOMPARE(Lane::responseOf(lane.ask(kInventory, "node-a")).value("reachable"), QJsonValue(true));
        QCOMPARE(recipients.materialsSealed(), 2);
        QCOMPARE(recipients.beginCount(), 1); // the same key: no new enrollment
        QCOMPARE(lane.a.requestCount(LoopbackCorestore::inventoryRoute), 3);
        // A persistent refusal: re-read once, repeated once, then corestore-refused (no second drop).
        lane.a.setStanding(LoopbackCorestore::inventoryRoute, forbidden ? Behaviour::forbidden() : Behaviour::unauthorized());
        const QJsonObject refused = Lane::responseOf(lane.ask(kInventory, "node-a"));
        QCOMPARE(refused.value("code").toString(), QStringLiteral("CORESTORE_UNREACHABLE"));
        QCOMPARE(refused.value("reason").toString(),
                 QStringLiteral("corestore-refused: GET /corestore/control/inventory on node node-a answered %1: %2")
                     .arg(forbidden ? "403" : "401", forbidden ? "forbidden" : "unauthorized"));
        QCOMPARE(recipients.materialsSealed(), 3);
        QCOMPARE(lane.a.requestCount(LoopbackCorestore::inventoryRoute), 5);
        QCOMPARE(lane.f.relay->statusSnapshot().corestore.credential, QStringLiteral("held"));
        QCOMPARE(lane.f.relay->statusSnapshot().corestore.nodes[0].lastCallOutcome, QStringLiteral("refused"));
        lane.verifyTokenNowhere();
    }

    // CS-14: a changed active recipient re-enrolls before the next call; an unchanged one does not.
    void changedActiveRecipientReenrolls_CS14()
    {
        Lane lane(log);
        QVERIFY(lane.f.startRelay());
        QVERIFY(lane.ask(kInventory, "node-a"));
        auto &recipients = lane.f.cloudly->corestoreRecipients();
        const QString first = recipients.enrolledKeyIds().value(0);
        // A registration of the relay's own session with the recipient unchanged: nothing happens.
        QVERIFY(lane.f.takeCloudlySessionDown());
        QVERIFY(lane.f.bringCloudlySessionBack());
        QTRY_COMPARE(lane.f.cloudly->callCount(kState), 1);
        QVERIFY(lane.f.settleCloudlyHop());
        QCOMPARE(lane.f.relay->statusSnapshot().corestore.recipientKeyId, first);
        QVERIFY(lane.ask(kInventory, "node-a"));
        QCOMPARE(recipients.beginCount(), 1);
        // Rotated behind the relay's back: the next registration's read drops the key.
        recipients.setActiveKeyId(QStringLiteral("relay-corestore-control:00000000-0000-4000-8000-000000000000"));
        QVERIFY(lane.f.takeCloudlySessionDown());
        QVERIFY(lane.f.bringCloudlySessionBack());
        QTRY_COMPARE(lane.f.cloudly->callCount(kState), 2);
        QTRY_COMPARE(lane.f.relay->statusSnapshot().corestore.credential, QStringLiteral("none"));
        QCOMPARE(recipients.beginCount(), 1); // not at the read: before the next call
        QCOMPARE(Lane::responseOf(lane.ask(kInventory, "node-a")).value("reachable"), QJsonValue(true));
        QCOMPARE(recipients.beginCount(), 2);
        QVERIFY(recipients.enrolledKeyIds().value(1) != first);
        QCOMPARE(lane.f.relay->statusSnapshot().corestore.recipientGeneration, 2);
    }

    // CS-03, CS-05: a pushed endpoint is adopted; a removed one stops being dialled at once, also by a
    // call already waiting on it.
    void pushedEndpointsAreAdoptedAndRemovedOnesStop_CS03_CS05()
    {
        Lane lane(log);
        QVERIFY(lane.f.startRelay());
        QCOMPARE(Lane::responseOf(lane.ask(kInventory, "node-a")).value("reachable"), QJsonValue(true));
        auto pushConfig = [&](const QJsonArray &nodes) {
            std::optional<peers::PeerFrame> answer;
            const QJsonObject cluster{{"id", "cluster-1"}, {"name", "Loopback cluster"},
                                      {"relay", QJsonObject{{"origin", lane.f.cloudly->options().relayOrigin}}}, {"nodes", nodes}};
            lane.f.cloudly->push(QStringLiteral("pushClusterConfig"), QJsonObject{{"cluster", cluster}, {"desiredState", QJsonValue::Null}},
                                 [&](const peers::PeerFrame &frame) { answer = frame; });
            (void)QTest::qWaitFor([&] { return answer.has_value(); }, 5000); // an empty answer fails the caller
            return Lane::responseOf(answer);
        };
        // node-b gets an endpoint: the next call reaches Corestore B.
        QJsonObject adopted = pushConfig(QJsonArray{nodeWithEndpoint("node-a", lane.a.endpoint()), nodeWithEndpoint("node-b", lane.b.endpoint())});
        QCOMPARE(adopted.value("adopted").toObject(), (QJsonObject{{"nodes", 2}, {"corestoreEndpoints", 2}, {"grants", 0}}));
        QCOMPARE(adopted.value("relayBlock").toString(), QStringLiteral("unchanged"));
        QCOMPARE(Lane::responseOf(lane.ask(kInventory, "node-b")).value("reachable"), QJsonValue(true));
        QCOMPARE(lane.b.requestCount(LoopbackCorestore::inventoryRoute), 1);
        // A call hanging on node A's Corestore ends the moment the endpoint is removed.
        lane.a.script(LoopbackCorestore::inventoryRoute, Behaviour::hang());
        std::optional<peers::PeerFrame> queued;
        lane.f.cloudly->push(kInventory, QJsonObject{{"nodeId", "node-a"}}, [&](const peers::PeerFrame &frame) { queued = frame; });
        QTRY_COMPARE(lane.a.requestCount(LoopbackCorestore::inventoryRoute), 2);
        QVERIFY(!queued);
        adopted = pushConfig(QJsonArray{nodeWithout("node-a"), nodeWithEndpoint("node-b", lane.b.endpoint())});
        QCOMPARE(adopted.value("adopted").toObject().value("corestoreEndpoints").toInt(), 1);
        QTRY_VERIFY(queued);
        QCOMPARE(Lane::responseOf(queued).value("code").toString(), QStringLiteral("CORESTORE_ENDPOINT_UNKNOWN"));
        QCOMPARE(Lane::responseOf(lane.ask(kInventory, "node-a")).value("code").toString(), QStringLiteral("CORESTORE_ENDPOINT_UNKNOWN"));
        QCOMPARE(lane.a.requestCount(LoopbackCorestore::inventoryRoute), 2);
        // A push that is not the contract's is refused and changes nothing.
        std::optional<peers::PeerFrame> refused;
        lane.f.cloudly->push(QStringLiteral("pushClusterConfig"), QByteArray(R"({"cluster":{"id":"c"}})"),
                             [&](const peers::PeerFrame &frame) { refused = frame; });
        QTRY_VERIFY(refused);
        QCOMPARE(refused->errorRefusal().name, QStringLiteral("request-invalid"));
        QCOMPARE(lane.f.relay->corestore()->endpointCount(), 1);
    }

    // CS-03: endpoints are adopted again after every accepted registration (getClusterConfig re-read).
    void endpointsAreAdoptedAfterAnAcceptedRegistration_CS03()
    {
        Lane lane(log);
        QVERIFY(lane.f.startRelay());
        QTRY_VERIFY(lane.f.relay->registration() && lane.f.relay->registration()->acceptedRecord());
        QCOMPARE(Lane::responseOf(lane.ask(kInventory, "node-b")).value("code").toString(), QStringLiteral("CORESTORE_ENDPOINT_UNKNOWN"));
        lane.f.cloudly->options().clusterNodes = QJsonArray{nodeWithEndpoint("node-a", lane.a.endpoint()), nodeWithEndpoint("node-b", lane.b.endpoint())};
        const int configReads = lane.f.cloudly->callCount(QStringLiteral("getClusterConfig"));
        const int registrations = lane.f.cloudly->callCount(QStringLiteral("registerClusterRelay"));
        QVERIFY(lane.f.takeCloudlySessionDown());
        QVERIFY(lane.f.bringCloudlySessionBack());
        QTRY_VERIFY(lane.f.cloudly->callCount(QStringLiteral("registerClusterRelay")) > registrations);
        QTRY_VERIFY(lane.f.cloudly->callCount(QStringLiteral("getClusterConfig")) > configReads);
        QTRY_COMPARE(lane.f.relay->corestore()->endpointCount(), 2);
        QCOMPARE(Lane::responseOf(lane.ask(kInventory, "node-b")).value("reachable"), QJsonValue(true));
        QCOMPARE(lane.b.requestCount(LoopbackCorestore::inventoryRoute), 1);
        QCOMPARE(lane.a.requestCount(LoopbackCorestore::inventoryRoute), 0);
    }

    // §15 "Bound": the 10000 ms bound is named, on the relay's clock.
    void callTimeoutIsNamed_CS61_WD04()
    {
        Lane lane(log);
        QVERIFY(lane.f.startRelay());
        QVERIFY(lane.ask(kInventory, "node-a")); // enrolled
        lane.a.script(LoopbackCorestore::inventoryRoute, Behaviour::hang());
        std::optional<peers::PeerFrame> answer;
        lane.f.cloudly->push(kInventory, QJsonObject{{"nodeId", "node-a"}}, [&](const peers::PeerFrame &frame) { answer = frame; });
        QTRY_COMPARE(lane.a.requestCount(LoopbackCorestore::inventoryRoute), 2);
        lane.f.clock.advance(9999);
        // A negative on the clock: 1 ms before the 10000 ms bound; these turns let a wrongly early answer reach Cloudly.
        QTest::qWait(50);
        QVERIFY(!answer);
        lane.f.clock.advance(1);
        QTRY_VERIFY(answer);
        QCOMPARE(Lane::responseOf(answer).value("reason").toString(),
                 QStringLiteral("CORESTORE_UNREACHABLE: GET /corestore/control/inventory on node node-a: timeout after 10000 ms"));
        QCOMPARE(Lane::responseOf(lane.ask(kInventory, "node-a")).value("reachable"), QJsonValue(true));
    }

    // CS-58, CS-59: the legacy inventory's services are passed on byte for byte (member order,
    // escapes, number spelling) after both validators.
    void legacyResourcesAreByteStable_CS58_CS59()
    {
        Lane lane(log);
        const QByteArray services =
            R"([{"serviceId":"caf\u00e9-1","resources":[{"name":"db\/main","createdAt":1700000000000,"kind":"database"}]},)"
            R"({"resources":[],"serviceId":"a"}])";
        lane.a.setLegacyResources(services);
        QVERIFY(lane.f.startRelay());
        const auto answer = lane.ask(kLegacy, "node-a");
        QVERIFY(answer);
        const QByteArray response = answer->response.toByteArray();
        QVERIFY2(response.endsWith(QByteArrayLiteral(",\"reachable\":true,\"services\":") + services + '}'), response.constData());
        QVERIFY(response.startsWith(QByteArrayLiteral("{\"nodeId\":\"node-a\",\"checkedAt\":")));
        QCOMPARE(lane.a.lastRequest(LoopbackCorestore::legacyResourcesRoute)->header("authorization"), QByteArrayLiteral("Bearer ") + lane.token);
    }

    // CS-61, CS-62: every bad answer is refused by name, lists nothing, and the relay keeps serving.
    void badAnswersAreRefusedByName_CS61_CS62_data()
    {
        QTest::addColumn<int>("kind");
        QTest::addColumn<QString>("reasonEnd");
        QTest::newRow("oversized") << 0 << "answer-too-large (over 16777216 bytes)";
        QTest::newRow("bad-json") << 1 << "unreadable answer (the body is not a JSON object)";
        QTest::newRow("truncated") << 2 << "connection closed";
        QTest::newRow("5xx") << 3 << "500";
        QTest::newRow("bad-kind") << 4 << "unreadable answer (field answer.services[0].resources[0].kind is neither database nor bucket)";
        QTest::newRow("dropped") << 5 << "connection closed";
        QTest::newRow("409") << 6 << "answered 409 on";
        // A Corestore that quotes the bearer back as its error code: the relay never quotes it on (CS-09).
        QTest::newRow("409 quoting the token") << 7 << "answered 409: withheld";
    }
    void badAnswersAreRefusedByName_CS61_CS62()
    {
        QFETCH(int, kind);
        QFETCH(QString, reasonEnd);
        Lane lane(log);
        QVERIFY(lane.f.startRelay());
        QVERIFY(lane.ask(kLegacy, "node-a")); // enrolled
        const char *route = LoopbackCorestore::legacyResourcesRoute;
        switch (kind) {
        case 0: lane.a.script(route, Behaviour::oversizedBody()); break;
        case 1: lane.a.script(route, Behaviour::badJsonBody()); break;
        case 2: lane.a.setLegacyResources(R"([{"serviceId":"s","resources":[]}])"); lane.a.script(route, Behaviour::truncatedBody()); break;
        case 3: lane.a.script(route, Behaviour::serverError(500)); break;
        case 4: lane.a.script(route, Behaviour::answer(200, R"({"services":[{"serviceId":"s","resources":[{"kind":"volume","name":"v","createdAt":1}]}]})")); break;
        // A kept-alive connection closed before any answer byte is retried once on a new one (the
        // transport's rule for GET, HttpClientPool): both drop.
        case 5: lane.a.script(route, Behaviour::dropConnection(), 2); break;
        case 6: lane.a.script(route, Behaviour::legacyConflict("legacy-adoption-conflict")); reasonEnd = "answered 409: legacy-adoption-conflict"; break;
        case 7: lane.a.script(route, Behaviour::legacyConflict(lane.token)); break;
        }
        const QJsonObject answer = Lane::responseOf(lane.ask(kLegacy, "node-a", 20000));
        QCOMPARE(answer.value("reachable"), QJsonValue(false));
        QCOMPARE(answer.value("code").toString(), QStringLiteral("CORESTORE_UNREACHABLE"));
        const QString reason = answer.value("reason").toString();
        QVERIFY2(reason.endsWith(reasonEnd), qPrintable(reason));
        QVERIFY(reason.contains(QStringLiteral("GET /corestore/control/legacy-resources on node node-a")));
        QVERIFY(!answer.contains("services"));
        // The relay still serves: the next call is answered and the relay is ready.
        lane.a.setLegacyResources("[]");
        QCOMPARE(Lane::responseOf(lane.ask(kLegacy, "node-a")).value("reachable"), QJsonValue(true));
        QVERIFY(lane.f.relay->checkReadiness().ready);
        lane.verifyTokenNowhere();
    }

    // CS-83 (with §12's intro): the node-tag routed Corestore methods stay unregistered.
    void nodeTagRoutedMethodsAreNotServed_CS83()
    {
        Lane lane(log);
        QVERIFY(lane.f.startRelay());
        for (const char *method : {"executeServiceBackup", "executeServiceRestore", "coreflowPruneNodeArchive", "coreflowGetCorestoreInventory"}) {
            const auto answer = lane.ask(QString::fromLatin1(method), "node-a");
            QVERIFY(answer);
            QCOMPARE(answer->errorRefusal().name, QStringLiteral("method-not-served"));
        }
        QCOMPARE(lane.a.totalRequestCount(), 0);
    }
};

COREFLOW_EPOLL_TEST_MAIN(TstCorestore)
#include "tst_corestore.moc"
