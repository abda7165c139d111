// RefusalMinuteRing and RelayCounters::refusalsLastHour on a ManualClock: the status object's
// counters.refusalsLastHour (docs/contract.md §18.1, D-74). 60 one-minute buckets: a refusal is counted
// while the current minute is below its minute + 60, so one made 61 minutes ago is not.
#include "service/core/refusalminutering.h"
#include "service/core/relaycounters.h"
#include "shared/util/manualclock.h"

#include <QTest>

using namespace coreflow;

namespace {
constexpr qint64 minute = 60000;
// A minute boundary, so the test's arithmetic is in whole minutes.
constexpr qint64 start = 29'000'000LL * minute;
} // namespace

class TstRefusalMinuteRing : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void refusalsOlderThanAnHourAreNotCounted_D74()
    {
        ManualClock clock(start);
        RelayCounters counters(&clock);
        counters.countRefusal(QStringLiteral("node-not-connected"));
        counters.countRefusal(QStringLiteral("node-not-connected"));
        clock.advance(30 * minute);
        counters.countRefusal(QStringLiteral("method-not-served"));
        QCOMPARE(counters.refusalsLastHour(), 3);
        clock.advance(29 * minute + 59999); // the first two: 59 min 59.999 s ago, still in the hour
        QCOMPARE(counters.refusalsLastHour(), 3);
        clock.advance(1); // the first two's minute is 60 minutes back: no longer counted
        QCOMPARE(counters.refusalsLastHour(), 1);
        clock.advance(31 * minute); // 61 minutes after the third
        QCOMPARE(counters.refusalsLastHour(), 0);
        // Since start is unchanged.
        QCOMPARE(counters.refusalsByName().value(QStringLiteral("node-not-connected")), 2);
        QCOMPARE(counters.refusalsByName().value(QStringLiteral("method-not-served")), 1);
    }

    // A bucket is reused when its minute comes round again: the count of 60 minutes before is not added.
    void bucketReusedAfterAnHour_D74()
    {
        RefusalMinuteRing ring;
        for (int k = 0; k < 5; ++k)
            ring.count(start);
        ring.count(start + 60 * minute); // same bucket, an hour later
        QCOMPARE(ring.lastHour(start + 60 * minute), 1);
        QCOMPARE(ring.lastHour(start + 119 * minute), 1);
        QCOMPARE(ring.lastHour(start + 120 * minute), 0);
    }

    // Every minute of an hour counts; a busy minute counts in full (bounded memory, not bounded counts).
    void everyMinuteOfTheHour_D74()
    {
        RefusalMinuteRing ring;
        for (int m = 0; m < 60; ++m)
            ring.count(start + m * minute + 59999);
        for (int k = 0; k < 1000; ++k)
            ring.count(start + 59 * minute);
        QCOMPARE(ring.lastHour(start + 59 * minute + 59999), 1060);
        QCOMPARE(ring.lastHour(start + 60 * minute), 1059);
        // Without a clock, RelayCounters reports 0 for the hour.
        RelayCounters counters;
        counters.countRefusal(QStringLiteral("x"));
        QCOMPARE(counters.refusalsLastHour(), 0);
    }
};

QTEST_GUILESS_MAIN(TstRefusalMinuteRing)
#include "tst_refusalminutering.moc"
