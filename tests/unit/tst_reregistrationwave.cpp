// ReregistrationWave on a ManualClock with a fake registry: who is closed, when, and when not.
// Rules: OC-02, OC-04, OC-05, OC-06, OC-07, OC-08, OC-09 (and D-11: spacing min(75, 5000/N) ms).
#include "service/forwarding/reregistrationwave.h"
#include "shared/util/manualclock.h"

#include <QDateTime>
#include <QHash>
#include <QTest>

using namespace coreflow;

namespace {
struct Rig {
    ManualClock clock{QDateTime::currentMSecsSinceEpoch()};
    contract::RelayTiming timing;
    QHash<QString, ReregistrationWave::Member> carried;
    QList<QPair<QString, qint64>> closed; // nodeId, clock ms
    ReregistrationWave wave{clock, timing,
                            [this] { return carried.values(); },
                            [this](const ReregistrationWave::Member &m, qint64 olderThan) {
                                auto it = carried.find(m.nodeId);
                                if (it == carried.end() || it->connectionId != m.connectionId || it->registeredUnderCarrier >= olderThan)
                                    return false;
                                closed.append({m.nodeId, clock.nowMs()});
                                carried.erase(it);
                                return true;
                            }};
    void carry(int n, qint64 carrier, int firstId = 0)
    {
        for (int i = firstId; i < firstId + n; ++i) {
            const QString id = QStringLiteral("node-%1").arg(i, 5, 10, QLatin1Char('0'));
            carried.insert(id, ReregistrationWave::Member{id, quint64(i + 1), carrier});
        }
    }
};
} // namespace

class TstReregistrationWave : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // D-11: spacing is min(75, 5000/N) ms; every close of a wave falls inside [0, 5000) ms.
    void spacingFormula_OC05_OC06_D11()
    {
        const contract::RelayTiming t;
        QCOMPARE(ReregistrationWave::spacingMs(1, t), 75.0);
        QCOMPARE(ReregistrationWave::spacingMs(66, t), 75.0);
        QCOMPARE(ReregistrationWave::spacingMs(100, t), 50.0);
        QCOMPARE(ReregistrationWave::spacingMs(10000, t), 0.5);
        for (int n : {1, 20, 66, 67, 500, 10000}) {
            QCOMPARE(ReregistrationWave::offsetMs(0, n, t), 0);
            QVERIFY(ReregistrationWave::offsetMs(n - 1, n, t) < 5000);
        }
        QCOMPARE(ReregistrationWave::offsetMs(19, 20, t), 19 * 75);
    }

    // OC-04, OC-05, OC-07: a 20-node wave: first close at once, then 75 ms apart, well inside 5000 ms.
    void twentyNodeWave_OC04_OC05()
    {
        Rig r;
        r.wave.carrierDispatchable(1, true);
        r.carry(20, 1);
        const qint64 start = r.clock.nowMs();
        r.wave.carrierDispatchable(2, true);
        QCOMPARE(r.closed.size(), 1);
        r.clock.advance(5000);
        QCOMPARE(r.closed.size(), 20);
        for (int i = 0; i < 20; ++i)
            QCOMPARE(r.closed.at(i).second, start + i * 75);
        QVERIFY(r.closed.last().second - start < 5000);
        QVERIFY(!r.wave.isRunning());
    }

    // docs/contract.md §8.4: closes go in node-id order, ascending by UTF-16 code unit (byte order
    // for ASCII ids: upper case before lower case, "node-10" before "node-9").
    void closesInNodeIdOrder_OC05()
    {
        Rig r;
        r.wave.carrierDispatchable(1, true);
        const QStringList ids{"node-9", "b", "node-10", "Z", "a", "A"};
        for (int i = 0; i < ids.size(); ++i)
            r.carried.insert(ids.at(i), ReregistrationWave::Member{ids.at(i), quint64(i + 1), 1});
        r.wave.carrierDispatchable(2, true);
        r.clock.advance(5000);
        QStringList order;
        for (const auto &c : r.closed)
            order << c.first;
        QCOMPARE(order, (QStringList{"A", "Z", "a", "b", "node-10", "node-9"}));
    }

    // OC-06: however many nodes, the wave fits the 5000 ms window.
    void largeWaveFitsTheWindow_OC06()
    {
        Rig r;
        r.wave.carrierDispatchable(1, true);
        r.carry(500, 1);
        const qint64 start = r.clock.nowMs();
        r.wave.carrierDispatchable(2, true);
        r.clock.advance(4999);
        QCOMPARE(r.closed.size(), 500);
        QCOMPARE(r.closed.at(1).second - start, 10);
    }

    // OC-02: an identity renewal on the unbroken socket (no new carrier) closes nobody.
    void identityRenewalClosesNobody_OC02()
    {
        Rig r;
        r.wave.carrierDispatchable(1, true);
        r.carry(5, 1);
        r.wave.carrierDispatchable(1, false);
        r.clock.advance(10000);
        QCOMPARE(r.closed.size(), 0);
    }

    // OC-08: nodes registered under the current count are never closed, also mid-wave.
    void currentCountNotClosed_OC08()
    {
        Rig r;
        r.wave.carrierDispatchable(1, true);
        r.carry(3, 1);
        r.carry(2, 2, 10);
        r.wave.carrierDispatchable(2, true);
        r.carried["node-00002"].registeredUnderCarrier = 2; // re-registered on its own before its turn
        r.clock.advance(5000);
        QCOMPARE(r.closed.size(), 2);
        QVERIFY(r.carried.contains("node-00002"));
        QVERIFY(r.carried.contains("node-00010"));
    }

    // OC-09: no close while there is no session; a lost session stops the wave and the next carrier
    // resumes it with the nodes not yet reached.
    void sessionLostStopsTheWave_OC09()
    {
        Rig r;
        r.wave.carrierDispatchable(1, true);
        r.carry(20, 1);
        r.wave.carrierDispatchable(2, true);
        r.clock.advance(75 * 4);
        QCOMPARE(r.closed.size(), 5);
        r.wave.sessionLost();
        r.clock.advance(60000);
        QCOMPARE(r.closed.size(), 5);
        r.wave.carrierDispatchable(3, true);
        r.clock.advance(5000);
        QCOMPARE(r.closed.size(), 20);
        QCOMPARE(r.clock.activeTimerCount(), 0);
    }
};

QTEST_GUILESS_MAIN(TstReregistrationWave)
#include "tst_reregistrationwave.moc"
