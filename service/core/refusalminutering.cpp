#include "service/core/refusalminutering.h"

namespace coreflow {

namespace {
qint64 minuteOf(qint64 ms) { return ms < 0 ? 0 : ms / RefusalMinuteRing::bucketMs; }
} // namespace

void RefusalMinuteRing::count(qint64 nowMs)
{
    const qint64 minute = minuteOf(nowMs);
    Bucket &b = m_buckets[size_t(minute % bucketCount)];
    if (b.minute != minute)
        b = Bucket{minute, 0};
    ++b.count;
}

qint64 RefusalMinuteRing::lastHour(qint64 nowMs) const
{
    const qint64 minute = minuteOf(nowMs);
    qint64 n = 0;
    for (const Bucket &b : m_buckets)
        if (b.minute >= 0 && b.minute <= minute && b.minute > minute - bucketCount)
            n += b.count;
    return n;
}

} // namespace coreflow
