// Protocol negotiation on both hops, relay registration, readiness and parking (docs/contract.md §2, §6.6,
// §6.6.1).
// Rules: PV-02, PV-03, PV-05..PV-10, PV-12..PV-24, RR-01..RR-10, RR-15, RR-16, RR-18..RR-20, RR-23,
// RR-25..RR-33, ON-01.
#include "tests/support/epolltestmain.h"
#include "tests/integration/logcapture.h"
#include "tests/integration/relayfixture.h"
#include "shared/contract/refusalnames.h"

#include "service/core/readinessboard.h"
#include "service/cloudly/cloudlyconnector.h"
#include "service/registration/relayregistration.h"

#include <QJsonDocument>
#include <QSignalSpy>
#include <QTest>

using namespace coreflow;
using namespace coreflow::testing;
using coreflow::peers::Answer;

namespace {
QJsonObject bodyOf(const peers::ReceivedFrame &frame) { return QJsonDocument::fromJson(frame.rawRequest).object(); }

Answer acceptance(const QString &origin, const QString &credentialId, qint64 credentialGeneration, qint64 recordGeneration,
                  const QString &release = QStringLiteral("33.1.0"))
{
    return Answer::respond(QJsonObject{
        {"offer", QJsonObject{{"sessionKind", "cloudlyClient"}, {"release", release}}},
        {"origin", origin},
        {"credential", QJsonObject{{"id", credentialId}, {"generation", double(credentialGeneration)}}},
        {"registration", QJsonObject{{"id", "relay-registration-1"}, {"generation", double(recordGeneration)}}}});
}

QStringList lines(const Readiness &r)
{
    QStringList out;
    for (const auto &x : r.refusals)
        out << x.hop + ": " + x.line;
    return out;
}
} // namespace

class TstRegistration : public QObject {
    Q_OBJECT
    LogCapture log;

    static void renewIdentity(RelayFixture &f)
    {
        const qint64 due = f.relay->cloudly()->identityRenewalDueMs();
        QVERIFY(due > 0);
        const int before = f.cloudly->callCount("registerCloudlyClientSession");
        f.clock.advance(due - f.clock.nowMs());
        QTRY_COMPARE(f.cloudly->callCount("registerCloudlyClientSession"), before + 1);
        // The relay has processed the answer once the next renewal is armed again.
        QTRY_VERIFY(f.relay->cloudly()->identityRenewalDueMs() > due || f.relay->cloudly()->isParked());
    }

    static void reconnect(RelayFixture &f)
    {
        const int before = f.cloudly->callCount("registerCloudlyClientSession");
        f.cloudly->dropRelaySockets();
        (void)QTest::qWaitFor([&] {
            const qint64 due = f.relay->cloudly()->reconnectDueMs();
            if (due > 0)
                f.clock.advance(due - f.clock.nowMs());
            return f.cloudly->callCount("registerCloudlyClientSession") != before;
        }, 4000);
        QTRY_VERIFY(f.relay->cloudly()->isDispatchable());
    }

private Q_SLOTS:
    void init()
    {
        log.install();
        log.clear();
    }

    // RR-01..RR-03, RR-05, RR-07, RR-08, RR-10, RR-22, PV-02: sent after open, on every reconnect and
    // every identity renewal; the bound endpoint verbatim; the same offer as the session registration.
    void registersOnEveryRegistrationOfItsSession_RR01_RR02_RR08()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        QTRY_COMPARE(f.cloudly->callCount("registerClusterRelay"), 1);
        QTRY_VERIFY(f.relay->checkReadiness().ready);
        renewIdentity(f);
        QTRY_COMPARE(f.cloudly->callCount("registerClusterRelay"), 2);
        reconnect(f);
        QTRY_COMPARE(f.cloudly->callCount("registerClusterRelay"), 3);
        const auto sent = f.cloudly->requests("registerClusterRelay");
        for (int i = 0; i < sent.size(); ++i) {
            const QJsonObject body = bodyOf(sent.at(i));
            QCOMPARE(body.keys(), (QStringList{"offer", "registrationSequence", "relay"}));
            QCOMPARE(body.value("registrationSequence").toInt(), i);
            const QJsonObject relay = body.value("relay").toObject();
            QCOMPARE(relay.keys(), (QStringList{"listenAddress", "listenPort", "nodeId", "version"}));
            QCOMPARE(relay.value("version").toString(), QStringLiteral("0.1.0"));
            QCOMPARE(relay.value("nodeId").toString(), QStringLiteral("node-relay"));
            QCOMPARE(relay.value("listenAddress").toString(), QStringLiteral("127.0.0.1"));
            QCOMPARE(relay.value("listenPort").toInt(), int(f.relayPort));
            QVERIFY(!sent.at(i).rawRequest.contains(f.bearer));
        }
        // PV-02: one offer source for both carriers.
        const QJsonObject sessionOffer = bodyOf(*f.cloudly->lastRequest("registerCloudlyClientSession")).value("offer").toObject();
        QCOMPARE(bodyOf(sent.first()).value("offer").toObject(), sessionOffer);
        QCOMPARE(sessionOffer.value("release").toString(), QStringLiteral("33.1.0"));
        // RR-24: the credential is pinned and stated once (id and generation only).
        QCOMPARE(log.count("this relay is bound to cluster relay credential relay-credential-1 generation 1"), 1);
        QCOMPARE(f.relay->statusSnapshot().cloudly.credentialId, QStringLiteral("relay-credential-1"));
    }

    // RR-04: no relay block, no listener, no registration.
    void noRelayBlockRegistersNothing_RR04()
    {
        RelayFixture f(false);
        QVERIFY(f.startRelay());
        QVERIFY(f.settleCloudlyHop());
        QCOMPARE(f.cloudly->callCount("registerClusterRelay"), 0);
    }

    // RR-08: the sequence restarts at 0 with the process (a new composition root).
    void sequenceRestartsPerProcess_RR08()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        QTRY_COMPARE(f.cloudly->callCount("registerClusterRelay"), 1);
        QVERIFY(f.stopRelay());
        f.relay.reset();
        QVERIFY(f.startRelay());
        QTRY_COMPARE(f.cloudly->callCount("registerClusterRelay"), 2);
        QCOMPARE(bodyOf(f.cloudly->requests("registerClusterRelay").last()).value("registrationSequence").toInt(), 0);
    }

    // RR-15, RR-16, RR-18, RR-19, RR-33: each refusal is logged by name, nothing is torn down, and the
    // relay registers again on its next renewal.
    void refusalsAreLoggedAndChangeNothing_RR15_data()
    {
        QTest::addColumn<QString>("name");
        for (const char *n : {"relay-cluster-not-enabled", "relay-node-foreign", "relay-node-unknown", "relay-identity-unverified",
                              "relay-sequence-not-advancing"})
            QTest::newRow(n) << QString::fromLatin1(n);
    }
    void refusalsAreLoggedAndChangeNothing_RR15()
    {
        QFETCH(QString, name);
        RelayFixture f;
        f.cloudly->setAnswer("registerClusterRelay", Answer::refuse(QLatin1StringView(name.toLatin1()), "by the test"));
        QVERIFY(f.startRelay());
        auto node = f.registeredNode("node-a");
        QTRY_VERIFY(log.count("registerClusterRelay refused: " + name) == 1);
        if (name == "relay-node-unknown")
            QVERIFY(log.contains("spark enrollnode"));
        // Nodes keep being served (RR-16).
        bool acked = false;
        f.cloudly->push("applyRuntimeAssignment", QJsonObject{{"session", node->session()->toJson()}},
                        [&](const peers::PeerFrame &x) { acked = !x.hasError(); });
        QTRY_VERIFY(acked);
        QVERIFY(f.relay->cloudly()->isDispatchable());
        // Not parked, no cadence: the next renewal registers again (RR-19), and an acceptance then holds (RR-33).
        QCOMPARE(f.relay->registration()->retryDueMs(), 0);
        f.cloudly->setAnswer("registerClusterRelay", Answer::useDefault());
        renewIdentity(f);
        QTRY_COMPARE(f.cloudly->callCount("registerClusterRelay"), 2);
        QTRY_VERIFY(f.relay->registration()->acceptedRecord().has_value());
        QVERIFY(!f.relay->readiness()->isParked());
    }

    // RR-06, PV-10, PV-11, PV-12, PV-19, PV-22, PV-23: a protocol refusal of the registration carrier
    // keeps everything, states both offers, and is offered again every 300000 ms until Cloudly serves it.
    void protocolRefusalIsReofferedEvery300000_PV22_RR06()
    {
        RelayFixture f;
        peers::PeerRefusal refused{QStringLiteral("protocol-offer-refused"), QStringLiteral("Cloudly serves 34.x only"),
                                  QJsonObject{{"peerOffer", QJsonObject{{"sessionKind", "cloudlyClient"}, {"release", "33.1.0"}}},
                                              {"ownOffer", QJsonObject{{"sessionKind", "cloudlyClient"}, {"release", "34.0.0"}}}}};
        f.cloudly->setAnswer("registerClusterRelay", Answer::refuse(refused));
        QVERIFY(f.startRelay());
        auto node = f.registeredNode("node-a");
        QTRY_VERIFY(!f.relay->checkReadiness().ready);
        const Readiness r = f.relay->checkReadiness();
        QCOMPARE(r.refusals.size(), 1);
        QCOMPARE(r.refusals.first().hop, QStringLiteral("registration"));
        QCOMPARE(r.refusals.first().peerOffer.value_or(""), QStringLiteral("cloudlyClient@34.0.0"));
        QCOMPARE(r.refusals.first().ownOffer.value_or(""), QStringLiteral("cloudlyClient@33.1.0"));
        const qint64 due = f.relay->registration()->retryDueMs();
        QVERIFY(due > 0);
        QCOMPARE(due - f.clock.nowMs(), 300000); // (no time passed since the refusal on the ManualClock)
        f.clock.advance(299999);
        QVERIFY(f.settleCloudlyHop());
        QCOMPARE(f.cloudly->callCount("registerClusterRelay"), 1);
        f.cloudly->setAnswer("registerClusterRelay", Answer::useDefault()); // Cloudly upgraded
        f.clock.advance(1);
        QTRY_COMPARE(f.cloudly->callCount("registerClusterRelay"), 2);
        QTRY_VERIFY(f.relay->checkReadiness().ready);
        QVERIFY(node->isConnected()); // nothing was torn down
        QCOMPARE(f.cloudly->totalConnections(), 1);
    }

    // RR-23, RR-26, RR-27, PV-20, PV-21: acceptances that do not hold are not acceptances: readiness
    // names the carrier with null offers, nodes stay served, the offer repeats at the cadence.
    void acceptancesThatDoNotHold_RR26_RR27_data()
    {
        QTest::addColumn<QString>("scenario");
        QTest::addColumn<QString>("linePart");
        QTest::newRow("no credential reference") << "noref" << "response.credential is missing";
        QTest::newRow("extra key") << "extra" << "response.roster is unknown";
        QTest::newRow("no origin") << "noorigin" << "response.origin is missing";
        QTest::newRow("record does not advance") << "stale-record" << "does not advance";
    }
    void acceptancesThatDoNotHold_RR26_RR27()
    {
        QFETCH(QString, scenario);
        QFETCH(QString, linePart);
        RelayFixture f;
        const QString origin = QStringLiteral("https://localhost:%1").arg(f.relayPort);
        QVERIFY(f.startRelay());
        QTRY_VERIFY(f.relay->registration()->acceptedRecord().has_value()); // record generation 1 pinned
        QJsonObject body{{"offer", QJsonObject{{"sessionKind", "cloudlyClient"}, {"release", "33.1.0"}}},
                         {"origin", origin},
                         {"credential", QJsonObject{{"id", "relay-credential-1"}, {"generation", 1}}},
                         {"registration", QJsonObject{{"id", "relay-registration-1"}, {"generation", 7}}}};
        if (scenario == "noref")
            body.remove("credential");
        else if (scenario == "extra")
            body.insert("roster", QJsonArray{});
        else if (scenario == "noorigin")
            body.remove("origin");
        else if (scenario == "stale-record")
            body.insert("registration", QJsonObject{{"id", "relay-registration-1"}, {"generation", 1}});
        f.cloudly->setAnswer("registerClusterRelay", Answer::respond(body));
        auto node = f.registeredNode("node-a");
        renewIdentity(f);
        QTRY_VERIFY(!f.relay->checkReadiness().ready);
        const Readiness r = f.relay->checkReadiness();
        QCOMPARE(r.refusals.size(), 1);
        QCOMPARE(r.refusals.first().hop, QStringLiteral("registration"));
        QVERIFY(!r.refusals.first().peerOffer.has_value());
        QVERIFY(!r.refusals.first().ownOffer.has_value());
        QVERIFY2(r.refusals.first().line.contains(linePart), qPrintable(r.refusals.first().line));
        QVERIFY(!f.relay->readiness()->isParked());
        QCOMPARE(f.relay->registration()->retryDueMs() - f.clock.nowMs(), 300000);
        bool acked = false;
        f.cloudly->push("applyRuntimeAssignment", QJsonObject{{"session", node->session()->toJson()}},
                        [&](const peers::PeerFrame &x) { acked = !x.hasError(); });
        QTRY_VERIFY(acked);
        // PV-21: a servable answer ends it.
        f.cloudly->setAnswer("registerClusterRelay", acceptance(origin, "relay-credential-1", 1, 9));
        f.clock.advance(300000);
        QTRY_VERIFY(f.relay->checkReadiness().ready);
    }

    // RR-20: an accepted origin that differs from the served one is a warning naming both.
    void originMismatchWarns_RR20()
    {
        RelayFixture f;
        f.cloudly->setAnswer("registerClusterRelay", acceptance("https://relay.elsewhere.example:8443", "relay-credential-1", 1, 1));
        QVERIFY(f.startRelay());
        QTRY_VERIFY(log.contains("Cloudly published origin https://relay.elsewhere.example:8443"));
        QVERIFY(log.contains(QStringLiteral("this relay serves https://localhost:%1").arg(f.relayPort)));
        QVERIFY(f.relay->checkReadiness().ready);
    }

    // RR-28, RR-29, RR-30, RR-31, RR-32, PV-14..PV-18: both carriers of a superseded generation park
    // the relay for the rest of the process, stated once; everything it carries keeps running.
    void superseededGenerationParks_RR28_RR29_PV16_PV17_OV12_data()
    {
        QTest::addColumn<QString>("carrier");
        QTest::newRow("refusal relay-credential-generation-stale RR-29") << "refusal";
        QTest::newRow("acceptance naming another generation RR-28") << "acceptance";
    }
    void superseededGenerationParks_RR28_RR29_PV16_PV17_OV12()
    {
        QFETCH(QString, carrier);
        RelayFixture f;
        QVERIFY(f.startRelay());
        QTRY_VERIFY(f.relay->registration()->pinnedCredential().has_value());
        auto node = f.registeredNode("node-a");
        if (carrier == "refusal")
            f.cloudly->setAnswer("registerClusterRelay", Answer::refuse(QLatin1StringView("relay-credential-generation-stale"), "rotated"));
        else
            f.cloudly->setRelayCredential("relay-credential-1", 2); // Cloudly rotated the generation
        renewIdentity(f);
        QTRY_VERIFY(f.relay->readiness()->isParked());
        const QString line = f.relay->readiness()->parkedLine();
        QVERIFY(line.contains("relay-credential-1 generation 1"));
        QVERIFY(line.contains("only a restart holding the bearer of the current generation"));
        QCOMPARE(log.count(line), 1);
        const Readiness r = f.relay->checkReadiness();
        QVERIFY(!r.ready);
        QVERIFY(lines(r).contains("registration: " + line));
        const auto snapshot = f.relay->statusSnapshot();
        QVERIFY(snapshot.parked);
        QCOMPARE(snapshot.parkedLine, line);
        // No renewal and no cadence any more (PV-15, RR-31).
        QCOMPARE(f.relay->cloudly()->identityRenewalDueMs(), 0);
        QCOMPARE(f.relay->registration()->retryDueMs(), 0);
        const int registrations = f.cloudly->callCount("registerClusterRelay");
        const int refreshes = f.cloudly->callCount("refreshClusterIdentity");
        f.clock.advance(4 * 3600 * 1000);
        QVERIFY(f.settleCloudlyHop());
        QCOMPARE(f.cloudly->callCount("registerClusterRelay"), registrations);
        // PV-17: the readiness answer stays that same line for the rest of the process.
        QVERIFY(!f.relay->checkReadiness().ready);
        QVERIFY(lines(f.relay->checkReadiness()).contains("registration: " + line));
        QCOMPARE(f.cloudly->callCount("refreshClusterIdentity"), refreshes);
        // Everything it carries keeps running (RR-32, PV-18): the socket, the node, the pushes.
        QVERIFY(f.relay->cloudly()->isDispatchable());
        bool acked = false;
        f.cloudly->push("applyRuntimeAssignment", QJsonObject{{"session", node->session()->toJson()}},
                        [&](const peers::PeerFrame &x) { acked = !x.hasError(); });
        QTRY_VERIFY(acked);
        QCOMPARE(log.count(line), 1); // still stated once
    }

    // WD-01: the relay renews its Cloudly identity before the identity expires. RR-02: that renewal, on
    // the unbroken socket, also sends registerClusterRelay again.
    void identityIsRenewedBeforeExpiryAndRegistersAgain_WD01_RR02()
    {
        RelayFixture f;
        f.cloudly->options().identityLifetimeMs = 60000;
        QVERIFY(f.startRelay());
        QTRY_VERIFY(f.relay->registration()->acceptedRecord().has_value());
        const qint64 expiresAt = qint64(f.cloudly->issuedIdentities().last().value("expiresAt").toDouble());
        const qint64 due = f.relay->cloudly()->identityRenewalDueMs();
        QVERIFY(due > f.clock.nowMs());
        QVERIFY2(due < expiresAt, qPrintable(QStringLiteral("renewal due %1, identity expires %2").arg(due).arg(expiresAt)));
        const int registrations = f.cloudly->callCount("registerClusterRelay");
        const int sessions = f.cloudly->callCount("registerCloudlyClientSession");
        renewIdentity(f);
        QVERIFY(f.clock.nowMs() < expiresAt);
        QCOMPARE(f.cloudly->callCount("registerCloudlyClientSession"), sessions + 1);
        QTRY_COMPARE(f.cloudly->callCount("registerClusterRelay"), registrations + 1);
    }

    // RR-21: an acceptance always carries an origin; Cloudly's own acceptance with the origin taken out
    // is not taken as accepted (an un-enabled cluster is relay-cluster-not-enabled instead, which
    // refusalsAreLoggedAndChangeNothing_RR15 covers).
    void acceptanceWithoutOriginIsNotAccepted_RR21()
    {
        RelayFixture f;
        peers::LoopbackCloudly *cloudly = f.cloudly.get();
        cloudly->setHandler("registerClusterRelay", [cloudly](const peers::PeerFrame &frame, const QJsonObject &request) {
            const peers::Answer accepted = cloudly->defaultAnswer(frame, request);
            QJsonObject response = QJsonDocument::fromJson(accepted.rawResponse).object();
            response.remove("origin");
            return peers::Answer::respond(response);
        });
        QVERIFY(f.startRelay());
        QTRY_COMPARE(f.cloudly->callCount("registerClusterRelay"), 1);
        QVERIFY(f.settleCloudlyHop());
        QVERIFY(!f.relay->registration()->acceptedRecord().has_value());
        QVERIFY(!f.relay->registration()->pinnedCredential().has_value());
        const Readiness r = f.relay->checkReadiness();
        QVERIFY(!r.ready);
        QVERIFY2(lines(r).join('\n').contains("origin"), qPrintable(lines(r).join('\n')));
    }

    // RR-09: one registration in flight at a time, however many renewals arrive meanwhile.
    // docs/contract.md §6.6.1: the stale-generation refusal parks also before any acceptance pinned a
    // credential, with the park line that names no credential.
    void staleGenerationParksBeforeAnyPin_RR29_D17()
    {
        RelayFixture f;
        f.cloudly->setAnswer("registerClusterRelay", Answer::refuse(QLatin1StringView("relay-credential-generation-stale"), "rotated"));
        QVERIFY(f.startRelay());
        QTRY_VERIFY(f.relay->readiness()->isParked());
        QVERIFY(!f.relay->registration()->pinnedCredential().has_value());
        const QString line = QStringLiteral(
            "relay parked: Cloudly no longer accepts the cluster relay credential generation this relay holds; "
            "only a restart holding the bearer of the current generation serves this cluster again");
        QCOMPARE(f.relay->readiness()->parkedLine(), line);
        QCOMPARE(log.count(line), 1);
        const auto snapshot = f.relay->statusSnapshot();
        QVERIFY(snapshot.parked);
        QCOMPARE(snapshot.parkedLine, line);
        QVERIFY(lines(f.relay->checkReadiness()).contains("registration: " + line));
        QCOMPARE(f.relay->registration()->retryDueMs(), 0);
        QCOMPARE(f.relay->cloudly()->identityRenewalDueMs(), 0);
    }

    // docs/contract.md §6.0, §20 (D-11, D-65): renewal is due at min(expiresAt - 60000, issuedAt + 0.8 L),
    // never before issuedAt + L/5; short lifetimes renew at a fifth of their lifetime, never at once.
    void identityRenewalDueTime_WD01_D11_data()
    {
        QTest::addColumn<qint64>("lifetimeMs");
        QTest::addColumn<qint64>("dueAfterMs");
        QTest::newRow("1 h: 80 % of the lifetime") << qint64(3600000) << qint64(2880000);
        QTest::newRow("250 s: 60 s before expiry") << qint64(250000) << qint64(190000);
        QTest::newRow("100 s: 60 s before expiry") << qint64(100000) << qint64(40000);
        QTest::newRow("75 s: 60 s before expiry (the peer's case)") << qint64(75000) << qint64(15000);
        QTest::newRow("60 s: a fifth of the lifetime") << qint64(60000) << qint64(12000);
    }
    void identityRenewalDueTime_WD01_D11()
    {
        QFETCH(qint64, lifetimeMs);
        QFETCH(qint64, dueAfterMs);
        RelayFixture f(true, [lifetimeMs](peers::LoopbackCloudly::Options &o) { o.identityLifetimeMs = lifetimeMs; });
        const qint64 issuedAt = f.clock.nowMs(); // the manual clock stands still during the start
        QVERIFY(f.startRelay());
        QTRY_VERIFY(f.relay->cloudly()->identityRenewalDueMs() > 0);
        QCOMPARE(f.relay->cloudly()->identityRenewalDueMs(), issuedAt + dueAfterMs);
        QCOMPARE(f.cloudly->callCount("refreshClusterIdentity"), 0);
    }

    void oneRegistrationInFlight_RR09()
    {
        RelayFixture f;
        f.cloudly->options().identityLifetimeMs = 4000; // renewals every 800 ms of relay time (a fifth of it)
        QVERIFY(f.startRelay());
        QTRY_VERIFY(f.relay->registration()->acceptedRecord().has_value());
        f.cloudly->setAnswer("registerClusterRelay", Answer::silence());
        const int before = f.cloudly->callCount("registerClusterRelay");
        // Four renewals inside the 8000 ms bound of one silent registration: still one in flight.
        for (int i = 0; i < 4; ++i)
            renewIdentity(f);
        QCOMPARE(f.cloudly->callCount("registerClusterRelay"), before + 1);
        QVERIFY(f.relay->registration()->isInFlight());
        QCOMPARE(f.cloudly->callCount("refreshClusterIdentity"), 4);
        f.cloudly->setAnswer("registerClusterRelay", Answer::useDefault());
        // The silent one ends at its bound; exactly one more follows for the queued triggers.
        const qint64 firstSent = f.cloudly->requests("registerClusterRelay").last().timeMs;
        Q_UNUSED(firstSent);
        f.relay->cloudly()->park(); // stop further renewals so only the queued registration is counted
        f.clock.advance(8000);
        QTRY_COMPARE(f.cloudly->callCount("registerClusterRelay"), before + 2);
        QVERIFY(f.settleCloudlyHop());
        QCOMPARE(f.cloudly->callCount("registerClusterRelay"), before + 2);
    }

    // RR-15/RR-26 readiness: a Cloudly refusal of the registration is an answer that is not an
    // acceptance: the hop states it (offers null) until an acceptance arrives.
    void refusalStandsOnTheRegistrationHop_RR15()
    {
        RelayFixture f;
        f.cloudly->setAnswer("registerClusterRelay", Answer::refuse(QLatin1StringView("relay-node-unknown"), "no such node"));
        QVERIFY(f.startRelay());
        QTRY_VERIFY(!f.relay->checkReadiness().ready);
        const Readiness r = f.relay->checkReadiness();
        QCOMPARE(r.refusals.size(), 1);
        QCOMPARE(r.refusals.first().hop, QStringLiteral("registration"));
        QVERIFY(!r.refusals.first().peerOffer.has_value());
        QVERIFY(r.refusals.first().line.contains("relay-node-unknown"));
        f.cloudly->setAnswer("registerClusterRelay", Answer::useDefault());
        renewIdentity(f);
        QTRY_VERIFY(f.relay->checkReadiness().ready);
    }

    // PV-21: both kinds can stand on one hop at once and end apart; the hop serves only when neither stands.
    void twoKindsHeldApart_PV21()
    {
        ReadinessBoard board;
        board.setOfferDisagreement("registration", "cloudlyClient@34.0.0", "cloudlyClient@33.1.0", "offer line");
        board.setAnswerNotContract("registration", "answer line");
        QCOMPARE(board.refusals().size(), 2);
        QVERIFY(!board.hopServes("registration"));
        board.clearOfferDisagreement("registration");
        QCOMPARE(board.refusals().size(), 1);
        QVERIFY(!board.hopServes("registration"));
        QVERIFY(!board.refusals().first().peerOffer.has_value());
        board.clearAnswerNotContract("registration");
        QVERIFY(board.hopServes("registration"));
        // An unreadable peer offer is named the same way on every hop.
        board.setOfferDisagreement("clusterIngress", "", "clusterIngress@33.1.0", "x");
        QCOMPARE(board.refusals().first().peerOffer.value_or(""), QStringLiteral("no readable offer"));
        // Parked: the registration hop says exactly the park line, whatever stood before or comes after.
        board.setAnswerNotContract("registration", "old");
        board.park("park line");
        board.setAnswerNotContract("registration", "late");
        QCOMPARE(board.refusals().size(), 2);
        QCOMPARE(board.refusals().at(0).line, QStringLiteral("park line"));
        QCOMPARE(board.refusals().at(1).hop, QStringLiteral("clusterIngress"));
    }

    // PV-03: an acceptance in another major is an offer disagreement on the registration carrier.
    void acceptanceInAnotherMajor_PV03()
    {
        RelayFixture f;
        f.cloudly->setAnswer("registerClusterRelay",
                             acceptance(QStringLiteral("https://localhost:%1").arg(f.relayPort), "relay-credential-1", 1, 1, "34.0.0"));
        QVERIFY(f.startRelay());
        QTRY_VERIFY(!f.relay->checkReadiness().ready);
        const Readiness r = f.relay->checkReadiness();
        QCOMPARE(r.refusals.first().hop, QStringLiteral("registration"));
        QCOMPARE(r.refusals.first().peerOffer.value_or(""), QStringLiteral("cloudlyClient@34.0.0"));
        QVERIFY(!f.relay->registration()->pinnedCredential().has_value()); // nothing reported as accepted
    }

    // A re-offer lost in transport keeps the 300000 ms cadence (RR-06). PV-13: once an accepted offer
    // replaces the refusal, the same process answers ready again.
    void cadenceSurvivesATransportLoss_RR06()
    {
        RelayFixture f;
        f.cloudly->setAnswer("registerClusterRelay", Answer::respond(QJsonObject{{"offer", QJsonObject{{"sessionKind", "cloudlyClient"}, {"release", "33.1.0"}}}}));
        QVERIFY(f.startRelay());
        QTRY_VERIFY(!f.relay->checkReadiness().ready);
        QVERIFY(f.relay->registration()->retryDueMs() > 0);
        f.cloudly->setAnswer("registerClusterRelay", Answer::silence());
        f.clock.advance(300000);
        QTRY_COMPARE(f.cloudly->callCount("registerClusterRelay"), 2);
        f.clock.advance(8000); // the re-offer times out
        QTRY_VERIFY(!f.relay->registration()->isInFlight());
        QCOMPARE(f.relay->registration()->retryDueMs() - f.clock.nowMs(), 300000);
        f.cloudly->setAnswer("registerClusterRelay", Answer::useDefault());
        f.clock.advance(300000);
        QTRY_VERIFY(f.relay->checkReadiness().ready);
    }

    // PV-03, PV-22 on the Cloudly hop: an answer to registerCloudlyClientSession that is not the
    // contract's (and a refusal arriving at an identity renewal) is offered again at the cadence.
    void cloudlyHopAnswerNotContractAndRenewalRefusal_PV03_PV22()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        QTRY_VERIFY(f.relay->checkReadiness().ready);
        peers::PeerRefusal refused{QStringLiteral("protocol-offer-refused"), QStringLiteral("no"),
                                  QJsonObject{{"ownOffer", QJsonObject{{"sessionKind", "cloudlyClient"}, {"release", "34.0.0"}}}}};
        f.cloudly->setAnswer("registerCloudlyClientSession", Answer::refuse(refused));
        const qint64 due = f.relay->cloudly()->identityRenewalDueMs();
        f.clock.advance(due - f.clock.nowMs());
        QTRY_VERIFY(!f.relay->checkReadiness().ready);
        QCOMPARE(f.relay->checkReadiness().refusals.first().hop, QStringLiteral("cloudly"));
        QCOMPARE(f.relay->cloudly()->reofferDueMs() - f.clock.nowMs(), 300000);
        QVERIFY(f.relay->cloudly()->identityRenewalDueMs() > 0); // the identity is still kept alive
        // Now an answer with a servable offer but an extra member: the other kind, offers null.
        f.cloudly->setAnswer("registerCloudlyClientSession",
                             Answer::respond(QJsonObject{{"offer", QJsonObject{{"sessionKind", "cloudlyClient"}, {"release", "33.1.0"}}}, {"extra", 1}}));
        f.clock.advance(300000);
        QTRY_VERIFY(!f.relay->checkReadiness().refusals.isEmpty() && !f.relay->checkReadiness().refusals.first().peerOffer.has_value());
        QVERIFY(f.relay->checkReadiness().refusals.first().line.contains("response.extra is unknown"));
        f.cloudly->setAnswer("registerCloudlyClientSession", Answer::useDefault());
        f.clock.advance(300000);
        QTRY_VERIFY(f.relay->checkReadiness().ready);
        QCOMPARE(f.cloudly->totalConnections(), 1); // nothing was torn down
    }

    // docs/contract.md §2.3 "During the start": an unservable registerCloudlyClientSession answer on the
    // first socket holds the start at that step (no cluster config, no listener, no failure); the
    // offer goes again on the same socket every 300000 ms and the first servable answer continues.
    void startWaitsOnAnUnservableClientSessionOffer_PV22()
    {
        RelayFixture f;
        peers::PeerRefusal refused{QStringLiteral("protocol-offer-refused"), QStringLiteral("no"),
                                  QJsonObject{{"ownOffer", QJsonObject{{"sessionKind", "cloudlyClient"}, {"release", "34.0.0"}}}}};
        f.cloudly->setAnswer("registerCloudlyClientSession", Answer::refuse(refused));
        f.makeRelay(f.configuration());
        QSignalSpy started(f.relay.get(), &Coreflow::started);
        QSignalSpy failed(f.relay.get(), &Coreflow::startFailed);
        f.relay->start();
        QTRY_COMPARE(f.cloudly->callCount("registerCloudlyClientSession"), 1);
        QTRY_VERIFY(f.relay->cloudly()->reofferDueMs() > 0);
        QCOMPARE(f.relay->cloudly()->reofferDueMs() - f.clock.nowMs(), 300000);
        f.clock.advance(299999); // one millisecond before the re-offer: the relay still waits
        QVERIFY(f.settleCloudlyHop());
        QCOMPARE(f.cloudly->callCount("registerCloudlyClientSession"), 1);
        QVERIFY(started.isEmpty());
        QVERIFY(failed.isEmpty());
        QVERIFY(!f.relay->cloudly()->isDispatchable());
        QCOMPARE(f.cloudly->callCount("getClusterConfig"), 0);
        QCOMPARE(f.relay->listenerPort(), quint16(0));
        const Readiness waiting = f.relay->checkReadiness();
        QVERIFY(!waiting.ready);
        QCOMPARE(waiting.refusals.first().hop, QStringLiteral("cloudly"));
        QCOMPARE(waiting.refusals.first().peerOffer.value_or(""), QStringLiteral("cloudlyClient@34.0.0"));
        QVERIFY(lines(waiting).contains("relay: the relay is not open for dispatch"));
        f.cloudly->setAnswer("registerCloudlyClientSession", Answer::useDefault());
        f.clock.advance(1);
        QTRY_COMPARE(started.size(), 1);
        QVERIFY(failed.isEmpty());
        QCOMPARE(f.cloudly->callCount("registerCloudlyClientSession"), 2);
        // One read at start, then one after the relay's accepted registration (WD-08, contract §6.0).
        QTRY_COMPARE(f.cloudly->callCount("registerClusterRelay"), 1);
        QTRY_COMPARE(f.cloudly->callCount("getClusterConfig"), 2);
        QVERIFY(f.relay->listenerPort() != 0);
        QCOMPARE(f.cloudly->totalConnections(), 1); // the same socket all along
    }

    // CI-06: every acceptance (not only the first) re-reads the route table; a refused registration does not.
    void everyAcceptanceRereadsTheRouteTable_CI06()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        QTRY_COMPARE(f.cloudly->callCount("getClusterRouteTable"), 1);
        renewIdentity(f);
        QTRY_COMPARE(f.cloudly->callCount("getClusterRouteTable"), 2);
        f.cloudly->setAnswer("registerClusterRelay", Answer::refuse(QLatin1StringView("relay-node-unknown"), "x"));
        renewIdentity(f);
        QTRY_COMPARE(f.cloudly->callCount("registerClusterRelay"), 3);
        QVERIFY(f.settleCloudlyHop());
        QCOMPARE(f.cloudly->callCount("getClusterRouteTable"), 2);
    }

    // PV-05, PV-07, PV-08, PV-09: a 31.x and a 34.x node are refused naming both offers and never
    // reach Cloudly; the relay's readiness is untouched by it (D-62), the refusals are counted; a
    // 32.10.1 node is served.
    void clusterHopOffers_PV05_PV09_PV24()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        QTRY_VERIFY(f.relay->checkReadiness().ready);
        for (const QString &release : {QStringLiteral("31.4.0"), QStringLiteral("34.0.0"), QStringLiteral("32.10.0")}) {
            auto node = f.connectNode("node-" + release);
            QString text;
            QJsonObject data;
            // An old-major body that the exact-key validator would call malformed (PV-07): the offer speaks first.
            const QByteArray body = "{\"offer\":{\"sessionKind\":\"palletRuntime\",\"release\":\"" + release.toUtf8()
                                    + "\"},\"nodeId\":\"n\",\"authorization\":\"node-bearer-canary\",\"legacyField\":1}";
            node->call("registerPalletRuntimeSession", body, [&](const peers::PeerFrame &x) {
                text = x.errorRefusal().text();
                data = x.errorRefusal().data;
            });
            QTRY_VERIFY(!text.isEmpty());
            QVERIFY2(text.startsWith("protocol-offer-refused: this relay serves palletRuntime from 32.10.1 (it speaks 33.1.0); the peer offered palletRuntime@" + release),
                     qPrintable(text));
            QCOMPARE(data.value("peerOffer").toObject().value("release").toString(), release);
            QCOMPARE(data.value("ownOffer").toObject().value("release").toString(), QStringLiteral("33.1.0"));
            // D-62: a refused peer offer is that peer's problem; the relay stays ready for every
            // operator and counts the refusal (contract §2.2).
            const Readiness r = f.relay->checkReadiness();
            QVERIFY(r.ready);
            QVERIFY(r.refusals.isEmpty());
            QVERIFY(node->isConnected()); // nothing torn down
        }
        QCOMPARE(f.relay->statusSnapshot().counters.refusalsByName.value(QString(contract::refusal::protocolOfferRefused)), 3);
        QVERIFY(f.relay->statusSnapshot().ready);
        QCOMPARE(f.cloudly->callCount("registerPalletRuntimeSession"), 0);
        for (const QString &line : log.lines())
            QVERIFY(!line.contains("node-bearer-canary"));
        // A node with no readable offer is told so.
        auto bare = f.connectNode("bare");
        QString text;
        bare->call("registerPalletRuntimeSession", QByteArray("{\"nodeId\":\"bare\"}"), [&](const peers::PeerFrame &x) { text = x.errorRefusal().text(); });
        QTRY_VERIFY(text.endsWith("the peer offered no readable offer"));
        // PV-24: the moment a servable offer arrives the hop serves again.
        auto good = f.connectNode("node-good");
        bool registered = false;
        QJsonObject req{{"offer", QJsonObject{{"sessionKind", "palletRuntime"}, {"release", "32.10.1"}}},
                        {"nodeId", "node-good"}, {"authorization", "b"}, {"nodeInstanceNonce", "n"}};
        good->call("registerPalletRuntimeSession", req, [&](const peers::PeerFrame &x) { registered = !x.hasError(); });
        QTRY_VERIFY(registered);
        QVERIFY(f.relay->checkReadiness().ready);
    }

    // ON-01, PV-03, PV-10: a Cloudly answering another major on the session registration leaves the
    // relay standing, not ready, with the refused protocol retained, offered again every 300000 ms.
    void cloudlyOfAnotherMajor_ON01_PV03()
    {
        RelayFixture f;
        f.cloudly->options().release = QStringLiteral("34.0.0");
        f.makeRelay(f.configuration());
        f.relay->start();
        QTRY_VERIFY(f.relay->readiness()->refusals().size() == 1);
        const Readiness r = f.relay->checkReadiness();
        QVERIFY(!r.ready);
        QCOMPARE(r.refusals.first().hop, QStringLiteral("cloudly"));
        QCOMPARE(r.refusals.first().peerOffer.value_or(""), QStringLiteral("cloudlyClient@34.0.0"));
        QCOMPARE(r.refusals.first().ownOffer.value_or(""), QStringLiteral("cloudlyClient@33.1.0"));
        QCOMPARE(f.cloudly->connectionCount(), 1); // the socket stays (PV-10)
        QCOMPARE(f.relay->cloudly()->reofferDueMs() - f.clock.nowMs(), 300000);
        f.cloudly->options().release = QStringLiteral("33.4.0"); // Cloudly upgraded under the relay
        f.clock.advance(300000);
        QTRY_VERIFY(f.relay->isOpen());
        QTRY_VERIFY(f.relay->checkReadiness().ready);
        QCOMPARE(f.cloudly->totalConnections(), 1); // rejoined without a restart (PV-23)
    }
};

COREFLOW_EPOLL_TEST_MAIN(TstRegistration)
#include "tst_registration.moc"
