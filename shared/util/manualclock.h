#pragma once
// ManualClock: a Clock that moves only when a test calls advance(). Timers fire in deadline order, each
// with the clock set to its own deadline, so timer rules are tested exactly and without sleeping.
#include "shared/util/clock.h"

#include <QList>
#include <QPointer>

namespace coreflow {

class ManualClock final : public Clock {
public:
    explicit ManualClock(qint64 startMs = 1'700'000'000'000);
    qint64 nowMs() const override { return m_now; }
    std::unique_ptr<ClockTimer> createTimer(QObject *parent = nullptr) override;

    // Move time forward by deltaMs, firing every timer whose deadline falls inside, in order.
    void advance(qint64 deltaMs);
    // Fire timers that are already due (deadline <= now) without moving time.
    void fireDue() { advance(0); }
    // The earliest armed deadline, or -1.
    qint64 nextDeadlineMs() const;
    int activeTimerCount() const;

private:
    friend class ManualClockTimer;
    qint64 m_now;
    QList<QPointer<class ManualClockTimer>> m_timers;
};

} // namespace coreflow
