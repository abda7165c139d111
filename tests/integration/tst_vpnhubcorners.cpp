// The managed VPN hub's corners through a running relay (docs/contract.md §6.6 vpnHub, §6.8, §11.2,
// §11.8, §18), issue 21: a destination member that reads nothing fills its bounded queue and what
// goes beyond is dropped and counted `queue-full` while the sender and the other members keep going;
// a kernel that refuses UDP_SEGMENT (EIO) makes the hub fall back to one message per packet for good,
// losing nothing; the network is pulled again on every accepted registration, after a Cloudly
// reconnect too, a `null` answer binding nothing; and no key (the hub's static private key, the
// members' private keys, the transport keys both sides derive, the listener's TLS key) reaches a log
// line, the status, the status socket, `coreflow-console --text/--json/--metrics` or a refusal text.
// Rule ids: VH-03, VH-05, VH-08, VH-15, VH-16, RR-12, CF-13 and issue 21's bounded queues.
#include "tests/integration/logcapture.h"
#include "tests/integration/relayfixture.h"
#include "tests/integration/vpnhubscenario.h"
#include "tests/peers/simulatedvpnmember.h"
#include "tests/support/canaryrelay.h"
#include "tests/support/epolltestmain.h"

#include "service/vpn/noisekeypair.h"
#include "service/vpn/vpnhub.h"
#include "service/vpn/vpnquicserver.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QLocalSocket>
#include <QProcess>
#include <QSignalSpy>
#include <QTest>

#include <cerrno>
#include <sys/socket.h>

using namespace coreflow;
using namespace coreflow::testing;
using coreflow::peers::SimulatedVpnMember;

namespace {

// Every spelling a key could leak in.
QList<QByteArray> spellings(const QByteArray &secret)
{
    return {secret, secret.toBase64(), secret.toBase64(QByteArray::Base64UrlEncoding | QByteArray::OmitTrailingEquals),
            secret.toBase64(QByteArray::OmitTrailingEquals), secret.toHex(), secret.toHex().toUpper()};
}

// The names of the canaries found in haystack (empty: none).
QStringList leaks(const QList<QPair<QString, QByteArray>> &canaries, const QByteArray &haystack)
{
    QStringList found;
    for (const auto &[name, secret] : canaries)
        for (const QByteArray &spelling : spellings(secret))
            if (haystack.contains(spelling)) {
                found << name;
                break;
            }
    return found;
}

} // namespace

class TestVpnHubCorners : public QObject, private VpnHubScenario {
    Q_OBJECT

    LogCapture m_log;

    // Starts f's relay with a hub and the given pulled answer; true once it is open and registered.
    bool startAndRegister(RelayFixture &f)
    {
        if (!startRelayWithHub(f))
            return false;
        return QTest::qWaitFor([&] { return f.cloudly->callCount(QStringLiteral("registerClusterRelay")) == 1; }, 5000);
    }

    bool reconnectCloudly(RelayFixture &f, int registrations)
    {
        if (!f.takeCloudlySessionDown() || !f.bringCloudlySessionBack())
            return false;
        return QTest::qWaitFor([&] { return f.cloudly->callCount(QStringLiteral("registerClusterRelay")) == registrations; }, 5000);
    }

private slots:
    void initTestCase() { m_log.install(); }

    // Issue 21 (bounded queues), §11.8 Bounds and drop causes, §18.1 vpn per-member drops: B reads
    // nothing (no ACK reaches the hub, so its congestion window never reopens); of A's flood to B the
    // hub keeps at most maxQueuedDatagrams waiting and drops the rest as `queue-full`, counted in
    // total and under A, the sender. A stays connected and keeps reaching C, and C reaches A.
    void destinationThatDoesNotReadFillsItsQueueAndTheRestIsDroppedQueueFull()
    {
        RelayFixture f;
        QVERIFY(startAndRegister(f));
        const Member a = member(1), b = member(2), c = member(3);
        QCOMPARE(apply(f, networkJson(1, {a, b, c}, {{a.nodeId, b.nodeId}, {a.nodeId, c.nodeId}, {c.nodeId, a.nodeId}}, f.clock.nowMs()))
                     .value(QStringLiteral("state"))
                     .toString(),
                 QStringLiteral("applied"));
        auto peerA = connectMember(f, a);
        auto peerB = connectMember(f, b);
        auto peerC = connectMember(f, c);
        QVERIFY(peerA && peerA->isHandshakeDone());
        QVERIFY(peerB && peerB->isHandshakeDone());
        QVERIFY(peerC && peerC->isHandshakeDone());
        QTRY_COMPARE(f.relay->statusSnapshot().vpn.membersConnected, 3);
        const int bound = f.relay->vpnHub()->server()->limits().maxQueuedDatagrams;
        QVERIFY(bound >= 16);

        peerB->setDiscardIncoming(true);
        const int flood = bound + 200;
        for (int i = 0; i < flood; ++i)
            peerA->sendPacket(packet(a, b, 1000, char('a' + i % 26)));
        QTRY_COMPARE_WITH_TIMEOUT(memberStatus(f, a.nodeId).packetsIn, qint64(flood), 20000);

        const auto vpn = f.relay->statusSnapshot().vpn;
        const auto statusA = memberStatus(f, a.nodeId);
        const auto statusB = memberStatus(f, b.nodeId);
        const qint64 queueFull = vpn.drops.value(QStringLiteral("queue-full"));
        // Forwarded (sent or queued) plus dropped is every packet A sent; at most the bound waits, and
        // no more than a congestion window of ngtcp2's (a few 1000-byte datagrams) went out before.
        QCOMPARE(statusB.packetsOut + queueFull, qint64(flood));
        QVERIFY2(queueFull >= flood - bound - 32, qPrintable(QStringLiteral("queue-full %1 of %2, bound %3").arg(queueFull).arg(flood).arg(bound)));
        QVERIFY(statusB.packetsOut >= bound);
        QCOMPARE(statusA.drops.value(QStringLiteral("queue-full")), queueFull);
        QCOMPARE(qint64(f.relay->vpnHub()->server()->counters().queueFull), queueFull);
        QCOMPARE(statusB.drops.value(QStringLiteral("queue-full")), 0); // counted under the sender only
        QCOMPARE(vpn.drops.size(), 1);                                   // nothing else was dropped

        // The sender and the other members are unaffected.
        QVERIFY(!peerA->isClosed() && !peerC->isClosed());
        peerA->sendPacket(packet(a, c, 600, 'C'));
        QTRY_COMPARE(peerC->receivedPackets().size(), 1);
        QCOMPARE(peerC->receivedPackets().first(), packet(a, c, 600, 'C'));
        peerC->sendPacket(packet(c, a, 700, 'A'));
        QTRY_COMPARE(peerA->receivedPackets().size(), 1);
        QCOMPARE(peerA->receivedPackets().first(), packet(c, a, 700, 'A'));
        QCOMPARE(f.relay->statusSnapshot().vpn.drops.value(QStringLiteral("queue-full")), queueFull);
        QCOMPARE(f.relay->statusSnapshot().vpn.membersConnected, 3);
    }

    // §11.8 and issue 21 (GSO where it helps): the kernel refuses a UDP_SEGMENT message with EIO (a
    // device without segmentation offload); the hub sends that run packet by packet, stops asking for
    // GSO for good (counted once), and every packet of this burst and the next reaches B in order.
    void refusedUdpSegmentFallsBackToPlainSendsAndKeepsDelivering()
    {
        RelayFixture f;
        QVERIFY(startAndRegister(f));
        const Member a = member(1), b = member(2);
        QCOMPARE(apply(f, networkJson(1, {a, b}, {{a.nodeId, b.nodeId}}, f.clock.nowMs())).value(QStringLiteral("state")).toString(),
                 QStringLiteral("applied"));
        auto peerA = connectMember(f, a);
        auto peerB = connectMember(f, b);
        QVERIFY(peerA && peerA->isHandshakeDone());
        QVERIFY(peerB && peerB->isHandshakeDone());
        // From here on the first run of packets to one peer is the burst's datagrams to B (the
        // handshakes are done: nothing QUIC would retransmit).
        VpnQuicServer *server = f.relay->vpnHub()->server();
        int gsoAsked = 0;
        int plainMessages = 0;
        // As the kernel would: the plain messages before the first GSO one go out; a GSO message
        // first in line fails the call with EIO.
        server->setMessageSender([&](int fd, ::mmsghdr *messages, unsigned count) -> int {
            unsigned plain = 0;
            while (plain < count && messages[plain].msg_hdr.msg_controllen == 0)
                ++plain;
            if (plain == 0) {
                ++gsoAsked;
                errno = EIO;
                return -1;
            }
            plainMessages += int(plain);
            return ::sendmmsg(fd, messages, plain, 0);
        });

        QList<QByteArray> sent;
        for (int burst = 0; burst < 2; ++burst) {
            for (int i = 0; i < 30; ++i) {
                sent << packet(a, b, 1000, char('A' + burst * 30 % 26 + i % 26));
                peerA->sendPacket(sent.last());
            }
            QTRY_COMPARE_WITH_TIMEOUT(peerB->receivedPackets().size(), sent.size(), 10000);
            if (burst == 0)
                QVERIFY2(gsoAsked == 1, "the burst's datagrams to B were one run: the hub asked for GSO once");
        }
        QCOMPARE(peerB->receivedPackets(), sent);
        QCOMPARE(gsoAsked, 1);
        QCOMPARE(server->counters().gsoRefused, quint64(1));
        QVERIFY(plainMessages > 0);
        QCOMPARE(f.relay->statusSnapshot().vpn.drops.value(QStringLiteral("queue-full")), 0);
        QCOMPARE(memberStatus(f, b.nodeId).packetsOut, qint64(sent.size()));
    }

    // VH-15, VH-16, §6.8: getClusterVpnNetwork is pulled after every accepted registration: the
    // first, and each re-registration after a Cloudly reconnect. A null answer binds nothing (the UDP
    // port stays free); a later pull carrying a network binds it; a pull of a later revision that
    // leaves a member out cuts it (0x101), as a push would.
    void networkPulledOnEveryAcceptedRegistrationAndNullBindsNothing()
    {
        RelayFixture f;
        QVERIFY(startAndRegister(f));
        QTRY_COMPARE(f.cloudly->callCount(QStringLiteral("getClusterVpnNetwork")), 1);
        QVERIFY(f.settleCloudlyHop());
        QVERIFY(!f.relay->statusSnapshot().vpn.bound);
        QCOMPARE(f.relay->statusSnapshot().vpn.state, QStringLiteral("idle"));

        // Reconnect 1: pulled again, still null, still nothing bound.
        QVERIFY(reconnectCloudly(f, 2));
        QTRY_COMPARE(f.cloudly->callCount(QStringLiteral("getClusterVpnNetwork")), 2);
        QVERIFY(f.settleCloudlyHop());
        QVERIFY(!f.relay->statusSnapshot().vpn.bound);
        {
            QUdpSocket probe;
            QVERIFY2(probe.bind(QHostAddress::LocalHost, m_vpnPort), "a null network binds nothing");
        }

        // Reconnect 2: Cloudly now holds a network; the pull binds it.
        const Member a = member(1), b = member(2);
        answerPull(f, networkJson(4, {a, b}, {{a.nodeId, b.nodeId}}, f.clock.nowMs()));
        QVERIFY(reconnectCloudly(f, 3));
        QTRY_COMPARE(f.cloudly->callCount(QStringLiteral("getClusterVpnNetwork")), 3);
        QTRY_VERIFY(f.relay->statusSnapshot().vpn.bound);
        QCOMPARE(f.relay->statusSnapshot().vpn.networkRevision, std::optional<qint64>(4));
        auto peerA = connectMember(f, a);
        auto peerB = connectMember(f, b);
        QVERIFY(peerA && peerA->isHandshakeDone() && peerB && peerB->isHandshakeDone());

        // Reconnect 3: the pull brings revision 5 without B: B is cut, A stays.
        answerPull(f, networkJson(5, {a}, {}, f.clock.nowMs()));
        QVERIFY(reconnectCloudly(f, 4));
        QTRY_COMPARE(f.cloudly->callCount(QStringLiteral("getClusterVpnNetwork")), 4);
        QTRY_COMPARE(f.relay->statusSnapshot().vpn.networkRevision, std::optional<qint64>(5));
        QTRY_VERIFY(peerB->isClosed());
        QCOMPARE(peerB->closeCode(), std::optional<quint64>(0x101));
        QVERIFY(!peerA->isClosed());

        // Reconnect 4: a null answer now changes nothing held (the hub stays bound on revision 5).
        answerPull(f, QJsonValue(QJsonValue::Null));
        QVERIFY(reconnectCloudly(f, 5));
        QTRY_COMPARE(f.cloudly->callCount(QStringLiteral("getClusterVpnNetwork")), 5);
        QVERIFY(f.settleCloudlyHop());
        QVERIFY(f.relay->statusSnapshot().vpn.bound);
        QCOMPARE(f.relay->statusSnapshot().vpn.networkRevision, std::optional<qint64>(5));
        QVERIFY(!peerA->isClosed());
    }

    // VH-03, §11.4, §18: key canaries through a running relay with the hub bound and in use. The hub's
    // static pair is a known one (Coreflow::setVpnHubStaticKeys), so its private half is a canary
    // beside the members' private keys, the transport keys of both members (before and after a
    // rekey), a stranger's key and the listener's TLS key. None appears in any log line, the status
    // snapshot, the status socket's bytes, the real coreflow-console's --text, --json and --metrics
    // output (with the hub's and the members' VPN families, issue 21), or any refusal text; the hub's public key does appear (the checks can see a key).
    void keysNeverInLogsStatusConsoleOrRefusals()
    {
        m_log.clear();
        RelayFixture f;
        const peers::IssuedCertificate listenerCert = f.ca.issueLocalhost();
        QVERIFY(!listenerCert.isNull());
        f.cloudly->setRelayCertificate(listenerCert);
        const Member a = member(1), b = member(2), stranger = member(7);
        // The first pull carries a private key where none belongs: refused, logged, never quoted.
        QJsonObject pulled = networkJson(1, {a, b}, {{a.nodeId, b.nodeId}, {b.nodeId, a.nodeId}}, f.clock.nowMs());
        {
            QJsonArray members = pulled.value(QStringLiteral("members")).toArray();
            QJsonObject first = members.at(0).toObject();
            first.insert(QStringLiteral("privateKey"), QString::fromLatin1(a.privateKey.toBase64()));
            members.replace(0, first);
            pulled.insert(QStringLiteral("members"), members);
        }
        answerPull(f, pulled);
        RelayConfiguration config = hubConfiguration(f);
        config.statusSocketPath = f.dir.filePath(QStringLiteral("status.sock"));
        f.makeRelay(config);
        const QByteArray hubPrivate = peers::PeerNoiseInitiator::newPrivateKey();
        f.relay->setVpnHubStaticKeys([hubPrivate] { return vpn::NoiseKeyPair::fromPrivateKey(Secret(hubPrivate)); });
        QVERIFY(f.startRelay());
        QTRY_COMPARE(f.cloudly->callCount(QStringLiteral("registerClusterRelay")), 1);
        QTRY_COMPARE(f.cloudly->callCount(QStringLiteral("getClusterVpnNetwork")), 1);
        QCOMPARE(advertisedHubKey(f), peers::PeerNoiseInitiator::publicKeyOf(hubPrivate));
        QTRY_VERIFY(m_log.contains(QStringLiteral("the pulled network was not applied")));

        QStringList refusals; // every refusal text Cloudly received
        auto refusalOf = [&](const QJsonObject &network) {
            const QJsonObject answer = apply(f, network);
            refusals << answer.value(QStringLiteral("text")).toString();
            return answer.value(QStringLiteral("refusal")).toString();
        };
        QCOMPARE(refusalOf(pulled), QStringLiteral("request-invalid"));
        QCOMPARE(apply(f, networkJson(2, {a, b}, {{a.nodeId, b.nodeId}, {b.nodeId, a.nodeId}}, f.clock.nowMs())).value(QStringLiteral("state")).toString(),
                 QStringLiteral("applied"));
        QCOMPARE(refusalOf(networkJson(3, {a, b}, {}, f.clock.nowMs(), QStringLiteral("authority-9"))), QStringLiteral("vpn-network-authority-foreign"));
        QCOMPARE(refusalOf(networkJson(1, {a}, {}, f.clock.nowMs())), QStringLiteral("vpn-network-revision-stale"));

        auto peerA = connectMember(f, a);
        auto peerB = connectMember(f, b);
        QVERIFY(peerA && peerA->isHandshakeDone() && peerB && peerB->isHandshakeDone());
        const QByteArray keysA = peerA->transportKeys(), keysB = peerB->transportKeys();
        QCOMPARE(keysA.size(), 64);
        peerA->sendPacket(packet(a, b, 300, 'k'));
        QTRY_COMPARE(peerB->receivedPackets().size(), 1);
        peerA->rekey();
        QTRY_COMPARE(peerA->rekeyCount(), 1);
        const QByteArray rekeyedA = peerA->transportKeys();
        QVERIFY(rekeyedA != keysA);
        peerB->sendPacket(packet(b, a, 300, 'r'));
        QTRY_COMPARE(peerA->receivedPackets().size(), 1);
        // A stranger's handshake is refused (0x100) and leaves one refusal line at most.
        auto peerStranger = connectMember(f, stranger);
        QVERIFY(peerStranger);
        QTRY_VERIFY(peerStranger->isClosed());
        QCOMPARE(peerStranger->closeCode(), std::optional<quint64>(0x100));

        // The status socket, raw.
        QLocalSocket client;
        QByteArray received;
        connect(&client, &QLocalSocket::readyRead, this, [&] { received += client.readAll(); });
        client.connectToServer(config.statusSocketPath);
        QVERIFY(client.waitForConnected(5000));
        client.write(R"({"type":"hello","version":1,"subscribe":true})" "\n");
        QTRY_VERIFY(received.contains("\"snapshot\""));
        // The real console, each output mode.
        QByteArray consoleOutput;
        for (const char *mode : {"--text", "--json", "--metrics"}) {
            QProcess proc;
            QSignalSpy finished(&proc, &QProcess::finished);
            proc.start(QStringLiteral(COREFLOW_CONSOLE_BINARY), {QString::fromLatin1(mode), QStringLiteral("--socket"), config.statusSocketPath});
            QVERIFY(finished.wait(10000));
            QCOMPARE(proc.exitCode(), 0);
            const QByteArray out = proc.readAllStandardOutput() + proc.readAllStandardError();
            if (mode == QByteArrayView("--text")) {
                QVERIFY2(out.contains("VPN HUB"), out.constData());
                QVERIFY2(out.contains(peers::PeerNoiseInitiator::publicKeyOf(hubPrivate).toBase64()), out.constData());
                QVERIFY2(out.contains("node-1") && out.contains("node-2"), out.constData());
            }
            if (mode == QByteArrayView("--metrics")) {
                // The VPN families are in what the canaries are checked against (§18.3, issue 21).
                QVERIFY2(out.contains("coreflow_relay_vpn_hub_bound 1\n"), out.constData());
                QVERIFY2(out.contains("coreflow_relay_vpn_members_connected 2\n"), out.constData());
                QVERIFY2(out.contains("coreflow_relay_vpn_network_revision 2\n"), out.constData());
                QVERIFY2(out.contains(R"(coreflow_relay_vpn_member_packets_total{member="node-1",address="100.96.0.11",direction="in"} 1)"),
                         out.constData());
                QVERIFY2(out.contains(R"(coreflow_relay_vpn_member_bytes_total{member="node-1",address="100.96.0.11",direction="out"} 300)"),
                         out.constData());
            }
            consoleOutput += out;
        }
        const QByteArray status = QJsonDocument(f.relay->statusSnapshot().toJson()).toJson(QJsonDocument::Compact);
        QVERIFY(status.contains(peers::PeerNoiseInitiator::publicKeyOf(hubPrivate).toBase64()));
        client.disconnectFromServer();
        QVERIFY(f.stopRelay());

        QList<QPair<QString, QByteArray>> canaries{{QStringLiteral("hub static private key"), hubPrivate},
                                                   {QStringLiteral("member A private key"), a.privateKey},
                                                   {QStringLiteral("member B private key"), b.privateKey},
                                                   {QStringLiteral("stranger private key"), stranger.privateKey}};
        const QList<QPair<QString, QByteArray>> transport{{QStringLiteral("A"), keysA}, {QStringLiteral("A rekeyed"), rekeyedA}, {QStringLiteral("B"), keysB}};
        for (const auto &[name, keys] : transport) {
            canaries.append({QStringLiteral("transport send key of ") + name, keys.left(32)});
            canaries.append({QStringLiteral("transport receive key of ") + name, keys.mid(32)});
        }
        for (const QByteArray &listenerKey : CanaryRelay::keyCanariesOf(listenerCert))
            canaries.append({QStringLiteral("listener TLS key"), listenerKey});
        const QByteArray logText = m_log.lines().join(QLatin1Char('\n')).toUtf8();
        QVERIFY(m_log.lines().size() > 10);
        QCOMPARE(refusals.size(), 3);
        auto none = [&](const char *where, const QByteArray &haystack) {
            const QStringList found = leaks(canaries, haystack);
            if (!found.isEmpty())
                qWarning("%s leaks: %s", where, qPrintable(found.join(QStringLiteral(", "))));
            return found.isEmpty();
        };
        for (const QString &text : std::as_const(refusals)) {
            QVERIFY(!text.isEmpty());
            QVERIFY(none("a refusal text", text.toUtf8()));
        }
        QVERIFY(none("coreflow-console --text/--json/--metrics", consoleOutput));
        QVERIFY(none("the status socket", received));
        QVERIFY(none("the status snapshot", status));
        QVERIFY(none("the log", logText));
    }
};

COREFLOW_EPOLL_TEST_MAIN(TestVpnHubCorners)
#include "tst_vpnhubcorners.moc"
