#pragma once
// TerminalRunner: the console's terminal modes, on a QCoreApplication (no display needed).
//
//   Text / Json  connect once (no reconnect), say hello without subscribing, print the first snapshot
//                (TerminalView::renderText / renderJson) to `out`, finish with exitcode::ok. Failures
//                print one line to `err` and finish with: cannotConnect (no relay, closed before a
//                snapshot, or no answer within connectTimeoutMs), accessRefused, protocolError.
//   Check        like Text, but prints ReadinessCheck's line (stdout when ready, stderr otherwise) and
//                finishes with its exit code.
//   Metrics      like Text, but writes MetricsExposition::render() to `out`, or with setOutputPath(FILE)
//                to FILE atomically (QSaveFile: a temporary file in FILE's directory, renamed over it).
//                A failed read still writes "coreflow_relay_up 0" (so a textfile collector never keeps
//                stale values) and finishes with the read's code; a failed write finishes with
//                outputFailed.
//   Watch        subscribe and reconnect on its own; every snapshot (coalesced by the relay, 250 ms)
//                and every event redraws the view (TerminalView::renderWatch; on a terminal after an ANSI clear-screen). Access
//                refused finishes with accessRefused; otherwise it runs until the process is ended.
#include "console/statusclient.h"
#include "console/statusevent.h"
#include "shared/util/clock.h"

#include <QIODevice>
#include <QObject>
#include <QSize>
#include <functional>
#include <memory>

namespace coreflow::console {

class TerminalRunner : public QObject {
    Q_OBJECT
public:
    enum class Mode { Text, Json, Check, Metrics, Watch };

    TerminalRunner(Mode mode, QString socketPath, Clock &clock, QIODevice *out, QIODevice *err, QObject *parent = nullptr);

    void setConnectTimeoutMs(qint64 ms) { m_connectTimeoutMs = ms; }
    void setOutputPath(const QString &path) { m_outputPath = path; }
    // Watch: the terminal's size (rows as height, columns as width) at each redraw, or an invalid size
    // when `out` is not a terminal: then no clear-screen codes are written and nothing is cut.
    void setTerminalSize(std::function<QSize()> size) { m_terminalSize = std::move(size); }
    void start();
    int exitCode() const { return m_exitCode; }
    bool isFinished() const { return m_finished; }

Q_SIGNALS:
    void finished(int exitCode);

private:
    void finish(int code, const QString &errorLine);
    void redrawWatch();
    // Metrics: writes the exposition (stdout or the output file); false + *error on a write failure.
    bool writeMetrics(const std::optional<status::RelayStatus> &status, QString *error);

    Mode m_mode;
    QString m_socketPath;
    QString m_outputPath;
    std::function<QSize()> m_terminalSize;
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
