// Boot and roll-back of the composition root against the loopback Cloudly (docs/contract.md §19.3, §5,
// §6.4, §6.5 listener rules).
// Rules: ST-02, ST-03, ST-04, UC-08, UC-09, LO-01..LO-06, LO-08, LO-09, LO-10, CL-01, CL-02, CF-09, CF-10, OV-06.
#include "tests/support/epolltestmain.h"
#include "tests/integration/logcapture.h"
#include "tests/integration/relayfixture.h"

#include "service/cloudly/cloudlyconnector.h"

#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QSignalSpy>
#include <QSslSocket>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTest>

using namespace coreflow;
using namespace coreflow::testing;
using coreflow::peers::Answer;

class TstRelayBoot : public QObject {
    Q_OBJECT
    LogCapture log;

    static bool portAccepts(quint16 port)
    {
        QTcpSocket probe;
        probe.connectToHost(QHostAddress::LocalHost, port);
        return probe.waitForConnected(1000);
    }

private Q_SLOTS:
    void init()
    {
        log.install();
        log.clear();
    }

    // ST-02, UC-08, UC-09, OV-06: session first (exchange, then registration), then config, certificate,
    // listener, and only then the open line.
    void bootsToOpenForDispatch_ST02_UC09()
    {
        RelayFixture f;
        QVERIFY(!portAccepts(f.relayPort));
        QVERIFY(f.startRelay());
        QVERIFY(f.relay->isOpen());
        QCOMPARE(log.count("the relay is open for Cloudly dispatch"), 1);
        QStringList order;
        for (const auto &frame : f.cloudly->frames())
            if (frame.phase == peers::Phase::Request)
                order << frame.method;
        QCOMPARE(order.mid(0, 4), (QStringList{"exchangeClusterRelayAuthorization", "registerCloudlyClientSession",
                                               "getClusterConfig", "getClusterRelayCertificate"}));
        // ST-04: registering is not a start step; it follows the open line.
        QTRY_COMPARE(f.cloudly->callCount("registerClusterRelay"), 1);
        QCOMPARE(f.cloudly->lastRequest("getClusterRelayCertificate")->rawRequest, QByteArray(R"({"domain":"localhost"})"));
        QVERIFY(portAccepts(f.relayPort));
        QCOMPARE(f.relay->listenerPort(), f.relayPort);
        QVERIFY(f.relay->checkReadiness().ready);
        // LO-02: a node verifies the listener against the certificate Cloudly issued for the origin's
        // domain over the session (getClusterRelayCertificate above is the relay's only source of it).
        auto node = f.connectNode("node-a");
        QVERIFY(node->isConnected());
        QVERIFY(node->sslErrors().isEmpty());
        QVERIFY(f.stopRelay());
        QVERIFY(!portAccepts(f.relayPort));
    }

    // LO-08, LO-09: no relay block: no listener, the relay still opens for dispatch.
    void noRelayBlockOpensNoListener_LO08_LO09()
    {
        RelayFixture f(false);
        QVERIFY(f.startRelay());
        QVERIFY(log.contains("its nodes target Cloudly directly"));
        QCOMPARE(f.cloudly->callCount("getClusterRelayCertificate"), 0);
        QVERIFY(!portAccepts(f.relayPort));
        QCOMPARE(f.relay->statusSnapshot().listener.listening, false);
    }

    // ST-03, LO-01..LO-06, LO-10, CF-09/CF-10: every failing start step rolls back what started (the
    // Cloudly session is closed, no port stays bound) and names its cause.
    void failedStartRollsBack_ST03_data()
    {
        QTest::addColumn<QString>("scenario");
        QTest::addColumn<QString>("expected");
        QTest::newRow("bearer refused") << "bearer" << "relay-identity-unverified";
        QTest::newRow("certificate for another domain LO-03") << "domain" << "does not name that domain";
        QTest::newRow("expired certificate LO-05") << "expired" << "is expired";
        QTest::newRow("key does not match LO-04") << "mismatch" << "does not match its private key";
        QTest::newRow("origin port differs LO-01") << "port" << "listener-origin-port-mismatch: the relay origin";
        QTest::newRow("leaf without its chain D-66") << "leafonly" << "is incomplete: its chain ends at a certificate no trusted root issued";
        QTest::newRow("chain out of order D-66") << "foreignca" << "is incomplete: certificate 1 of the PEM is not issued by the one after it";
        QTest::newRow("half VPN pair CF-14") << "vpnhalf" << "configuration-invalid: COREFLOW_VPN_BIND_HOSTNAME is missing";
        QTest::newRow("node id missing CF-09") << "nodeid" << "COREFLOW_NODE_ID";
        QTest::newRow("invalid relay block LO-10") << "block" << "relay.origin";
        QTest::newRow("listener port taken") << "bind" << "listener-bind-failed";
        QTest::newRow("config refused") << "config" << "Cloudly refused the cluster config read";
    }
    void failedStartRollsBack_ST03()
    {
        QFETCH(QString, scenario);
        QFETCH(QString, expected);
        RelayFixture f;
        RelayConfiguration config = f.configuration();
        QTcpServer occupier;
        if (scenario == "bearer")
            config.bearer = Secret(QByteArrayLiteral("not-the-bearer"));
        else if (scenario == "domain")
            f.cloudly->setRelayCertificate(f.ca.issueForHost("other.example.com"), "localhost");
        else if (scenario == "expired")
            f.cloudly->setRelayCertificate(f.ca.issueExpired("localhost", {"localhost"}, {}));
        else if (scenario == "mismatch")
            f.cloudly->setRelayCertificate(f.ca.issueMismatchedForHost("localhost"));
        else if (scenario == "port")
            f.cloudly->setRelayOrigin(QStringLiteral("https://localhost:%1").arg(f.relayPort + 1));
        else if (scenario == "leafonly" || scenario == "foreignca") {
            peers::IssuedCertificate material = f.ca.issueLocalhost();
            material.certPem = material.cert.toPem();
            if (scenario == "foreignca")
                material.certPem += peers::TestCertificateAuthority(QStringLiteral("Another CA")).caPem();
            f.cloudly->setRelayCertificate(material, "localhost");
        } else if (scenario == "vpnhalf")
            config.vpnQuicPort = QStringLiteral("4433");
        else if (scenario == "nodeid")
            config.nodeId.clear();
        else if (scenario == "block")
            f.cloudly->setRelayOrigin(QStringLiteral("http://localhost:%1").arg(f.relayPort));
        else if (scenario == "bind")
            QVERIFY(occupier.listen(QHostAddress("127.0.0.1"), f.relayPort));
        else if (scenario == "config")
            f.cloudly->setAnswer("getClusterConfig", Answer::refuse(QLatin1StringView("relay-not-connected"), "not yet"));
        f.makeRelay(config);
        QSignalSpy started(f.relay.get(), &Coreflow::started);
        f.relay->start();
        const QString reason = f.waitForStartFailure();
        QVERIFY2(reason.contains(expected), qPrintable(reason));
        QVERIFY(started.isEmpty());
        QVERIFY(!f.relay->isOpen());
        QTRY_COMPARE(f.cloudly->connectionCount(), 0); // the Cloudly session was rolled back
        if (scenario != "bind")
            QVERIFY(!portAccepts(f.relayPort));
        QVERIFY(!log.contains("the relay is open for Cloudly dispatch"));
        QVERIFY(!reason.contains(QString::fromUtf8(f.bearer)));
    }

    // CF-16: without a relay block the VPN pair is not read: one variable alone still boots.
    void halfVpnPairWithoutRelayBlockBoots_CF16()
    {
        RelayFixture f(false);
        RelayConfiguration config = f.configuration();
        config.vpnBindHostname = QStringLiteral("198.51.100.4");
        f.makeRelay(config);
        QVERIFY(f.startRelay());
    }

    // D-19, LO-01 (found by an independent peer): an origin without a port is not taken as 443; the
    // port is checked only when the origin names one, so the default bind starts behind a portless origin.
    void portlessOriginIsNotChecked_LO01_D19()
    {
        RelayFixture f;
        f.cloudly->setRelayOrigin(QStringLiteral("https://localhost"));
        QVERIFY(f.startRelay());
        QVERIFY(portAccepts(f.relayPort));
        QCOMPARE(f.relay->statusSnapshot().listener.origin, QStringLiteral("https://localhost"));
    }

    // D-66: a complete chain (leaf, then its CA, a self-signed root) is accepted and served in order.
    void completeChainIsAccepted_D64()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        QSslSocket probe;
        probe.setSslConfiguration(f.ca.clientConfiguration());
        probe.connectToHostEncrypted(QStringLiteral("localhost"), f.relayPort);
        QTRY_VERIFY(probe.isEncrypted());
        QCOMPARE(probe.peerCertificateChain().size(), 2);
        QCOMPARE(probe.peerCertificateChain().last(), f.ca.caCertificate());
    }

    // ST-06, UC-12, UC-14: a stop waits for Cloudly calls in flight; one that cannot finish inside the
    // stop deadline is reported failed (the executable then exits 1).
    void stopThatCannotCompleteFails_ST06()
    {
        RelayFixture f;
        contract::RelayTiming timing;
        timing.stopDeadlineMs = 5000; // shorter than the 8000 ms forward bound below
        f.makeRelay(f.configuration(), timing);
        f.cloudly->setAnswer("registerClusterRelay", peers::Answer::silence()); // the relay's own call stays in flight
        QVERIFY(f.startRelay());
        QTRY_COMPARE(f.cloudly->callCount("registerClusterRelay"), 1);
        QSignalSpy stopped(f.relay.get(), &Coreflow::stopped);
        f.relay->stop();
        f.clock.advance(4999); // one millisecond before the stop deadline
        QVERIFY(f.settleCloudlyHop()); // the event loop ran: a stop queued meanwhile would show now
        QVERIFY(stopped.isEmpty()); // waiting for the call in flight (UC-12)
        f.clock.advance(1);
        QTRY_COMPARE(stopped.size(), 1);
        QCOMPARE(stopped.first().first().toBool(), false);
        QVERIFY(log.contains("stop did not complete in time"));
    }

    // CL-02: an upgrade anywhere but "/" is refused before the 101; plain HTTP outside /v2/ is refused
    // by name, not with a bare 404.
    void listenerSurface_CL02()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        peers::SimulatedPalletNode::Options options;
        options.url = QUrl(QStringLiteral("wss://localhost:%1/elsewhere").arg(f.relayPort));
        options.caCertificates = {f.ca.caCertificate()};
        peers::SimulatedPalletNode stray(options);
        QSignalSpy failed(&stray, &peers::SimulatedPalletNode::connectionFailed);
        QSignalSpy connected(&stray, &peers::SimulatedPalletNode::connected);
        stray.open();
        QTRY_VERIFY(!failed.isEmpty() || !connected.isEmpty());
        QVERIFY(connected.isEmpty());

        QNetworkAccessManager http;
        QNetworkRequest request(QUrl(QStringLiteral("https://localhost:%1/foo").arg(f.relayPort)));
        QSslConfiguration tls = QSslConfiguration::defaultConfiguration();
        tls.setCaCertificates({f.ca.caCertificate()});
        request.setSslConfiguration(tls);
        std::unique_ptr<QNetworkReply> reply(http.get(request));
        QTRY_VERIFY(reply->isFinished());
        QCOMPARE(reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt(), 404);
        QVERIFY(reply->readAll().contains("path-not-served"));

        // CL-04: /v2/ on the same port and certificate is the image pull endpoint: it is forwarded to
        // CLOUDLY_URL's origin (the loopback Cloudly speaks no registry API, so whatever it answers —
        // or the relay's named 502 — proves the pull endpoint handled it), and a write is refused by name.
        QNetworkRequest v2(QUrl(QStringLiteral("https://localhost:%1/v2/").arg(f.relayPort)));
        v2.setSslConfiguration(tls);
        std::unique_ptr<QNetworkReply> pull(http.get(v2));
        QTRY_VERIFY_WITH_TIMEOUT(pull->isFinished(), 15000);
        const QByteArray pullBody = pull->readAll();
        QVERIFY2(!pullBody.contains("path-not-served"), pullBody.constData());
        std::unique_ptr<QNetworkReply> push(http.put(v2, QByteArray("x")));
        QTRY_VERIFY(push->isFinished());
        QCOMPARE(push->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt(), 405);
        QVERIFY(push->readAll().contains("registry-method-refused"));
    }

    // CL-01: the two method tables are separate: a node cannot call a push, Cloudly cannot call a node method.
    void lanesCannotAnswerEachOther_CL01()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        auto node = f.registeredNode("node-a");
        QString text;
        node->callWithSession("applyRuntimeAssignment", {}, [&](const peers::PeerFrame &answer) { text = answer.errorRefusal().text(); });
        QTRY_VERIFY(!text.isEmpty());
        QVERIFY2(text.startsWith("method-not-served: the relay listener serves no method applyRuntimeAssignment"), qPrintable(text));

        QString cloudlyText;
        f.cloudly->push("registerPalletRuntimeSession", QByteArray(R"({"nodeId":"x"})"),
                        [&](const peers::PeerFrame &answer) { cloudlyText = answer.errorRefusal().text(); });
        QTRY_VERIFY(!cloudlyText.isEmpty());
        QVERIFY2(cloudlyText.startsWith("method-not-served: the Cloudly session serves no method registerPalletRuntimeSession"),
                 qPrintable(cloudlyText));
    }

    // ST-02: before the open step the Cloudly lane serves no push (handlers are registered at "handlers").
    void noDispatchBeforeOpen_ST02()
    {
        RelayFixture f;
        f.cloudly->setAnswer("getClusterConfig", Answer::silence());
        f.makeRelay(f.configuration());
        f.relay->start();
        QTRY_COMPARE(f.cloudly->callCount("getClusterConfig"), 1);
        QString text;
        f.cloudly->push("applyRuntimeAssignment", QByteArray(R"({"session":{"nodeId":"n","clusterId":"c","sessionId":"s","relayRegistrationGeneration":0}})"),
                        [&](const peers::PeerFrame &answer) { text = answer.errorRefusal().name; });
        QTRY_VERIFY(!text.isEmpty());
        QCOMPARE(text, QStringLiteral("relay-starting")); // D-01
        QVERIFY(!f.relay->isOpen());
    }
};

COREFLOW_EPOLL_TEST_MAIN(TstRelayBoot)
#include "tst_relayboot.moc"
