// What strangers' refused input may cost the relay's log beyond WebSocket frames (docs/contract.md
// §3.1 "Refusal log bound", D-61, D-70; issue 14 review gap 2), through a running relay on real TLS
// sockets and its ManualClock: refused WebSocket upgrades, refused plain HTTP requests, refused
// ingress registrations and registrations held while Cloudly is away all log under the one bound
// (per connection 1st, 2nd, 4th, ...; at most 10 lines per 1000 ms overall, then one summary line).
// Rules: CI-24 (ingress registration validated before forwarding), FW-02 (registration waits).
#include "tests/support/epolltestmain.h"
#include "tests/peers/peerframe.h"
#include "tests/integration/logcapture.h"
#include "tests/integration/relayfixture.h"
#include "tests/peers/answer.h"
#include "tests/peers/loopbackingress.h"

#include <QSslSocket>
#include <QTest>

using namespace coreflow;
using namespace coreflow::testing;

namespace {
// Sends request on a new TLS connection and waits until the relay answered or closed it.
bool sendOnNewConnection(quint16 port, const QList<QSslCertificate> &ca, const QByteArray &request)
{
    QSslSocket socket;
    QSslConfiguration tls = QSslConfiguration::defaultConfiguration();
    tls.setCaCertificates(ca);
    socket.setSslConfiguration(tls);
    socket.connectToHostEncrypted(QStringLiteral("localhost"), port);
    if (!QTest::qWaitFor([&] { return socket.isEncrypted(); }, 5000))
        return false;
    socket.write(request);
    QByteArray in;
    (void)QTest::qWaitFor([&] { // the verdict is read from `in` below
        in += socket.readAll();
        return in.contains("\r\n\r\n") || socket.state() != QAbstractSocket::ConnectedState;
    }, 5000);
    in += socket.readAll();
    return in.startsWith("HTTP/1.1 4");
}

QByteArray ingressRegistrationFrame(int i)
{
    // A servable offer, then a body the registration reader refuses (no ingress member).
    return QByteArrayLiteral(R"({"method":"registerClusterIngress","request":{"offer":{"sessionKind":"clusterIngress","release":"33.1.0"},"bogus":1},"correlation":{"id":"ing-)")
           + QByteArray::number(i) + R"(","phase":"request"}})";
}
} // namespace

class TstStrangerLogBound : public QObject {
    Q_OBJECT
    LogCapture log;

private Q_SLOTS:
    void init()
    {
        log.install();
        log.clear();
    }

    // 40 connections each asking for a WebSocket upgrade outside "/": every one is refused 404, 10
    // lines are logged in the first second, and the next second opens with "30 more ... not logged".
    void refusedUpgradesLogUnderTheBound()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        const QByteArray upgrade = "GET /elsewhere HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                                   "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n";
        for (int i = 0; i < 40; ++i)
            QVERIFY(sendOnNewConnection(f.relayPort, {f.ca.caCertificate()}, upgrade));
        QCOMPARE(log.count(QStringLiteral("refused a WebSocket upgrade")), 10);
        f.clock.advance(1000);
        QVERIFY(sendOnNewConnection(f.relayPort, {f.ca.caCertificate()}, upgrade));
        QCOMPARE(log.count(QStringLiteral("refused a WebSocket upgrade")), 11);
        QVERIFY2(log.contains(QStringLiteral("30 more refusals were not logged")), qPrintable(log.lines().join('\n')));
    }

    // 40 plain HTTP requests the listener's bounds refuse (413: a request to the listener carries no
    // body), each on its own connection: 10 lines, then the summary.
    void refusedHttpRequestsLogUnderTheBound()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        const QByteArray request = "GET /v2/ HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\n\r\n";
        for (int i = 0; i < 40; ++i)
            QVERIFY(sendOnNewConnection(f.relayPort, {f.ca.caCertificate()}, request));
        QCOMPARE(log.count(QStringLiteral("request refused 413")), 10);
        f.clock.advance(1000);
        QVERIFY(sendOnNewConnection(f.relayPort, {f.ca.caCertificate()}, request));
        QCOMPARE(log.count(QStringLiteral("request refused 413")), 11);
        QVERIFY2(log.contains(QStringLiteral("30 more refusals were not logged")), qPrintable(log.lines().join('\n')));
    }

    // One connection sending 40 ingress registrations the reader refuses: all answered, 6 lines
    // (1st, 2nd, 4th, 8th, 16th, 32nd) with their counts; nothing reaches Cloudly.
    void refusedIngressRegistrationsLogOnPowersOfTwo_CI24()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        auto stranger = f.connectNode(QStringLiteral("stranger"));
        for (int i = 1; i <= 40; ++i)
            QVERIFY(stranger->sendRaw(ingressRegistrationFrame(i)));
        QTRY_VERIFY(stranger->answerFor(QStringLiteral("ing-40")).has_value());
        QVERIFY(stranger->answerFor(QStringLiteral("ing-40"))->rawError.contains("registration-invalid"));
        QCOMPARE(log.count(QStringLiteral("refused registerClusterIngress")), 6);
        QVERIFY(log.contains(QStringLiteral("(32 on this connection)")));
        QCOMPARE(f.cloudly->callCount("registerClusterIngress"), 0);
    }

    // Issue 14 review (defect 6, "never the log"): a stranger whose registerClusterIngress is valid
    // (servable offer, readable body) is carried to Cloudly, and Cloudly refuses it. Each attempt is
    // stranger-caused, so its lines fall under the one bound (§3.1, D-63): one unregistered connection
    // retrying 40 times (one in flight at a time, §3.4) within one window on the ManualClock writes at
    // most 10 lines plus the summary. Before: every attempt logged "carrying registerClusterIngress" and
    // "Cloudly refused registerClusterIngress" unthrottled (80 lines).
    void ingressRegistrationsCloudlyRefusesLogUnderTheBound_CI22()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        f.cloudly->setAnswer(QStringLiteral("registerClusterIngress"),
                             peers::Answer::errorRaw(R"({"text":"cluster-ingress-registration-refused: ingress-unknown: no ingress record","data":{"name":"cluster-ingress-registration-refused","reason":"ingress-unknown","retryAfterMs":60000}})"));
        peers::LoopbackIngress::Options options;
        options.ingressId = QStringLiteral("ingress-stranger");
        options.bearer = QByteArrayLiteral("not-a-bearer-cloudly-knows");
        options.release = QStringLiteral("33.1.0");
        options.url = QUrl(QStringLiteral("wss://localhost:%1/").arg(f.relayPort));
        options.caCertificates = {f.ca.caCertificate()};
        peers::LoopbackIngress stranger(options);
        stranger.open();
        QTRY_VERIFY(stranger.isConnected());
        for (int i = 0; i < 40; ++i) {
            bool answered = false;
            bool refused = false;
            stranger.registerIngress([&](const peers::PeerFrame &a) {
                answered = true;
                refused = a.hasError();
            });
            QTRY_VERIFY(answered);
            QVERIFY(refused);
        }
        QCOMPARE(f.cloudly->callCount("registerClusterIngress"), 40);
        int relayLines = 0;
        for (const QString &line : log.lines())
            if (!line.contains(QLatin1String(" coreflow.peers.")) && line.contains(QLatin1String("registerClusterIngress")))
                ++relayLines;
        QVERIFY2(relayLines <= 11, qPrintable(QStringLiteral("%1 relay lines for 40 refused attempts of one stranger").arg(relayLines)));
    }

    // 20 connections registering while Cloudly is away: each is held, but only 10 "holding" lines are
    // written in that second.
    void heldRegistrationsLogUnderTheBound_FW02()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        std::vector<std::unique_ptr<peers::SimulatedPalletNode>> nodes;
        for (int i = 0; i < 20; ++i)
            nodes.push_back(f.connectNode(QStringLiteral("node-%1").arg(i)));
        QVERIFY(f.takeCloudlySessionDown());
        int barrier = 0;
        for (auto &node : nodes) {
            node->call(QStringLiteral("registerPalletRuntimeSession"), node->registrationRequest());
            // The second is refused at once (one request in flight): its answer orders the first.
            node->call(QStringLiteral("registerPalletRuntimeSession"), node->registrationRequest(),
                       [&](const peers::PeerFrame &) { ++barrier; });
        }
        QTRY_COMPARE_WITH_TIMEOUT(barrier, 20, 10000);
        QCOMPARE(log.count(QStringLiteral("holding registerPalletRuntimeSession")), 10);
    }
};

COREFLOW_EPOLL_TEST_MAIN(TstStrangerLogBound)
#include "tst_strangerlogbound.moc"
