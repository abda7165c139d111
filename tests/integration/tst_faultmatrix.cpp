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
// Rows, node hop (the proxy between a node and the listener), Cloudly's push waiting for the node:
//   reset     -> node-connection-lost at once
//   truncate  the push frame toward the node is cut half-way -> node-connection-lost at once
//   blackhole -> node-push-timeout exactly at 8000 ms on the clock
// Corestore mid-call is tst_corestore's dropConnection row; a silent Cloudly and silent nodes are
// tst_silentpeers (the 45000 ms rule with descriptor counts). The registry mid-blob rows are
// tst_faultmatrixregistry (docker-registry behind the proxy) and the Corestore mid-closure rows
// (export and restore) tst_faultmatrixclosures; both arm the proxy to break a stream mid-way.
#include "tests/support/epolltestmain.h"
#include "tests/integration/logcapture.h"
#include "tests/integration/relayfixture.h"
#include "tests/peers/faultinjectingproxy.h"

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

int openDescriptors() { return int(QDir(QStringLiteral("/proc/self/fd")).entryList(QDir::NoDotAndDotDot | QDir::System).size()); }

const QString kForwarded = QStringLiteral("reportRuntimeAssignmentObservation");
const QString kPushed = QStringLiteral("applyRuntimeAssignment");

} // namespace

class TstFaultMatrix : public QObject {
    Q_OBJECT
    LogCapture log;

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
        QVERIFY(proxy.listen());
        RelayConfiguration config = f.configuration();
        QUrl url = f.cloudly->url();
        url.setPort(proxy.port());
        config.cloudlyUrl = url;
        f.makeRelay(config);
        QVERIFY(f.startRelay());
        auto node = f.registeredNode(QStringLiteral("node-a"));
        QVERIFY(node->session());
        // One full forward first, so every part the row uses exists once before the baseline.
        bool answered = false;
        node->callWithSession(kForwarded, {}, [&](const peers::PeerFrame &x) { answered = !x.hasError(); });
        QTRY_VERIFY(answered);
        QVERIFY(f.settleCloudlyHop());
        const int descriptors = openDescriptors();
        const int timers = f.clock.activeTimerCount();
        const int connections = proxy.acceptedConnections();

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
        QVERIFY(f.bringCloudlySessionBack());
        QTRY_VERIFY(proxy.acceptedConnections() > connections); // redialled through the same path
        // The new carrier asks the node to register again (§8.4): it redials and registers.
        QTRY_VERIFY(!node->isConnected());
        node = f.registeredNode(QStringLiteral("node-a"));
        QVERIFY(node->session());
        answered = false;
        QString after;
        node->callWithSession(kForwarded, {}, [&](const peers::PeerFrame &x) {
            answered = !x.hasError();
            after = x.errorRefusal().text();
        });
        QTRY_VERIFY2(answered, qPrintable(after));
        QVERIFY(f.settleCloudlyHop());
        QTRY_COMPARE(openDescriptors(), descriptors);
        QTRY_COMPARE(f.clock.activeTimerCount(), timers);
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
        const int descriptors = openDescriptors();
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
        QTRY_COMPARE(openDescriptors(), descriptors);
        QTRY_COMPARE(f.clock.activeTimerCount(), timers);
    }
};

COREFLOW_EPOLL_TEST_MAIN(TstFaultMatrix)
#include "tst_faultmatrix.moc"
