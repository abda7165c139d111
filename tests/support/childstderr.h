#pragma once
// waitForStderr: waits (with the event loop running) until a child process' standard error carries
// needle; what it read is appended to seen. False after ms or once the child ended without it.
// For tests that run the built `coreflow` as a child process.
#include <QByteArray>
#include <QElapsedTimer>
#include <QProcess>
#include <QTest>

namespace coreflow::testing {

inline bool waitForStderr(QProcess &p, const QByteArray &needle, QByteArray &seen, int ms)
{
    QElapsedTimer t;
    t.start();
    while (t.elapsed() < ms) {
        QTest::qWait(20);
        seen += p.readAllStandardError();
        if (seen.contains(needle))
            return true;
        if (p.state() == QProcess::NotRunning)
            return false;
    }
    return false;
}

} // namespace coreflow::testing
