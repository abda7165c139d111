// tst_deadlinequeue: many per-request deadlines on one clock timer (shared/util/deadlinequeue.h).
// The forwarding timeouts that use it (FW-03/FW-04 8000 ms to Cloudly, FW-14 8000 ms per push) must
// fire exactly at their deadline on fake time, never a millisecond early, and never after a cancel.
#include "shared/util/deadlinequeue.h"
#include "shared/util/manualclock.h"

#include <QTest>

using namespace coreflow;

class TstDeadlineQueue : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void firesExactlyAtTheDeadline_FW03_FW14()
    {
        ManualClock clock;
        DeadlineQueue queue(clock);
        QList<int> fired;
        queue.schedule(8000, [&] { fired.append(1); });
        clock.advance(3000);
        queue.schedule(8000, [&] { fired.append(2); }); // due at 11000
        clock.advance(4999);
        QVERIFY(fired.isEmpty());
        clock.advance(1);
        QCOMPARE(fired, QList<int>{1});
        clock.advance(2999);
        QCOMPARE(fired, QList<int>{1});
        clock.advance(1);
        QCOMPARE(fired, (QList<int>{1, 2}));
        QCOMPARE(queue.size(), std::size_t(0));
        QCOMPARE(clock.nextDeadlineMs(), qint64(-1)); // nothing left armed
    }

    void cancelledEntriesNeverFireAndLaterOnesStillDo()
    {
        ManualClock clock;
        DeadlineQueue queue(clock);
        QList<int> fired;
        const auto first = queue.schedule(100, [&] { fired.append(1); });
        queue.schedule(200, [&] { fired.append(2); });
        const auto third = queue.schedule(300, [&] { fired.append(3); });
        queue.cancel(first);
        queue.cancel(first); // twice: no-op
        clock.advance(150);
        QVERIFY(fired.isEmpty());
        clock.advance(50);
        QCOMPARE(fired, QList<int>{2});
        queue.cancel(third);
        clock.advance(1000);
        QCOMPARE(fired, QList<int>{2});
    }

    void earlierDeadlineRearmsAndOrderIsKept()
    {
        ManualClock clock;
        DeadlineQueue queue(clock);
        QList<int> fired;
        queue.schedule(9000, [&] { fired.append(9); });
        queue.schedule(500, [&] { fired.append(5); });
        queue.schedule(500, [&] { fired.append(6); }); // same deadline: scheduling order
        QCOMPARE(queue.nextDeadlineMs(), clock.nowMs() + 500);
        clock.advance(500);
        QCOMPARE(fired, (QList<int>{5, 6}));
        clock.advance(8500);
        QCOMPARE(fired, (QList<int>{5, 6, 9}));
    }

    void callbacksMayScheduleAndCancel()
    {
        ManualClock clock;
        DeadlineQueue queue(clock);
        QList<int> fired;
        DeadlineQueue::Handle victim = 0;
        queue.schedule(10, [&] {
            fired.append(1);
            queue.cancel(victim);
            queue.schedule(10, [&] { fired.append(3); });
        });
        victim = queue.schedule(15, [&] { fired.append(2); });
        clock.advance(10);
        QCOMPARE(fired, QList<int>{1});
        clock.advance(10);
        QCOMPARE(fired, (QList<int>{1, 3}));
    }
};

QTEST_GUILESS_MAIN(TstDeadlineQueue)
#include "tst_deadlinequeue.moc"
