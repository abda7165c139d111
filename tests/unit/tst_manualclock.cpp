// ManualClock: the deterministic clock every timer rule is tested with.
#include "shared/util/manualclock.h"

#include <QTest>

using namespace coreflow;

class TstManualClock : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void firesInDeadlineOrderAtTheirOwnTime()
    {
        ManualClock clock(1000);
        auto a = clock.createTimer();
        auto b = clock.createTimer();
        QList<QPair<char, qint64>> fired;
        connect(a.get(), &ClockTimer::timeout, this, [&] { fired.append({'a', clock.nowMs()}); });
        connect(b.get(), &ClockTimer::timeout, this, [&] {
            fired.append({'b', clock.nowMs()});
            if (fired.size() < 3)
                b->start(10); // re-armed from inside: fires again within the same advance
        });
        a->start(50);
        b->start(20);
        QCOMPARE(clock.nextDeadlineMs(), 1020);
        clock.advance(100);
        QCOMPARE(fired.size(), 4);
        QCOMPARE(fired.at(0), qMakePair('b', qint64(1020)));
        QCOMPARE(fired.at(1), qMakePair('b', qint64(1030)));
        QCOMPARE(fired.at(2), qMakePair('b', qint64(1040)));
        QCOMPARE(fired.at(3), qMakePair('a', qint64(1050)));
        QCOMPARE(clock.nowMs(), 1100);
        QCOMPARE(clock.activeTimerCount(), 0);
    }
    void stopAndDestroy()
    {
        ManualClock clock;
        int n = 0;
        {
            auto t = clock.createTimer();
            connect(t.get(), &ClockTimer::timeout, this, [&] { ++n; });
            t->start(5);
        }
        auto u = clock.createTimer();
        connect(u.get(), &ClockTimer::timeout, this, [&] { ++n; });
        u->start(5);
        u->stop();
        clock.advance(10);
        QCOMPARE(n, 0);
    }
};

QTEST_GUILESS_MAIN(TstManualClock)
#include "tst_manualclock.moc"
