// LeaseEscrow on a ManualClock with a fake courier (no sockets): custody, precedence, release timing,
// drops. Rules: ES-03, ES-08, ES-09, ES-10, ES-11, ES-13..ES-38 (each test names its rules).
#include "shared/contract/envelope.h"
#include "shared/contract/methods.h"
#include "shared/contract/refusalnames.h"
#include "tests/peers/dnsleaserenewalrunbuilder.h"
#include "service/escrow/leaseescrow.h"
#include "shared/util/manualclock.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QJsonDocument>
#include <QPointer>
#include <QSignalSpy>
#include <QTest>

using namespace coreflow;
using namespace coreflow::contract;
using Builder = coreflow::peers::DnsLeaseRenewalRunBuilder;

namespace {
constexpr qint64 minute = 60000;
QByteArray bytes(const QJsonObject &o) { return QJsonDocument(o).toJson(QJsonDocument::Compact); }

// The node lane as the escrow sees it. Nodes answer per `mode`: admit (a bound ACK), refuse (their own
// error), or silence (the answer never comes; the delivery stays pending).
class FakeCourier final : public EscrowCourier {
public:
    enum class Mode { Admit, Refuse, Silence };
    struct Delivery {
        QString nodeId;
        QByteArray raw;
        qint64 atMs = 0;
        QJsonObject renewal() const { return QJsonDocument::fromJson(raw).object().value("renewal").toObject(); }
        qint64 sequence() const { return qint64(renewal().value("sequence").toDouble()); }
    };

    explicit FakeCourier(Clock &clock) : m_clock(clock) {}
    std::optional<SessionBinding> currentBinding(const QString &nodeId) const override
    {
        auto it = bindings.constFind(nodeId);
        if (it == bindings.constEnd())
            return std::nullopt;
        return it.value();
    }
    void deliver(const QString &nodeId, const QByteArray &raw, qint64, Delivered done) override
    {
        if (!bindings.contains(nodeId)) {
            const Refusal r{QString(refusal::nodeNotConnected), QStringLiteral("node %1 is not connected to this relay").arg(nodeId)};
            done(nullptr, &r);
            return;
        }
        deliveries.append(Delivery{nodeId, raw, m_clock.nowMs()});
        const Mode mode = modes.value(nodeId, Mode::Admit);
        const QByteArray method(method::applyRuntimeNetworkDnsLeaseRenewal.data(), method::applyRuntimeNetworkDnsLeaseRenewal.size());
        if (mode == Mode::Silence) {
            pending.append(done);
            return;
        }
        QByteArray frame;
        if (mode == Mode::Refuse) {
            frame = Envelope::refusal(QString::fromLatin1(method), QStringLiteral("x"), raw,
                                      Refusal{refusalNames.value(nodeId, QStringLiteral("dns-lease-window-not-current")), QStringLiteral("not now")});
        } else {
            const QJsonObject renewal = QJsonDocument::fromJson(raw).object().value("renewal").toObject();
            frame = Envelope::response(QString::fromLatin1(method), QStringLiteral("x"), raw,
                                       bytes(QJsonObject{{"projection", renewal.value("projection")},
                                                         {"sequence", renewal.value("sequence")},
                                                         {"state", "admitted"}}));
        }
        auto parsed = Envelope::parse(frame);
        done(&parsed.value(), nullptr);
    }
    QList<Delivery> to(const QString &nodeId) const
    {
        QList<Delivery> out;
        for (const auto &d : deliveries)
            if (d.nodeId == nodeId)
                out.append(d);
        return out;
    }

    QHash<QString, SessionBinding> bindings;
    QHash<QString, Mode> modes;
    QHash<QString, QString> refusalNames; // Mode::Refuse answers this name (default dns-lease-window-not-current)
    QList<Delivery> deliveries;
    QList<Delivered> pending;

private:
    Clock &m_clock;
};

// A clock whose timers fire only when the test says so, at whatever time it is then — late, the way a
// real QTimer fires when the event loop was busy. ManualClock always fires a timer at its own deadline.
class LateClock final : public Clock {
public:
    class Timer final : public ClockTimer {
    public:
        Timer(LateClock &clock, QObject *parent) : ClockTimer(parent), m_clock(clock) {}
        void start(qint64 delayMs) override { deadline = m_clock.now + qMax<qint64>(0, delayMs); }
        void stop() override { deadline = -1; }
        bool isActive() const override { return deadline >= 0; }
        qint64 deadlineMs() const override { return deadline; }
        qint64 deadline = -1;

    private:
        LateClock &m_clock;
    };

    explicit LateClock(qint64 startMs) : now(startMs) {}
    qint64 nowMs() const override { return now; }
    std::unique_ptr<ClockTimer> createTimer(QObject *parent = nullptr) override
    {
        auto timer = std::make_unique<Timer>(*this, parent);
        m_timers.append(timer.get());
        return timer;
    }
    // Fires the timers due at now (again while a firing re-arms one that is due), at most cap firings;
    // returns how many fired.
    int fireDue(int cap)
    {
        int fired = 0;
        for (;;) {
            Timer *due = nullptr;
            for (const auto &t : std::as_const(m_timers))
                if (t && t->isActive() && t->deadline <= now)
                    due = t.data();
            if (!due || fired >= cap)
                return fired;
            due->deadline = -1;
            ++fired;
            Q_EMIT due->timeout();
        }
    }

    qint64 now;

private:
    QList<QPointer<Timer>> m_timers;
};

struct Rig {
    ManualClock clock{QDateTime::currentMSecsSinceEpoch()};
    FakeCourier courier{clock};
    LeaseEscrow escrow{courier, clock, RelayTiming{}};

    SessionBinding carry(const QString &nodeId, const QString &sessionId = {})
    {
        SessionBinding b{nodeId, QStringLiteral("cluster-1"), sessionId.isEmpty() ? QStringLiteral("s-%1").arg(nodeId) : sessionId, 0};
        courier.bindings.insert(nodeId, b);
        return b;
    }
    // Sends a hold and returns the answer frame once the escrow applied it.
    Frame holdNow(const QJsonObject &request)
    {
        QByteArray answer;
        escrow.hold(requestFrame(request), [&](QByteArray a) { answer = a; });
        for (int i = 0; i < 100 && answer.isEmpty(); ++i)
            QCoreApplication::processEvents();
        return Envelope::parse(answer).value();
    }
    static Frame requestFrame(const QJsonObject &request) { return requestFrame(bytes(request)); }
    static Frame requestFrame(const QByteArray &rawRequest)
    {
        return Envelope::parse(Envelope::request(QString(method::holdRuntimeNetworkDnsLeaseRenewals), QStringLiteral("h"), rawRequest)).value();
    }
    Frame holdRaw(const QByteArray &rawRequest)
    {
        QByteArray answer;
        escrow.hold(requestFrame(rawRequest), [&](QByteArray a) { answer = a; });
        for (int i = 0; i < 100 && answer.isEmpty(); ++i)
            QCoreApplication::processEvents();
        return Envelope::parse(answer).value();
    }
    Frame holdGrid(const SessionBinding &b, const QJsonObject &projection, qint64 firstNotBefore, int count, qint64 firstSequence = 1)
    {
        return holdNow(Builder::holdRequest(b, projection, Builder::grid(b, projection, firstNotBefore, count, firstSequence)));
    }
    void advanceTo(qint64 t) { clock.advance(t - clock.nowMs()); }
};

QString refusalName(const Frame &answer) { return answer.hasError() ? answer.errorRefusal().name : QString(); }
QByteArray arrayBytes(const QJsonArray &a) { return QJsonDocument(a).toJson(QJsonDocument::Compact); }
qint64 held(const Frame &answer) { return answer.hasError() ? -1 : qint64(answer.responseObject().value().value("held").toDouble()); }
} // namespace

class TstLeaseEscrow : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // ES-03: a hold is answered { held } with the number of renewals now held; ES-01: in memory.
    void holdAnsweredHeld_ES03_ES01()
    {
        Rig r;
        const auto b = r.carry("node-a");
        const Frame answer = r.holdGrid(b, Builder::projection("p", 1), r.clock.nowMs(), 3);
        QCOMPARE(held(answer), 3);
        QVERIFY(r.escrow.holdsRunFor("node-a"));
        QCOMPARE(r.escrow.renewalCount(), 3);
        QCOMPARE(held(r.holdNow(Builder::holdRequest(b, Builder::projection("p", 1), {}))), 0);
    }

    // ES-08: a node this relay does not carry.
    void nodeNotCarried_ES08()
    {
        Rig r;
        const SessionBinding b{"node-x", "cluster-1", "s-x", 0};
        const Frame answer = r.holdGrid(b, Builder::projection("p", 1), r.clock.nowMs(), 1);
        QCOMPARE(refusalName(answer), QString(refusal::escrowNodeNotCarried));
        QCOMPARE(answer.errorRefusal().reason, QStringLiteral("node node-x is not carried by this relay"));
    }

    // ES-09: the session is read on arrival and again after validation; a registration in between, or a
    // binding that differs only in its cluster, is escrow-run-foreign-session.
    void foreignSession_ES09()
    {
        Rig r;
        const auto b = r.carry("node-a");
        const auto p = Builder::projection("p", 1);
        QByteArray answer;
        r.escrow.hold(Rig::requestFrame(Builder::holdRequest(b, p, Builder::grid(b, p, r.clock.nowMs(), 2))), [&](QByteArray a) { answer = a; });
        QVERIFY(answer.isEmpty()); // queued: applied from the event loop
        r.carry("node-a", "s-new"); // the node registers another session meanwhile
        QTRY_VERIFY(!answer.isEmpty());
        QCOMPARE(refusalName(Envelope::parse(answer).value()), QString(refusal::escrowRunForeignSession));

        Rig r2;
        auto carried = r2.carry("node-a");
        SessionBinding otherCluster = carried;
        otherCluster.clusterId = "cluster-2";
        QCOMPARE(refusalName(r2.holdGrid(otherCluster, p, r2.clock.nowMs(), 1)), QString(refusal::escrowRunForeignSession));
        QVERIFY(!r2.escrow.holdsRunFor("node-a"));
    }

    // ES-10: renewals outside the session's scope.
    void renewalsOutOfScope_ES10()
    {
        Rig r;
        const auto b = r.carry("node-a");
        SessionBinding other = b;
        other.sessionId = "s-other";
        const auto p = Builder::projection("p", 1);
        QCOMPARE(refusalName(r.holdNow(Builder::holdRequest(b, p, Builder::grid(other, p, r.clock.nowMs(), 2)))),
                 QString(refusal::escrowRunForeignSession));
    }

    // ES-05..ES-07 through the escrow: invalid runs are refused by name and hold nothing.
    void invalidRun_ES05_ES06_ES07()
    {
        Rig r;
        const auto b = r.carry("node-a");
        const auto p = Builder::projection("p", 1);
        QJsonArray many;
        for (int k = 0; k < 33; ++k)
            many.append(Builder::renewal(b, p, k + 1, r.clock.nowMs() + k * 1000, r.clock.nowMs() + k * 1000 + 600000));
        QCOMPARE(refusalName(r.holdNow(Builder::holdRequest(b, p, many))), QString(refusal::escrowRunInvalid));
        const qint64 end = r.clock.nowMs() + maximumEscrowHorizonMs + 1;
        QCOMPARE(refusalName(r.holdNow(Builder::holdRequest(b, p, {Builder::renewal(b, p, 1, end - 600000, end)}))),
                 QString(refusal::escrowRunInvalid));
        QVERIFY(!r.escrow.holdsRunFor("node-a"));
    }

    // ES-11: holds apply one at a time in arrival order; the outcome equals sequential application.
    void arrivalOrder_ES11()
    {
        Rig r;
        const auto b = r.carry("node-a");
        const qint64 t = r.clock.nowMs();
        const auto p1 = Builder::projection("p", 1), p2 = Builder::projection("p", 2);
        QList<QByteArray> answers;
        r.escrow.hold(Rig::requestFrame(Builder::holdRequest(b, p2, Builder::grid(b, p2, t, 2))), [&](QByteArray a) { answers << a; });
        r.escrow.hold(Rig::requestFrame(Builder::holdRequest(b, p1, Builder::grid(b, p1, t, 3))), [&](QByteArray a) { answers << a; });
        QCOMPARE(r.escrow.queuedHolds(), 2);
        QTRY_COMPARE(answers.size(), 2);
        QCOMPARE(held(Envelope::parse(answers[0]).value()), 2);
        QCOMPARE(refusalName(Envelope::parse(answers[1]).value()), QString(refusal::escrowRunStale));
        QCOMPARE(r.escrow.statusRuns().first().projectionGeneration, 2);
    }

    // ES-13..ES-17 through the escrow.
    void precedence_ES13_ES14_ES15_ES16_ES17()
    {
        Rig r;
        const auto b = r.carry("node-a");
        const qint64 t = r.clock.nowMs();
        const auto p1 = Builder::projection("p", 1), p2 = Builder::projection("p", 2);
        QCOMPARE(held(r.holdGrid(b, p1, t, 3, 10)), 3);
        QCOMPARE(refusalName(r.holdGrid(b, p1, t, 2, 10)), QString(refusal::escrowRunStale));        // ES-15 lower
        QCOMPARE(held(r.holdGrid(b, p1, t, 3, 10)), 3);                                                // ES-15 equal
        QCOMPARE(refusalName(r.holdGrid(b, Builder::projection("q", 9), t, 1)), QString(refusal::escrowRunUnordered)); // ES-17
        QCOMPARE(refusalName(r.holdGrid(b, Builder::projection("p", 1, "fork"), t, 1)), QString(refusal::escrowRunUnordered));
        QCOMPARE(held(r.holdGrid(b, p2, t, 1)), 1);                                                    // ES-13
        QCOMPARE(refusalName(r.holdGrid(b, p1, t, 5, 10)), QString(refusal::escrowRunStale));        // ES-14
        QCOMPARE(held(r.holdNow(Builder::holdRequest(b, p2, {}))), 0);                                 // ES-16
        // ES-16: the empty run holds nothing: nothing is offered during an outage.
        r.escrow.sessionLost();
        QCOMPARE(r.courier.deliveries.size(), 0);
    }

    // ES-18: nothing is released while the relay has a Cloudly session.
    void noReleaseWithSession_ES18()
    {
        Rig r;
        const auto b = r.carry("node-a");
        r.holdGrid(b, Builder::projection("p", 1), r.clock.nowMs() - 5 * minute, 6);
        r.clock.advance(40 * minute);
        QCOMPARE(r.courier.deliveries.size(), 0);
        QCOMPARE(r.escrow.releaseDueMs(), -1);
    }

    // ES-20, ES-19, ES-22, ES-30: offered the moment the session is lost — the latest window that has been
    // open for the margin, with the node's current binding and Cloudly's bytes.
    void offeredAtSessionLoss_ES20_ES19_ES22_ES30()
    {
        Rig r;
        const auto b = r.carry("node-a");
        const qint64 t0 = r.clock.nowMs() - 12 * minute; // windows [t0, t0+15m) and [t0+10m, t0+25m) overlap now
        const auto p = Builder::projection("p", 1);
        const QJsonArray renewals = Builder::grid(b, p, t0, 4);
        r.holdNow(Builder::holdRequest(b, p, renewals));
        r.escrow.sessionLost();
        QCOMPARE(r.courier.deliveries.size(), 1);
        const auto d = r.courier.deliveries.first();
        QCOMPARE(d.atMs, r.clock.nowMs());
        QCOMPARE(d.sequence(), 2);
        QCOMPARE(QJsonDocument::fromJson(d.raw).object().value("session").toObject(), b.toJson());
        QCOMPARE(d.renewal(), renewals.at(1).toObject());
        QVERIFY(d.raw.contains(bytes(renewals.at(1).toObject())));
        QCOMPARE(r.escrow.statusRuns().first().lastOfferResult, QStringLiteral("admitted"));
    }

    // ES-21, ES-19: then at every window start plus 30000 ms, never at the window start itself.
    void offeredAtEveryWindowStartPlusMargin_ES21_ES19()
    {
        Rig r;
        const auto b = r.carry("node-a");
        const qint64 t0 = r.clock.nowMs() - 2 * minute;
        r.holdGrid(b, Builder::projection("p", 1), t0, 4);
        r.escrow.sessionLost();
        QCOMPARE(r.courier.deliveries.size(), 1);
        r.advanceTo(t0 + 10 * minute);                // window 2 starts: not yet (margin)
        QCOMPARE(r.courier.deliveries.size(), 1);
        r.advanceTo(t0 + 10 * minute + 29999);
        QCOMPARE(r.courier.deliveries.size(), 1);
        r.advanceTo(t0 + 10 * minute + 30000);
        QCOMPARE(r.courier.deliveries.size(), 2);
        QCOMPARE(r.courier.deliveries.last().atMs, t0 + 10 * minute + 30000);
        QCOMPARE(r.courier.deliveries.last().sequence(), 2);
        r.advanceTo(t0 + 30 * minute + 30000);
        QCOMPARE(r.courier.deliveries.size(), 4);
        QCOMPARE(r.courier.deliveries.at(2).atMs, t0 + 20 * minute + 30000);
        QCOMPARE(r.courier.deliveries.at(3).atMs, t0 + 30 * minute + 30000);
    }

    // ES-24, ES-25: a refused offer is re-offered every 30000 ms until the window before it ends, then no more.
    void reofferCadenceStopsAtPreviousWindowEnd_ES24_ES25()
    {
        Rig r;
        const auto b = r.carry("node-a");
        r.courier.modes["node-a"] = FakeCourier::Mode::Refuse;
        const qint64 t0 = r.clock.nowMs() - 10 * minute - 30000; // window 2 opened for exactly the margin
        r.holdGrid(b, Builder::projection("p", 1), t0, 3);
        r.escrow.sessionLost();
        const qint64 first = r.clock.nowMs();
        r.advanceTo(t0 + 20 * minute); // before window 3 opens
        const auto offers = r.courier.to("node-a");
        // Window 1 ends at t0+15m = first + 4m30s: offers at first + k*30 s for k = 0..8 (k=9 is the end itself).
        QCOMPARE(offers.size(), 9);
        for (int k = 0; k < offers.size(); ++k) {
            QCOMPARE(offers.at(k).atMs, first + k * 30000);
            QCOMPARE(offers.at(k).sequence(), 2);
        }
        QVERIFY(offers.last().atMs < t0 + 15 * minute);
        QVERIFY(r.escrow.statusRuns().first().lastOfferResult.contains("dns-lease-window-not-current"));
    }

    // §9.6 (D-74): a run whose first window opens beyond the admission margin after the relay's clock
    // names clock skew (log line and clockSkew); one opening within the margin does not.
    void runSignedAheadNamesSkew_ES19_D74()
    {
        Rig r;
        const auto b = r.carry("node-a");
        const qint64 now = r.clock.nowMs();
        QSignalSpy lines(&r.escrow, &LeaseEscrow::eventLine);
        // Within the margin (exactly 30000 ms ahead): not skew.
        QCOMPARE(held(r.holdGrid(b, Builder::projection("p", 1), now + 30000, 2)), 2);
        QVERIFY(!r.escrow.clockSkew().suspected);
        QCOMPARE(r.escrow.clockSkew().source, QStringLiteral("none"));
        for (const auto &l : lines)
            QVERIFY(!l.at(0).toString().contains("clock-skew"));
        // 30001 ms ahead: beyond the margin.
        QCOMPARE(held(r.holdGrid(b, Builder::projection("p", 2), now + 30001, 2)), 2);
        const auto skew = r.escrow.clockSkew();
        QVERIFY(skew.suspected);
        QCOMPARE(skew.source, QStringLiteral("run-signed-ahead"));
        QCOMPARE(skew.nodeId, QStringLiteral("node-a"));
        QCOMPARE(skew.skewMs, 30001);
        QCOMPARE(skew.windowStartMs, now + 30001);
        QCOMPARE(skew.observedAtMs, now);
        QStringList skewLines;
        for (const auto &l : lines)
            if (l.at(0).toString().startsWith("clock-skew-suspected: "))
                skewLines << l.at(0).toString();
        QCOMPARE(skewLines.size(), 1);
        QVERIFY2(skewLines.first().contains(QDateTime::fromMSecsSinceEpoch(now, Qt::UTC).toString(Qt::ISODateWithMs))
                     && skewLines.first().contains("check NTP on this host") && skewLines.first().contains("node node-a"),
                 qPrintable(skewLines.first()));
        // A later run within the margin clears the suspicion; the observation's fields stay.
        r.advanceTo(now + minute);
        QCOMPARE(held(r.holdGrid(b, Builder::projection("p", 3), r.clock.nowMs() - minute, 2)), 2);
        QVERIFY(!r.escrow.clockSkew().suspected);
        QCOMPARE(r.escrow.clockSkew().skewMs, 30001);
    }

    // §9.6 (D-74): a node refusing an offered renewal as not yet valid names skew, once per window even
    // though the refused offer is made again every 30000 ms; another refusal name does not.
    void nodeNotYetValidNamesSkew_ES24_D74()
    {
        Rig r;
        const auto b = r.carry("node-a");
        const auto c = r.carry("node-c");
        r.courier.modes["node-a"] = FakeCourier::Mode::Refuse;
        r.courier.refusalNames["node-a"] = QStringLiteral("dns-lease-renewal-not-yet-valid");
        r.courier.modes["node-c"] = FakeCourier::Mode::Refuse; // dns-lease-window-not-current: not skew
        const qint64 t0 = r.clock.nowMs() - minute; // window 1 opened a minute ago by the relay's clock
        QSignalSpy lines(&r.escrow, &LeaseEscrow::eventLine);
        r.holdGrid(c, Builder::projection("pc", 1), t0, 1);
        r.escrow.sessionLost();
        QCOMPARE(r.courier.to("node-c").size(), 1);
        QVERIFY(!r.escrow.clockSkew().suspected);
        r.holdGrid(b, Builder::projection("p", 1), t0, 1);
        QCOMPARE(r.courier.to("node-a").size(), 1);
        const auto skew = r.escrow.clockSkew();
        QVERIFY(skew.suspected);
        QCOMPARE(skew.source, QStringLiteral("node-not-yet-valid"));
        QCOMPARE(skew.nodeId, QStringLiteral("node-a"));
        QCOMPARE(skew.windowStartMs, t0);
        QCOMPARE(skew.skewMs, minute); // at least the time the window has been open by the relay's clock
        r.advanceTo(t0 + 3 * minute); // re-offered and refused again: said once
        QVERIFY(r.courier.to("node-a").size() > 2);
        QStringList skewLines;
        for (const auto &l : lines)
            if (l.at(0).toString().startsWith("clock-skew-suspected: "))
                skewLines << l.at(0).toString();
        QCOMPARE(skewLines.size(), 1);
        QVERIFY2(skewLines.first().contains("node node-a refused DNS lease renewal sequence 1 as not yet valid")
                     && skewLines.first().contains(QDateTime::fromMSecsSinceEpoch(t0, Qt::UTC).toString(Qt::ISODateWithMs)),
                 qPrintable(skewLines.first()));
        QCOMPARE(r.escrow.clockSkew().skewMs, r.courier.to("node-a").last().atMs - t0); // the last refusal's observation
        // The node admits the next offer: the suspicion is cleared.
        r.courier.modes["node-a"] = FakeCourier::Mode::Admit;
        r.advanceTo(r.clock.nowMs() + 30000);
        QVERIFY(!r.escrow.clockSkew().suspected);
        QCOMPARE(r.escrow.clockSkew().source, QStringLiteral("node-not-yet-valid"));
    }

    // ES-25: for the renewal that opens the run, re-offers continue until its own end.
    void reofferFirstRenewalUntilItsOwnEnd_ES25()
    {
        Rig r;
        const auto b = r.carry("node-a");
        r.courier.modes["node-a"] = FakeCourier::Mode::Refuse;
        const qint64 t0 = r.clock.nowMs() - 30000;
        r.holdGrid(b, Builder::projection("p", 1), t0, 1);
        r.escrow.sessionLost();
        r.advanceTo(t0 + 20 * minute);
        const auto offers = r.courier.to("node-a");
        // [t0+30 s, t0+15 m): 29 offers, the last at t0 + 14m30s.
        QCOMPARE(offers.size(), 29);
        QCOMPARE(offers.last().atMs, t0 + 14 * minute + 30000);
        // ES-37: its last window ended, so the run is gone.
        QVERIFY(!r.escrow.holdsRunFor("node-a"));
    }

    // ES-24: a delivery that times out (or whose ACK cannot be bound) counts as failed too.
    void silentNodeIsRetried_ES24()
    {
        Rig r;
        const auto b = r.carry("node-a");
        r.courier.modes["node-a"] = FakeCourier::Mode::Silence;
        r.holdGrid(b, Builder::projection("p", 1), r.clock.nowMs() - minute, 2);
        r.escrow.sessionLost();
        QCOMPARE(r.courier.deliveries.size(), 1);
        const Refusal timeout{QString(refusal::nodePushTimeout), QStringLiteral("timeout")};
        r.clock.advance(8000);
        r.courier.pending.takeFirst()(nullptr, &timeout);
        QCOMPARE(r.escrow.statusRuns().first().lastOfferResult, QString(refusal::nodePushTimeout));
        r.clock.advance(22000);
        QCOMPARE(r.courier.deliveries.size(), 2);
    }

    // ES-26: the moment the session is back the timer is cleared and nothing more is offered.
    void sessionBackClearsTimer_ES26()
    {
        Rig r;
        const auto b = r.carry("node-a");
        r.courier.modes["node-a"] = FakeCourier::Mode::Refuse;
        r.holdGrid(b, Builder::projection("p", 1), r.clock.nowMs() - minute, 6);
        r.escrow.sessionLost();
        QVERIFY(r.escrow.releaseDueMs() > 0);
        r.escrow.sessionDispatchable();
        QCOMPARE(r.escrow.releaseDueMs(), -1);
        r.clock.advance(45 * minute);
        QCOMPARE(r.courier.deliveries.size(), 1);
        QVERIFY(r.escrow.holdsRunFor("node-a")); // custody is kept for the next outage
    }

    // ES-28: a run handed over while the session is already lost is offered its current window at once.
    void holdDuringOutageOfferedAtOnce_ES28()
    {
        Rig r;
        const auto b = r.carry("node-a");
        r.escrow.sessionLost();
        const qint64 t0 = r.clock.nowMs() - 3 * minute;
        r.holdGrid(b, Builder::projection("p", 1), t0, 3);
        QCOMPARE(r.courier.deliveries.size(), 1);
        QCOMPARE(r.courier.deliveries.first().atMs, r.clock.nowMs());
        QCOMPARE(r.courier.deliveries.first().sequence(), 1);
        QCOMPARE(r.escrow.releaseDueMs(), t0 + 10 * minute + 30000);
    }

    // ES-29: a re-offer armed for one node never postpones another node's window that just opened.
    void retryNeverPostponesAnotherWindow_ES29()
    {
        Rig r;
        const auto a = r.carry("node-a");
        const auto b = r.carry("node-b");
        r.courier.modes["node-a"] = FakeCourier::Mode::Refuse;
        const qint64 now = r.clock.nowMs();
        r.holdGrid(a, Builder::projection("p", 1), now - minute, 2);
        r.holdGrid(b, Builder::projection("p", 1), now + 10000 - 30000 + 1000, 2); // opens (with margin) at now+11 s
        r.escrow.sessionLost();
        QCOMPARE(r.courier.to("node-a").size(), 1);
        QCOMPARE(r.courier.to("node-b").size(), 0);
        r.advanceTo(now + 11000);
        QCOMPARE(r.courier.to("node-b").size(), 1);
        QCOMPARE(r.courier.to("node-b").first().atMs, now + 11000);
        r.advanceTo(now + 30000);
        QCOMPARE(r.courier.to("node-a").size(), 2);
        QCOMPARE(r.courier.to("node-a").last().atMs, now + 30000);
    }

    // ES-23: only a node the forwarder carries is reached; no delivery attempt otherwise.
    void onlyCarriedNodesReached_ES23()
    {
        Rig r;
        const auto b = r.carry("node-a");
        r.holdGrid(b, Builder::projection("p", 1), r.clock.nowMs() - minute, 2);
        r.courier.bindings.remove("node-a"); // its socket closed
        r.escrow.sessionLost();
        QCOMPARE(r.courier.deliveries.size(), 0);
        QCOMPARE(r.escrow.statusRuns().first().lastOfferResult, QString(refusal::nodeNotConnected));
    }

    // ES-31: a different session drops the run; a registration answered with the identical binding keeps it.
    void registrationDropsOnlyOnNewBinding_ES31()
    {
        Rig r;
        const auto b = r.carry("node-a");
        r.holdGrid(b, Builder::projection("p", 1), r.clock.nowMs(), 2);
        r.escrow.nodeRegistered(b);
        QVERIFY(r.escrow.holdsRunFor("node-a"));
        SessionBinding next = b;
        next.sessionId = "s-2";
        r.escrow.nodeRegistered(next);
        QVERIFY(!r.escrow.holdsRunFor("node-a"));
    }

    // ES-32, D-08: an acknowledged projection the run does not renew drops it; an earlier generation keeps it.
    void projectionAcknowledgement_ES32_D08()
    {
        Rig r;
        const auto b = r.carry("node-a");
        const auto p = Builder::projection("p", 2);
        auto ref = [](const QJsonObject &o) { return ProjectionReference::read(o, "p").value(); };
        r.holdGrid(b, p, r.clock.nowMs(), 2);
        r.escrow.projectionAcknowledged("node-a", ref(Builder::projection("p", 1)));
        QVERIFY(r.escrow.holdsRunFor("node-a"));
        r.escrow.projectionAcknowledged("node-a", ref(p));
        QVERIFY(r.escrow.holdsRunFor("node-a"));
        r.escrow.projectionAcknowledged("node-a", ref(Builder::projection("p", 2, "fork")));
        QVERIFY(!r.escrow.holdsRunFor("node-a"));
        r.holdGrid(b, p, r.clock.nowMs(), 2);
        r.escrow.projectionAcknowledged("node-a", ref(Builder::projection("p", 3)));
        QVERIFY(!r.escrow.holdsRunFor("node-a"));
        r.holdGrid(b, p, r.clock.nowMs(), 2);
        // Read from the applyRuntimeNetworkProjection ACK (FW-24, D-07): { projection, ... }.
        const QByteArray push = Envelope::request(QString(method::applyRuntimeNetworkProjection), u"c", bytes(QJsonObject{{"session", b.toJson()}}));
        const QByteArray ack = Envelope::response(QString(method::applyRuntimeNetworkProjection), u"c", "{}",
                                                  bytes(QJsonObject{{"projection", Builder::projection("other", 1)}, {"acknowledged", true}}));
        r.escrow.pushAnswered("node-a", Envelope::parse(Envelope::request(QString(method::applyRuntimeAssignment), u"c", "{}")).value(),
                              Envelope::parse(ack).value());
        QVERIFY(r.escrow.holdsRunFor("node-a")); // another push's answer is not read
        r.escrow.pushAnswered("node-a", Envelope::parse(push).value(), Envelope::parse(ack).value());
        QVERIFY(!r.escrow.holdsRunFor("node-a"));
    }

    // ES-33: exactly the five names state this relay is not dispatched to.
    void undispatchedRefusalNames_ES33()
    {
        for (const char *name : {"relay-cluster-not-enabled", "relay-node-foreign", "relay-node-unknown",
                                 "relay-sequence-not-advancing", "relay-credential-generation-stale"})
            QVERIFY2(LeaseEscrow::statesThisRelayIsNotDispatchedTo(QString::fromLatin1(name)), name);
        for (const char *name : {"relay-identity-unverified", "relay-node-unknown ", "Relay-node-unknown", "relay-node",
                                 "INTERNAL_ERROR", "REPLAY_CONFLICT", "request-invalid", "cloudly-forward-timeout",
                                 "method-not-served", ""})
            QVERIFY2(!LeaseEscrow::statesThisRelayIsNotDispatchedTo(QString::fromLatin1(name)), name);
    }

    // ES-33, ES-34: the first four drop every run; holds are accepted again afterwards.
    void firstFourRefusalsDropAll_ES33_ES34()
    {
        for (const char *name : {"relay-cluster-not-enabled", "relay-node-foreign", "relay-node-unknown", "relay-sequence-not-advancing"}) {
            Rig r;
            const auto a = r.carry("node-a"), b = r.carry("node-b");
            r.holdGrid(a, Builder::projection("p", 1), r.clock.nowMs(), 2);
            r.holdGrid(b, Builder::projection("p", 1), r.clock.nowMs(), 2);
            QVERIFY(r.escrow.registrationRefused(QString::fromLatin1(name)));
            QCOMPARE(r.escrow.runCount(), 0);
            QVERIFY(!r.escrow.isParked());
            QCOMPARE(held(r.holdGrid(a, Builder::projection("p", 1), r.clock.nowMs(), 2)), 2);
        }
    }

    // ES-35: relay-credential-generation-stale parks: nothing is held again in this process.
    void credentialGenerationStaleParks_ES35()
    {
        Rig r;
        const auto a = r.carry("node-a");
        r.holdGrid(a, Builder::projection("p", 1), r.clock.nowMs(), 2);
        QVERIFY(r.escrow.registrationRefused(QString(refusal::relayCredentialGenerationStale)));
        QVERIFY(r.escrow.isParked());
        QCOMPARE(r.escrow.runCount(), 0);
        const Frame answer = r.holdGrid(a, Builder::projection("p", 1), r.clock.nowMs(), 2);
        QCOMPARE(refusalName(answer), QString(refusal::escrowRelayParked));
        QCOMPARE(answer.errorRefusal().reason, QStringLiteral("this relay is parked; it holds nothing until it is restarted"));
    }

    // ES-36: every other answer keeps custody (and the runs are still offered during an outage).
    void otherAnswersKeepCustody_ES36()
    {
        Rig r;
        const auto a = r.carry("node-a");
        r.holdGrid(a, Builder::projection("p", 1), r.clock.nowMs() - minute, 2);
        for (const char *name : {"relay-identity-unverified", "INTERNAL_ERROR", "REPLAY_CONFLICT", "request-invalid",
                                 "method-not-served", "cloudly-forward-timeout", "relay-node-unknown-ish"})
            QVERIFY2(!r.escrow.registrationRefused(QString::fromLatin1(name)), name);
        QVERIFY(r.escrow.holdsRunFor("node-a"));
        r.escrow.sessionLost();
        QCOMPARE(r.courier.deliveries.size(), 1);
    }

    // ES-37: a run whose last window has ended is dropped at the next release.
    void endedRunDropped_ES37()
    {
        Rig r;
        const auto a = r.carry("node-a");
        r.holdGrid(a, Builder::projection("p", 1), r.clock.nowMs() - minute, 1);
        r.escrow.sessionLost();
        QVERIFY(r.escrow.holdsRunFor("node-a"));
        r.clock.advance(14 * minute - 1); // its window ends at start + 14 min (exclusive)
        QVERIFY(r.escrow.holdsRunFor("node-a"));
        r.clock.advance(1);
        QVERIFY(!r.escrow.holdsRunFor("node-a"));
        QCOMPARE(r.escrow.releaseDueMs(), -1);
    }

    // ES-38, ES-27: stop() drops every run and clears the one timer; later holds are refused.
    void stopDropsEverything_ES38_ES27()
    {
        Rig r;
        const auto a = r.carry("node-a");
        r.holdGrid(a, Builder::projection("p", 1), r.clock.nowMs() - minute, 3);
        r.escrow.sessionLost();
        QVERIFY(r.escrow.releaseDueMs() > 0);
        r.escrow.stop();
        QCOMPARE(r.escrow.runCount(), 0);
        QCOMPARE(r.escrow.releaseDueMs(), -1);
        QCOMPARE(r.clock.activeTimerCount(), 0);
        r.clock.advance(30 * minute);
        QCOMPARE(r.courier.deliveries.size(), 1);
        QVERIFY(r.holdGrid(a, Builder::projection("p", 1), r.clock.nowMs(), 1).hasError());
    }

    // D-45 regression: a re-offer due just before the previous window ends, reached by a timer that
    // fires a few ms after that end, is not made — and must not leave the timer re-arming at 0 ms.
    void lateTimerPastReofferDeadlineDoesNotSpin_D45_ES25()
    {
        LateClock clock(QDateTime::currentMSecsSinceEpoch());
        FakeCourier courier(clock);
        LeaseEscrow escrow(courier, clock, RelayTiming{});
        const SessionBinding b{"node-a", "cluster-1", "s-node-a", 0};
        courier.bindings.insert("node-a", b);
        courier.modes["node-a"] = FakeCourier::Mode::Refuse;
        const qint64 first = clock.now;
        const qint64 t0 = first - (10 * minute + 59995); // window 2 offered at t0+10m+59995
        const auto p = Builder::projection("p", 1);
        QByteArray answer;
        escrow.hold(Rig::requestFrame(Builder::holdRequest(b, p, Builder::grid(b, p, t0, 3))), [&](QByteArray a) { answer = a; });
        QTRY_VERIFY(!answer.isEmpty());
        QCOMPARE(held(Envelope::parse(answer).value()), 3);
        escrow.sessionLost();
        QCOMPARE(courier.deliveries.size(), 1);
        QCOMPARE(courier.deliveries.first().sequence(), 2);
        // Re-offers k = 1..7 on time; re-offer 8 is due at t0 + 15 min - 5 ms, before window 1 ends.
        for (int k = 1; k <= 7; ++k) {
            QCOMPARE(escrow.releaseDueMs(), first + k * 30000);
            clock.now = escrow.releaseDueMs();
            QCOMPARE(clock.fireDue(10), 1);
            QCOMPARE(courier.deliveries.size(), k + 1);
        }
        QCOMPARE(escrow.releaseDueMs(), t0 + 15 * minute - 5);
        clock.now = t0 + 15 * minute + 3; // the timer fires 8 ms late: the re-offer deadline has passed
        QCOMPARE(clock.fireDue(100), 1);  // one firing, no 0 ms re-arming
        QCOMPARE(courier.deliveries.size(), 8); // not offered after the deadline
        QCOMPARE(escrow.releaseDueMs(), t0 + 20 * minute + 30000); // next: window 3's opening
        clock.now = escrow.releaseDueMs();
        QCOMPARE(clock.fireDue(100), 1);
        QCOMPARE(courier.deliveries.size(), 9);
        QCOMPARE(courier.deliveries.last().sequence(), 3);
    }

    // D-45 regression: a failure answer that arrives after the re-offer deadline (its re-offer was due
    // before it) arms nothing at 0 ms; the next action is the next window's opening.
    void failureAnsweredAfterReofferDeadline_D45_ES25()
    {
        Rig r;
        const auto b = r.carry("node-a");
        r.courier.modes["node-a"] = FakeCourier::Mode::Silence;
        const qint64 first = r.clock.nowMs();
        const qint64 t0 = first - (10 * minute + 59995);
        r.holdGrid(b, Builder::projection("p", 1), t0, 3);
        r.escrow.sessionLost();
        QCOMPARE(r.courier.deliveries.size(), 1);
        QCOMPARE(r.escrow.releaseDueMs(), t0 + 20 * minute + 30000); // in flight: only the next opening
        r.advanceTo(t0 + 15 * minute + 3); // window 1 (the re-offer deadline) has ended
        const Refusal lost{QString(refusal::nodeConnectionLost), QStringLiteral("lost")};
        r.courier.pending.takeFirst()(nullptr, &lost); // its re-offer was due at first + 30 s
        QCOMPARE(r.escrow.statusRuns().first().lastOfferResult, QString(refusal::nodeConnectionLost));
        QCOMPARE(r.escrow.releaseDueMs(), t0 + 20 * minute + 30000);
        r.advanceTo(t0 + 20 * minute + 30000);
        QCOMPARE(r.courier.deliveries.size(), 2);
        QCOMPARE(r.courier.deliveries.last().sequence(), 3);
    }

    // A duplicate key makes QJsonDocument (last wins) and simdjson (first wins) read different runs:
    // refused escrow-run-invalid, so a node is never offered another node's renewal.
    void duplicateRenewalsKeyRefused_ES05()
    {
        Rig r;
        const auto a = r.carry("node-a");
        const auto other = r.carry("node-b");
        const auto p = Builder::projection("p", 1);
        const qint64 t0 = r.clock.nowMs() - minute;
        const QByteArray raw = "{\"session\":" + bytes(a.toJson()) + ",\"projection\":" + bytes(p)
                               + ",\"renewals\":" + arrayBytes(Builder::grid(other, p, t0, 2))
                               + ",\"renewals\":" + arrayBytes(Builder::grid(a, p, t0, 2)) + "}";
        const Frame answer = r.holdRaw(raw);
        QCOMPARE(refusalName(answer), QString(refusal::escrowRunInvalid));
        QVERIFY(answer.errorRefusal().reason.contains("renewals"));
        QVERIFY(!r.escrow.holdsRunFor("node-a"));
        r.escrow.sessionLost();
        QCOMPARE(r.courier.deliveries.size(), 0);
    }

    // ES-37 on arrival: a run whose last window ended takes no part in precedence; it is dropped
    // before the next hold for its node is judged. An empty run is still ordered (D-44).
    void endedRunTakesNoPartInPrecedence_ES37_D44()
    {
        Rig r;
        const auto a = r.carry("node-a");
        const auto p1 = Builder::projection("p", 1), p2 = Builder::projection("p", 2);
        QCOMPARE(held(r.holdGrid(a, p2, r.clock.nowMs(), 1, 10)), 1); // ends in 15 min
        r.clock.advance(15 * minute - 1);
        QCOMPARE(refusalName(r.holdGrid(a, p1, r.clock.nowMs(), 1)), QString(refusal::escrowRunStale)); // still live
        QCOMPARE(refusalName(r.holdGrid(a, Builder::projection("q", 1), r.clock.nowMs(), 1)), QString(refusal::escrowRunUnordered));
        r.clock.advance(1); // its last window ended (the session is up: no release ran)
        QVERIFY(r.escrow.holdsRunFor("node-a"));
        QSignalSpy lines(&r.escrow, &LeaseEscrow::eventLine);
        QCOMPARE(held(r.holdGrid(a, p1, r.clock.nowMs(), 2)), 2); // neither stale nor unordered
        QCOMPARE(r.escrow.statusRuns().first().projectionGeneration, 1);
        QVERIFY(!lines.isEmpty());
        QCOMPARE(lines.first().first().toString(), QStringLiteral("node node-a: DNS lease renewal run dropped: its last window ended"));
        // A refused hold for the node drops nothing that is still live.
        r.clock.advance(minute);
        QCOMPARE(held(r.holdGrid(a, Builder::projection("q", 1), r.clock.nowMs() - 16 * minute, 2)), -1);
        QVERIFY(r.escrow.holdsRunFor("node-a"));
        // D-44: an empty run holds nothing and ends nothing; it is still ordered against later holds.
        QCOMPARE(held(r.holdNow(Builder::holdRequest(a, p2, {}))), 0);
        r.clock.advance(60 * minute);
        QCOMPARE(refusalName(r.holdGrid(a, p1, r.clock.nowMs(), 1)), QString(refusal::escrowRunStale));
    }

    // D-44: stop() answers every hold still queued (each hold gets exactly one answer), by name.
    void stopAnswersQueuedHolds_D44_ES38()
    {
        Rig r;
        const auto a = r.carry("node-a"), b = r.carry("node-b");
        const auto p = Builder::projection("p", 1);
        QList<QByteArray> answersA, answersB;
        r.escrow.hold(Rig::requestFrame(Builder::holdRequest(a, p, Builder::grid(a, p, r.clock.nowMs(), 2))), [&](QByteArray x) { answersA << x; });
        r.escrow.hold(Rig::requestFrame(Builder::holdRequest(b, p, Builder::grid(b, p, r.clock.nowMs(), 2))), [&](QByteArray x) { answersB << x; });
        QCOMPARE(r.escrow.queuedHolds(), 2);
        r.escrow.stop();
        QCOMPARE(r.escrow.queuedHolds(), 0);
        QCOMPARE(answersA.size(), 1);
        QCOMPARE(answersB.size(), 1);
        const Frame refusedA = Envelope::parse(answersA.first()).value();
        QCOMPARE(refusalName(refusedA), QString(refusal::escrowNodeNotCarried));
        QCOMPARE(refusedA.errorRefusal().reason, QStringLiteral("node node-a is not carried by this relay: the relay is stopping"));
        QCOMPARE(refusalName(Envelope::parse(answersB.first()).value()), QString(refusal::escrowNodeNotCarried));
        for (int i = 0; i < 20; ++i)
            QCoreApplication::processEvents();
        QCOMPARE(answersA.size(), 1); // the drain that was scheduled answers nothing twice
        QCOMPARE(answersB.size(), 1);
        QCOMPARE(r.escrow.runCount(), 0);
    }

    // D-44: an escrow destroyed with holds still queued answers them too.
    void destructionAnswersQueuedHolds_D44()
    {
        ManualClock clock;
        FakeCourier courier(clock);
        const SessionBinding a{"node-a", "cluster-1", "s-node-a", 0};
        courier.bindings.insert("node-a", a);
        const auto p = Builder::projection("p", 1);
        QList<QByteArray> answers;
        {
            LeaseEscrow escrow(courier, clock, RelayTiming{});
            escrow.hold(Rig::requestFrame(Builder::holdRequest(a, p, Builder::grid(a, p, clock.nowMs(), 2))), [&](QByteArray x) { answers << x; });
            QCOMPARE(escrow.queuedHolds(), 1);
        }
        QCOMPARE(answers.size(), 1);
        QCOMPARE(refusalName(Envelope::parse(answers.first()).value()), QString(refusal::escrowNodeNotCarried));
        for (int i = 0; i < 20; ++i)
            QCoreApplication::processEvents();
        QCOMPARE(answers.size(), 1);
    }

    // §9.5, ES-35: registrationRefused() for the stale generation parks with one line; the park that
    // RelayRegistration::parked then asks for is silent (idempotent).
    void staleRefusalThenParkSaysItOnce_ES35()
    {
        Rig r;
        const auto a = r.carry("node-a");
        r.holdGrid(a, Builder::projection("p", 1), r.clock.nowMs(), 2);
        QSignalSpy lines(&r.escrow, &LeaseEscrow::eventLine);
        QVERIFY(r.escrow.registrationRefused(QString(refusal::relayCredentialGenerationStale)));
        r.escrow.park();
        QCOMPARE(lines.size(), 1);
        QVERIFY(lines.first().first().toString().startsWith(QStringLiteral("dropped the DNS lease renewal runs of 1 nodes")));
        QVERIFY(r.escrow.isParked());
        // The four others drop (one line each) and do not park.
        Rig r2;
        QSignalSpy lines2(&r2.escrow, &LeaseEscrow::eventLine);
        QVERIFY(r2.escrow.registrationRefused(QString(refusal::relayNodeForeign)));
        QCOMPARE(lines2.size(), 1);
        QVERIFY(!r2.escrow.isParked());
        QVERIFY(!r2.escrow.registrationRefused(QStringLiteral("relay-identity-unverified")));
        QCOMPARE(lines2.size(), 1);
    }

    // ES-33: one list of the five names, shared by the registration and the escrow.
    void oneListOfUndispatchedNames_ES33()
    {
        for (const auto name : {"relay-cluster-not-enabled", "relay-node-foreign", "relay-node-unknown",
                                "relay-sequence-not-advancing", "relay-credential-generation-stale", "relay-identity-unverified",
                                "relay-node-unknown-ish", ""}) {
            const QString n = QString::fromLatin1(name);
            QCOMPARE(LeaseEscrow::statesThisRelayIsNotDispatchedTo(n), refusal::statesThisRelayIsNotDispatchedTo(n));
        }
    }

    // Status: per node the held run's projection, count, current and next window, last offer result.
    void statusRows()
    {
        Rig r;
        const auto a = r.carry("node-a");
        const qint64 t0 = r.clock.nowMs() - minute;
        r.holdGrid(a, Builder::projection("p", 4), t0, 3);
        auto rows = r.escrow.statusRuns();
        QCOMPARE(rows.size(), 1);
        QCOMPARE(rows[0].nodeId, QStringLiteral("node-a"));
        QCOMPARE(rows[0].projectionId, QStringLiteral("p"));
        QCOMPARE(rows[0].projectionGeneration, 4);
        QCOMPARE(rows[0].renewalCount, 3);
        QCOMPARE(rows[0].currentWindowStartMs, t0);
        QCOMPARE(rows[0].currentWindowEndMs, t0 + 15 * minute);
        QCOMPARE(rows[0].nextWindowStartMs, t0 + 10 * minute);
        QCOMPARE(rows[0].lastOfferResult, QStringLiteral("none"));
    }
};

QTEST_GUILESS_MAIN(TstLeaseEscrow)
#include "tst_leaseescrow.moc"
