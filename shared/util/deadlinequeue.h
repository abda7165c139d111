#pragma once
// DeadlineQueue: many one-shot deadlines on one ClockTimer of the injected Clock (so ManualClock
// drives them in tests exactly like every other timer rule).
//
// Why: every forwarded request and every push carries its own timeout (8000 ms, 9000 ms budgets;
// docs/contract.md §20). A QObject timer per request cost an allocation, a signal connection and a
// timer registration each (bench/README.md, "CPU per forwarded request"); here a request costs one
// ordered-map entry, and the clock timer is re-armed only when the earliest deadline changes.
//
// schedule(delayMs, onExpiry) returns a handle; cancel(handle) forgets it (no-op when it already
// fired or was cancelled). Expired entries fire in deadline order (equal deadlines in scheduling
// order); a callback may schedule or cancel others. Deadlines are clock ms; delayMs < 0 counts as 0.
#include "shared/util/clock.h"

#include <functional>
#include <map>
#include <memory>
#include <unordered_map>

namespace coreflow {

class DeadlineQueue {
public:
    using Handle = quint64;

    explicit DeadlineQueue(Clock &clock);
    ~DeadlineQueue();
    DeadlineQueue(const DeadlineQueue &) = delete;
    DeadlineQueue &operator=(const DeadlineQueue &) = delete;

    Handle schedule(qint64 delayMs, std::function<void()> onExpiry);
    void cancel(Handle handle);
    std::size_t size() const { return m_entries.size(); }
    // The earliest pending deadline (clock ms), or -1 when none.
    qint64 nextDeadlineMs() const { return m_entries.empty() ? -1 : m_entries.begin()->first.first; }

private:
    using Key = std::pair<qint64, Handle>;
    void fireDue();
    void arm();

    Clock &m_clock;
    std::unique_ptr<ClockTimer> m_timer;
    std::map<Key, std::function<void()>> m_entries;
    std::unordered_map<Handle, qint64> m_deadlines;
    Handle m_next = 1;
    qint64 m_armedFor = -1;
};

} // namespace coreflow
