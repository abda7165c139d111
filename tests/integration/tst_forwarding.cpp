// Forwarding a runtime session, both directions (docs/contract.md §8, §5). Rules: CL-05, CL-06, CL-07, FW-01,
// FW-06, FW-07, FW-08, FW-09, FW-10, FW-11, FW-13, FW-15, FW-16, FW-17, FW-22, ES-04.
#include "tests/support/epolltestmain.h"
#include "tests/integration/logcapture.h"
#include "tests/integration/relayfixture.h"
#include "tests/support/loggedrelaytest.h"
#include "shared/contract/refusalnames.h"

#include "shared/contract/methods.h"

#include <QJsonDocument>
#include <QSignalSpy>
#include <QTest>

using namespace coreflow;
using namespace coreflow::testing;
using coreflow::peers::Answer;

namespace {
QByteArray sessionBody(const peers::PeerSessionBinding &b, const QByteArray &extra)
{
    return QByteArrayLiteral("{\"session\":") + QJsonDocument(b.toJson()).toJson(QJsonDocument::Compact) + extra + '}';
}
} // namespace

class TstForwarding : public LoggedRelayTest {
    Q_OBJECT

private Q_SLOTS:

    // CL-05/CL-06/FW-01: every node method reaches Cloudly under its name with the request bytes as
    // the node wrote them, and the answer comes back unchanged. Two nodes use the same correlation ids.
    void collidingCorrelationIdsAndByteIdenticalBodies_CL05_CL06()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        auto a = f.registeredNode("node-a");
        auto b = f.registeredNode("node-b");
        QVERIFY(a->session() && b->session());
        // Registration bodies travelled byte for byte (CL-07: nothing added, nothing removed).
        const auto registrations = f.cloudly->requests("registerPalletRuntimeSession");
        QCOMPARE(registrations.size(), 2);
        QCOMPARE(registrations.at(0).rawRequest, a->registrationRequest());
        QCOMPARE(registrations.at(1).rawRequest, b->registrationRequest());

        f.cloudly->setHandler("reportRuntimeAssignmentObservation", [](const peers::PeerFrame &frame, const QJsonObject &request) {
            // Answer with the node id the body names, in an unusual but valid layout.
            const QString node = request.value("session").toObject().value("nodeId").toString();
            Q_UNUSED(frame);
            return Answer::respondRaw(QByteArrayLiteral("{ \"seenBy\" : \"cloudly\",\"for\":\"") + node.toUtf8() + "\" }");
        });
        for (const QString &method : {QStringLiteral("getRuntimeManagedVpnCredential"), QStringLiteral("getRuntimeRegistryCredential"),
                                      QStringLiteral("reportRuntimeNetworkProtection"), QStringLiteral("reportRuntimeAssignmentObservation"),
                                      QStringLiteral("reportRuntimeAssignmentTerminalReceipt")}) {
            const QByteArray extraA = ",\"observation\":{ \"z\":1, \"a\" :[true,null,1.50e2],\"s\":\"\\u00e9\\n\" }";
            const QByteArray bodyA = sessionBody(*a->session(), extraA);
            const QByteArray bodyB = sessionBody(*b->session(), ",\"observation\":{\"b\":2}");
            QByteArray answerA, answerB;
            a->call(method, bodyA, [&](const peers::PeerFrame &x) { answerA = x.raw; }, "id-1");
            b->call(method, bodyB, [&](const peers::PeerFrame &x) { answerB = x.raw; }, "id-1");
            QTRY_VERIFY(!answerA.isEmpty() && !answerB.isEmpty());
            const auto seen = f.cloudly->requests(method);
            QCOMPARE(seen.size(), 2);
            QSet<QByteArray> bodies{seen.at(0).rawRequest, seen.at(1).rawRequest};
            QCOMPARE(bodies, (QSet<QByteArray>{bodyA, bodyB}));
            QVERIFY(seen.at(0).correlationId != seen.at(1).correlationId); // mapped per hop
            auto parsedA = peers::PeerEnvelope::parse(answerA);
            auto parsedB = peers::PeerEnvelope::parse(answerB);
            QVERIFY(parsedA.ok() && parsedB.ok());
            QCOMPARE(parsedA->correlationId, QStringLiteral("id-1"));
            QCOMPARE(parsedB->correlationId, QStringLiteral("id-1"));
            if (method == "reportRuntimeAssignmentObservation") {
                QCOMPARE(parsedA->response.toByteArray(), QByteArray("{ \"seenBy\" : \"cloudly\",\"for\":\"node-a\" }"));
                QCOMPARE(parsedB->response.toByteArray(), QByteArray("{ \"seenBy\" : \"cloudly\",\"for\":\"node-b\" }"));
            } else {
                QCOMPARE(parsedA->response.toByteArray(), QByteArray(R"({"accepted":true})"));
            }
        }
        // FW-22: log lines name methods and nodes, never a body.
        for (const QString &line : log.lines()) {
            QVERIFY2(!line.contains("observation"), qPrintable(line));
            QVERIFY2(!line.contains("node-bearer"), qPrintable(line));
        }
    }

    // FW-01: nothing is answered from memory: an identical request is forwarded each time.
    void nothingIsCached_FW01()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        auto a = f.registeredNode("node-a");
        for (int i = 0; i < 3; ++i) {
            bool answered = false;
            a->callWithSession("getRuntimeRegistryCredential", {}, [&](const peers::PeerFrame &) { answered = true; });
            QTRY_VERIFY(answered);
        }
        QCOMPARE(f.cloudly->callCount("getRuntimeRegistryCredential"), 3);
    }

    // Cloudly's own refusal travels back to the node verbatim (error and retry members).
    void cloudlyErrorsTravelVerbatim()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        auto a = f.registeredNode("node-a");
        const QByteArray error = R"({"text":"grant-expired: the grant ended","data":{"name":"grant-expired","extra":[1,2]}})";
        const QByteArray retry = R"({"waitForMs":1500,"reason":"later"})";
        f.cloudly->setAnswer("getRuntimeManagedVpnCredential", Answer::errorRaw(error, retry));
        QByteArray raw;
        a->callWithSession("getRuntimeManagedVpnCredential", {}, [&](const peers::PeerFrame &x) { raw = x.raw; });
        QTRY_VERIFY(!raw.isEmpty());
        auto parsed = peers::PeerEnvelope::parse(raw);
        QVERIFY(parsed.ok());
        QCOMPARE(parsed->error.toByteArray(), error);
        QCOMPARE(parsed->retry.toByteArray(), retry);
    }

    // FW-06..FW-09: a session request must carry the binding registered on this very connection.
    void bindingChecks_FW06_FW09_data()
    {
        QTest::addColumn<QString>("scenario");
        QTest::addColumn<QString>("reasonPart");
        QTest::newRow("unregistered connection FW-06") << "unregistered" << "registered no session";
        QTest::newRow("another node's binding FW-06") << "foreign" << "registered on another connection";
        QTest::newRow("superseded session FW-07") << "superseded" << "superseded";
        QTest::newRow("another cluster FW-08") << "cluster" << "another cluster";
        QTest::newRow("older relay registration generation FW-09") << "generation" << "older relay registration generation";
        QTest::newRow("malformed binding") << "malformed" << "request.session.sessionId is missing";
    }
    void bindingChecks_FW06_FW09()
    {
        QFETCH(QString, scenario);
        QFETCH(QString, reasonPart);
        RelayFixture f;
        f.cloudly->setRelayRegistrationGeneration(4);
        QVERIFY(f.startRelay());
        auto a = f.registeredNode("node-a");
        auto b = f.registeredNode("node-b");
        std::unique_ptr<peers::SimulatedPalletNode> sender;
        peers::PeerSessionBinding binding = *a->session();
        peers::SimulatedPalletNode *from = a.get();
        QByteArray body;
        if (scenario == "unregistered") {
            sender = f.connectNode("node-c");
            from = sender.get();
        } else if (scenario == "foreign") {
            from = b.get();
        } else if (scenario == "superseded") {
            auto again = f.registeredNode("node-a"); // node-a registers again on a new connection
            QVERIFY(again->session());
            // The superseded socket is closed, not kept (docs/contract.md §3.3): 1000 node-superseded.
            QTRY_VERIFY(!a->isConnected());
            QCOMPARE(a->closeCode(), 1000);
            QCOMPARE(a->closeReason(), QString(contract::refusal::nodeSuperseded));
            sender = std::move(again);
            from = sender.get(); // the node still sends its old binding, now on the new socket
        } else if (scenario == "cluster") {
            binding.clusterId = "cluster-2";
        } else if (scenario == "generation") {
            binding.relayRegistrationGeneration = 3;
        } else if (scenario == "malformed") {
            body = R"({"session":{"nodeId":"node-a","clusterId":"cluster-1","relayRegistrationGeneration":4}})";
        }
        if (body.isEmpty())
            body = sessionBody(binding, {});
        const int before = f.cloudly->callCount("getRuntimeRegistryCredential");
        QString text;
        from->call("getRuntimeRegistryCredential", body, [&](const peers::PeerFrame &x) { text = x.errorRefusal().text(); });
        QTRY_VERIFY(!text.isEmpty());
        QVERIFY2(text.contains(reasonPart), qPrintable(text));
        QVERIFY(text.startsWith(scenario == "malformed" ? "request-invalid: " : "session-binding-refused: "));
        QCOMPARE(f.cloudly->callCount("getRuntimeRegistryCredential"), before); // refused before forwarding
    }

    // FW-11, FW-13, FW-15: the four pushes reach only the node their session names; the ACK comes back
    // verbatim, with Cloudly's correlation id; two pushes with the same Cloudly id never collide.
    void pushesRoutedByNodeId_FW11_FW13_FW15()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        auto a = f.registeredNode("node-a");
        auto b = f.registeredNode("node-b");
        b->setPushHandler("applyRuntimeNetworkProjection", [](const peers::PeerFrame &, const QJsonObject &) {
            return Answer::respondRaw(R"({"acknowledged":true,"projection":{"id":"p","generation":2,"digest":"d"}, "x" : 1})");
        });
        for (const auto &name : contract::method::nodePushes) {
            const QString method(name);
            const QByteArray body = sessionBody(*b->session(), ",\"payload\":{ \"k\" : [1, 2] }");
            QByteArray answerRaw;
            f.cloudly->push(method, body, [&](const peers::PeerFrame &answer) { answerRaw = answer.raw; });
            QTRY_VERIFY(!answerRaw.isEmpty());
            QCOMPARE(b->pushCount(method), 1);
            QCOMPARE(a->pushCount(method), 0);
            QCOMPARE(b->lastPushRawRequest(method), body);
            auto parsed = peers::PeerEnvelope::parse(answerRaw);
            QVERIFY(parsed.ok());
            QVERIFY(!parsed->hasError());
            if (method == "applyRuntimeNetworkProjection")
                QCOMPARE(parsed->response.toByteArray(),
                         QByteArray(R"({"acknowledged":true,"projection":{"id":"p","generation":2,"digest":"d"}, "x" : 1})"));
        }
        // A node's refusal of a push is returned verbatim too (the relay never synthesises an ACK).
        const QByteArray error = R"({"text":"assignment-refused: no","data":{"name":"assignment-refused"}})";
        a->setPushAnswer("applyRuntimeAssignment", Answer::errorRaw(error));
        QByteArray raw;
        f.cloudly->push("applyRuntimeAssignment", sessionBody(*a->session(), {}), [&](const peers::PeerFrame &x) { raw = x.raw; });
        QTRY_VERIFY(!raw.isEmpty());
        QCOMPARE(peers::PeerEnvelope::parse(raw)->error.toByteArray(), error);
    }

    // FW-16, FW-17: a closed node is dropped; a later push is refused with the exact text and Cloudly
    // receives no call for it.
    void closedNodeIsNotConnected_FW16_FW17()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        auto a = f.registeredNode("node-a");
        const peers::PeerSessionBinding binding = *a->session();
        const int framesBefore = f.cloudly->frames().size();
        a->close();
        QTRY_VERIFY(f.relay->statusSnapshot().nodes.isEmpty());
        QString text;
        f.cloudly->push("applyRuntimeAssignment", sessionBody(binding, {}), [&](const peers::PeerFrame &x) { text = x.errorRefusal().text(); });
        QTRY_VERIFY(!text.isEmpty());
        QCOMPARE(text, QStringLiteral("node-not-connected: node node-a is not connected to this relay"));
        // Only the push's answer went to Cloudly: no retirement call of the relay's own.
        QCOMPARE(f.cloudly->frames().size(), framesBefore + 1);
        QCOMPARE(f.cloudly->frames().last().phase, peers::Phase::Response);
    }

    // FW-18, FW-19: the four secret-recipient requests go through the same current-session check and
    // are forwarded untouched; from a wrong socket they are refused before forwarding.
    void secretRecipientRequests_FW18()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        auto a = f.registeredNode("node-a");
        auto b = f.registeredNode("node-b");
        for (const auto &name : contract::method::nodeSecretMethods) {
            const QString method(name);
            const QByteArray body = sessionBody(*a->session(), ",\"challenge\":\"possession-canary\"");
            QByteArray answer;
            a->call(method, body, [&](const peers::PeerFrame &x) { answer = x.raw; });
            QTRY_VERIFY(!answer.isEmpty());
            QCOMPARE(f.cloudly->lastRawRequest(method), body);
            QString refused;
            b->call(method, body, [&](const peers::PeerFrame &x) { refused = x.errorRefusal().name; });
            QTRY_COMPARE(refused, QStringLiteral("session-binding-refused"));
            QCOMPARE(f.cloudly->callCount(method), 1);
        }
        for (const QString &line : log.lines())
            QVERIFY(!line.contains("possession-canary"));
    }

    // ES-04: the node lane answers the escrow hold by name.
    void escrowHoldOnNodeLane_ES04()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        auto a = f.registeredNode("node-a");
        QString text;
        a->callWithSession("holdRuntimeNetworkDnsLeaseRenewals", {}, [&](const peers::PeerFrame &x) { text = x.errorRefusal().name; });
        QTRY_VERIFY(!text.isEmpty());
        QCOMPARE(text, QStringLiteral("escrow-cloudly-only"));
        QCOMPARE(f.cloudly->callCount("holdRuntimeNetworkDnsLeaseRenewals"), 0);
    }

    // Bad input from a node is a named refusal and changes nothing held.
    void unreadableFramesAreRefusedByName()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        auto a = f.registeredNode("node-a");
        a->sendRaw(R"({"method":"getRuntimeRegistryCredential","request":[1],"correlation":{"id":"bad-1","phase":"request"}})");
        QTRY_VERIFY(a->answerFor("bad-1").has_value());
        QVERIFY(a->answerFor("bad-1")->rawError.contains("request-invalid"));
        QCOMPARE(f.relay->statusSnapshot().nodes.size(), 1);
        QVERIFY(a->isConnected());
    }

    // UC-12, §19.3 (found by an independent peer: a stop cut them): a stop lets a Cloudly push in flight
    // to a node and a node request forwarded to Cloudly end with their answers, refuses a new node
    // request by name, and only then closes the node sessions 1001 and completes.
    void stopDrainsRequestsInFlight_UC12()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        auto a = f.registeredNode("node-a");
        a->setPushAnswer("applyRuntimeAssignment", Answer::respond(QJsonObject{{"acknowledged", true}}).after(300));
        f.cloudly->setAnswer("getRuntimeRegistryCredential", Answer::respond(QJsonObject{{"credential", "c"}}).after(300));
        QList<peers::PeerFrame> pushAnswers, forwardAnswers;
        f.cloudly->push("applyRuntimeAssignment", sessionBody(*a->session(), {}), [&](const peers::PeerFrame &x) { pushAnswers << x; });
        a->call("getRuntimeRegistryCredential", sessionBody(*a->session(), {}), [&](const peers::PeerFrame &x) { forwardAnswers << x; });
        QTRY_COMPARE(a->pushCount("applyRuntimeAssignment"), 1);
        QTRY_COMPARE(f.cloudly->callCount("getRuntimeRegistryCredential"), 1);
        QSignalSpy stopped(f.relay.get(), &Coreflow::stopped);
        f.relay->stop();
        QVERIFY(log.contains("stopping: draining 2 node request(s) in flight"));
        QList<peers::PeerFrame> late;
        a->call("getRuntimeRegistryCredential", sessionBody(*a->session(), {}), [&](const peers::PeerFrame &x) { late << x; });
        QTRY_COMPARE(late.size(), 1);
        QCOMPARE(late.first().errorRefusal().text(), QStringLiteral("cloudly-session-unavailable: the relay is stopping"));
        QTRY_COMPARE(pushAnswers.size(), 1);
        QVERIFY2(!pushAnswers.first().hasError(), pushAnswers.first().raw.constData());
        QTRY_COMPARE(forwardAnswers.size(), 1);
        QVERIFY2(!forwardAnswers.first().hasError(), forwardAnswers.first().raw.constData());
        QTRY_COMPARE(stopped.size(), 1);
        QCOMPARE(stopped.first().first().toBool(), true);
        QTRY_COMPARE(a->closeCode(), 1001);
        QCOMPARE(f.cloudly->callCount("getRuntimeRegistryCredential"), 1); // the late one was never forwarded
        QVERIFY(!log.contains("drain bound"));
    }

    // §19.3: the drain is bounded at stopDrainMs (on the injected clock): a push a node never answers is
    // then answered node-connection-lost, the node session closes 1001 and the stop completes.
    void stopDrainIsBounded_UC12()
    {
        RelayFixture f;
        contract::RelayTiming timing;
        timing.pushTimeoutMs = 60000; // longer than the drain bound, so the bound decides
        f.makeRelay(f.configuration(), timing);
        QVERIFY(f.startRelay());
        auto a = f.registeredNode("node-a");
        a->setPushAnswer("applyRuntimeAssignment", Answer::silence());
        QList<peers::PeerFrame> pushAnswers;
        f.cloudly->push("applyRuntimeAssignment", sessionBody(*a->session(), {}), [&](const peers::PeerFrame &x) { pushAnswers << x; });
        QTRY_COMPARE(a->pushCount("applyRuntimeAssignment"), 1);
        QSignalSpy stopped(f.relay.get(), &Coreflow::stopped);
        f.relay->stop();
        // A negative over an unstepped clock: stop() must not finish before the drain bound; these turns let a
        // wrongly early `stopped` or close arrive (the clock, not this wait, decides when the bound ends).
        QTest::qWait(100);
        QVERIFY(stopped.isEmpty());
        QCOMPARE(a->closeCode(), 0);
        f.clock.advance(timing.stopDrainMs - 1);
        // As above, 1 ms before the bound: turns for a wrongly early stop to show.
        QTest::qWait(50);
        QVERIFY(stopped.isEmpty());
        f.clock.advance(1);
        QTRY_COMPARE(stopped.size(), 1);
        QCOMPARE(stopped.first().first().toBool(), true);
        QVERIFY(log.contains("drain bound of 10000 ms reached with 1 node request(s) in flight"));
        // The push ends node-connection-lost, and Cloudly reads that answer although the Cloudly socket
        // closes in the same turn (the close hands the socket what it takes of the queue first).
        QVERIFY(log.contains("applyRuntimeAssignment to node node-a ended: node-connection-lost"));
        QTRY_COMPARE(pushAnswers.size(), 1);
        QCOMPARE(pushAnswers.first().errorRefusal().name, QStringLiteral("node-connection-lost"));
        QTRY_COMPARE(a->closeCode(), 1001);
    }
};

COREFLOW_EPOLL_TEST_MAIN(TstForwarding)
#include "tst_forwarding.moc"
