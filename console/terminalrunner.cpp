#include "console/terminalrunner.h"

#include "console/consoleexitcodes.h"
#include "console/metricsexposition.h"
#include "console/readinesscheck.h"
#include "console/terminaltext.h"
#include "console/terminalview.h"

#include <QSaveFile>

namespace coreflow::console {

TerminalRunner::TerminalRunner(Mode mode, QString socketPath, Clock &clock, QIODevice *out, QIODevice *err, QObject *parent)
    : QObject(parent), m_mode(mode), m_socketPath(std::move(socketPath)), m_clock(clock), m_out(out), m_err(err)
{
}

void TerminalRunner::start()
{
    StatusClient::Options options;
    options.socketPath = m_socketPath;
    options.subscribe = m_mode == Mode::Watch;
    options.autoReconnect = m_mode == Mode::Watch;
    m_client = std::make_unique<StatusClient>(options, m_clock);

    if (m_mode == Mode::Watch) {
        connect(m_client.get(), &StatusClient::stateChanged, this, [this](StatusClient::State state, const QString &reason) {
            if (state == StatusClient::State::Refused) {
                finish(exitcode::accessRefused, QStringLiteral("coreflow-console: access refused: %1").arg(reason));
                return;
            }
            if (state == StatusClient::State::Connected)
                m_events.clear(); // the relay replays its recent events to each subscription
            redrawWatch();
        });
        connect(m_client.get(), &StatusClient::snapshotReceived, this, [this] { redrawWatch(); });
        connect(m_client.get(), &StatusClient::eventReceived, this, [this](const StatusEvent &e) {
            m_events.append(e);
            if (m_events.size() > 50)
                m_events.removeFirst();
            redrawWatch();
        });
        m_client->start();
        redrawWatch();
        return;
    }

    connect(m_client.get(), &StatusClient::snapshotReceived, this, [this](const status::RelayStatus &s) {
        if (m_mode == Mode::Metrics) {
            QString error;
            if (!writeMetrics(s, &error))
                return finish(exitcode::outputFailed, QStringLiteral("coreflow-console: ") + error);
            return finish(exitcode::ok, QString());
        }
        if (m_mode == Mode::Check) {
            const ReadinessCheck::Verdict v = ReadinessCheck::verdict(s);
            if (v.exitCode == exitcode::ok)
                m_out->write(TerminalText::printable(v.line).toUtf8() + '\n');
            finish(v.exitCode, v.exitCode == exitcode::ok ? QString() : QStringLiteral("coreflow-console: ") + v.line);
            return;
        }
        const QByteArray bytes = m_mode == Mode::Json ? TerminalView::renderJson(s) : TerminalView::renderText(s).toUtf8();
        m_out->write(bytes);
        finish(exitcode::ok, QString());
    });
    connect(m_client.get(), &StatusClient::stateChanged, this, [this](StatusClient::State state, const QString &reason) {
        if (state == StatusClient::State::Refused)
            finish(exitcode::accessRefused, QStringLiteral("coreflow-console: access refused: %1").arg(reason));
        else if (state == StatusClient::State::Disconnected)
            finish(m_client->protocolFailure() ? exitcode::protocolError : exitcode::cannotConnect,
                   QStringLiteral("coreflow-console: %1").arg(reason));
    });
    m_timeout = m_clock.createTimer();
    connect(m_timeout.get(), &ClockTimer::timeout, this, [this] {
        finish(exitcode::cannotConnect,
               QStringLiteral("coreflow-console: no status snapshot from %1 within %2 ms").arg(m_socketPath).arg(m_connectTimeoutMs));
    });
    m_timeout->start(m_connectTimeoutMs);
    m_client->start();
}

void TerminalRunner::finish(int code, const QString &errorLine)
{
    if (m_finished)
        return;
    m_finished = true;
    if (m_mode == Mode::Metrics && code != exitcode::ok && code != exitcode::outputFailed) {
        QString error;
        if (!writeMetrics(std::nullopt, &error))
            m_err->write(TerminalText::printable(QStringLiteral("coreflow-console: ") + error).toUtf8() + '\n');
    }
    m_exitCode = code;
    if (m_timeout)
        m_timeout->stop();
    if (!errorLine.isEmpty())
        m_err->write(TerminalText::printable(errorLine).toUtf8() + '\n');
    if (m_client)
        m_client->stop();
    Q_EMIT finished(code);
}

bool TerminalRunner::writeMetrics(const std::optional<status::RelayStatus> &status, QString *error)
{
    const QByteArray text = MetricsExposition::render(status);
    if (m_outputPath.isEmpty()) {
        m_out->write(text);
        return true;
    }
    QSaveFile file(m_outputPath);
    if (!file.open(QIODevice::WriteOnly) || file.write(text) != text.size() || !file.commit()) {
        *error = QStringLiteral("cannot write %1: %2").arg(m_outputPath, file.errorString());
        return false;
    }
    return true;
}

void TerminalRunner::redrawWatch()
{
    if (m_finished)
        return;
    QString connection;
    switch (m_client->state()) {
    case StatusClient::State::Connecting: connection = QStringLiteral("connecting"); break;
    case StatusClient::State::Connected: connection = QStringLiteral("connected (live)"); break;
    case StatusClient::State::Disconnected:
        connection = QStringLiteral("DISCONNECTED: %1 (retrying)").arg(m_client->stateReason());
        break;
    case StatusClient::State::Refused: connection = QStringLiteral("ACCESS REFUSED: %1").arg(m_client->stateReason()); break;
    }
    const QSize terminal = m_terminalSize ? m_terminalSize() : QSize();
    const QString view = TerminalView::renderWatch(m_socketPath, connection, m_client->lastSnapshot(), m_events, 10, terminal);
    if (terminal.isValid())
        m_out->write("\x1b[H\x1b[2J");
    else
        m_out->write("\n"); // a log of views: one blank line between them
    m_out->write(view.toUtf8());
}

} // namespace coreflow::console
