#pragma once
// TerminalRunner: the console's terminal modes, on a QCoreApplication (no display needed).
//
//   Text / Json  connect once (no reconnect), say hello without subscribing, print the first snapshot
//                (TerminalView::renderText / renderJson) to `out`, finish with exitcode::ok. Failures
//                print one line to `err` and finish with: cannotConnect (no relay, closed before a
//                snapshot, or no answer within connectTimeoutMs), accessRefused, protocolError.
//   Watch        subscribe and reconnect on its own; every snapshot (coalesced by the relay, 250 ms)
//                and every event redraws the view (ANSI clear-screen + TerminalView::renderWatch). Access
//                refused finishes with accessRefused; otherwise it runs until the process is ended.
#include "console/statusclient.h"
#include "console/statusevent.h"
#include "shared/util/clock.h"

#include <QIODevice>
#include <QObject>
#include <memory>

namespace coreflow::console {

class TerminalRunner : public QObject {
    Q_OBJECT
public:
    enum class Mode { Text, Json, Watch };

    TerminalRunner(Mode mode, QString socketPath, Clock &clock, QIODevice *out, QIODevice *err, QObject *parent = nullptr);

    void setConnectTimeoutMs(qint64 ms) { m_connectTimeoutMs = ms; }
    void start();
    int exitCode() const { return m_exitCode; }
    bool isFinished() const { return m_finished; }

Q_SIGNALS:
    void finished(int exitCode);

private:
    void finish(int code, const QString &errorLine);
    void redrawWatch();

    Mode m_mode;
    QString m_socketPath;
    Clock &m_clock;
    QIODevice *m_out;
    QIODevice *m_err;
    std::unique_ptr<StatusClient> m_client;
    std::unique_ptr<ClockTimer> m_timeout;
    QList<StatusEvent> m_events;
    qint64 m_connectTimeoutMs = 5000;
    int m_exitCode = -1;
    bool m_finished = false;
};

} // namespace coreflow::console
