// Credential publication through a running relay (docs/contract.md §12.4): the relay's
// CredentialPublisher, on the relay's own Cloudly session, against the loopback Cloudly's secret
// ingress (tests/peers/cloudlysecretingress.h), which generates its recipient key pair, opens every
// sealed envelope with its secret key and checks mutation id, context and digest itself. Real TLS
// sockets on 127.0.0.1; the relay's clock is a ManualClock (a lost answer is the call's timeout,
// reached by advancing it).
// Entry point: binding reconciliation (§12.2) is another branch, so these tests call the relay's
// BindingPublication seam (Coreflow::credentialPublisher()) directly with the material a reconcile
// would have answered; everything after that call is the running relay's.
// Rules: CS-34, CS-35, CS-37..CS-46 (CS-36 is reconciliation's: nothing here reports).
#include "tests/support/epolltestmain.h"
#include "tests/integration/logcapture.h"
#include "tests/integration/relayfixture.h"

#include "service/bindings/credentialpublisher.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>
#include <QUuid>

using namespace coreflow;
using namespace coreflow::testing;
using Ingress = peers::CloudlySecretIngress;
using Kind = BindingPublicationOutcome::Kind;

namespace {

// Written out from docs/contract.md §12.4 (the peer spells them itself too).
const QString kRecipient = QStringLiteral("getSecretIngressRecipient");
const QString kPublish = QStringLiteral("publishCorestoreCredentialMaterial");
const qint64 kCallTimeoutMs = contract::RelayTiming{}.cloudlyCallTimeoutMs;

QString canary(const char *what) { return QStringLiteral("canary-%1-%2").arg(QLatin1StringView(what), QUuid::createUuid().toString(QUuid::WithoutBraces)); }

struct Lane {
    LogCapture &log;
    RelayFixture f;
    // Material canaries (CS-45 "no material"; issue 18: password, secretAccessKey, uri).
    const QString password = canary("password");
    const QString uriSecret = canary("uri");
    const QString secretAccessKey = canary("secret-access-key");
    QList<BindingPublicationOutcome> outcomes;

    explicit Lane(LogCapture &capture) : log(capture)
    {
        f.cloudly->secretIngress().setOrganization("svc-db", "org-1");
        f.cloudly->secretIngress().setOrganization("svc-s3", "org-2");
    }
    Ingress &ingress() { return f.cloudly->secretIngress(); }
    CredentialPublisher &publisher() { return *f.relay->credentialPublisher(); }

    QByteArray databaseMaterial() const
    {
        return QJsonDocument(QJsonObject{{"capability", "database"},
                                         {"endpoint", QJsonObject{{"host", "10.0.0.5"}, {"port", 27017}}},
                                         {"database", "app"},
                                         {"username", "app-user"},
                                         {"password", password},
                                         {"uri", "mongodb://app-user:" + uriSecret + "@10.0.0.5:27017/app"}})
            .toJson(QJsonDocument::Compact);
    }
    QByteArray objectStorageMaterial() const
    {
        return QJsonDocument(QJsonObject{{"capability", "objectstorage"},
                                         {"endpoint", "https://10.0.0.5:9000"},
                                         {"bucket", "media"},
                                         {"accessKeyId", "AKIA-loopback"},
                                         {"secretAccessKey", secretAccessKey},
                                         {"region", "local"}})
            .toJson(QJsonDocument::Compact);
    }
    static BindingPublicationRequest database(const QString &operation)
    {
        BindingPublicationRequest r;
        r.nodeId = "node-a";
        r.serviceId = "svc-db";
        r.bindingName = "db";
        r.capability = "database";
        r.organizationId = "org-1";
        r.clusterId = "cluster-1";
        r.grantOperation = operation;
        r.grantGeneration = 1;
        return r;
    }
    static BindingPublicationRequest objectStorage(const QString &operation)
    {
        BindingPublicationRequest r = database(operation);
        r.serviceId = "svc-s3";
        r.bindingName = "media";
        r.capability = "objectstorage";
        r.organizationId = "org-2";
        return r;
    }

    // Starts one publish and returns at once; the outcome lands in outcomes.
    void start(const BindingPublicationRequest &request, const QByteArray &material)
    {
        QByteArray copy = material; // the Secret wipes its own copy's source when it is the only owner
        copy.detach();
        publisher().publish(request, Secret(std::move(copy)), [this](const BindingPublicationOutcome &o) { outcomes.append(o); });
    }
    // One publish, waited for (real sockets; the clock does not move).
    std::optional<BindingPublicationOutcome> publish(const BindingPublicationRequest &request, const QByteArray &material)
    {
        const qsizetype before = outcomes.size();
        start(request, material);
        (void)QTest::qWaitFor([&] { return outcomes.size() != before; }, 10000);
        if (outcomes.size() == before)
            return std::nullopt;
        return outcomes.last();
    }
    QList<QByteArray> publishBodies() const
    {
        QList<QByteArray> bodies;
        for (const auto &frame : f.cloudly->requests(kPublish))
            bodies << frame.rawRequest;
        return bodies;
    }
    QStringList publicationOrder() const
    {
        QStringList order;
        for (const auto &frame : f.cloudly->frames())
            if (frame.phase == peers::Phase::Request && (frame.method == kRecipient || frame.method == kPublish))
                order << frame.method;
        return order;
    }
    QString statusJson() const
    {
        return QString::fromUtf8(QJsonDocument(f.relay->statusSnapshot().toJson()).toJson(QJsonDocument::Compact));
    }
    // The material's secrets are nowhere but inside the sealed bytes: no log line, no frame the relay
    // sent or Cloudly answered (in the clear), the status, or an outcome's refusal.
    void verifyMaterialNowhere()
    {
        for (const QString &secret : {password, uriSecret, secretAccessKey}) {
            for (const QString &line : log.lines())
                QVERIFY2(!line.contains(secret), qPrintable(line));
            for (const auto &frame : f.cloudly->frames())
                QVERIFY2(!frame.rawFrame.contains(secret.toUtf8()), qPrintable(frame.method));
            QVERIFY(!statusJson().contains(secret));
            for (const auto &outcome : outcomes)
                QVERIFY(!outcome.reason.contains(secret));
        }
    }
};

QJsonObject bodyOf(const QByteArray &raw) { return QJsonDocument::fromJson(raw).object(); }

} // namespace

class TstBindingPublication : public QObject {
    Q_OBJECT
    LogCapture log;

private Q_SLOTS:
    void init()
    {
        log.install();
        log.clear();
    }

    // CS-34, CS-35, CS-37, CS-39: the recipient is read, then the material published sealed to it under
    // the grant's mutation and the contract's context; the loopback Cloudly opens both envelopes with
    // its secret key and finds each material intact; the receipt is verified and kept. The secrets
    // appear nowhere else.
    void materialArrivesIntactAndNowhereElse_CS34_CS35_CS37_CS39()
    {
        Lane lane(log);
        QVERIFY(lane.f.startRelay());
        const auto db = lane.publish(Lane::database("grant-op-db"), lane.databaseMaterial());
        QVERIFY(db);
        QCOMPARE(db->kind, Kind::Published);
        const auto s3 = lane.publish(Lane::objectStorage("grant-op-s3"), lane.objectStorageMaterial());
        QVERIFY(s3);
        QCOMPARE(s3->kind, Kind::Published);
        QCOMPARE(lane.publicationOrder(), (QStringList{kRecipient, kPublish, kRecipient, kPublish}));
        QCOMPARE(lane.ingress().refusalsAnswered(), QStringList{});
        const auto &opened = lane.ingress().opened();
        QCOMPARE(opened.size(), 2);
        QCOMPARE(opened[0].mutationId, QStringLiteral("corestore-publication:grant-op-db"));
        QCOMPARE(opened[0].context, QStringLiteral("corestore-credential-material|cluster-1|org-1|svc-db|db|corestore-publication:grant-op-db"));
        QCOMPARE(opened[0].material, QJsonDocument::fromJson(lane.databaseMaterial()).object());
        QCOMPARE(opened[1].context,
                 QStringLiteral("corestore-credential-material|cluster-1|org-2|svc-s3|media|corestore-publication:grant-op-s3"));
        QCOMPARE(opened[1].material, QJsonDocument::fromJson(lane.objectStorageMaterial()).object());
        const QJsonObject body = bodyOf(lane.publishBodies().value(0));
        QCOMPARE(body.value("mutationId").toString(), QStringLiteral("corestore-publication:grant-op-db"));
        QCOMPARE(body.value("grantOperation").toString(), QStringLiteral("grant-op-db"));
        QCOMPARE(body.value("capability").toString(), QStringLiteral("database"));
        QCOMPARE(body.value("envelope").toObject().value("recipientKeyId").toString(), lane.ingress().recipientKeyId());
        QVERIFY(lane.publisher().holdsReceipt("grant-op-db"));
        QVERIFY(lane.publisher().holdsReceipt("grant-op-s3"));
        QCOMPARE(lane.publisher().sealsMade(), 2);
        QCOMPARE(lane.publisher().materialBytesHeld(), 0); // CS-39: ciphertext only
        lane.verifyMaterialNowhere();
    }

    // CS-40: a grant already published answers its kept receipt; nothing is read, sealed or sent again.
    void publishedGrantAnswersItsKeptReceipt_CS40()
    {
        Lane lane(log);
        QVERIFY(lane.f.startRelay());
        const auto first = lane.publish(Lane::database("grant-op-1"), lane.databaseMaterial());
        QVERIFY(first && first->kind == Kind::Published);
        for (int i = 0; i < 3; ++i) {
            const auto again = lane.publish(Lane::database("grant-op-1"), lane.databaseMaterial());
            QVERIFY(again);
            QCOMPARE(again->kind, Kind::Published);
        }
        QVERIFY(lane.f.settleCloudlyHop());
        QCOMPARE(lane.f.cloudly->callCount(kRecipient), 1);
        QCOMPARE(lane.f.cloudly->callCount(kPublish), 1);
        QCOMPARE(lane.publisher().sealsMade(), 1);
        lane.verifyMaterialNowhere();
    }

    // CS-37, CS-38, CS-42, CS-44: Cloudly commits and the answer is open — lost (the call times out on
    // the clock), the session drops, INTERNAL_ERROR (its config push failed), or a receipt the
    // validator refuses: the outcome is Retry, never failed; the request stays held (ciphertext only);
    // the next attempt sends the byte-identical request, sealed once, under the same mutation id, and
    // Cloudly answers the receipt of the envelope it committed (never a REPLAY_CONFLICT).
    void openOutcomeResendsTheIdenticalRequest_CS37_CS38_CS42_CS44_data()
    {
        QTest::addColumn<int>("step");
        QTest::addColumn<QJsonObject>("receiptFields");
        QTest::addColumn<QString>("reasonPrefix");
        QTest::addColumn<int>("ending"); // 0: answered at once, 1: the call's timeout on the clock, 2: the session comes back
        QTest::newRow("lost answer") << int(Ingress::Step::SilenceAfterCommit) << QJsonObject{} << QStringLiteral("cloudly-forward-timeout: ") << 1;
        QTest::newRow("dropped session") << int(Ingress::Step::DropAfterCommit) << QJsonObject{} << QStringLiteral("cloudly-session-lost: ") << 2;
        QTest::newRow("INTERNAL_ERROR") << int(Ingress::Step::InternalErrorAfterCommit) << QJsonObject{} << QStringLiteral("INTERNAL_ERROR: ") << 0;
        QTest::newRow("refused receipt") << int(Ingress::Step::BadReceipt) << QJsonObject{{"clusterId", "cluster-9"}}
                                         << QStringLiteral("corestore-publication-receipt-refused: ") << 0;
    }
    void openOutcomeResendsTheIdenticalRequest_CS37_CS38_CS42_CS44()
    {
        QFETCH(int, step);
        QFETCH(QJsonObject, receiptFields);
        QFETCH(QString, reasonPrefix);
        QFETCH(int, ending);
        Lane lane(log);
        QVERIFY(lane.f.startRelay());
        lane.ingress().scriptPublish(Ingress::Step(step), {}, receiptFields);
        lane.start(Lane::database("grant-op-open"), lane.databaseMaterial());
        QTRY_COMPARE(lane.f.cloudly->callCount(kPublish), 1);
        if (ending == 1) {
            QVERIFY(lane.f.settleCloudlyHop());
            QVERIFY(lane.outcomes.isEmpty());
            lane.f.clock.advance(kCallTimeoutMs + 1);
        }
        QTRY_COMPARE(lane.outcomes.size(), 1);
        QCOMPARE(lane.outcomes[0].kind, Kind::Retry);
        QVERIFY2(lane.outcomes[0].reason.startsWith(reasonPrefix), qPrintable(lane.outcomes[0].reason));
        QVERIFY(lane.publisher().holdsRequest("grant-op-open"));
        QVERIFY(!lane.publisher().holdsReceipt("grant-op-open"));
        QCOMPARE(lane.publisher().materialBytesHeld(), 0); // CS-39: the held request is ciphertext only
        if (ending == 2)
            QVERIFY(lane.f.bringCloudlySessionBack());
        const auto again = lane.publish(Lane::database("grant-op-open"), lane.databaseMaterial());
        QVERIFY(again);
        QCOMPARE(again->kind, Kind::Published);
        QVERIFY(lane.publisher().holdsReceipt("grant-op-open"));
        const auto bodies = lane.publishBodies();
        QCOMPARE(bodies.size(), 2);
        QCOMPARE(bodies[1], bodies[0]); // byte-identical (CS-38), never resealed (CS-44)
        QCOMPARE(bodyOf(bodies[0]).value("mutationId").toString(), QStringLiteral("corestore-publication:grant-op-open")); // CS-37
        QCOMPARE(lane.f.cloudly->callCount(kRecipient), 1);
        QCOMPARE(lane.publisher().sealsMade(), 1);
        QCOMPARE(lane.ingress().committed().size(), 1);
        QVERIFY(!lane.ingress().refusalsAnswered().contains(QStringLiteral("REPLAY_CONFLICT")));
        lane.verifyMaterialNowhere();
    }

    // CS-43: REPLAY_CONFLICT marks the grant committed: no further seal or send under it, a warning
    // naming the grant operation on that and every later attempt, never failed.
    void replayConflictSendsNothingMore_CS43()
    {
        Lane lane(log);
        QVERIFY(lane.f.startRelay());
        lane.ingress().scriptPublish(Ingress::Step::ReplayConflict);
        const auto first = lane.publish(Lane::database("grant-op-rc"), lane.databaseMaterial());
        QVERIFY(first);
        QCOMPARE(first->kind, Kind::Committed);
        for (int i = 0; i < 2; ++i) {
            const auto again = lane.publish(Lane::database("grant-op-rc"), lane.databaseMaterial());
            QVERIFY(again);
            QCOMPARE(again->kind, Kind::Committed);
        }
        QVERIFY(lane.f.settleCloudlyHop());
        QCOMPARE(lane.f.cloudly->callCount(kPublish), 1);
        QCOMPARE(lane.f.cloudly->callCount(kRecipient), 1);
        QCOMPARE(lane.publisher().sealsMade(), 1);
        QVERIFY(lane.publisher().isMarkedCommitted("grant-op-rc"));
        QVERIFY(!lane.publisher().holdsRequest("grant-op-rc"));
        int warnings = 0;
        for (const QString &line : log.lines())
            if (line.startsWith("warning coreflow.bindings: corestore-publication-replay-conflict:") && line.contains("grant grant-op-rc"))
                ++warnings;
        QCOMPARE(warnings, 3);
        lane.verifyMaterialNowhere();
    }

    // CS-43 as it happens: a restarted relay lost the request it held while the grant is still on the
    // push; it seals afresh, and Cloudly, holding the first envelope under that mutation, answers
    // REPLAY_CONFLICT (no script: the loopback Cloudly's own replay rule).
    void restartedRelayMeetsReplayConflict_CS43()
    {
        Lane lane(log);
        QVERIFY(lane.f.startRelay());
        QCOMPARE(lane.publish(Lane::database("grant-op-restart"), lane.databaseMaterial())->kind, Kind::Published);
        QVERIFY(lane.f.stopRelay());
        lane.f.relay.reset();
        QVERIFY(lane.f.startRelay());
        const auto after = lane.publish(Lane::database("grant-op-restart"), lane.databaseMaterial());
        QVERIFY(after);
        QCOMPARE(after->kind, Kind::Committed);
        QCOMPARE(lane.ingress().refusalsAnswered(), QStringList{"REPLAY_CONFLICT"});
        QCOMPARE(lane.publish(Lane::database("grant-op-restart"), lane.databaseMaterial())->kind, Kind::Committed);
        QVERIFY(lane.f.settleCloudlyHop());
        QCOMPARE(lane.f.cloudly->callCount(kPublish), 2);
        lane.verifyMaterialNowhere();
    }

    // CS-35, CS-44, CS-45: a receipt for another cluster, organization and mutation is refused: one
    // error line with the grant operation, every reason and each misstated member expected vs
    // received, no material; never failed; the request stays held.
    void refusedReceiptIsLoggedAtErrorLevel_CS35_CS44_CS45()
    {
        Lane lane(log);
        QVERIFY(lane.f.startRelay());
        lane.ingress().scriptPublish(Ingress::Step::BadReceipt, {},
                                     QJsonObject{{"clusterId", "cluster-9"},
                                                 {"organizationId", "org-9"},
                                                 {"mutationId", "corestore-publication:grant-op-9"}});
        const auto first = lane.publish(Lane::database("grant-op-br"), lane.databaseMaterial());
        QVERIFY(first);
        QCOMPARE(first->kind, Kind::Retry); // never failed (CS-44)
        QVERIFY2(first->reason.startsWith("corestore-publication-receipt-refused: "), qPrintable(first->reason));
        QVERIFY(!lane.publisher().holdsReceipt("grant-op-br"));
        QVERIFY(lane.publisher().holdsRequest("grant-op-br"));
        QStringList errors;
        for (const QString &line : log.lines())
            if (line.startsWith("critical coreflow.bindings: corestore-publication-receipt-refused:"))
                errors << line;
        QCOMPARE(errors.size(), 1);
        const QString line = errors[0];
        QVERIFY2(line.contains("grant grant-op-br"), qPrintable(line));
        QVERIFY2(line.contains("the receipt names another mutation"), qPrintable(line));
        QVERIFY2(line.contains("the receipt names another organization"), qPrintable(line));
        QVERIFY2(line.contains("the receipt names another cluster"), qPrintable(line));
        QVERIFY2(line.contains("mutationId expected corestore-publication:grant-op-br received corestore-publication:grant-op-9"),
                 qPrintable(line));
        QVERIFY2(line.contains("organizationId expected org-1 received org-9"), qPrintable(line));
        QVERIFY2(line.contains("clusterId expected cluster-1 received cluster-9"), qPrintable(line));
        QVERIFY2(!line.contains("envelopeDigest expected"), qPrintable(line)); // the digest was right
        lane.verifyMaterialNowhere(); // the resend: openOutcomeResendsTheIdenticalRequest's "refused receipt" row
    }

    // CS-41: a named refusal (GRANT_NOT_ACTIVE) drops the held request and is failed; the next attempt
    // reads the recipient again and seals afresh, to the rotated recipient.
    void namedRefusalDropsTheRequestAndSealsAfresh_CS41()
    {
        Lane lane(log);
        QVERIFY(lane.f.startRelay());
        lane.ingress().scriptPublish(Ingress::Step::Refuse, "GRANT_NOT_ACTIVE");
        const auto first = lane.publish(Lane::database("grant-op-na"), lane.databaseMaterial());
        QVERIFY(first);
        QCOMPARE(first->kind, Kind::Failed);
        QVERIFY2(first->reason.startsWith("GRANT_NOT_ACTIVE: "), qPrintable(first->reason));
        QVERIFY(!lane.publisher().holdsRequest("grant-op-na"));
        const QString firstKey = lane.ingress().recipientKeyId();
        lane.ingress().rotateRecipient();
        const auto again = lane.publish(Lane::database("grant-op-na"), lane.databaseMaterial());
        QVERIFY(again);
        QCOMPARE(again->kind, Kind::Published);
        QCOMPARE(lane.f.cloudly->callCount(kRecipient), 2);
        QCOMPARE(lane.publisher().sealsMade(), 2);
        const auto bodies = lane.publishBodies();
        QCOMPARE(bodies.size(), 2);
        QVERIFY(bodies[1] != bodies[0]);
        QCOMPARE(bodyOf(bodies[0]).value("envelope").toObject().value("recipientKeyId").toString(), firstKey);
        QCOMPARE(bodyOf(bodies[1]).value("envelope").toObject().value("recipientKeyId").toString(), lane.ingress().recipientKeyId());
        QVERIFY(firstKey != lane.ingress().recipientKeyId());
        QCOMPARE(bodyOf(bodies[1]).value("mutationId"), bodyOf(bodies[0]).value("mutationId")); // CS-37
        lane.verifyMaterialNowhere();
    }

    // CS-46: failures before any request is held are failed: a service without an organization or a
    // cluster (nothing is asked of Cloudly), unusable material, a refused recipient read.
    void failuresBeforeARequestIsHeldAreFailed_CS46()
    {
        Lane lane(log);
        QVERIFY(lane.f.startRelay());
        auto unbound = Lane::database("grant-op-unbound");
        unbound.organizationId.clear();
        lane.start(unbound, lane.databaseMaterial());
        QVERIFY(lane.outcomes.isEmpty()); // the seam: done() never runs inside publish()
        QTRY_COMPARE(lane.outcomes.size(), 1);
        const auto noOrganization = lane.publish(unbound, lane.databaseMaterial());
        QVERIFY(noOrganization);
        QCOMPARE(noOrganization->kind, Kind::Failed);
        QVERIFY2(noOrganization->reason.startsWith("publication-unbound: "), qPrintable(noOrganization->reason));
        unbound = Lane::database("grant-op-unbound");
        unbound.clusterId.clear();
        QVERIFY(lane.publish(unbound, lane.databaseMaterial())->reason.startsWith("publication-unbound: "));
        const QByteArray notAnObject = "[\"" + lane.password.toUtf8() + "\"]";
        const auto unusable = lane.publish(Lane::database("grant-op-unusable"), notAnObject);
        QVERIFY(unusable);
        QCOMPARE(unusable->kind, Kind::Failed);
        QVERIFY2(unusable->reason.startsWith("publication-material-unusable: "), qPrintable(unusable->reason));
        QVERIFY(lane.f.settleCloudlyHop());
        QCOMPARE(lane.f.cloudly->callCount(kRecipient), 0);
        lane.ingress().refuseRecipient("NOT_FOUND");
        const auto noRecipient = lane.publish(Lane::database("grant-op-nr"), lane.databaseMaterial());
        QVERIFY(noRecipient);
        QCOMPARE(noRecipient->kind, Kind::Failed);
        QVERIFY2(noRecipient->reason.startsWith("NOT_FOUND: "), qPrintable(noRecipient->reason));
        QVERIFY(!lane.publisher().holdsRequest("grant-op-nr"));
        // A recipient read without an answer: the material waits in guarded memory, then the bound
        // ends the attempt as failed and the material is gone with it.
        lane.ingress().refuseRecipient({});
        lane.f.cloudly->setAnswer(kRecipient, peers::Answer::silence());
        lane.start(Lane::database("grant-op-silent"), lane.databaseMaterial());
        QTRY_COMPARE(lane.f.cloudly->callCount(kRecipient), 2);
        QCOMPARE(lane.publisher().materialBytesHeld(), lane.databaseMaterial().size());
        const qsizetype before = lane.outcomes.size();
        lane.f.clock.advance(kCallTimeoutMs + 1);
        QTRY_COMPARE(lane.outcomes.size(), before + 1);
        QCOMPARE(lane.outcomes.last().kind, Kind::Failed);
        QVERIFY2(lane.outcomes.last().reason.startsWith("cloudly-forward-timeout: "), qPrintable(lane.outcomes.last().reason));
        QCOMPARE(lane.publisher().materialBytesHeld(), 0);
        QCOMPARE(lane.f.cloudly->callCount(kPublish), 0);
        QCOMPARE(lane.publisher().heldCount(), 0);
        lane.verifyMaterialNowhere();
    }

    // CS-40: publishes of one grant made while its first attempt runs share it: one recipient read, one
    // seal, one request, every caller answered once with its outcome.
    void concurrentPublishesShareOneAttempt_CS40()
    {
        Lane lane(log);
        QVERIFY(lane.f.startRelay());
        for (int i = 0; i < 3; ++i)
            lane.start(Lane::database("grant-op-shared"), lane.databaseMaterial());
        QTRY_COMPARE(lane.outcomes.size(), 3);
        for (const auto &outcome : lane.outcomes)
            QCOMPARE(outcome.kind, Kind::Published);
        QVERIFY(lane.f.settleCloudlyHop());
        QCOMPARE(lane.f.cloudly->callCount(kRecipient), 1);
        QCOMPARE(lane.f.cloudly->callCount(kPublish), 1);
        QCOMPARE(lane.publisher().sealsMade(), 1);
        lane.verifyMaterialNowhere();
    }

    // CS-39: forget() (the grant left the config push) releases the held request and receipt; an
    // answer arriving for a forgotten grant changes nothing.
    void forgetReleasesWhatIsHeld_CS39()
    {
        Lane lane(log);
        QVERIFY(lane.f.startRelay());
        QCOMPARE(lane.publish(Lane::database("grant-op-f1"), lane.databaseMaterial())->kind, Kind::Published);
        QVERIFY(lane.publisher().holdsReceipt("grant-op-f1"));
        lane.publisher().forget("grant-op-f1");
        QVERIFY(!lane.publisher().holdsReceipt("grant-op-f1"));
        QVERIFY(!lane.publisher().holdsRequest("grant-op-f1"));
        QCOMPARE(lane.publisher().heldCount(), 0);
        // Forgotten while its publish is under way: the late answer is dropped.
        lane.ingress().scriptPublish(Ingress::Step::SilenceAfterCommit);
        lane.start(Lane::database("grant-op-f2"), lane.databaseMaterial());
        QTRY_COMPARE(lane.f.cloudly->callCount(kPublish), 2);
        const qsizetype before = lane.outcomes.size();
        lane.publisher().forget("grant-op-f2");
        QTRY_COMPARE(lane.outcomes.size(), before + 1); // answered once, Retry: never failed
        QCOMPARE(lane.outcomes.last().kind, Kind::Retry);
        QVERIFY2(lane.outcomes.last().reason.startsWith("publication-forgotten: "), qPrintable(lane.outcomes.last().reason));
        lane.f.clock.advance(kCallTimeoutMs + 1);
        QVERIFY(lane.f.settleCloudlyHop());
        QCOMPARE(lane.outcomes.size(), before + 1);
        QCOMPARE(lane.publisher().heldCount(), 0);
        lane.verifyMaterialNowhere();
    }
};

COREFLOW_EPOLL_TEST_MAIN(TstBindingPublication)
#include "tst_bindingpublication.moc"
