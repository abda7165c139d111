#include "shared/util/manualclock.h"

namespace coreflow {

class ManualClockTimer final : public ClockTimer {
public:
    ManualClockTimer(ManualClock *clock, QObject *parent) : ClockTimer(parent), m_clock(clock) {}
    void start(qint64 delayMs) override { m_deadline = m_clock->m_now + qMax<qint64>(0, delayMs); }
    void stop() override { m_deadline = -1; }
    bool isActive() const override { return m_deadline >= 0; }
    qint64 deadlineMs() const override { return m_deadline; }
    void fire()
    {
        m_deadline = -1;
        Q_EMIT timeout();
    }

private:
    ManualClock *m_clock;
    qint64 m_deadline = -1;
};

ManualClock::ManualClock(qint64 startMs) : m_now(startMs) {}

std::unique_ptr<ClockTimer> ManualClock::createTimer(QObject *parent)
{
    auto timer = std::make_unique<ManualClockTimer>(this, parent);
    m_timers.removeAll(nullptr);
    m_timers.append(timer.get());
    return timer;
}

qint64 ManualClock::nextDeadlineMs() const
{
    qint64 best = -1;
    for (const auto &t : m_timers)
        if (t && t->isActive() && (best < 0 || t->deadlineMs() < best))
            best = t->deadlineMs();
    return best;
}

int ManualClock::activeTimerCount() const
{
    int n = 0;
    for (const auto &t : m_timers)
        n += (t && t->isActive()) ? 1 : 0;
    return n;
}

void ManualClock::advance(qint64 deltaMs)
{
    const qint64 target = m_now + qMax<qint64>(0, deltaMs);
    for (;;) {
        m_timers.removeAll(nullptr);
        ManualClockTimer *next = nullptr;
        for (const auto &t : m_timers)
            if (t && t->isActive() && t->deadlineMs() <= target && (!next || t->deadlineMs() < next->deadlineMs()))
                next = t.data();
        if (!next)
            break;
        m_now = qMax(m_now, next->deadlineMs());
        next->fire();
    }
    m_now = target;
}

} // namespace coreflow
