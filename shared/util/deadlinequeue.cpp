#include "shared/util/deadlinequeue.h"

namespace coreflow {

DeadlineQueue::DeadlineQueue(Clock &clock) : m_clock(clock), m_timer(clock.createTimer())
{
    QObject::connect(m_timer.get(), &ClockTimer::timeout, m_timer.get(), [this] {
        m_armedFor = -1;
        fireDue();
    });
}

DeadlineQueue::~DeadlineQueue() = default;

DeadlineQueue::Handle DeadlineQueue::schedule(qint64 delayMs, std::function<void()> onExpiry)
{
    const Handle handle = m_next++;
    const qint64 deadline = m_clock.nowMs() + qMax<qint64>(0, delayMs);
    m_entries.emplace(Key{deadline, handle}, std::move(onExpiry));
    m_deadlines.emplace(handle, deadline);
    if (m_armedFor < 0 || deadline < m_armedFor)
        arm();
    return handle;
}

void DeadlineQueue::cancel(Handle handle)
{
    const auto it = m_deadlines.find(handle);
    if (it == m_deadlines.end())
        return;
    m_entries.erase(Key{it->second, handle});
    m_deadlines.erase(it);
    if (m_entries.empty() && m_armedFor >= 0) {
        m_timer->stop();
        m_armedFor = -1;
    }
    // Otherwise the timer stays armed for a deadline that may now be gone: when it fires, nothing
    // is due yet and it is re-armed for the earliest remaining one (cheaper than re-arming per cancel).
}

void DeadlineQueue::fireDue()
{
    const qint64 now = m_clock.nowMs();
    while (!m_entries.empty() && m_entries.begin()->first.first <= now) {
        auto node = m_entries.extract(m_entries.begin());
        m_deadlines.erase(node.key().second);
        if (node.mapped())
            node.mapped()();
    }
    if (!m_entries.empty() && m_armedFor < 0)
        arm();
}

void DeadlineQueue::arm()
{
    const qint64 deadline = m_entries.begin()->first.first;
    m_armedFor = deadline;
    m_timer->start(qMax<qint64>(0, deadline - m_clock.nowMs()));
}

} // namespace coreflow
