#pragma once
// spinUntil: waits for a condition while the event loop runs at full speed. QTest::qWaitFor sleeps
// 10 ms between event-processing passes, which throttles in-process streaming tests (relay, fake
// registry and node share this thread) to a few MB/s; this runs a QEventLoop and checks the
// condition every millisecond instead.
#include <QElapsedTimer>
#include <QEventLoop>
#include <QTimer>
#include <functional>

namespace coreflow::test {

inline bool spinUntil(const std::function<bool()> &condition, int timeoutMs)
{
    if (condition())
        return true;
    QEventLoop loop;
    QElapsedTimer elapsed;
    elapsed.start();
    bool met = false;
    QTimer check;
    check.setInterval(1);
    QObject::connect(&check, &QTimer::timeout, &loop, [&] {
        if (condition()) {
            met = true;
            loop.quit();
        } else if (elapsed.elapsed() >= timeoutMs) {
            loop.quit();
        }
    });
    check.start();
    loop.exec();
    return met;
}

} // namespace coreflow::test
