// Outage continuity: after this relay's Cloudly session reconnects, the nodes registered under the old
// carrier are asked to register again, spaced on the injected clock; an identity renewal on the
// unbroken socket and a session that is still away close nobody.
// Rules: OC-01, OC-02, OC-03, OC-04, OC-05, OC-06, OC-07, OC-08, OC-09, OC-12, PF-03.
#include "tests/support/epolltestmain.h"
#include "tests/integration/logcapture.h"
#include "tests/integration/relayfixture.h"

#include "service/cloudly/cloudlyconnector.h"
#include "service/forwarding/reregistrationwave.h"

#include <QSignalSpy>
#include <QTest>

using namespace coreflow;
using namespace coreflow::testing;

class TstOutageContinuity : public QObject {
    Q_OBJECT
    LogCapture log;

    static void bringSessionBack(RelayFixture &f)
    {
        f.cloudly->refuseConnections(false);
        (void)QTest::qWaitFor([&] {
            const qint64 due = f.relay->cloudly()->reconnectDueMs();
            if (due > 0)
                f.clock.advance(qMax<qint64>(0, due - f.clock.nowMs()));
            return f.relay->cloudly()->isDispatchable();
        }, 4000);
        QVERIFY(f.relay->cloudly()->isDispatchable());
    }

    static std::vector<std::unique_ptr<peers::SimulatedPalletNode>> registerNodes(RelayFixture &f, int n)
    {
        std::vector<std::unique_ptr<peers::SimulatedPalletNode>> nodes;
        for (int i = 0; i < n; ++i)
            nodes.push_back(f.registeredNode(QStringLiteral("node-%1").arg(i, 2, 10, QLatin1Char('0'))));
        return nodes;
    }

private Q_SLOTS:
    void init()
    {
        log.install();
        log.clear();
    }

    // OC-01 (the relay counts the connections its session registers on: 1, then 2 after the reconnect),
    // OC-03, OC-04, OC-05, OC-06, OC-07: a reconnect raises the carrier count; once dispatchable again,
    // a 20-node wave closes every node 75 ms apart (well inside 5000 ms), each said out loud; the nodes
    // see close code 4000. OC-08, OC-12: nodes that registered again under the new count stay open, and
    // the relay itself registers nobody.
    void twentyNodeWaveAfterReconnect_OC03_OC04_OC05_OC06_OC07_OC08_OC12()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        auto nodes = registerNodes(f, 20);
        QCOMPARE(f.relay->statusSnapshot().nodes.size(), 20);
        QCOMPARE(f.relay->cloudly()->carrierCount(), 1);
        const int registrationsBefore = f.cloudly->callCount("registerPalletRuntimeSession");

        QSignalSpy asked(f.relay->reregistrationWave(), &ReregistrationWave::nodeAsked);
        f.cloudly->refuseConnections(true);
        f.cloudly->dropRelaySockets();
        QTRY_VERIFY(!f.relay->cloudly()->isDispatchable());
        QCOMPARE(asked.size(), 0);
        bringSessionBack(f);
        QCOMPARE(f.relay->cloudly()->carrierCount(), 2);
        QCOMPARE(asked.size(), 1); // the first close at once
        const qint64 start = asked.at(0).at(1).toLongLong();
        f.clock.advance(5000);
        QCOMPARE(asked.size(), 20);
        for (int i = 0; i < 20; ++i) {
            QCOMPARE(asked.at(i).at(1).toLongLong() - start, i * 75);
            QCOMPARE(asked.at(i).at(0).toString(), QStringLiteral("node-%1").arg(i, 2, 10, QLatin1Char('0')));
        }
        QVERIFY(asked.last().at(1).toLongLong() - start < 5000);
        for (auto &node : nodes) {
            QTRY_VERIFY(!node->isConnected());
            QCOMPARE(node->closeCode(), 4000);
            QVERIFY(log.contains(QStringLiteral("node %1 asked to re-register: this relay's Cloudly session changed").arg(node->nodeId())));
        }
        QTRY_VERIFY(f.relay->statusSnapshot().nodes.isEmpty());
        QCOMPARE(f.cloudly->callCount("registerPalletRuntimeSession"), registrationsBefore); // OC-12

        // The nodes come back and register under carrier 2: nobody is closed again.
        std::vector<std::unique_ptr<peers::SimulatedPalletNode>> again = registerNodes(f, 20);
        QCOMPARE(f.relay->statusSnapshot().nodes.size(), 20);
        for (const auto &n : f.relay->statusSnapshot().nodes)
            QCOMPARE(n.carrierCount, 2);
        f.clock.advance(10000);
        for (auto &node : again)
            QVERIFY(f.settleNodeHop(*node)); // a round trip on each node's own connection: still open
        QCOMPARE(asked.size(), 20);
        for (auto &node : again)
            QVERIFY(node->isConnected());
    }

    // OC-02: an identity renewal on the unbroken socket keeps the carrier count and closes no node.
    void identityRenewalClosesNobody_OC02()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        auto nodes = registerNodes(f, 3);
        const qint64 due = f.relay->cloudly()->identityRenewalDueMs();
        QVERIFY(due > f.clock.nowMs());
        QSignalSpy dispatchable(f.relay->cloudly(), &CloudlyConnector::dispatchable);
        f.clock.advance(due - f.clock.nowMs());
        QTRY_COMPARE(dispatchable.size(), 1);
        QCOMPARE(dispatchable.at(0).at(1).toBool(), false); // same carrier
        QCOMPARE(f.relay->cloudly()->carrierCount(), 1);
        f.clock.advance(5000);
        for (auto &node : nodes)
            QVERIFY(f.settleNodeHop(*node)); // a round trip on each node's own connection: still open
        for (auto &node : nodes)
            QVERIFY(node->isConnected());
        QVERIFY(!log.contains("asked to re-register"));
    }

    // OC-09: while the relay has no session nobody is closed, however long it takes; the wave starts
    // only once the session is dispatchable again.
    void noCloseWhileDisconnected_OC09()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        auto nodes = registerNodes(f, 3);
        f.cloudly->refuseConnections(true);
        f.cloudly->dropRelaySockets();
        QTRY_VERIFY(!f.relay->cloudly()->isDispatchable());
        f.clock.advance(60000);
        for (auto &node : nodes)
            QVERIFY(f.settleNodeHop(*node)); // a round trip on each node's own connection: still open
        for (auto &node : nodes)
            QVERIFY(node->isConnected());
        QVERIFY(!log.contains("asked to re-register"));
        bringSessionBack(f);
        f.clock.advance(5000);
        for (auto &node : nodes)
            QTRY_VERIFY(!node->isConnected());
    }

    // PF-03: the relay keeps no desired-state cache and replays nothing on reconnect. A node that got an
    // assignment and the relay that got a cluster config push before the outage: after the session is
    // back (new carrier), the old node receives nothing more before the wave closes it, and the node
    // registering again on the new carrier receives no push at all, however long the clock runs; Cloudly
    // is asked for nothing that would feed a replay (its reads after an acceptance are not pushes).
    void reconnectReplaysNothing_PF03()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        auto node = f.registeredNode(QStringLiteral("node-a"));
        QVERIFY(node->session());
        bool acked = false;
        f.cloudly->push("applyRuntimeAssignment", QJsonObject{{"session", node->session()->toJson()}, {"assignment", QJsonObject{{"revision", 7}}}},
                        [&](const peers::PeerFrame &x) { acked = !x.hasError(); });
        QTRY_VERIFY(acked);
        QCOMPARE(node->pushes().size(), 1);

        f.cloudly->refuseConnections(true);
        f.cloudly->dropRelaySockets();
        QTRY_VERIFY(!f.relay->cloudly()->isDispatchable());
        bringSessionBack(f);
        QCOMPARE(f.relay->cloudly()->carrierCount(), 2);
        QTRY_VERIFY(!node->isConnected()); // the wave's first close is at once (OC-04)
        QCOMPARE(node->pushes().size(), 1);

        auto again = f.registeredNode(QStringLiteral("node-a"));
        QVERIFY(again->session());
        f.clock.advance(10 * 60 * 1000);
        QVERIFY(f.settleNodeHop(*again));
        QVERIFY(f.settleCloudlyHop());
        QCOMPARE(again->pushes().size(), 0);
        QVERIFY(again->isConnected());
    }
};

COREFLOW_EPOLL_TEST_MAIN(TstOutageContinuity)
#include "tst_outagecontinuity.moc"
