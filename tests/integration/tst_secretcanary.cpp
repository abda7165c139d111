// Secret canaries: a unique bearer (and the identity token and listener key Cloudly hands out, and
// the nodes' own bearers) never appear in any log line, status output or error, across a whole
// scenario: boot, registrations, forwards, refusals, an identity renewal, a reconnect and a stop.
// Rules: OV-08, OV-09, OV-10, FW-19, FW-22, LO-07, UC-16.
#include "tests/support/epolltestmain.h"
#include "tests/integration/logcapture.h"
#include "tests/integration/relayfixture.h"

#include "service/cloudly/cloudlyconnector.h"

#include <QDir>
#include <QDirIterator>
#include <QJsonDocument>
#include <QTest>

using namespace coreflow;
using namespace coreflow::testing;
using coreflow::peers::Answer;

class TstSecretCanary : public QObject {
    Q_OBJECT
    LogCapture log;

private Q_SLOTS:
    void initTestCase() { log.install(); }
    void canariesNeverLeak_OV08_FW19_LO07()
    {
        RelayFixture f;
        f.cloudly->options().identityLifetimeMs = 120000; // renewal due inside the scenario
        QVERIFY(f.startRelay());
        QStringList texts; // every error text anyone received

        auto a = f.registeredNode("node-a");
        auto b = f.registeredNode("node-b");
        const QByteArray vpnCanary = "vpn-credential-canary-" + QByteArray::number(qrand_like());
        f.cloudly->setAnswer("getRuntimeManagedVpnCredential",
                             Answer::respondRaw("{\"credential\":{\"privateKey\":\"" + vpnCanary + "\"}}"));
        bool got = false;
        a->callWithSession("getRuntimeManagedVpnCredential", {}, [&](const peers::PeerFrame &x) { got = x.raw.contains(vpnCanary); });
        QTRY_VERIFY(got); // delivered to the node that asked ...
        // ... refusals in several places
        b->call("getRuntimeRegistryCredential", QByteArray(R"({"session":{"nodeId":"node-a","clusterId":"x","sessionId":"y","relayRegistrationGeneration":0},"token":"reg-canary"})"),
                [&](const peers::PeerFrame &x) { texts << x.errorRefusal().text(); });
        f.cloudly->push("applyRuntimeAssignment", QByteArray(R"({"session":{"nodeId":"ghost","clusterId":"c","sessionId":"s","relayRegistrationGeneration":0},"secretMaterial":"assign-canary"})"),
                        [&](const peers::PeerFrame &x) { texts << x.errorRefusal().text(); });
        QTRY_COMPARE(texts.size(), 2);
        // identity renewal on the open socket, then a reconnect with a fresh authentication
        const qint64 renewal = f.relay->cloudly()->identityRenewalDueMs();
        QVERIFY(renewal > f.clock.nowMs());
        f.clock.advance(renewal - f.clock.nowMs());
        QTRY_COMPARE(f.cloudly->callCount("refreshClusterIdentity"), 1);
        QTRY_COMPARE(f.cloudly->callCount("registerCloudlyClientSession"), 2);
        f.cloudly->dropRelaySockets();
        (void)QTest::qWaitFor([&] {
            const qint64 due = f.relay->cloudly()->reconnectDueMs();
            if (due > 0)
                f.clock.advance(due - f.clock.nowMs());
            return f.cloudly->callCount("exchangeClusterRelayAuthorization") >= 2;
        }, 4000);
        QTRY_COMPARE(f.cloudly->callCount("exchangeClusterRelayAuthorization"), 2);
        QTRY_VERIFY(f.relay->cloudly()->isDispatchable());
        const QByteArray status = QJsonDocument(f.relay->statusSnapshot().toJson()).toJson();
        QVERIFY(f.stopRelay());

        QStringList canaries{QString::fromUtf8(f.bearer), QString::fromUtf8(vpnCanary), "reg-canary", "assign-canary",
                             "node-bearer-node-a", "node-bearer-node-b"};
        for (const QJsonObject &identity : f.cloudly->issuedIdentities())
            canaries << identity.value("token").toString();
        QVERIFY(canaries.size() >= 8);
        const QStringList lines = log.lines();
        QVERIFY(lines.size() > 20);
        for (const QString &canary : canaries) {
            QVERIFY(!canary.isEmpty());
            for (const QString &line : lines)
                QVERIFY2(!line.contains(canary), qPrintable(QStringLiteral("log line leaks a secret: ") + line));
            QVERIFY2(!status.contains(canary.toUtf8()), "status leaks a secret");
            for (const QString &text : texts)
                QVERIFY2(!text.contains(canary), qPrintable(text));
        }
        // OV-09: the bearer travelled in exactly one body kind: the authorization exchange.
        for (const auto &frame : f.cloudly->frames()) {
            if (frame.method == "exchangeClusterRelayAuthorization")
                QVERIFY(frame.rawRequest.contains(f.bearer));
            else
                QVERIFY2(!frame.rawFrame.contains(f.bearer), qPrintable(frame.method));
        }
        // OV-10: nothing written to the working directory or the fixture's temp dir.
        QDirIterator it(f.dir.path(), QDir::Files, QDirIterator::Subdirectories);
        QVERIFY(!it.hasNext());
    }

private:
    static quint32 qrand_like() { return quint32(QDateTime::currentMSecsSinceEpoch() & 0xffffff); }
};

COREFLOW_EPOLL_TEST_MAIN(TstSecretCanary)
#include "tst_secretcanary.moc"
