#pragma once
// ClosureProgressWatch: the progress bound of one closure transfer on the injected Clock
// (docs/contract.md §13.4; CS-70). moved() records that a byte moved (cheap: no timer is re-armed
// per chunk); once kProgressTimeoutMs pass without one, quiet() is called once and the watch stops.
// Duration is never bounded: a busy transfer keeps moving and is never cut.
#include <QObject>

#include <functional>
#include <memory>

namespace coreflow {

class Clock;
class ClockTimer;

class ClosureProgressWatch : public QObject {
    Q_OBJECT
public:
    static constexpr qint64 kProgressTimeoutMs = 30000; // closureProgressTimeoutMs (§20.2)

    ClosureProgressWatch(Clock &clock, std::function<void()> quiet, QObject *parent = nullptr);
    ~ClosureProgressWatch() override;

    void start();
    void moved();
    void stop();
    bool isRunning() const;

private:
    void check();

    Clock &m_clock;
    std::function<void()> m_quiet;
    std::unique_ptr<ClockTimer> m_timer;
    qint64 m_lastMovedAtMs = 0;
};

} // namespace coreflow
