#pragma once
// Clock: injected time for every timer rule (reconnect backoff, identity renewal, forwarding budgets,
// escrow windows, re-offer cadence). DEVELOPERS.md "Time is injected".
//
// Units: milliseconds. nowMs() is wall-clock Unix time in ms (the escrow compares it with Cloudly's
// notBefore/expiresAt). Timers are one-shot; a part that needs a period re-arms on timeout.
#include <QObject>
#include <functional>
#include <memory>

namespace coreflow {

class ClockTimer : public QObject {
    Q_OBJECT
public:
    using QObject::QObject;
    ~ClockTimer() override = default;
    // Fire once, delayMs from now (0 = on the next turn of the clock). Re-arming replaces the old deadline.
    virtual void start(qint64 delayMs) = 0;
    virtual void stop() = 0;
    virtual bool isActive() const = 0;
    // Absolute deadline in clock ms, or -1 when inactive.
    virtual qint64 deadlineMs() const = 0;
Q_SIGNALS:
    void timeout();
};

class Clock {
public:
    virtual ~Clock() = default;
    virtual qint64 nowMs() const = 0;
    virtual std::unique_ptr<ClockTimer> createTimer(QObject *parent = nullptr) = 0;
};

// The real clock: QDateTime for "now", QTimer (precise) for deadlines.
class SystemClock final : public Clock {
public:
    qint64 nowMs() const override;
    std::unique_ptr<ClockTimer> createTimer(QObject *parent = nullptr) override;
};

} // namespace coreflow
