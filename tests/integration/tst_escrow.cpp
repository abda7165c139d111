// The DNS lease renewal escrow end to end: a relay between a LoopbackCloudly that hands it runs and then
// goes away, and SimulatedPalletNodes that admit a renewal only when its window is current by their own
// clock (the fixture's ManualClock). Rules: ES-03, ES-04, ES-08, ES-18..ES-27, ES-30..ES-32, ES-38,
// OC-11 (renewal bytes never logged), FW-24, PF-04.
#include "tests/support/epolltestmain.h"
#include "tests/peers/dnsleaserenewalrunbuilder.h"
#include "tests/integration/logcapture.h"
#include "tests/integration/relayfixture.h"

#include "service/cloudly/cloudlyconnector.h"
#include "shared/contract/methods.h"
#include "shared/contract/refusalnames.h"
#include "service/escrow/leaseescrow.h"
#include "service/registration/relayregistration.h"

#include <QDateTime>
#include <algorithm>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSignalSpy>
#include <QTest>

using namespace coreflow;
using namespace coreflow::testing;
using coreflow::peers::Answer;
using Builder = coreflow::peers::DnsLeaseRenewalRunBuilder;

namespace {
constexpr qint64 minute = 60000;
const QString holdMethod = QStringLiteral("holdRuntimeNetworkDnsLeaseRenewals");
const QString renewalMethod = QStringLiteral("applyRuntimeNetworkDnsLeaseRenewal");
QByteArray bytes(const QJsonObject &o) { return QJsonDocument(o).toJson(QJsonDocument::Compact); }
} // namespace

class TstEscrow : public QObject {
    Q_OBJECT
    LogCapture log;

    static void takeSessionDown(RelayFixture &f) { QVERIFY(f.takeCloudlySessionDown()); }
    static void bringSessionBack(RelayFixture &f) { QVERIFY(f.bringCloudlySessionBack()); }

    // Cloudly hands the relay a run for the node; returns the answer frame.
    static peers::PeerFrame hold(RelayFixture &f, const QJsonObject &request)
    {
        return f.dispatch(holdMethod, request).value_or(peers::PeerFrame{});
    }

    static peers::PeerFrame hold(RelayFixture &f, const QByteArray &rawRequest)
    {
        return f.dispatch(holdMethod, rawRequest).value_or(peers::PeerFrame{});
    }

    static void renewIdentity(RelayFixture &f)
    {
        const qint64 due = f.relay->cloudly()->identityRenewalDueMs();
        QVERIFY(due > 0);
        const int before = f.cloudly->callCount("registerClusterRelay");
        f.clock.advance(due - f.clock.nowMs());
        QTRY_COMPARE(f.cloudly->callCount("registerClusterRelay"), before + 1);
    }

    // The node admits a renewal only when its window is current by its clock (the shared ManualClock).
    static void admitByClock(RelayFixture &f, peers::SimulatedPalletNode &node)
    {
        node.setPushHandler(renewalMethod, [&f](const peers::PeerFrame &, const QJsonObject &request) {
            return Builder::acknowledge(request, f.clock.nowMs());
        });
    }

    static qint64 pushedSequence(const peers::SimulatedPalletNode &node)
    {
        const QJsonObject request = QJsonDocument::fromJson(node.lastPushRawRequest(renewalMethod)).object();
        return qint64(request.value("renewal").toObject().value("sequence").toDouble());
    }

private Q_SLOTS:
    void init()
    {
        log.install();
        log.clear();
    }

    // ES-03, ES-04, ES-08: served on the Cloudly lane only and answered { held }; a node asking is
    // refused escrow-cloudly-only; a node this relay does not carry is escrow-node-not-carried.
    void holdOnCloudlyLaneOnly_ES03_ES04_ES08()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        auto node = f.registeredNode("node-a");
        const auto b = *node->session();
        const auto p = Builder::projection("proj-1", 1);
        const QJsonObject request = Builder::holdRequest(b, p, Builder::grid(b, p, f.clock.nowMs(), 3));
        const peers::PeerFrame answer = hold(f, request);
        QVERIFY(!answer.hasError());
        QCOMPARE(answer.responseObject().value(), (QJsonObject{{"held", 3}}));

        QString refused;
        node->call(holdMethod, request, [&](const peers::PeerFrame &x) { refused = x.errorRefusal().name; });
        QTRY_COMPARE(refused, QString(contract::refusal::escrowCloudlyOnly));

        peers::PeerSessionBinding stranger{"node-z", "cluster-1", "s-z", 0};
        const peers::PeerFrame notCarried = hold(f, Builder::holdRequest(stranger, p, Builder::grid(stranger, p, f.clock.nowMs(), 1)));
        QCOMPARE(notCarried.errorRefusal().name, QString(contract::refusal::escrowNodeNotCarried));
        QCOMPARE(f.relay->statusSnapshot().escrow.size(), 1);
    }

    // ES-18, ES-20, ES-19, ES-21, ES-22, ES-30: nothing while the session is up; the moment it is lost
    // the latest window open for the margin is offered with the node's current binding and Cloudly's
    // bytes; the next one at its start + 30 s, not a millisecond earlier; the node verifies the window.
    // PF-04: what the node gets during the outage is a renewal Cloudly signed ahead, byte for byte: the
    // relay signs nothing of its own.
    void outageOffersTheRightWindows_ES18_ES19_ES20_ES21_ES22_ES30()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        auto node = f.registeredNode("node-a");
        admitByClock(f, *node);
        const auto b = *node->session();
        const auto p = Builder::projection("proj-1", 1);
        const qint64 t0 = f.clock.nowMs() - 12 * minute;
        const QJsonArray renewals = Builder::grid(b, p, t0, 5);
        QVERIFY(!hold(f, Builder::holdRequest(b, p, renewals)).hasError());
        f.clock.advance(30000); // session up: nothing is released (ES-18)
        QVERIFY(f.settleNodeHop(*node));
        QCOMPARE(node->pushCount(renewalMethod), 0);

        takeSessionDown(f);
        QTRY_COMPARE(node->pushCount(renewalMethod), 1);
        QCOMPARE(pushedSequence(*node), 2); // windows 1 and 2 overlap: the later one
        const QJsonObject offered = QJsonDocument::fromJson(node->lastPushRawRequest(renewalMethod)).object();
        QCOMPARE(offered.value("session").toObject(), b.toJson());
        QVERIFY(node->lastPushRawRequest(renewalMethod).contains(bytes(renewals.at(1).toObject())));
        QTRY_COMPARE(f.relay->statusSnapshot().escrow.value(0).lastOfferResult, QStringLiteral("admitted"));

        // Window 3 opens at t0 + 20 min; it is offered at t0 + 20 min + 30 s (ES-19, ES-21).
        f.clock.advance(t0 + 20 * minute + 29999 - f.clock.nowMs());
        QVERIFY(f.settleNodeHop(*node));
        QCOMPARE(node->pushCount(renewalMethod), 1);
        f.clock.advance(1);
        QTRY_COMPARE(node->pushCount(renewalMethod), 2);
        QCOMPARE(pushedSequence(*node), 3);
        QTRY_COMPARE(f.relay->statusSnapshot().escrow.value(0).lastOfferResult, QStringLiteral("admitted"));
        const auto row = f.relay->statusSnapshot().escrow.value(0);
        QCOMPARE(row.currentWindowStartMs, t0 + 20 * minute);
        QCOMPARE(row.nextWindowStartMs, t0 + 30 * minute);

        // ES-26: the session is back: the timer is cleared and nothing more is offered.
        bringSessionBack(f);
        QCOMPARE(f.relay->escrow()->releaseDueMs(), -1);
        f.clock.advance(15 * minute);
        QTest::qWait(100); // a negative after the clock step: turns for a wrong offer to reach the node; not the node barrier: this node may be gone with the returning session (§8.4)
        QCOMPARE(node->pushCount(renewalMethod), 2);
        // OC-11, ES-01: a renewal's signature never reaches a log line.
        const QString signature = renewals.at(1).toObject().value("signature").toString();
        QVERIFY(!log.contains(signature));
    }

    // ES-24, ES-25: a node that refuses is offered the same renewal every 30 s until the window before
    // it ends, and then no more until the next window opens.
    void refusedOfferCadence_ES24_ES25()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        auto node = f.registeredNode("node-a");
        node->setPushAnswer(renewalMethod, Answer::refuse(QLatin1StringView("dns-lease-clock-unqualified"), QStringLiteral("no NTS sample")));
        const auto b = *node->session();
        const auto p = Builder::projection("proj-1", 1);
        const qint64 t0 = f.clock.nowMs() - 10 * minute - 10000; // window 2 opens (with margin) in 20 s
        QVERIFY(!hold(f, Builder::holdRequest(b, p, Builder::grid(b, p, t0, 3))).hasError());
        // The escrow announces every answered offer with statusChanged (and nothing else here).
        QSignalSpy answered(f.relay->escrow(), &LeaseEscrow::statusChanged);
        takeSessionDown(f);
        QTRY_COMPARE(node->pushCount(renewalMethod), 1);
        QCOMPARE(pushedSequence(*node), 1);
        QTRY_COMPARE(answered.size(), 1);
        // Walk the escrow's own timer: every offer of window 2 happens in [t0+10m30s, t0+15m).
        QList<qint64> offersOfWindow2;
        for (int i = 0; i < 40; ++i) {
            const qint64 due = f.relay->escrow()->releaseDueMs();
            QVERIFY(due > 0);
            if (due >= t0 + 20 * minute)
                break; // the next thing is window 3's opening
            const int before = node->pushCount(renewalMethod);
            const int answers = int(answered.size());
            f.clock.advance(due - f.clock.nowMs());
            QTRY_COMPARE(node->pushCount(renewalMethod), before + 1);
            QCOMPARE(pushedSequence(*node), 2);
            offersOfWindow2 << f.clock.nowMs();
            QTRY_COMPARE(int(answered.size()), answers + 1);
        }
        QCOMPARE(offersOfWindow2.size(), 9);
        QCOMPARE(offersOfWindow2.first(), t0 + 10 * minute + 30000);
        for (int k = 1; k < offersOfWindow2.size(); ++k)
            QCOMPARE(offersOfWindow2.at(k) - offersOfWindow2.at(k - 1), 30000);
        QVERIFY(offersOfWindow2.last() < t0 + 15 * minute);
        QCOMPARE(f.relay->escrow()->releaseDueMs(), t0 + 20 * minute + 30000);
    }

    // ES-31: a registration answered with another binding drops the run; the identical binding keeps it.
    void registrationDropsOnlyANewBinding_ES31()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        auto node = f.registeredNode("node-a");
        const auto b = *node->session();
        const auto p = Builder::projection("proj-1", 1);
        QVERIFY(!hold(f, Builder::holdRequest(b, p, Builder::grid(b, p, f.clock.nowMs(), 2))).hasError());
        // Cloudly answers an identical registration with the historical binding.
        f.cloudly->setHandler("registerPalletRuntimeSession", [&f, b](const peers::PeerFrame &frame, const QJsonObject &request) {
            Answer a = f.cloudly->defaultAnswer(frame, request);
            QJsonObject response = QJsonDocument::fromJson(a.rawResponse).object();
            response["session"] = b.toJson();
            return Answer::respond(response);
        });
        bool again = false;
        node->registerSession([&](const peers::PeerFrame &x) { again = !x.hasError(); });
        QTRY_VERIFY(again);
        QVERIFY(f.relay->escrow()->holdsRunFor("node-a"));
        f.cloudly->clearHandler("registerPalletRuntimeSession");
        again = false;
        node->registerSession([&](const peers::PeerFrame &x) { again = !x.hasError(); });
        QTRY_VERIFY(again);
        QTRY_VERIFY(!f.relay->escrow()->holdsRunFor("node-a"));
        QVERIFY(log.contains("node node-a: DNS lease renewal run dropped: the node registered another session"));
    }

    // ES-32, FW-24, D-08: the node's projection ACK retires a run it no longer renews.
    void projectionAckRetiresTheRun_ES32_FW24()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        auto node = f.registeredNode("node-a");
        const auto b = *node->session();
        const auto p = Builder::projection("proj-1", 2);
        QVERIFY(!hold(f, Builder::holdRequest(b, p, Builder::grid(b, p, f.clock.nowMs(), 2))).hasError());
        auto ackWith = [&](const QJsonObject &projection) {
            node->setPushAnswer("applyRuntimeNetworkProjection", Answer::respond(QJsonObject{{"projection", projection}, {"admitted", true}}));
            bool answered = false;
            f.cloudly->push("applyRuntimeNetworkProjection", QJsonObject{{"session", b.toJson()}, {"projection", projection}},
                            [&](const peers::PeerFrame &) { answered = true; });
            QTRY_VERIFY(answered);
        };
        ackWith(Builder::projection("proj-1", 1)); // an earlier generation keeps it (D-08)
        QVERIFY(f.relay->escrow()->holdsRunFor("node-a"));
        ackWith(Builder::projection("proj-1", 3));
        QVERIFY(!f.relay->escrow()->holdsRunFor("node-a"));
    }

    // ES-23: a node that is gone is not reached; its run is kept (it cannot register without Cloudly).
    void goneNodeNotReached_ES23()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        auto node = f.registeredNode("node-a");
        const auto b = *node->session();
        const auto p = Builder::projection("proj-1", 1);
        QVERIFY(!hold(f, Builder::holdRequest(b, p, Builder::grid(b, p, f.clock.nowMs() - minute, 2))).hasError());
        node->close();
        QTRY_VERIFY(f.relay->statusSnapshot().nodes.isEmpty());
        takeSessionDown(f);
        QTRY_COMPARE(f.relay->statusSnapshot().escrow.value(0).lastOfferResult, QString(contract::refusal::nodeNotConnected));
        QCOMPARE(node->pushCount(renewalMethod), 0);
    }

    // OC-11, ES-01, ES-02: renewal signatures and renewal bodies (unique canaries) never reach a log line,
    // a refusal text or the status snapshot — on accepted and refused holds, offers, answers and drops —
    // although the node receives them verbatim.
    void renewalCanariesNeverLeak_OC11_ES01()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        auto node = f.registeredNode("node-a");
        bool nodeRefuses = false;
        node->setPushHandler(renewalMethod, [&f, &nodeRefuses](const peers::PeerFrame &, const QJsonObject &request) {
            if (nodeRefuses)
                return Answer::refuse(QLatin1StringView("dns-lease-clock-unqualified"), QStringLiteral("no NTS sample"));
            return Builder::acknowledge(request, f.clock.nowMs());
        });
        const auto b = *node->session();
        const auto p1 = Builder::projection("proj-1", 1), p2 = Builder::projection("proj-1", 2);
        const QString tag = QString::number(QDateTime::currentMSecsSinceEpoch());
        QStringList canaries;
        QList<QByteArray> bodies;
        int serial = 0;
        auto canaryRun = [&](const peers::PeerSessionBinding &scope, const QJsonObject &projection, qint64 t0, int count, qint64 firstSequence) {
            QJsonArray renewals = Builder::grid(scope, projection, t0, count, firstSequence);
            for (qsizetype i = 0; i < renewals.size(); ++i) {
                QJsonObject r = renewals.at(i).toObject();
                const QString canary = QStringLiteral("escrow-signature-canary-%1-%2").arg(tag).arg(++serial);
                r["signature"] = canary;
                renewals[i] = r;
                canaries << canary;
                bodies << bytes(r);
            }
            return renewals;
        };
        QStringList texts;
        int refused = 0;
        auto holdRaw = [&](const QByteArray &raw) {
            const peers::PeerFrame answer = hold(f, raw);
            if (answer.hasError()) {
                texts << answer.errorRefusal().text();
                ++refused;
            }
            return answer;
        };
        auto holdRun = [&](const peers::PeerSessionBinding &session, const QJsonObject &projection, const QJsonArray &renewals) {
            return holdRaw(bytes(Builder::holdRequest(session, projection, renewals)));
        };
        const qint64 t0 = f.clock.nowMs() - 12 * minute;
        QVERIFY(!holdRun(b, p1, canaryRun(b, p1, t0, 4, 1)).hasError());
        // Refused paths, each carrying fresh canaries.
        QJsonArray descending = canaryRun(b, p1, t0, 2, 5);
        QJsonObject lower = descending.at(1).toObject();
        lower["sequence"] = 3; // does not ascend
        descending[1] = lower;
        QCOMPARE(holdRun(b, p1, descending).errorRefusal().name, QString(contract::refusal::escrowRunInvalid));
        QJsonArray unknownMember = canaryRun(b, p1, t0, 1, 9);
        QJsonObject withNote = unknownMember.at(0).toObject();
        withNote["note"] = canaries.last();
        unknownMember[0] = withNote;
        QCOMPARE(holdRun(b, p1, unknownMember).errorRefusal().name, QString(contract::refusal::escrowRunInvalid));
        QJsonArray wrongType = canaryRun(b, p1, t0, 1, 9);
        QJsonObject withNumber = wrongType.at(0).toObject();
        withNumber["sequence"] = canaries.last();
        wrongType[0] = withNumber;
        QCOMPARE(holdRun(b, p1, wrongType).errorRefusal().name, QString(contract::refusal::escrowRunInvalid));
        const QByteArray duplicate = "{\"session\":" + bytes(b.toJson()) + ",\"projection\":" + bytes(p1) + ",\"renewals\":"
                                     + QJsonDocument(canaryRun(b, p1, t0, 1, 9)).toJson(QJsonDocument::Compact) + ",\"renewals\":"
                                     + QJsonDocument(canaryRun(b, p1, t0, 1, 9)).toJson(QJsonDocument::Compact) + "}";
        QCOMPARE(holdRaw(duplicate).errorRefusal().name, QString(contract::refusal::escrowRunInvalid));
        peers::PeerSessionBinding otherSession = b;
        otherSession.sessionId = "s-other";
        QCOMPARE(holdRun(b, p1, canaryRun(otherSession, p1, t0, 2, 9)).errorRefusal().name, QString(contract::refusal::escrowRunForeignSession));
        const auto q = Builder::projection("proj-9", 1);
        QCOMPARE(holdRun(b, q, canaryRun(b, q, t0, 2, 9)).errorRefusal().name, QString(contract::refusal::escrowRunUnordered));
        QCOMPARE(holdRun(b, p1, canaryRun(b, p1, t0, 2, 1)).errorRefusal().name, QString(contract::refusal::escrowRunStale));
        const peers::PeerSessionBinding stranger{"node-z", "cluster-1", "s-z", 0};
        QCOMPARE(holdRun(stranger, p1, canaryRun(stranger, p1, t0, 2, 1)).errorRefusal().name, QString(contract::refusal::escrowNodeNotCarried));
        QCOMPARE(refused, 8);
        // Accepted again: a later generation replaces the held run.
        QVERIFY(!holdRun(b, p2, canaryRun(b, p2, t0, 4, 1)).hasError());
        const QByteArray statusHeld = QJsonDocument(f.relay->statusSnapshot().toJson()).toJson();
        QVERIFY(statusHeld.contains("proj-1"));

        // Offers: admitted at the loss of the session, refused and re-offered afterwards.
        takeSessionDown(f);
        QTRY_COMPARE(node->pushCount(renewalMethod), 1);
        QTRY_COMPARE(f.relay->statusSnapshot().escrow.value(0).lastOfferResult, QStringLiteral("admitted"));
        nodeRefuses = true;
        f.clock.advance(t0 + 20 * minute + 30000 - f.clock.nowMs());
        QTRY_COMPARE(node->pushCount(renewalMethod), 2);
        QTRY_VERIFY(f.relay->statusSnapshot().escrow.value(0).lastOfferResult.startsWith("refused"));
        f.clock.advance(30000);
        QTRY_COMPARE(node->pushCount(renewalMethod), 3);
        const QByteArray statusOffered = QJsonDocument(f.relay->statusSnapshot().toJson()).toJson();
        // The node did receive canaries (verbatim), so their absence below means something.
        const QByteArray delivered = node->lastPushRawRequest(renewalMethod);
        QVERIFY(std::any_of(canaries.cbegin(), canaries.cend(), [&](const QString &c) { return delivered.contains(c.toUtf8()); }));
        QVERIFY(std::any_of(bodies.cbegin(), bodies.cend(), [&](const QByteArray &body) { return delivered.contains(body); }));
        QVERIFY(f.stopRelay());

        QCOMPARE(canaries.size(), serial);
        const QStringList lines = log.lines();
        QVERIFY(lines.size() > 10);
        for (const QString &canary : std::as_const(canaries)) {
            for (const QString &line : lines)
                QVERIFY2(!line.contains(canary), qPrintable(QStringLiteral("log line leaks a renewal signature: ") + line));
            for (const QString &text : std::as_const(texts))
                QVERIFY2(!text.contains(canary), qPrintable(QStringLiteral("refusal leaks a renewal signature: ") + text));
            QVERIFY2(!statusHeld.contains(canary.toUtf8()), "status leaks a renewal signature");
            QVERIFY2(!statusOffered.contains(canary.toUtf8()), "status leaks a renewal signature");
        }
        for (const QByteArray &body : std::as_const(bodies)) {
            const QString text = QString::fromUtf8(body);
            for (const QString &line : lines)
                QVERIFY2(!line.contains(text), qPrintable(QStringLiteral("log line leaks a renewal body: ") + line));
            for (const QString &refusal : std::as_const(texts))
                QVERIFY2(!refusal.contains(text), qPrintable(refusal));
            QVERIFY(!statusHeld.contains(body) && !statusOffered.contains(body));
        }
    }

    // §9.5, ES-33, ES-35, RR-30 through the composition root: registration refusals reach
    // LeaseEscrow::registrationRefused — custody ends with exactly one escrow line (the park that
    // RelayRegistration::parked asks for afterwards says nothing), before the park line.
    void registrationRefusalEndsCustodyOnce_ES33_ES35_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<bool>("parks");
        QTest::newRow("relay-credential-generation-stale") << QStringLiteral("relay-credential-generation-stale") << true;
        QTest::newRow("relay-node-foreign") << QStringLiteral("relay-node-foreign") << false;
    }
    void registrationRefusalEndsCustodyOnce_ES33_ES35()
    {
        QFETCH(QString, name);
        QFETCH(bool, parks);
        RelayFixture f;
        QVERIFY(f.startRelay());
        QTRY_VERIFY(f.relay->registration()->acceptedRecord().has_value());
        auto node = f.registeredNode("node-a");
        const auto b = *node->session();
        const auto p = Builder::projection("proj-1", 1);
        QVERIFY(!hold(f, Builder::holdRequest(b, p, Builder::grid(b, p, f.clock.nowMs(), 3))).hasError());
        log.clear();
        const QByteArray latin = name.toLatin1();
        f.cloudly->setAnswer("registerClusterRelay", Answer::refuse(QLatin1StringView(latin), "by the test"));
        renewIdentity(f);
        QTRY_COMPARE(f.relay->statusSnapshot().escrow.size(), 0);
        if (parks)
            QTRY_VERIFY(f.relay->readiness()->isParked());
        QVERIFY(f.settleCloudlyHop()); // the refusal was taken before this round trip's answer
        QCOMPARE(f.relay->readiness()->isParked(), parks);
        const QStringList lines = log.lines();
        int dropped = -1, drops = 0, parkedLine = -1;
        for (int i = 0; i < lines.size(); ++i) {
            if (lines.at(i).contains("dropped the DNS lease renewal runs of")) {
                ++drops;
                dropped = i;
            }
            if (lines.at(i).contains("relay parked:"))
                parkedLine = i;
        }
        QCOMPARE(drops, 1);
        if (parks)
            QVERIFY(parkedLine > dropped);
        QCOMPARE(log.count(QStringLiteral("dropped the DNS lease renewal runs of 1 nodes")), 1);
    }

    // ES-27, ES-38: stopping the relay stops the escrow before the node registry empties: nothing held,
    // no timer, nothing offered afterwards.
    void stopDropsCustody_ES27_ES38()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        auto node = f.registeredNode("node-a");
        const auto b = *node->session();
        const auto p = Builder::projection("proj-1", 1);
        QVERIFY(!hold(f, Builder::holdRequest(b, p, Builder::grid(b, p, f.clock.nowMs(), 3))).hasError());
        QVERIFY(f.stopRelay());
        QCOMPARE(f.relay->escrow()->runCount(), 0);
        QCOMPARE(f.relay->escrow()->releaseDueMs(), -1);
        QVERIFY(f.relay->statusSnapshot().escrow.isEmpty());
        QVERIFY(log.contains("escrow stopped; dropped the DNS lease renewal runs of 1 nodes"));
    }
};

COREFLOW_EPOLL_TEST_MAIN(TstEscrow)
#include "tst_escrow.moc"
