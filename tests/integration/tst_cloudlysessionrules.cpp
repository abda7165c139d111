// Rules of the relay's own Cloudly session that no other test named (issue 16), each checked through a
// running relay against the loopback Cloudly (docs/contract.md §6, §19.1):
// OV-05 (the bearer is read once), OV-07 (no connection tags), OV-11 (no bearer is ever fetched),
// WD-03 (config and certificate only over the session), WD-07/WD-10 (the reads after an acceptance wait
// for one), WD-12 (a refused read is logged in Cloudly's words), WD-13 (no relay block: nothing
// registered, nothing read after), RR-11 (an unpublishable bind is logged and never replaced),
// RR-17 (a transport failure of a call is logged by class and code).
#include "tests/support/epolltestmain.h"
#include "tests/integration/logcapture.h"
#include "tests/integration/relayfixture.h"

#include "service/app/relayconfiguration.h"
#include "service/cloudly/cloudlyconnector.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QProcessEnvironment>
#include <QScopeGuard>
#include <QSet>
#include <QSslConfiguration>
#include <QSslSocket>
#include <QTest>

using namespace coreflow;
using namespace coreflow::testing;
using coreflow::peers::Answer;

namespace {

// Written out from docs/contract.md §6 and §23: every method the relay itself calls on Cloudly in this
// release (§5: the closure and VPN calls are not made yet; the bindings lane reads the desired state
// after an acceptance, §6.9, and reports, §12.5), and the methods it carries for nodes (§8.1) and the
// cluster ingress (§10.1). None of them delivers a bearer (OV-11).
const QSet<QString> kOwnCalls{"exchangeClusterRelayAuthorization", "registerCloudlyClientSession", "refreshClusterIdentity",
                              "getClusterConfig", "getClusterRelayCertificate", "registerClusterRelay", "getClusterRouteTable",
                              "getClusterPlatformDesiredState", "reportClusterPlatformBindingStatus"};
const QSet<QString> kCarriedCalls{"registerPalletRuntimeSession", "getRuntimeManagedVpnCredential", "getRuntimeRegistryCredential",
                                  "reportRuntimeNetworkProtection", "reportRuntimeAssignmentObservation",
                                  "reportRuntimeAssignmentTerminalReceipt", "getRuntimeSecretRecipientState",
                                  "beginRuntimeSecretRecipientEnrollment", "completeRuntimeSecretRecipientEnrollment",
                                  "getRuntimeAssignmentSecretMaterial", "registerClusterIngress"};

QJsonObject bodyOf(const peers::ReceivedFrame &frame) { return QJsonDocument::fromJson(frame.rawRequest).object(); }
QJsonObject frameOf(const peers::ReceivedFrame &frame) { return QJsonDocument::fromJson(frame.rawFrame).object(); }

bool writeFile(const QString &path, const QByteArray &bytes)
{
    QFile file(path);
    return file.open(QIODevice::WriteOnly | QIODevice::Truncate) && file.write(bytes) == bytes.size();
}

} // namespace

class TstCloudlySessionRules : public QObject {
    Q_OBJECT
    LogCapture log;


    // Drops the session and moves the clock to each redial until `method` was called once more.
    static void reconnectUntil(RelayFixture &f, const QString &method)
    {
        const int before = f.cloudly->callCount(method);
        f.cloudly->dropRelaySockets();
        // Each poll steps the injected clock to the next reconnect attempt (the backoff is on the clock).
        (void)QTest::qWaitFor([&] { // verified just below
            const qint64 due = f.relay->cloudly()->reconnectDueMs();
            if (due > f.clock.nowMs())
                f.clock.advance(due - f.clock.nowMs());
            return f.cloudly->callCount(method) > before;
        }, 8000);
        QVERIFY(f.cloudly->callCount(method) > before);
    }

private Q_SLOTS:
    void init()
    {
        log.install();
        log.clear();
    }

    // OV-05: the bearer is read once, at start, from its source (here a systemd credential file); a
    // changed file is not picked up by a later exchange on a new socket.
    void bearerIsReadOnceAtStart_OV05()
    {
        RelayFixture f;
        QTemporaryDir credentials;
        QVERIFY(credentials.isValid());
        const QString file = credentials.filePath("SERVEZONE_CLUSTER_RELAY_AUTHORIZATION");
        QVERIFY(writeFile(file, f.bearer));
        // The process environment names the directory, as systemd does (so a relay that read the
        // source again would find the changed file).
        qputenv("CREDENTIALS_DIRECTORY", QFile::encodeName(credentials.path()));
        auto unset = qScopeGuard([] { qunsetenv("CREDENTIALS_DIRECTORY"); });
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        environment.remove("SERVEZONE_CLUSTER_RELAY_AUTHORIZATION");
        environment.insert("CLOUDLY_URL", f.cloudly->url().toString());
        environment.insert("COREFLOW_NODE_ID", "node-relay");
        environment.insert("COREFLOW_RELAY_BIND_HOSTNAME", "127.0.0.1");
        environment.insert("COREFLOW_RELAY_BIND_PORT", QString::number(f.relayPort));
        auto read = ConfigurationReader(environment, credentials.filePath("no-docker-secrets")).read();
        if (!read)
            QFAIL(qPrintable(read.refusal().text()));
        RelayConfiguration config = std::move(read).value();
        config.extraCaCertificates = {f.ca.caCertificate()};
        f.makeRelay(config);
        QVERIFY(f.startRelay());
        QCOMPARE(bodyOf(*f.cloudly->lastRequest("exchangeClusterRelayAuthorization")).value("authorization").toString().toUtf8(),
                 f.bearer);

        QVERIFY(writeFile(file, QByteArrayLiteral("a-bearer-written-after-the-start")));
        reconnectUntil(f, "exchangeClusterRelayAuthorization");
        const auto exchanges = f.cloudly->requests("exchangeClusterRelayAuthorization");
        QCOMPARE(exchanges.size(), 2);
        for (const auto &exchange : exchanges)
            QCOMPARE(bodyOf(exchange).value("authorization").toString().toUtf8(), f.bearer);
        QTRY_VERIFY(f.relay->cloudly()->isDispatchable());
    }

    // OV-07, OV-11: over a whole session life (start, a carried node, an identity renewal, a reconnect)
    // every frame the relay writes to Cloudly is the plain envelope (no member where a connection tag
    // could travel) and every request is one of the contract's calls: none sets a tag, none asks
    // for a bearer.
    void ownCallsSetNoTagAndFetchNoBearer_OV07_OV11()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        QTRY_COMPARE(f.cloudly->callCount("getClusterRouteTable"), 1);
        auto node = f.registeredNode("node-a");
        QVERIFY(node->session());
        bool answered = false;
        node->callWithSession("reportRuntimeNetworkProtection", {{"protection", "on"}}, [&](const peers::PeerFrame &) { answered = true; });
        QTRY_VERIFY(answered);
        QVERIFY(f.renewIdentity(true));
        // A registration the renewal set off may still be in flight when the socket drops (then it is
        // lost with it): what the check needs is one registration on the new socket, whatever came before.
        const int registrationsBeforeReconnect = f.cloudly->callCount("registerClusterRelay");
        reconnectUntil(f, "registerCloudlyClientSession");
        QTRY_VERIFY_WITH_TIMEOUT(f.cloudly->callCount("registerClusterRelay") > registrationsBeforeReconnect, 15000);
        QVERIFY(f.settleCloudlyHop());

        int requests = 0;
        for (const auto &frame : f.cloudly->frames()) {
            QVERIFY2(frame.parsed, frame.rawFrame.constData());
            const QJsonObject envelope = frameOf(frame);
            const QSet<QString> allowed = frame.phase == peers::Phase::Request
                                              ? QSet<QString>{"method", "request", "correlation"}
                                              : QSet<QString>{"method", "request", "response", "error", "retry", "correlation"};
            for (const QString &key : envelope.keys())
                QVERIFY2(allowed.contains(key), qPrintable(frame.method + " carries the member " + key));
            QCOMPARE(envelope.value("correlation").toObject().keys(), (QStringList{"id", "phase"}));
            if (frame.phase != peers::Phase::Request)
                continue;
            ++requests;
            QVERIFY2(kOwnCalls.contains(frame.method) || kCarriedCalls.contains(frame.method), qPrintable(frame.method));
        }
        QVERIFY(requests >= 10);

        // OV-11: a bearer Cloudly stops accepting is not replaced by asking Cloudly for another: the
        // relay offers the one it started with on every new socket and calls nothing else.
        const QByteArray original = f.bearer;
        f.cloudly->setBearer(QByteArrayLiteral("a-bearer-the-relay-was-never-given"));
        f.cloudly->clearLog();
        // The second redial comes only after the relay handled the first refusal: whatever it did about
        // that refusal on the first socket has arrived by then.
        reconnectUntil(f, "exchangeClusterRelayAuthorization");
        reconnectUntil(f, "exchangeClusterRelayAuthorization");
        QVERIFY(!f.relay->cloudly()->isDispatchable());
        QSet<QString> called;
        for (const auto &frame : f.cloudly->frames())
            if (frame.phase == peers::Phase::Request)
                called.insert(frame.method);
        QCOMPARE(called, (QSet<QString>{"exchangeClusterRelayAuthorization"}));
        for (const auto &exchange : f.cloudly->requests("exchangeClusterRelayAuthorization"))
            QCOMPARE(bodyOf(exchange).value("authorization").toString().toUtf8(), original);
    }

    // WD-03: the cluster config and the listener certificate come over the Cloudly session (the
    // certificate once, the config at start and after each accepted registration), and nothing else
    // reaches Cloudly's origin: every HTTP request to it is recorded (httpFront), and
    // there is none. The listener serves exactly the certificate the session delivered.
    void configAndCertificateOnlyOverTheSession_WD03()
    {
        RelayFixture f(true, [](peers::LoopbackCloudly::Options &o) { o.httpFront = true; });
        f.cloudly->setHttpPassthrough(RelayFixture::freePort(), {"/token"});
        const auto material = f.ca.issueLocalhost();
        f.cloudly->setRelayCertificate(material);
        QVERIFY(f.startRelay());
        QCOMPARE(f.cloudly->callCount("getClusterConfig"), 1);
        QCOMPARE(f.cloudly->callCount("getClusterRelayCertificate"), 1);
        QCOMPARE(bodyOf(*f.cloudly->lastRequest("getClusterRelayCertificate")).value("domain").toString(), QStringLiteral("localhost"));
        QTRY_COMPARE(f.cloudly->callCount("registerClusterRelay"), 1);

        QSslSocket tls;
        QSslConfiguration ssl = QSslConfiguration::defaultConfiguration();
        ssl.setCaCertificates({f.ca.caCertificate()});
        tls.setSslConfiguration(ssl);
        tls.connectToHostEncrypted(QStringLiteral("127.0.0.1"), f.relayPort, QStringLiteral("localhost"));
        QTRY_VERIFY(tls.isEncrypted());
        QCOMPARE(tls.peerCertificate(), material.cert);
        tls.abort();
        QVERIFY(f.settleCloudlyHop());
        QCOMPARE(f.cloudly->pipedHttpPaths(), QStringList{});
        QCOMPARE(f.cloudly->totalConnections(), 1);
        // At start, and again (over the session) after the accepted registration: the Corestore
        // endpoints are adopted from it (contract §6.4, §15 "Endpoint", CS-03).
        QTRY_COMPARE(f.cloudly->callCount("getClusterConfig"), 2);
        QCOMPARE(f.cloudly->callCount("getClusterRelayCertificate"), 1);
    }

    // WD-07, WD-10: what follows an acceptance (in this release the route table read, contract §6.0
    // step 4) waits for one: not while the first registration is unanswered, not on a new socket
    // before its registration is accepted, and it runs again after each acceptance.
    void readsAfterAcceptanceWaitForOne_WD07_WD10()
    {
        RelayFixture f;
        f.cloudly->setAnswer("registerClusterRelay", Answer::silence());
        QVERIFY(f.startRelay());
        QTRY_COMPARE(f.cloudly->callCount("registerClusterRelay"), 1);
        QVERIFY(f.settleCloudlyHop());
        QCOMPARE(f.cloudly->callCount("getClusterRouteTable"), 0);
        // The unanswered call ends at its bound; a refusal is not an acceptance either.
        f.cloudly->setAnswer("registerClusterRelay", Answer::refuse(QLatin1StringView("relay-identity-unverified"), "not now"));
        f.clock.advance(8000);
        QVERIFY(f.renewIdentity(true));
        QTRY_COMPARE(f.cloudly->callCount("registerClusterRelay"), 2);
        QVERIFY(f.settleCloudlyHop());
        QCOMPARE(f.cloudly->callCount("getClusterRouteTable"), 0);
        f.cloudly->clearHandler("registerClusterRelay");
        QVERIFY(f.renewIdentity(true));
        QTRY_COMPARE(f.cloudly->callCount("getClusterRouteTable"), 1);

        // WD-10: a lost session pauses the reads until the next socket's registration is accepted.
        f.cloudly->setAnswer("registerClusterRelay", Answer::silence());
        reconnectUntil(f, "registerClusterRelay");
        QVERIFY(f.settleCloudlyHop());
        QCOMPARE(f.cloudly->callCount("getClusterRouteTable"), 1);
        f.cloudly->clearHandler("registerClusterRelay");
        f.clock.advance(8000);
        QVERIFY(f.renewIdentity(true));
        QTRY_COMPARE(f.cloudly->callCount("getClusterRouteTable"), 2);
    }

    // WD-12: a read Cloudly refuses is logged in Cloudly's own words and the relay keeps running (the
    // route table read of §6.7; the desired-state read of §6.9 is not built).
    void refusedReadLoggedInCloudlysWords_WD12()
    {
        RelayFixture f;
        const QString words = QStringLiteral("relay-ambiguous: the relay election names relays node-relay and node-b");
        f.cloudly->setAnswer("getClusterRouteTable", Answer::errorRaw(QJsonDocument(QJsonObject{{"text", words}, {"data", QJsonObject{{"name", "relay-ambiguous"}}}}).toJson(QJsonDocument::Compact)));
        QVERIFY(f.startRelay());
        QTRY_COMPARE(f.cloudly->callCount("getClusterRouteTable"), 1);
        QVERIFY(f.settleCloudlyHop());
        QVERIFY2(log.contains(words), qPrintable(log.lines().join('\n')));
        QVERIFY(f.relay->cloudly()->isDispatchable());
        QTRY_VERIFY(f.relay->checkReadiness().ready);
        auto node = f.registeredNode("node-a");
        QVERIFY(node->session());
    }

    // WD-13: a cluster without a relay block registers nothing and reads nothing that follows an
    // acceptance, on the first socket, after a renewal and after a reconnect.
    void noRelayBlockRegistersAndReadsNothing_WD13()
    {
        RelayFixture f(false);
        QVERIFY(f.startRelay());
        QVERIFY(f.renewIdentity(true));
        reconnectUntil(f, "registerCloudlyClientSession");
        QTRY_VERIFY(f.relay->cloudly()->isDispatchable());
        QVERIFY(f.settleCloudlyHop());
        QSet<QString> called;
        for (const auto &frame : f.cloudly->frames())
            if (frame.phase == peers::Phase::Request)
                called.insert(frame.method);
        QCOMPARE(called, (QSet<QString>{"exchangeClusterRelayAuthorization", "registerCloudlyClientSession",
                                        "refreshClusterIdentity", "getClusterConfig"}));
    }

    // RR-11: a loopback bind is sent verbatim; Cloudly's relay-endpoint-unpublishable is logged naming
    // the address and the variable to fix, nothing is torn down, and later registrations carry the same
    // bound value (never a substitute).
    void unpublishableBindLoggedNeverReplaced_RR11()
    {
        RelayFixture f;
        f.cloudly->setAnswer("registerClusterRelay",
                             Answer::refuse(QLatin1StringView("relay-endpoint-unpublishable"), "127.0.0.1 is a loopback address"));
        QVERIFY(f.startRelay());
        auto node = f.registeredNode("node-a");
        QVERIFY(node->session());
        QTRY_COMPARE(f.cloudly->callCount("registerClusterRelay"), 1);
        QTRY_VERIFY(log.contains("listen address 127.0.0.1 cannot be published; fix COREFLOW_RELAY_BIND_HOSTNAME"));
        QVERIFY(log.contains("relay-endpoint-unpublishable"));
        QVERIFY(f.renewIdentity(true));
        QTRY_COMPARE(f.cloudly->callCount("registerClusterRelay"), 2);
        QVERIFY(f.settleNodeHop(*node)); // the refusal tore nothing down (RR-16)
        QVERIFY(node->isConnected());
        reconnectUntil(f, "registerClusterRelay");
        for (const auto &sent : f.cloudly->requests("registerClusterRelay")) {
            const QJsonObject relay = bodyOf(sent).value("relay").toObject();
            QCOMPARE(relay.value("listenAddress").toString(), QStringLiteral("127.0.0.1"));
            QCOMPARE(relay.value("listenPort").toInt(), int(f.relayPort));
        }
        QTRY_COMPARE(log.count("listen address 127.0.0.1 cannot be published"), 3);
        QCOMPARE(f.relay->statusSnapshot().listener.address, QStringLiteral("127.0.0.1"));
    }

    // RR-17: a call's transport failure is logged with its class (the refusal name) and its code (the
    // failure): a connection cut mid-call, and a call Cloudly never answers within its bound.
    void transportFailureLoggedByClassAndCode_RR17()
    {
        RelayFixture f;
        f.cloudly->setAnswer("registerClusterRelay", Answer::dropConnection());
        QVERIFY(f.startRelay());
        QTRY_VERIFY(log.contains("registerClusterRelay failed in transport: cloudly-session-lost: the Cloudly session closed before it answered"));
        f.cloudly->setAnswer("registerClusterRelay", Answer::silence());
        log.clear();
        reconnectUntil(f, "registerClusterRelay");
        QVERIFY(f.settleCloudlyHop());
        QVERIFY(!log.contains("registerClusterRelay failed in transport"));
        f.clock.advance(8000);
        QTRY_VERIFY2(log.contains("registerClusterRelay failed in transport: cloudly-forward-timeout: "), qPrintable(log.lines().join('\n')));
        QVERIFY(log.contains("cloudly-forward-timeout: no answer from Cloudly within 8000 ms"));
    }
};

COREFLOW_EPOLL_TEST_MAIN(TstCloudlySessionRules)
#include "tst_cloudlysessionrules.moc"
