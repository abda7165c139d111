// Silent peers on both hops (docs/contract.md §3.3, D-56): a Cloudly or a node that goes quiet
// without closing is detected on the injected clock within the stated deadline (no byte for
// RelayTiming::sessionSilenceDeadlineMs = 45000 ms; a Ping after 15000 ms of quiet), and the lost
// session takes exactly the path of a closed one. The network failure is a BlackholingProxy: bytes
// accepted and dropped, never a FIN or RST.
#include "tests/support/descriptorcount.h"
#include "tests/support/epolltestmain.h"
#include "tests/peers/peerframe.h"
#include "tests/integration/logcapture.h"
#include "tests/integration/relayfixture.h"
#include "tests/peers/blackholingproxy.h"
#include "tests/peers/dnsleaserenewalrunbuilder.h"
#include "tests/peers/loopbackingress.h"

#include "service/cloudly/cloudlyconnector.h"
#include "service/forwarding/reregistrationwave.h"
#include "service/forwarding/sessionforwarder.h"
#include "service/transport/sessionkeepalive.h"
#include "service/transport/sockethandoffserver.h"
#include "service/transport/tcpdialer.h"
#include "service/transport/tlsconnection.h"
#include "service/transport/websocketsession.h"
#include "shared/contract/refusalnames.h"
#include "shared/contract/timing.h"

#include <QDir>
#include <QJsonArray>
#include <QCoreApplication>
#include <QJsonDocument>
#include <QSignalSpy>
#include <QTcpSocket>
#include <QTest>

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

using namespace coreflow;
using namespace coreflow::testing;
using Builder = coreflow::peers::DnsLeaseRenewalRunBuilder;

namespace {
constexpr qint64 kPing = 15000;    // RelayTiming{}.sessionPingIntervalMs
constexpr qint64 kSilence = 45000; // RelayTiming{}.sessionSilenceDeadlineMs
const QString holdMethod = QStringLiteral("holdRuntimeNetworkDnsLeaseRenewals");
const QString renewalMethod = QStringLiteral("applyRuntimeNetworkDnsLeaseRenewal");

// Bytes the raw peer end of a socket pair has received so far (non-blocking); eof set at end of file.
QByteArray drain(int fd, bool *eof = nullptr)
{
    QByteArray out;
    char buffer[4096];
    for (;;) {
        const ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n > 0) {
            out.append(buffer, n);
            continue;
        }
        if (eof)
            *eof = n == 0;
        return out;
    }
}

int intOption(int fd, int level, int name)
{
    int value = -1;
    socklen_t length = sizeof value;
    if (::getsockopt(fd, level, name, &value, &length) != 0)
        return -1;
    return value;
}

// Steps the clock in at most stepMs, letting the event loop run between steps (Pongs from the live
// peers arrive in real time), until done() or the clock moved totalMs.
void stepClock(RelayFixture &f, qint64 totalMs, const std::function<bool()> &done = {}, qint64 stepMs = 1000)
{
    const qint64 end = f.clock.nowMs() + totalMs;
    while (f.clock.nowMs() < end && !(done && done())) {
        f.clock.advance(qMin(stepMs, end - f.clock.nowMs()));
        // Pacing between clock steps: the live peers' Pongs travel in real time and must be read before the next step.
        QTest::qWait(5);
    }
}

// Reconnect attempts go on the clock; a blackholed attempt ends at the 10000 ms handshake bound.
bool reconnect(RelayFixture &f)
{
    return QTest::qWaitFor([&] {
        if (f.relay->cloudly()->isDispatchable())
            return true;
        const qint64 due = f.relay->cloudly()->reconnectDueMs();
        f.clock.advance(due > f.clock.nowMs() ? qMin<qint64>(1000, due - f.clock.nowMs()) : 200);
        return false;
    }, 8000);
}

bool anyRefusalStartsWith(const status::RelayStatus &s, const QString &prefix)
{
    for (const auto &r : s.refusals)
        if (r.line.startsWith(prefix))
            return true;
    return false;
}
} // namespace

class TstSilentPeers : public QObject {
    Q_OBJECT
    LogCapture log;

    // The relay dials Cloudly through the proxy; nodes dial the relay directly.
    static std::unique_ptr<peers::BlackholingProxy> relayThroughProxy(RelayFixture &f)
    {
        auto proxy = std::make_unique<peers::BlackholingProxy>(QStringLiteral("127.0.0.1"), quint16(f.cloudly->url().port()));
        if (!proxy->listen())
            qFatal("the proxy cannot listen");
        f.keepalive = true;
        RelayConfiguration config = f.configuration();
        QUrl url = f.cloudly->url();
        url.setPort(proxy->port());
        config.cloudlyUrl = url;
        f.makeRelay(config);
        return proxy;
    }

    static peers::PeerFrame hold(RelayFixture &f, const QJsonObject &request)
    {
        return f.dispatch(holdMethod, request).value_or(peers::PeerFrame{});
    }

private Q_SLOTS:
    void init()
    {
        log.install();
        log.clear();
    }

    // The session's rule on the clock, byte by byte: a Ping after 15000 ms of quiet and every 15000 ms
    // while the peer stays quiet; any byte from the peer restarts the count; lost exactly 45000 ms after
    // the last byte: Close 1001 "node-silent" offered, the descriptor closed, closed(1001).
    void sessionPingsAndIsLostOnTheClock()
    {
        int fds[2];
        QVERIFY(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) == 0);
        const int peer = fds[1];
        ManualClock clock;
        auto keepalive = SessionKeepalive::create(clock, kPing, kSilence);
        QVERIFY(keepalive);
        auto *session = new WebSocketSession(new TlsConnection(fds[0], nullptr), {}, 1 << 20, WebSocketFrameDecoder::Role::Server);
        QSignalSpy closed(session, &WebSocketSession::closed);
        session->startKeepalive(keepalive);
        const qint64 t0 = clock.nowMs();
        QCOMPARE(session->keepaliveState(), WebSocketSession::KeepaliveState::Live);

        clock.advance(kPing - 1);
        QCOMPARE(drain(peer), QByteArray());
        clock.advance(1);
        QCOMPARE(drain(peer), QByteArray("\x89\x00", 2)); // an unmasked, empty Ping
        QCOMPARE(session->keepaliveState(), WebSocketSession::KeepaliveState::AwaitingPong);

        clock.advance(5000); // t0 + 20000: the peer answers with a masked, empty Pong
        const char pong[] = {char(0x8A), char(0x80), 1, 2, 3, 4};
        QCOMPARE(::write(peer, pong, sizeof pong), ssize_t(sizeof pong));
        QTRY_COMPARE(session->lastReceivedAtMs(), t0 + 20000);
        QCOMPARE(session->keepaliveState(), WebSocketSession::KeepaliveState::Live);

        clock.advance(kPing - 1); // t0 + 34999
        QCOMPARE(drain(peer), QByteArray());
        clock.advance(1);
        QCOMPARE(drain(peer), QByteArray("\x89\x00", 2));
        clock.advance(kPing); // t0 + 50000: quiet again, a second Ping
        QCOMPARE(drain(peer), QByteArray("\x89\x00", 2));
        clock.advance(kSilence - 30000 - 1); // t0 + 64999
        QVERIFY(session->isOpen());
        QCOMPARE(closed.size(), 0);
        clock.advance(1); // t0 + 65000 = the last byte + 45000
        QCOMPARE(closed.size(), 1);
        QCOMPARE(closed.at(0).at(0).toInt(), 1001);
        QVERIFY(session->endedBySilence());
        QCOMPARE(session->keepaliveState(), WebSocketSession::KeepaliveState::Silent);
        QCOMPARE(keepalive->silentSessions(), 1);
        QCOMPARE(keepalive->pingsSent(), 3);
        bool eof = false;
        const QByteArray tail = drain(peer, &eof);
        QCOMPARE(tail.left(4), QByteArray("\x88\x0d\x03\xe9", 4)); // Close, 13 bytes, code 1001
        QCOMPARE(tail.mid(4), QByteArray(contract::refusal::nodeSilent.data(), contract::refusal::nodeSilent.size()));
        QVERIFY(eof); // the relay's descriptor is closed
        QCOMPARE(keepalive->deadlines().size(), std::size_t(0));
        delete session;
        ::close(peer);
    }

    // TCP keepalive and TCP_USER_TIMEOUT on both hops' descriptors: an accepted listener socket and a
    // dialled one (the Cloudly session's TcpDialer).
    void tcpLivenessOnBothHops()
    {
        SocketHandoffServer server;
        QVERIFY(server.listen(QHostAddress::LocalHost, 0));
        int accepted = -1;
        connect(&server, &SocketHandoffServer::descriptorAccepted, this, [&](int fd) { accepted = fd; });
        TcpDialer dialer;
        int dialled = -1;
        connect(&dialer, &TcpDialer::connected, this, [&](int fd) { dialled = fd; });
        dialer.dial(QStringLiteral("127.0.0.1"), server.serverPort());
        QTRY_VERIFY(accepted >= 0 && dialled >= 0);
        for (int fd : {accepted, dialled}) {
            QCOMPARE(intOption(fd, SOL_SOCKET, SO_KEEPALIVE), 1);
            QCOMPARE(intOption(fd, IPPROTO_TCP, TCP_KEEPIDLE), int(contract::tcpKeepaliveIdleMs / 1000));
            QCOMPARE(intOption(fd, IPPROTO_TCP, TCP_KEEPINTVL), int(contract::tcpKeepaliveIntervalMs / 1000));
            QCOMPARE(intOption(fd, IPPROTO_TCP, TCP_KEEPCNT), contract::tcpKeepaliveProbes);
            QCOMPARE(intOption(fd, IPPROTO_TCP, TCP_USER_TIMEOUT), int(contract::tcpUserTimeoutMs));
            ::close(fd);
        }
        QCOMPARE(contract::RelayTiming{}.sessionPingIntervalMs, kPing);
        QCOMPARE(contract::RelayTiming{}.sessionSilenceDeadlineMs, kSilence);
    }

    // A Cloudly behind a blackhole: detected exactly 45000 ms after its last byte; readiness false with
    // cloudly-silent; the escrow offers the held renewal at once; reconnect with backoff once the proxy
    // passes again, and the re-registration wave for the node registered under the old carrier.
    void silentCloudlyTakesTheClosedPath()
    {
        RelayFixture f;
        auto proxy = relayThroughProxy(f);
        QVERIFY(f.startRelay());
        auto node = f.registeredNode(QStringLiteral("node-a"));
        QVERIFY(node->session());
        node->setPushHandler(renewalMethod, [&f](const peers::PeerFrame &, const QJsonObject &request) {
            return Builder::acknowledge(request, f.clock.nowMs());
        });
        const auto b = *node->session();
        const auto p = Builder::projection("proj-1", 1);
        QVERIFY(!hold(f, Builder::holdRequest(b, p, Builder::grid(b, p, f.clock.nowMs() - 12 * 60000, 5))).hasError());
        QVERIFY(f.relay->statusSnapshot().ready);
        QCOMPARE(f.relay->statusSnapshot().cloudly.keepalive, QStringLiteral("live"));

        qint64 lostAt = 0;
        connect(f.relay->cloudly(), &CloudlyConnector::sessionLost, this, [&] { lostAt = f.clock.nowMs(); });
        QSignalSpy asked(f.relay->reregistrationWave(), &ReregistrationWave::nodeAsked);
        proxy->setBlackholing(true);
        const qint64 cutAt = f.clock.nowMs();
        stepClock(f, kSilence + 5000, [&] { return lostAt > 0; });
        QVERIFY(lostAt > 0);
        const qint64 lastFrame = f.relay->cloudly()->lastFrameReceivedAtMs();
        QVERIFY(lastFrame > 0 && lastFrame <= cutAt);
        QCOMPARE(lostAt - lastFrame, kSilence); // measured detection time on the clock
        qInfo("silent Cloudly detected %lld ms after its last byte (%lld ms after the cut)", lostAt - lastFrame, lostAt - cutAt);
        QVERIFY(proxy->droppedBytes() > 0); // the Pings went into the hole

        const status::RelayStatus s = f.relay->statusSnapshot();
        QVERIFY(!s.ready);
        QVERIFY(anyRefusalStartsWith(s, QStringLiteral("cloudly-silent: ")));
        QCOMPARE(s.cloudly.keepalive, QStringLiteral("silent"));
        QVERIFY(log.contains(QStringLiteral("Cloudly session lost: cloudly-silent")));
        QTRY_COMPARE(node->pushCount(renewalMethod), 1); // the escrow's release starts at once
        QTRY_COMPARE(f.relay->statusSnapshot().escrow.value(0).lastOfferResult, QStringLiteral("admitted"));
        QVERIFY(node->isConnected()); // nobody is closed while the session is away
        QCOMPARE(asked.size(), 0);

        // Still blackholed: attempts end at the handshake bound and the refusal stands.
        stepClock(f, 25000);
        QVERIFY(!f.relay->cloudly()->isDispatchable());
        QVERIFY(anyRefusalStartsWith(f.relay->statusSnapshot(), QStringLiteral("cloudly-silent: ")));

        proxy->setBlackholing(false);
        QVERIFY(reconnect(f));
        QCOMPARE(f.relay->cloudly()->carrierCount(), 2);
        QVERIFY(!anyRefusalStartsWith(f.relay->statusSnapshot(), QStringLiteral("cloudly-silent")));
        stepClock(f, 5000, [&] { return !node->isConnected(); }, 100);
        QTRY_VERIFY(!node->isConnected());
        QCOMPARE(node->closeCode(), 4000); // the wave asks the node to register again
        QCOMPARE(asked.size(), 1);
    }

    // Twenty silent cuts in a row: each detected at 45000 ms and recovered, without a descriptor left over.
    void twentySilentCutsWithoutALeak()
    {
        RelayFixture f;
        auto proxy = relayThroughProxy(f);
        QVERIFY(f.startRelay());
        int baseline = -1;
        for (int round = 0; round < 21; ++round) {
            qint64 lostAt = 0;
            auto c = connect(f.relay->cloudly(), &CloudlyConnector::sessionLost, this, [&] { lostAt = f.clock.nowMs(); });
            proxy->setBlackholing(true);
            stepClock(f, kSilence + 5000, [&] { return lostAt > 0; });
            disconnect(c);
            QVERIFY2(lostAt > 0, qPrintable(QStringLiteral("round %1").arg(round)));
            QCOMPARE(lostAt - f.relay->cloudly()->lastFrameReceivedAtMs(), kSilence);
            proxy->setBlackholing(false);
            QVERIFY(reconnect(f));
            QCoreApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete); // the old socket's parts
            if (round == 0) {
                baseline = settledDescriptors(); // after one full round: every part exists once
                continue;
            }
            QTRY_COMPARE(heldDescriptors(), baseline);
        }
        // Exactly the baseline once the loop has settled (tests/support/descriptorcount.h): a round that
        // left one descriptor would show here however the per-round counts happened to meet.
        QCOMPARE(settledDescriptors(), baseline);
        QCOMPARE(f.relay->cloudly()->carrierCount(), 22);
        qInfo("descriptors after 20 silent cuts: %d (baseline %d); proxy connections open %d", heldDescriptors(), baseline,
              proxy->openConnections());
    }

    // Many node sockets that vanish without a close (a proxy in front of the listener blackholes them):
    // every one is dropped exactly 45000 ms after its last byte, with its registry entry and its
    // descriptor; a push waiting on one is refused node-connection-lost.
    void silentNodesAreAllReclaimed()
    {
        // 300 in the suite (fast); COREFLOW_SILENT_NODES=1000 repeats the measurement.
        const int kNodes = qEnvironmentVariableIsSet("COREFLOW_SILENT_NODES") ? qEnvironmentVariableIntValue("COREFLOW_SILENT_NODES") : 300;
        rlimit limit{};
        ::getrlimit(RLIMIT_NOFILE, &limit);
        limit.rlim_cur = limit.rlim_max;
        ::setrlimit(RLIMIT_NOFILE, &limit);
        RelayFixture f;
        f.keepalive = true;
        f.makeRelay(f.configuration());
        QVERIFY(f.startRelay());
        peers::BlackholingProxy proxy(QStringLiteral("127.0.0.1"), f.relayPort);
        QVERIFY(proxy.listen());
        std::vector<std::unique_ptr<peers::SimulatedPalletNode>> nodes;
        for (int i = 0; i < kNodes; ++i) {
            nodes.push_back(std::make_unique<peers::SimulatedPalletNode>(
                f.nodeOptions(QStringLiteral("node-%1").arg(i, 3, 10, QLatin1Char('0')), proxy.port())));
            nodes.back()->open();
        }
        auto all = [&](auto predicate) {
            return std::all_of(nodes.begin(), nodes.end(), [&](const auto &n) { return predicate(*n); });
        };
        QTRY_VERIFY_WITH_TIMEOUT(all([](auto &n) { return n.isConnected(); }), 60000);
        for (auto &n : nodes)
            n->registerSession();
        QTRY_VERIFY_WITH_TIMEOUT(all([](auto &n) { return n.session().has_value(); }), 60000);
        // One more that never registers goes silent too (and is dropped by the same rule).
        peers::SimulatedPalletNode unregistered(f.nodeOptions(QStringLiteral("node-unregistered"), proxy.port()));
        unregistered.open();
        QTRY_VERIFY(unregistered.isConnected());
        QTRY_COMPARE(int(f.relay->statusSnapshot().nodes.size()), kNodes);
        QTRY_COMPARE(f.relay->forwarder()->connectionCount(), kNodes + 1);

        const int before = settledDescriptors();
        const qint64 cutAt = f.clock.nowMs();
        proxy.setBlackholing(true);
        // A push to one node 5000 ms before its silence deadline waits and is refused by name at the drop.
        stepClock(f, kSilence - 5000);
        QString pushRefusal;
        f.cloudly->push(QStringLiteral("applyRuntimeAssignment"),
                        QJsonObject{{QStringLiteral("session"), nodes.front()->session()->toJson()}},
                        [&](const peers::PeerFrame &x) { pushRefusal = x.errorRefusal().name; });
        QVERIFY(f.settleCloudlyHop()); // the push reached the relay (frames from Cloudly are taken in order)
        stepClock(f, 4999, {}, 1000);
        QCOMPARE(f.relay->forwarder()->connectionCount(), kNodes + 1); // not one millisecond early
        QVERIFY(pushRefusal.isEmpty());
        f.clock.advance(1); // cut + 45000: every node's last byte was before the cut
        QCOMPARE(f.relay->forwarder()->connectionCount(), 0);
        QTRY_COMPARE(pushRefusal, QString(contract::refusal::nodeConnectionLost));
        QTRY_VERIFY(f.relay->statusSnapshot().nodes.isEmpty());
        QCOMPARE(f.relay->statusSnapshot().cloudly.keepalive, QStringLiteral("live")); // the Cloudly hop is fine
        // Gone: the relay's descriptor of each node and the proxy's relay-facing one (which closes when
        // the relay closes); the nodes' own sockets and the proxy's node-facing ones stay, never closed.
        QCOMPARE(settledDescriptors(), before - 2 * (kNodes + 1));
        qInfo("%d silent nodes dropped %lld ms after the cut; descriptors %d -> %d", kNodes, f.clock.nowMs() - cutAt, before,
              heldDescriptors());
        QCOMPARE(log.count("went silent (docs/contract.md §3.3); dropped, no longer carried"), kNodes);
        for (auto &n : nodes)
            QVERIFY(n->isConnected()); // they never heard a thing: the blackhole passed nothing back
    }

    // The ingress connection follows the same rule: a silent ingress is dropped and its binding ends
    // (the relay then has no bound ingress), exactly as when it closes.
    void silentIngressIsDropped()
    {
        RelayFixture f;
        f.keepalive = true;
        f.makeRelay(f.configuration());
        QVERIFY(f.startRelay());
        peers::BlackholingProxy proxy(QStringLiteral("127.0.0.1"), f.relayPort);
        QVERIFY(proxy.listen());
        peers::LoopbackIngress::Options options;
        options.url = QUrl(QStringLiteral("wss://localhost:%1/").arg(proxy.port()));
        options.caCertificates = {f.ca.caCertificate()};
        peers::LoopbackIngress ingress(options);
        ingress.open();
        QTRY_VERIFY(ingress.isConnected());
        bool answered = false;
        ingress.registerIngress([&](const peers::PeerFrame &) { answered = true; });
        QTRY_VERIFY(answered);
        QTRY_VERIFY(f.relay->statusSnapshot().ingress.bound);
        stepClock(f, 20000); // idle but alive: Pings answered, nothing dropped
        QVERIFY(f.relay->statusSnapshot().ingress.bound);
        QCOMPARE(f.relay->forwarder()->connectionCount(), 1);

        proxy.setBlackholing(true);
        const qint64 cutAt = f.clock.nowMs();
        stepClock(f, kSilence + 1000, [&] { return f.relay->forwarder()->connectionCount() == 0; });
        QCOMPARE(f.relay->forwarder()->connectionCount(), 0);
        QVERIFY(f.clock.nowMs() - cutAt <= kSilence); // its last byte (a Pong) came before the cut
        QTRY_VERIFY(!f.relay->statusSnapshot().ingress.bound);
        QVERIFY(ingress.isConnected()); // it never heard a close
    }
};

COREFLOW_EPOLL_TEST_MAIN(TstSilentPeers)
#include "tst_silentpeers.moc"
