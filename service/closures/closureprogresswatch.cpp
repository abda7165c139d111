#include "service/closures/closureprogresswatch.h"

#include "shared/util/clock.h"

namespace coreflow {

ClosureProgressWatch::ClosureProgressWatch(Clock &clock, std::function<void()> quiet, QObject *parent)
    : QObject(parent), m_clock(clock), m_quiet(std::move(quiet)), m_timer(clock.createTimer(this))
{
    connect(m_timer.get(), &ClockTimer::timeout, this, &ClosureProgressWatch::check);
}

ClosureProgressWatch::~ClosureProgressWatch() = default;

void ClosureProgressWatch::start()
{
    m_lastMovedAtMs = m_clock.nowMs();
    m_timer->start(kProgressTimeoutMs);
}

void ClosureProgressWatch::moved() { m_lastMovedAtMs = m_clock.nowMs(); }

void ClosureProgressWatch::stop() { m_timer->stop(); }

bool ClosureProgressWatch::isRunning() const { return m_timer->isActive(); }

void ClosureProgressWatch::check()
{
    const qint64 quietFor = m_clock.nowMs() - m_lastMovedAtMs;
    if (quietFor < kProgressTimeoutMs) {
        m_timer->start(kProgressTimeoutMs - quietFor);
        return;
    }
    if (m_quiet)
        m_quiet();
}

} // namespace coreflow
