#pragma once
// RefusalMinuteRing: the refusals the relay authored in the last hour, for the status object's
// counters.refusalsLastHour (docs/contract.md §18.1, D-74). Sixty one-minute buckets on the injected
// clock, keyed by the Unix minute (clock ms / 60000); a bucket is reused (reset) when its minute comes
// round again, so the memory is bounded at 60 buckets whatever the rate. A refusal counted in minute m
// is counted while the current minute is < m + 60: one made 61 minutes ago is no longer counted.
#include <QtGlobal>
#include <array>

namespace coreflow {

class RefusalMinuteRing {
public:
    static constexpr int bucketCount = 60;
    static constexpr qint64 bucketMs = 60000;

    void count(qint64 nowMs);
    // The refusals counted in the current minute and the 59 before it.
    qint64 lastHour(qint64 nowMs) const;

private:
    struct Bucket {
        qint64 minute = -1;
        qint64 count = 0;
    };
    std::array<Bucket, bucketCount> m_buckets{};
};

} // namespace coreflow
