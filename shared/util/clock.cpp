#include "shared/util/clock.h"

#include <QDateTime>
#include <QTimer>

namespace coreflow {

namespace {
class SystemClockTimer final : public ClockTimer {
public:
    explicit SystemClockTimer(const SystemClock *clock, QObject *parent) : ClockTimer(parent), m_clock(clock)
    {
        m_timer.setSingleShot(true);
        m_timer.setTimerType(Qt::PreciseTimer);
        connect(&m_timer, &QTimer::timeout, this, [this] {
            m_deadline = -1;
            Q_EMIT timeout();
        });
    }
    void start(qint64 delayMs) override
    {
        const qint64 d = qMax<qint64>(0, delayMs);
        m_deadline = m_clock->nowMs() + d;
        m_timer.start(int(qMin<qint64>(d, std::numeric_limits<int>::max())));
    }
    void stop() override
    {
        m_timer.stop();
        m_deadline = -1;
    }
    bool isActive() const override { return m_timer.isActive(); }
    qint64 deadlineMs() const override { return m_deadline; }

private:
    const SystemClock *m_clock;
    QTimer m_timer;
    qint64 m_deadline = -1;
};
} // namespace

qint64 SystemClock::nowMs() const { return QDateTime::currentMSecsSinceEpoch(); }

std::unique_ptr<ClockTimer> SystemClock::createTimer(QObject *parent)
{
    return std::make_unique<SystemClockTimer>(this, parent);
}

} // namespace coreflow
