// coreflow-console: the operator's read-only view of a relay (desktop window or terminal modes).
// Usage and exit codes: consolecommandline.h / `coreflow-console --help`.
#include "console/consolecommandline.h"
#include "console/consoleexitcodes.h"
#include "console/displayprobe.h"
#include "console/mainwindow.h"
#include "console/statusclient.h"
#include "console/tablepane.h"
#include "console/terminalrunner.h"
#include "shared/util/clock.h"

#include <QApplication>
#include <QCoreApplication>
#include <QFile>
#include <QLoggingCategory>
#include <QTabWidget>
#include <QTimer>

#include <cstdio>
#include <utility>
#include <sys/ioctl.h>
#include <unistd.h>

using namespace coreflow;
using namespace coreflow::console;

namespace {
int writeAndReturn(FILE *stream, const QString &text, int code)
{
    const QByteArray bytes = text.toUtf8();
    std::fwrite(bytes.constData(), 1, size_t(bytes.size()), stream);
    std::fflush(stream);
    return code;
}
} // namespace

int main(int argc, char **argv)
{
    QStringList arguments;
    for (int i = 0; i < argc; ++i)
        arguments << QString::fromLocal8Bit(argv[i]);
    const ConsoleCommandLine cl = ConsoleCommandLine::parse(arguments);

    switch (cl.mode) {
    case ConsoleCommandLine::Mode::Help: return writeAndReturn(stdout, ConsoleCommandLine::helpText(), exitcode::ok);
    case ConsoleCommandLine::Mode::Version: return writeAndReturn(stdout, ConsoleCommandLine::versionText(), exitcode::ok);
    case ConsoleCommandLine::Mode::UsageError:
        return writeAndReturn(stderr, QStringLiteral("coreflow-console: %1\nTry coreflow-console --help.\n").arg(cl.error),
                              exitcode::usage);
    default: break;
    }

    SystemClock clock;
    ConsoleCommandLine::Mode mode = cl.mode;
    QString fallbackHint;
    if (!cl.headless()) {
        // Decided before any QApplication exists: Qt aborts when its platform plugin cannot start.
        const QString reason = DisplayProbe::unavailableReason(argc, argv);
        if (!reason.isEmpty() && !cl.screenshotPath.isEmpty())
            return writeAndReturn(stderr, QStringLiteral("coreflow-console: --screenshot: %1 (QT_QPA_PLATFORM=offscreen needs none)\n").arg(reason),
                                  exitcode::outputFailed);
        if (!reason.isEmpty()) {
            const bool terminal = ::isatty(STDOUT_FILENO) == 1;
            mode = terminal ? ConsoleCommandLine::Mode::Watch : ConsoleCommandLine::Mode::Text;
            fallbackHint = QStringLiteral("coreflow-console: %1; showing the terminal view (%2) instead of the window\n")
                               .arg(reason, terminal ? QStringLiteral("--watch") : QStringLiteral("--text"));
        }
    }
    if (mode != ConsoleCommandLine::Mode::Gui) {
        // Terminal modes never touch a display: a plain QCoreApplication.
        QCoreApplication app(argc, argv);
        QCoreApplication::setApplicationName(QStringLiteral("coreflow-console"));
        // The terminal modes report on stdout/stderr themselves; the log lines would only repeat them
        // (and break the --watch screen). QT_LOGGING_RULES still turns them on.
        if (qEnvironmentVariableIsEmpty("QT_LOGGING_RULES"))
            QLoggingCategory::setFilterRules(QStringLiteral("coreflow.console.info=false\ncoreflow.console.warning=false"));
        QFile out;
        QFile err;
        out.open(1, QIODevice::WriteOnly | QIODevice::Unbuffered, QFileDevice::DontCloseHandle);
        err.open(2, QIODevice::WriteOnly | QIODevice::Unbuffered, QFileDevice::DontCloseHandle);
        if (!fallbackHint.isEmpty())
            err.write(fallbackHint.toUtf8());
        const auto runnerMode = mode == ConsoleCommandLine::Mode::Text    ? TerminalRunner::Mode::Text
                                : mode == ConsoleCommandLine::Mode::Json  ? TerminalRunner::Mode::Json
                                : mode == ConsoleCommandLine::Mode::Check ? TerminalRunner::Mode::Check
                                : mode == ConsoleCommandLine::Mode::Metrics ? TerminalRunner::Mode::Metrics
                                                                          : TerminalRunner::Mode::Watch;
        TerminalRunner runner(runnerMode, cl.socketPath, clock, &out, &err);
        runner.setOutputPath(cl.outputPath);
        runner.setTerminalSize([]() -> QSize {
            winsize size{};
            if (::isatty(STDOUT_FILENO) != 1 || ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) != 0 || size.ws_row == 0)
                return ::isatty(STDOUT_FILENO) == 1 ? QSize(80, 24) : QSize();
            return QSize(size.ws_col, size.ws_row);
        });
        QObject::connect(&runner, &TerminalRunner::finished, &app, &QCoreApplication::exit, Qt::QueuedConnection);
        runner.start();
        return app.exec();
    }

    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("coreflow-console"));
    StatusClient::Options options;
    options.socketPath = cl.socketPath;
    StatusClient client(options, clock);
    MainWindow window(cl.socketPath);
    window.attachClient(&client);
    window.show();
    if (!cl.screenshotPath.isEmpty()) {
        // --screenshot (§18.2): the overview tab once the first snapshot is shown, as PNG, then exit;
        // a relay that cannot be reached or refuses ends it with that code, as --text does.
        static bool shotTaken = false;
        QObject::connect(&client, &StatusClient::snapshotReceived, &app, [&]() {
            if (std::exchange(shotTaken, true))
                return;
            QTimer::singleShot(100, &app, [&]() {
                window.tabs()->setCurrentIndex(window.tabs()->indexOf(window.pane(QStringLiteral("overview"))));
                QApplication::processEvents();
                if (!window.grab().save(cl.screenshotPath, "PNG")) {
                    writeAndReturn(stderr, QStringLiteral("coreflow-console: --screenshot: cannot write %1\n").arg(cl.screenshotPath), 0);
                    app.exit(exitcode::outputFailed);
                    return;
                }
                app.exit(exitcode::ok);
            });
        });
        QTimer::singleShot(5000, &app, [&]() {
            if (shotTaken)
                return;
            writeAndReturn(stderr, QStringLiteral("coreflow-console: --screenshot: no snapshot within 5000 ms\n"), 0);
            app.exit(exitcode::cannotConnect);
        });
        QObject::connect(&client, &StatusClient::stateChanged, &app, [&](StatusClient::State state, const QString &why) {
            if (client.lastSnapshot() || (state != StatusClient::State::Disconnected && state != StatusClient::State::Refused))
                return;
            writeAndReturn(stderr, QStringLiteral("coreflow-console: --screenshot: %1\n").arg(why), 0);
            app.exit(state == StatusClient::State::Refused ? exitcode::accessRefused : exitcode::cannotConnect);
        });
    }
    client.start();
    return app.exec();
}
