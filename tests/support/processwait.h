#pragma once
// Waits on a child process for a positive condition (a line on its stderr, its exit), for the tests
// that run the built `coreflow` binary. The timeout only bounds a failing test; no test asserts on
// how long anything took (figures belong to ./run bench).
#include <QByteArray>
#include <QProcess>
#include <QTest>

namespace coreflow::testing {

// True once `needle` appeared on p's stderr (everything read so far is appended to `seen`); false when
// the process ended without it or after timeoutMs.
inline bool waitForStderr(QProcess &p, const QByteArray &needle, QByteArray &seen, int timeoutMs = 20000)
{
    const bool found = QTest::qWaitFor([&] {
        seen += p.readAllStandardError();
        return seen.contains(needle) || p.state() == QProcess::NotRunning;
    }, timeoutMs);
    seen += p.readAllStandardError();
    return found && seen.contains(needle);
}

// p's exit code once it ended (its remaining stderr appended to `err`); -1 when it still runs after timeoutMs.
inline int waitExit(QProcess &p, QByteArray &err, int timeoutMs = 15000)
{
    (void)QTest::qWaitFor([&] { return p.state() == QProcess::NotRunning; }, timeoutMs);
    err += p.readAllStandardError();
    return p.state() == QProcess::NotRunning ? p.exitCode() : -1;
}

} // namespace coreflow::testing
