// Status socket canaries against a REAL relay: the in-process relay (RelayFixture) holds a canary in
// every secret it carries — its bearer, the identity token Cloudly issued, the listener private key
// Cloudly served, the nodes' bearers, a route table's private key and a DNS lease renewal signature —
// and a raw client on its real status socket, plus the console's --text/--json renderings of what it
// received, show none of them (raw, base64 or hex). Also: a client that never reads is dropped at the
// queue bound while the relay keeps forwarding node calls.
#include "tests/support/epolltestmain.h"
#include "tests/integration/logcapture.h"
#include "tests/integration/relayfixture.h"
#include "tests/support/canaryrelay.h"

#include "service/cloudly/cloudlyconnector.h"
#include "service/escrow/leaseescrow.h"
#include "shared/contract/envelope.h"
#include "tests/peers/dnsleaserenewalrunbuilder.h"
#include "service/statussocket/statusserver.h"
#include "console/terminalview.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QLocalSocket>
#include <QRandomGenerator>
#include <QSignalSpy>
#include <QTest>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

using namespace coreflow;
using namespace coreflow::testing;
using Builder = coreflow::peers::DnsLeaseRenewalRunBuilder;

namespace {

QString unique(const char *prefix)
{
    return QString::fromLatin1(prefix) + QString::number(QRandomGenerator::global()->generate64(), 36);
}

QJsonObject routeTable(qint64 revision, const QString &privateKey)
{
    const QJsonObject target{{"nodeId", "node-a"}, {"address", "10.0.0.5"}, {"port", 30080}};
    return QJsonObject{
        {"clusterId", "cluster-1"},
        {"revision", revision},
        {"computedAt", 1700000000000LL + revision},
        {"routes", QJsonArray{QJsonObject{{"hostname", "a.example.com"}, {"certificateId", "cert-a"}, {"targets", QJsonArray{target}}}}},
        {"certificates", QJsonArray{QJsonObject{{"id", "cert-a"},
                                                {"hostnames", QJsonArray{"a.example.com"}},
                                                {"certificatePem", "-----BEGIN CERTIFICATE-----\nBBBB\n-----END CERTIFICATE-----\n"},
                                                {"privateKeyPem", privateKey}}}}};
}

// Every spelling a canary could leak in.
QList<QByteArray> spellings(const QByteArray &canary)
{
    return {canary, canary.toBase64(), canary.toBase64(QByteArray::Base64UrlEncoding | QByteArray::OmitTrailingEquals),
            canary.toHex(), canary.toHex().toUpper()};
}

int connectRaw(const QString &path)
{
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    const QByteArray p = QFile::encodeName(path);
    std::memcpy(addr.sun_path, p.constData(), size_t(p.size()));
    if (::connect(fd, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

} // namespace

class TstStatusSocketCanary : public QObject {
    Q_OBJECT
    LogCapture log;

private Q_SLOTS:
    void initTestCase() { log.install(); }

    void realRelayStatusSocketLeaksNoSecret()
    {
        RelayFixture f;
        CanaryRelay relay(f); // the listener key Cloudly serves is a canary too
        QVERIFY(relay.start());
        QVERIFY(f.relay->statusServer());
        auto &a = relay.a;
        auto &b = relay.b;

        // A route table carrying a canary private key (docs/contract.md §10.4-10.5).
        const QString routeKeyCanary = unique("route-key-canary-");
        const QString routeKeyPem = QStringLiteral("-----BEGIN PRIVATE KEY-----\n%1\n-----END PRIVATE KEY-----\n").arg(routeKeyCanary);
        f.cloudly->setClusterRouteTable(routeTable(7, routeKeyPem));
        bool pushed = false;
        f.cloudly->push(QStringLiteral("pushClusterRouteTable"),
                        contract::Envelope::compact({{"routeTable", routeTable(7, routeKeyPem)}}),
                        [&](const peers::PeerFrame &x) { pushed = !x.hasError(); });
        QTRY_VERIFY(pushed);

        // A DNS lease renewal run whose signatures are canaries.
        const QString signatureCanary = unique("lease-signature-canary-");
        const auto binding = *a->session();
        const auto projection = Builder::projection(QStringLiteral("proj-1"), 1);
        QJsonArray renewals = Builder::grid(binding, projection, f.clock.nowMs(), 3);
        for (qsizetype i = 0; i < renewals.size(); ++i) {
            QJsonObject r = renewals.at(i).toObject();
            r.insert(QStringLiteral("signature"), signatureCanary + QString::number(i));
            renewals.replace(i, r);
        }
        bool held = false;
        f.cloudly->push(QStringLiteral("holdRuntimeNetworkDnsLeaseRenewals"), Builder::holdRequest(binding, projection, renewals),
                        [&](const peers::PeerFrame &x) { held = !x.hasError(); });
        QTRY_VERIFY(held);
        QVERIFY(f.relay->escrow()->holdsRunFor(QStringLiteral("node-a")));

        // A forward, so the nodes table has content.
        bool answered = false;
        a->callWithSession(QStringLiteral("getRuntimeRegistryCredential"), {}, [&](const peers::PeerFrame &) { answered = true; });
        QTRY_VERIFY(answered);

        // A raw client on the real socket: hello, subscribe; everything it receives is kept.
        QLocalSocket client;
        QByteArray received;
        connect(&client, &QLocalSocket::readyRead, this, [&] { received += client.readAll(); });
        client.connectToServer(relay.statusSocketPath());
        QVERIFY(client.waitForConnected(5000));
        client.write(R"({"type":"hello","version":1,"subscribe":true})" "\n");
        QTRY_VERIFY(received.contains('\n'));
        // Changes reach it as events and coalesced snapshots.
        answered = false;
        b->callWithSession(QStringLiteral("getRuntimeRegistryCredential"), {}, [&](const peers::PeerFrame &) { answered = true; });
        QTRY_VERIFY(answered);
        f.clock.advance(300);
        QTRY_VERIFY(received.count("\"type\":\"snapshot\"") >= 2);

        // The console renders what it received.
        std::optional<status::RelayStatus> snapshot;
        for (const QByteArray &line : received.split('\n')) {
            const QJsonObject o = QJsonDocument::fromJson(line).object();
            if (o.value(QStringLiteral("type")).toString() == QLatin1String("snapshot"))
                snapshot = status::RelayStatus::fromJson(o.value(QStringLiteral("status")).toObject());
        }
        QVERIFY(snapshot);
        QVERIFY(!snapshot->nodes.isEmpty());
        QVERIFY(!snapshot->escrow.isEmpty());
        QVERIFY(snapshot->ingress.routeTableRevision.has_value());
        const QByteArray text = console::TerminalView::renderText(*snapshot).toUtf8();
        const QByteArray json = console::TerminalView::renderJson(*snapshot);

        QList<QByteArray> canaries{f.bearer, routeKeyCanary.toUtf8(), signatureCanary.toUtf8(), "node-bearer-node-a",
                                   "node-bearer-node-b"};
        for (const QJsonObject &identity : f.cloudly->issuedIdentities())
            canaries << identity.value(QStringLiteral("token")).toString().toUtf8();
        // The listener key: its PEM body lines (the base64 of the DER) and the DER itself.
        canaries << relay.listenerKeyCanaries();
        QVERIFY(canaries.size() >= 8);
        for (const QByteArray &canary : std::as_const(canaries)) {
            QVERIFY(canary.size() >= 16);
            for (const QByteArray &spelling : spellings(canary)) {
                QVERIFY2(!received.contains(spelling), "status socket bytes leak a secret");
                QVERIFY2(!text.contains(spelling), "console --text leaks a secret");
                QVERIFY2(!json.contains(spelling), "console --json leaks a secret");
            }
        }
        client.disconnectFromServer();
        QVERIFY(f.stopRelay());
    }

    void stuckClientIsDroppedWhileTheRelayKeepsForwarding()
    {
        RelayFixture f;
        RelayConfiguration config = f.configuration();
        config.statusSocketPath = f.dir.filePath(QStringLiteral("status.sock"));
        config.statusMaxQueuedBytes = 16 * 1024;
        f.makeRelay(config);
        QVERIFY(f.startRelay());
        StatusServer *server = f.relay->statusServer();
        QVERIFY(server);
        QSignalSpy dropped(server, &StatusServer::clientDropped);
        auto a = f.registeredNode("node-a");

        QLocalSocket good;
        int goodSnapshots = 0;
        QByteArray goodBuffer;
        connect(&good, &QLocalSocket::readyRead, this, [&] {
            goodBuffer += good.readAll();
            goodSnapshots = int(goodBuffer.count("\"type\":\"snapshot\""));
        });
        good.connectToServer(config.statusSocketPath);
        QVERIFY(good.waitForConnected(5000));
        good.write(R"({"type":"hello","version":1,"subscribe":true})" "\n");
        QTRY_COMPARE(goodSnapshots, 1);

        const int stuck = connectRaw(config.statusSocketPath);
        QVERIFY(stuck >= 0);
        const QByteArray hello = R"({"type":"hello","version":1,"subscribe":true})" "\n";
        QCOMPARE(::write(stuck, hello.constData(), size_t(hello.size())), ssize_t(hello.size()));
        QTRY_COMPARE(server->clientCount(), 2);

        // The relay forwards node calls; each changes the status (a coalesced snapshot per 250 ms).
        int forwards = 0;
        for (int i = 0; i < 2000 && dropped.isEmpty(); ++i) {
            bool answered = false;
            a->callWithSession(QStringLiteral("getRuntimeRegistryCredential"), {}, [&](const peers::PeerFrame &x) {
                answered = !x.hasError();
            });
            QTRY_VERIFY(answered);
            ++forwards;
            f.clock.advance(250);
            // Pacing, not a wait for a condition: lets the relay write its coalesced snapshot before the next step.
            QTest::qWait(1);
        }
        QCOMPARE(dropped.size(), 1);
        QVERIFY(dropped[0][0].toString().startsWith(QStringLiteral("status-consumer-too-slow")));
        QCOMPARE(server->clientCount(), 1);

        // The relay still forwards, and the good console still gets snapshots.
        const int before = goodSnapshots;
        for (int i = 0; i < 3; ++i) {
            bool answered = false;
            a->callWithSession(QStringLiteral("getRuntimeRegistryCredential"), {}, [&](const peers::PeerFrame &x) {
                answered = !x.hasError();
            });
            QTRY_VERIFY(answered);
            f.clock.advance(250);
        }
        QTRY_VERIFY(goodSnapshots > before);
        QCOMPARE(good.state(), QLocalSocket::ConnectedState);
        qInfo("stuck client dropped after %d forwards", forwards);
        ::close(stuck);
        good.disconnectFromServer();
        QVERIFY(f.stopRelay());
    }
};

COREFLOW_EPOLL_TEST_MAIN(TstStatusSocketCanary)
#include "tst_statussocketcanary.moc"
