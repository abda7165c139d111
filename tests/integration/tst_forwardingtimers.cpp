// Forwarding budgets on an injected clock: nothing here sleeps for the budgets' real seconds.
// Rules: FW-02, FW-03, FW-04, FW-05, FW-14, FW-25 (and D-05: the 9000 ms budget counts from arrival).
#include "tests/support/epolltestmain.h"
#include "tests/integration/logcapture.h"
#include "tests/integration/relayfixture.h"

#include "service/cloudly/cloudlyconnector.h"

#include <QJsonDocument>
#include <QTest>

using namespace coreflow;
using namespace coreflow::testing;
using coreflow::peers::Answer;

class TstForwardingTimers : public QObject {
    Q_OBJECT
    LogCapture log;

    static void takeSessionDown(RelayFixture &f) { QVERIFY(f.takeCloudlySessionDown()); }
    static void bringSessionBack(RelayFixture &f) { QVERIFY(f.bringCloudlySessionBack()); }

private Q_SLOTS:
    void init()
    {
        log.install();
        log.clear();
    }

    // FW-05, FW-25: with no session for the whole wait the registration is refused, naming the wait,
    // and nothing is forwarded later.
    void registrationRefusedAfterWaiting5000_FW05_FW25()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        auto node = f.connectNode("node-a");
        takeSessionDown(f);
        const int before = f.cloudly->callCount("registerPalletRuntimeSession");
        QString text;
        node->registerSession([&](const peers::PeerFrame &x) { text = x.errorRefusal().text(); });
        QTRY_VERIFY(log.contains("holding registerPalletRuntimeSession"));
        f.clock.advance(4999);
        QVERIFY(f.settleNodeHop(*node)); // a refusal sent before this round trip would have arrived first
        QVERIFY(text.isEmpty());
        f.clock.advance(1);
        QTRY_COMPARE(text, QStringLiteral("cloudly-session-unavailable: no Cloudly session after waiting 5000 ms"));
        bringSessionBack(f);
        QVERIFY(f.settleCloudlyHop()); // a forward sent on the new session would have reached Cloudly first
        QCOMPARE(f.cloudly->callCount("registerPalletRuntimeSession"), before);
    }

    // FW-02: a session back within the wait carries the held registration.
    void registrationWaitsForReconnect_FW02()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        auto node = f.connectNode("node-a");
        takeSessionDown(f);
        bool registered = false;
        node->registerSession([&](const peers::PeerFrame &x) { registered = !x.hasError(); });
        QTRY_VERIFY(log.contains("holding registerPalletRuntimeSession"));
        f.clock.advance(3000);
        QVERIFY(!registered);
        bringSessionBack(f);
        QTRY_VERIFY(registered);
        QCOMPARE(f.relay->statusSnapshot().nodes.size(), 1);
    }

    // FW-03, D-05: the registration budget is 9000 ms from arrival: a silent Cloudly is answered by the
    // relay at exactly 9000 ms.
    void registrationBudget9000_FW03()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        f.cloudly->setAnswer("registerPalletRuntimeSession", Answer::silence());
        auto node = f.connectNode("node-a");
        QString text;
        node->registerSession([&](const peers::PeerFrame &x) { text = x.errorRefusal().text(); });
        QTRY_COMPARE(f.cloudly->callCount("registerPalletRuntimeSession"), 1);
        f.clock.advance(8999);
        QVERIFY(f.settleNodeHop(*node));
        QVERIFY(text.isEmpty());
        f.clock.advance(1);
        QTRY_COMPARE(text, QStringLiteral("cloudly-forward-timeout: no answer from Cloudly within 9000 ms"));
    }

    // D-05: time spent waiting for the session is part of the 9000 ms.
    void registrationBudgetIncludesTheWait_FW02_FW03()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        auto node = f.connectNode("node-a");
        takeSessionDown(f);
        f.cloudly->setAnswer("registerPalletRuntimeSession", Answer::silence());
        const qint64 arrival = f.clock.nowMs();
        QString text;
        node->registerSession([&](const peers::PeerFrame &x) { text = x.errorRefusal().text(); });
        QTRY_VERIFY(log.contains("holding registerPalletRuntimeSession"));
        f.clock.advance(2000);
        bringSessionBack(f);
        QTRY_COMPARE(f.cloudly->callCount("registerPalletRuntimeSession"), 1);
        const qint64 elapsed = f.clock.nowMs() - arrival;
        QVERIFY(elapsed < 9000);
        f.clock.advance(9000 - elapsed - 1);
        QVERIFY(f.settleNodeHop(*node));
        QVERIFY(text.isEmpty());
        f.clock.advance(1);
        QTRY_COMPARE(text, QStringLiteral("cloudly-forward-timeout: no answer from Cloudly within 9000 ms"));
    }

    // FW-04: every other forward is bounded at 8000 ms.
    void otherForwardsBounded8000_FW04()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        auto node = f.registeredNode("node-a");
        f.cloudly->setAnswer("getRuntimeRegistryCredential", Answer::silence());
        QString text;
        node->callWithSession("getRuntimeRegistryCredential", {}, [&](const peers::PeerFrame &x) { text = x.errorRefusal().text(); });
        QTRY_COMPARE(f.cloudly->callCount("getRuntimeRegistryCredential"), 1);
        f.clock.advance(7999);
        QVERIFY(f.settleNodeHop(*node));
        QVERIFY(text.isEmpty());
        f.clock.advance(1);
        QTRY_COMPARE(text, QStringLiteral("cloudly-forward-timeout: no answer from Cloudly within 8000 ms"));
    }

    // FW-14, FW-15: a node that never acknowledges a push costs Cloudly 8000 ms and a named refusal,
    // never a synthesised ACK.
    void pushBounded8000_FW14()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        auto node = f.registeredNode("node-a");
        node->setPushAnswer("applyRuntimeAssignment", Answer::silence());
        const QByteArray body = "{\"session\":" + QJsonDocument(node->session()->toJson()).toJson(QJsonDocument::Compact) + "}";
        QString text;
        f.cloudly->push("applyRuntimeAssignment", body, [&](const peers::PeerFrame &x) { text = x.errorRefusal().text(); });
        QTRY_COMPARE(node->pushCount("applyRuntimeAssignment"), 1);
        f.clock.advance(7999);
        QVERIFY(f.settleCloudlyHop()); // the push's refusal would reach Cloudly before this answer
        QVERIFY(text.isEmpty());
        f.clock.advance(1);
        QTRY_COMPARE(text, QStringLiteral("node-push-timeout: node node-a did not answer applyRuntimeAssignment within 8000 ms"));
    }

    // The Cloudly socket dropped mid-forward: the node hears a named refusal at once; nothing hangs.
    void cloudlyDroppedMidForward()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        auto node = f.registeredNode("node-a");
        f.cloudly->setAnswer("reportRuntimeAssignmentObservation", Answer::silence());
        QString text;
        node->callWithSession("reportRuntimeAssignmentObservation", {}, [&](const peers::PeerFrame &x) { text = x.errorRefusal().text(); });
        QTRY_COMPARE(f.cloudly->callCount("reportRuntimeAssignmentObservation"), 1);
        f.cloudly->dropRelaySockets();
        QTRY_COMPARE(text, QStringLiteral("cloudly-session-lost: the Cloudly session closed before it answered"));
        QCOMPARE(node->pendingCallCount(), 0);
        // While the session is away, other forwards are refused at once (never queued).
        QString second;
        node->callWithSession("reportRuntimeAssignmentObservation", {}, [&](const peers::PeerFrame &x) { second = x.errorRefusal().name; });
        QTRY_COMPARE(second, QStringLiteral("cloudly-session-unavailable"));
    }

    // WD-02: reconnect backoff grows and stays bounded (D-11: 500 ms doubling to 30000 ms, +/-20 %).
    void reconnectBackoffIsBounded_WD02()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        f.cloudly->refuseConnections(true);
        f.cloudly->dropRelaySockets();
        QList<qint64> gaps;
        qint64 last = f.clock.nowMs();
        for (int attempt = 0; attempt < 9; ++attempt) {
            QTRY_VERIFY(f.clock.nextDeadlineMs() > 0 && log.count("reconnecting to Cloudly in") >= attempt + 1);
            const qint64 next = f.clock.nextDeadlineMs();
            gaps << next - last;
            f.clock.advance(next - f.clock.nowMs());
            last = next;
        }
        QVERIFY2(gaps.first() >= 400 && gaps.first() <= 600, qPrintable(QString::number(gaps.first())));
        for (qint64 g : gaps)
            QVERIFY2(g <= 30000, qPrintable(QString::number(g)));
        QVERIFY(gaps.last() >= 24000);
    }
};

COREFLOW_EPOLL_TEST_MAIN(TstForwardingTimers)
#include "tst_forwardingtimers.moc"
