// The fault matrix (issue 23): each hop broken the ways a network or a crashing peer breaks it, in the
// middle of a call, through a running relay on real sockets. For every row: the caller hears a named
// refusal within its stated bound (docs/contract.md §3.2, §8.3), the relay recovers, and no file
// descriptor or timer is left behind (counted before and after; memory is a bench figure, not asserted
// here). Rules: FW-14, FW-15, WD-02 (the reconnect after every Cloudly fault), OC-07, OC-12 (the nodes asked to
// register again under the new carrier).
//
// Rows, Cloudly hop (a FaultInjectingProxy between the relay and the loopback Cloudly), a node's forward
// waiting for Cloudly's answer:
//   reset     the TCP connection is reset          -> cloudly-session-lost at once
//   truncate  Cloudly's answer is cut half-way     -> cloudly-session-lost at once
//   drop      Cloudly aborts its socket            -> cloudly-session-lost at once
// Rows, Cloudly hop, Cloudly's push toward a node in flight on the Cloudly hop (§3.2, §8.3):
//   truncate-mid-frame  the push frame is cut half-way (FIN)  -> the node hears nothing
//   reset-mid-frame     an RST half-way through the push frame -> the node hears nothing
//   reset-awaiting-node an RST once the node has the push      -> the node heard it once; its late
//                                                                  answer goes nowhere
//   drop-awaiting-node  Cloudly aborts its socket likewise     -> likewise
// No refusal can reach Cloudly (its session is the broken hop); the relay answers nothing on the next
// session (OC-12) and keeps the node until the new carrier asks it to register again (§8.4).
// Rows, node hop (the proxy between a node and the listener), Cloudly's push waiting for the node:
//   reset     -> node-connection-lost at once
//   truncate  the push frame toward the node is cut half-way -> node-connection-lost at once
//   blackhole -> node-push-timeout exactly at 8000 ms on the clock
// Corestore mid-call is tst_corestore's dropConnection row; a silent Cloudly and silent nodes are
// tst_silentpeers (the 45000 ms rule with descriptor counts). The registry mid-blob rows are
// tst_faultmatrixregistry (docker-registry behind the proxy) and the Corestore mid-closure rows
// (export and restore) tst_faultmatrixclosures; both arm the proxy to break a stream mid-way.
#include "tests/support/descriptorcount.h"
#include "tests/support/epolltestmain.h"
#include "tests/integration/logcapture.h"
#include "tests/integration/relayfixture.h"
#include "tests/peers/faultinjectingproxy.h"
#include "tests/peers/peerenvelope.h"

#include "service/cloudly/cloudlyconnector.h"
#include "service/forwarding/sessionforwarder.h"

#include <QDir>
#include <QJsonDocument>
#include <QSignalSpy>
#include <QTest>

using namespace coreflow;
using namespace coreflow::testing;
using coreflow::peers::Answer;
using Fault = coreflow::peers::FaultInjectingProxy::Fault;

Q_DECLARE_METATYPE(coreflow::peers::FaultInjectingProxy::Fault)

namespace {

const QString kForwarded = QStringLiteral("reportRuntimeAssignmentObservation");
const QString kPushed = QStringLiteral("applyRuntimeAssignment");

} // namespace

class TstFaultMatrix : public QObject {
    Q_OBJECT
    LogCapture log;

    // What a Cloudly-hop row counts before its fault, once every part it uses exists.
    struct Baseline {
        int descriptors = 0;
        int timers = 0;
        int proxyConnections = 0;
        QString described; // describeDescriptors() then, for a failure message
    };

    // The relay of `f` dials Cloudly through `proxy` (the Cloudly hop's fault point) and is started;
    // a node registers through it and one forward goes all the way, so the row's baseline counts every
    // part once.
    static std::unique_ptr<peers::SimulatedPalletNode> startBehindCloudlyProxy(RelayFixture &f, peers::FaultInjectingProxy &proxy)
    {
        if (!proxy.listen())
            return {};
        RelayConfiguration config = f.configuration();
        QUrl url = f.cloudly->url();
        url.setPort(proxy.port());
        config.cloudlyUrl = url;
        f.makeRelay(config);
        if (!f.startRelay())
            return {};
        auto node = f.registeredNode(QStringLiteral("node-a"));
        if (!node->session())
            return {};
        bool answered = false;
        node->callWithSession(kForwarded, {}, [&](const peers::PeerFrame &x) { answered = !x.hasError(); });
        if (!QTest::qWaitFor([&] { return answered; }, 10000) || !f.settleCloudlyHop())
            return {};
        return node;
    }

    static Baseline countBaseline(RelayFixture &f, const peers::FaultInjectingProxy &proxy)
    {
        const int descriptors = settledDescriptors();
        return Baseline{descriptors, f.clock.activeTimerCount(), proxy.acceptedConnections(), describeDescriptors()};
    }

    // After a fault on the Cloudly hop (WD-02, OC-07, §3.2): the session comes back through the same
    // proxy, the new carrier asks `node` to register again and it does, a forward goes through, and the
    // descriptors and clock timers are exactly those of the baseline once the loop has settled.
    // `node` is replaced by the re-registered one.
    void expectCloudlyHopRecovered(RelayFixture &f, peers::FaultInjectingProxy &proxy,
                                   std::unique_ptr<peers::SimulatedPalletNode> &node, const Baseline &before)
    {
        QVERIFY(f.bringCloudlySessionBack());
        QTRY_VERIFY(proxy.acceptedConnections() > before.proxyConnections); // redialled through the same path
        QTRY_VERIFY(!node->isConnected());
        QCOMPARE(node->closeCode(), 4000); // asked to register again (§8.4), not closed for the fault
        node = f.registeredNode(QStringLiteral("node-a"));
        QVERIFY(node->session());
        bool answered = false;
        QString after;
        node->callWithSession(kForwarded, {}, [&](const peers::PeerFrame &x) {
            answered = !x.hasError();
            after = x.errorRefusal().text();
        });
        QTRY_VERIFY2(answered, qPrintable(after));
        QVERIFY(f.settleCloudlyHop());
        const int descriptors = settledDescriptors();
        QVERIFY2(descriptors == before.descriptors, qPrintable(QStringLiteral("%1 descriptors, %2 before; before: %3; now: %4")
                                                                    .arg(descriptors).arg(before.descriptors).arg(before.described, describeDescriptors())));
        QCOMPARE(f.clock.activeTimerCount(), before.timers);
    }

private Q_SLOTS:
    void init()
    {
        log.install();
        log.clear();
    }

    void cloudlyMidForward_data()
    {
        QTest::addColumn<QString>("fault");
        QTest::newRow("reset") << QStringLiteral("reset");
        QTest::newRow("truncate") << QStringLiteral("truncate");
        QTest::newRow("drop") << QStringLiteral("drop");
    }

    // FW-15, WD-02: a fault on the Cloudly hop mid-forward answers the node by name at once; the relay
    // reconnects through the same proxy; the descriptors and clock timers are those of before.
    void cloudlyMidForward()
    {
        QFETCH(QString, fault);
        RelayFixture f;
        peers::FaultInjectingProxy proxy(QStringLiteral("127.0.0.1"), quint16(f.cloudly->url().port()));
        auto node = startBehindCloudlyProxy(f, proxy);
        QVERIFY(node);
        const Baseline before = countBaseline(f, proxy);

        if (fault == QLatin1String("truncate")) {
            // A large answer, so the cut falls inside its frame.
            f.cloudly->setAnswer(kForwarded, Answer::respond({{QStringLiteral("padding"), QString(200000, QLatin1Char('p'))}}));
        } else if (fault == QLatin1String("drop")) {
            f.cloudly->setAnswer(kForwarded, Answer::dropConnection());
        } else {
            f.cloudly->setAnswer(kForwarded, Answer::silence());
        }
        QString refusal;
        node->callWithSession(kForwarded, {}, [&](const peers::PeerFrame &x) { refusal = x.errorRefusal().text(); });
        if (fault == QLatin1String("truncate"))
            proxy.inject(Fault::Truncate);
        QTRY_COMPARE(f.cloudly->callCount(kForwarded), 2);
        if (fault == QLatin1String("reset"))
            proxy.inject(Fault::Reset);
        if (fault == QLatin1String("truncate"))
            QTRY_COMPARE(proxy.truncatedConnections(), 1);
        QTRY_COMPARE(refusal, QStringLiteral("cloudly-session-lost: the Cloudly session closed before it answered"));
        QCOMPARE(node->pendingCallCount(), 0);
        QVERIFY(node->isConnected()); // a node is never closed for the Cloudly hop's fault

        f.cloudly->setAnswer(kForwarded, Answer::useDefault());
        expectCloudlyHopRecovered(f, proxy, node, before);
    }

    void cloudlyMidPush_data()
    {
        QTest::addColumn<QString>("fault");
        QTest::newRow("truncate-mid-frame") << QStringLiteral("truncate-mid-frame");
        QTest::newRow("reset-mid-frame") << QStringLiteral("reset-mid-frame");
        QTest::newRow("reset-awaiting-node") << QStringLiteral("reset-awaiting-node");
        QTest::newRow("drop-awaiting-node") << QStringLiteral("drop-awaiting-node");
    }

    // FW-13, FW-15, WD-02, OC-07, OC-09, OC-12 (issue 23): Cloudly's push toward a node, broken on the
    // Cloudly hop while it is in flight. A push cut inside its frame never reaches the node (the relay
    // forwards whole frames only); a push the node already has is answered by the node, and that answer
    // is dropped with the session it belonged to: nothing of it travels on the next session. Either
    // way the node stays connected while the relay has no session, the relay redials through the same
    // path, the node is asked to register again, and no descriptor or timer is left. The mid-frame
    // rows also check that the cut frame was never read as a message (seen red: tests/PROOFS.md).
    void cloudlyMidPush()
    {
        QFETCH(QString, fault);
        const bool midFrame = fault.endsWith(QLatin1String("-mid-frame"));
        RelayFixture f;
        peers::FaultInjectingProxy proxy(QStringLiteral("127.0.0.1"), quint16(f.cloudly->url().port()));
        auto node = startBehindCloudlyProxy(f, proxy);
        QVERIFY(node);
        std::optional<peers::PeerFrame> held; // the push as the node received it, answered by hand below
        node->setPushHandler(kPushed, [&](const peers::PeerFrame &frame, const QJsonObject &) {
            held = frame;
            return Answer::silence();
        });
        const Baseline before = countBaseline(f, proxy);

        // A push of about 200 kB: its frame spans many TLS records, so a cut after 64 KiB falls inside it.
        const QByteArray body = "{\"session\":" + QJsonDocument(node->session()->toJson()).toJson(QJsonDocument::Compact) +
                                ",\"padding\":\"" + QByteArray(200000, 'p') + "\"}";
        if (midFrame)
            proxy.injectAfter(fault.startsWith(QLatin1String("reset")) ? Fault::Reset : Fault::Truncate,
                              peers::FaultInjectingProxy::Direction::TowardConnecting, 65536);
        bool cloudlyHeardBack = false;
        const QString correlationId = f.cloudly->push(kPushed, body, [&](const peers::PeerFrame &) { cloudlyHeardBack = true; });
        QVERIFY(!correlationId.isEmpty());
        if (midFrame) {
            QTRY_COMPARE(proxy.armedFaultsApplied(), 1);
        } else {
            QTRY_VERIFY(held.has_value());
            if (fault.startsWith(QLatin1String("reset")))
                proxy.inject(Fault::Reset);
            else
                f.cloudly->dropRelaySockets();
        }
        QTRY_VERIFY(!f.relay->cloudly()->isDispatchable());
        QVERIFY(node->isConnected()); // no node is closed without a dispatchable session (OC-09)

        if (midFrame) {
            // A barrier on the node's socket: a push the relay had sent would have arrived first.
            QVERIFY(RelayFixture::settleNodeHop(*node));
            QCOMPARE(node->pushCount(kPushed), 0); // the node heard nothing of a frame that never arrived whole
        } else {
            QCOMPARE(node->pushCount(kPushed), 1);
            // The node answers after the session it came on is gone: the relay takes the answer (its
            // push ends, its timer goes) and has nowhere to send it.
            QVERIFY(node->sendRaw(peers::PeerEnvelope::response(kPushed, held->correlationId, held->request, "{}")));
            QVERIFY(RelayFixture::settleNodeHop(*node));
        }

        expectCloudlyHopRecovered(f, proxy, node, before);
        QVERIFY(!cloudlyHeardBack);
        for (const auto &frame : f.cloudly->frames())
            QVERIFY2(frame.correlationId != correlationId, qPrintable(frame.rawFrame.left(200))); // nothing replayed (OC-12)
        QCOMPARE(f.cloudly->callCount(QStringLiteral("registerPalletRuntimeSession")), 2); // the node registered again
        if (midFrame) {
            // The relay reads whole frames only: what had arrived of the cut frame was dropped with its
            // session, never handed on as a message (the connector logs every unreadable frame from
            // Cloudly). A node cannot tell this apart: a cut envelope routes nowhere, so the node's
            // silence above holds whether the relay read the fragment or not (tests/PROOFS.md, issue 23).
            QCOMPARE(log.count(QStringLiteral("unreadable frame from Cloudly")), 0);
        }
    }

    void nodeMidPush_data()
    {
        QTest::addColumn<QString>("fault");
        QTest::newRow("reset") << QStringLiteral("reset");
        QTest::newRow("truncate") << QStringLiteral("truncate");
        QTest::newRow("blackhole") << QStringLiteral("blackhole");
    }

    // FW-14, FW-15: a fault on a node's hop mid-push answers Cloudly by name (at once, or at the push
    // budget of 8000 ms for a node that went quiet); the relay drops that node only; once the node is
    // gone its descriptors and timers are gone too.
    void nodeMidPush()
    {
        QFETCH(QString, fault);
        RelayFixture f;
        QVERIFY(f.startRelay());
        auto bystander = f.registeredNode(QStringLiteral("node-b"));
        QVERIFY(bystander->session());
        QVERIFY(f.settleCloudlyHop());
        const int descriptors = settledDescriptors();
        const QString described = describeDescriptors();
        const int timers = f.clock.activeTimerCount();

        auto proxy = std::make_unique<peers::FaultInjectingProxy>(QStringLiteral("127.0.0.1"), f.relayPort);
        QVERIFY(proxy->listen());
        auto node = std::make_unique<peers::SimulatedPalletNode>(f.nodeOptions(QStringLiteral("node-a"), proxy->port()));
        node->open();
        QTRY_VERIFY(node->isConnected());
        QSignalSpy registered(node.get(), &peers::SimulatedPalletNode::sessionRegistered);
        node->registerSession();
        QTRY_COMPARE(registered.size(), 1);
        node->setPushAnswer(kPushed, Answer::silence());

        if (fault == QLatin1String("truncate"))
            proxy->inject(Fault::Truncate);
        const QByteArray padding(100000, 'p');
        const QByteArray body = "{\"session\":" + QJsonDocument(node->session()->toJson()).toJson(QJsonDocument::Compact) +
                                ",\"padding\":\"" + padding + "\"}";
        QString refusal;
        f.cloudly->push(kPushed, body, [&](const peers::PeerFrame &x) { refusal = x.errorRefusal().text(); });
        if (fault == QLatin1String("truncate")) {
            QTRY_COMPARE(proxy->truncatedConnections(), 1);
        } else {
            QTRY_COMPARE(node->pushCount(kPushed), 1);
            proxy->inject(fault == QLatin1String("reset") ? Fault::Reset : Fault::Blackhole);
        }
        if (fault == QLatin1String("blackhole")) {
            f.clock.advance(7999);
            QVERIFY(f.settleCloudlyHop()); // a refusal sent before would have reached Cloudly first
            QVERIFY(refusal.isEmpty());
            f.clock.advance(1);
            QTRY_COMPARE(refusal, QStringLiteral("node-push-timeout: node node-a did not answer applyRuntimeAssignment within 8000 ms"));
        } else {
            QTRY_VERIFY(refusal.startsWith(QStringLiteral("node-connection-lost: ")));
        }
        // The bystander was never touched.
        QVERIFY(bystander->isConnected());
        bool answered = false;
        bystander->callWithSession(kForwarded, {}, [&](const peers::PeerFrame &x) { answered = !x.hasError(); });
        QTRY_VERIFY(answered);

        node.reset();
        proxy.reset();
        QTRY_COMPARE(f.relay->forwarder()->connectionCount(), 1);
        const int after = settledDescriptors();
        QVERIFY2(after == descriptors, qPrintable(QStringLiteral("%1 descriptors, %2 before; before: %3; now: %4")
                                                      .arg(after).arg(descriptors).arg(described, describeDescriptors())));
        QTRY_COMPARE(f.clock.activeTimerCount(), timers);
    }
};

COREFLOW_EPOLL_TEST_MAIN(TstFaultMatrix)
#include "tst_faultmatrix.moc"
