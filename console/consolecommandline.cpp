#include "console/consolecommandline.h"

#include "shared/status/statussocketpath.h"

namespace coreflow::console {

ConsoleCommandLine ConsoleCommandLine::parse(const QStringList &arguments)
{
    ConsoleCommandLine cl;
    QStringList modes;
    bool help = false;
    bool version = false;
    for (int i = 1; i < arguments.size(); ++i) {
        const QString &a = arguments[i];
        if (a == QLatin1String("--text") || a == QLatin1String("--json") || a == QLatin1String("--watch")
            || a == QLatin1String("--check") || a == QLatin1String("--metrics")) {
            modes << a;
        } else if (a == QLatin1String("--help") || a == QLatin1String("-h")) {
            help = true;
        } else if (a == QLatin1String("--version")) {
            version = true;
        } else if (a == QLatin1String("--socket")) {
            if (i + 1 >= arguments.size() || arguments[i + 1].isEmpty()) {
                cl.mode = Mode::UsageError;
                cl.error = QStringLiteral("--socket needs a PATH");
                return cl;
            }
            cl.socketPath = arguments[++i];
        } else if (a == QLatin1String("--output")) {
            if (i + 1 >= arguments.size() || arguments[i + 1].isEmpty()) {
                cl.mode = Mode::UsageError;
                cl.error = QStringLiteral("--output needs a FILE");
                return cl;
            }
            cl.outputPath = arguments[++i];
        } else if (a == QLatin1String("--screenshot")) {
            if (i + 1 >= arguments.size() || arguments[i + 1].isEmpty()) {
                cl.mode = Mode::UsageError;
                cl.error = QStringLiteral("--screenshot needs a FILE");
                return cl;
            }
            cl.screenshotPath = arguments[++i];
        } else if (a.startsWith(QLatin1String("--socket="))) {
            cl.socketPath = a.mid(9);
            if (cl.socketPath.isEmpty()) {
                cl.mode = Mode::UsageError;
                cl.error = QStringLiteral("--socket needs a PATH");
                return cl;
            }
        } else {
            cl.mode = Mode::UsageError;
            cl.error = QStringLiteral("unknown argument: %1").arg(a);
            return cl;
        }
    }
    if (help) {
        cl.mode = Mode::Help;
        return cl;
    }
    if (version) {
        cl.mode = Mode::Version;
        return cl;
    }
    if (modes.size() > 1) {
        cl.mode = Mode::UsageError;
        cl.error = QStringLiteral("choose one of --text, --json, --watch, --check, --metrics (got %1)").arg(modes.join(QLatin1Char(' ')));
        return cl;
    }
    if (!cl.outputPath.isEmpty() && modes != QStringList{QStringLiteral("--metrics")}) {
        cl.mode = Mode::UsageError;
        cl.error = QStringLiteral("--output FILE goes with --metrics only");
        return cl;
    }
    if (!cl.screenshotPath.isEmpty() && !modes.isEmpty()) {
        cl.mode = Mode::UsageError;
        cl.error = QStringLiteral("--screenshot FILE goes with the window only (not %1)").arg(modes[0]);
        return cl;
    }
    if (modes.isEmpty())
        cl.mode = Mode::Gui;
    else if (modes[0] == QLatin1String("--text"))
        cl.mode = Mode::Text;
    else if (modes[0] == QLatin1String("--json"))
        cl.mode = Mode::Json;
    else if (modes[0] == QLatin1String("--check"))
        cl.mode = Mode::Check;
    else if (modes[0] == QLatin1String("--metrics"))
        cl.mode = Mode::Metrics;
    else
        cl.mode = Mode::Watch;
    if (cl.socketPath.isEmpty())
        cl.socketPath = status::defaultStatusSocketPath(status::StatusSocketSide::Client);
    return cl;
}

QString ConsoleCommandLine::helpText()
{
    return QStringLiteral(
               "Usage: coreflow-console [--text | --json | --watch | --check | --metrics [--output FILE]]\n"
               "                        [--screenshot FILE] [--socket PATH]\n"
               "\n"
               "Shows a coreflow relay's live status, read-only, from its status socket.\n"
               "\n"
               "Modes:\n"
               "  (none)         the desktop window (needs a display)\n"
               "  --text         print one snapshot as plain text and exit (no display needed)\n"
               "  --json         print one snapshot as JSON (the status object) and exit\n"
               "  --watch        a refreshing plain-text view; reconnects on its own; Ctrl-C ends it\n"
               "  --check        exit 0 when the relay is ready, else a not-ready code below; one line\n"
               "                 (for monitoring and ExecStartPost= probes)\n"
               "  --metrics      print the relay's counters and gauges in the Prometheus text format\n"
               "  --output FILE  with --metrics: write FILE atomically (temp file + rename), e.g. for\n"
               "                 node_exporter's textfile collector\n"
               "  --screenshot FILE  the window's overview after the first snapshot, written to\n"
               "                 FILE as PNG, then exit (QT_QPA_PLATFORM=offscreen needs no display)\n"
               "\n"
               "Options:\n"
               "  --socket PATH  the status socket (default: %1)\n"
               "  --help         this text\n"
               "  --version      the console's build\n"
               "\n"
               "Exit codes:\n"
               "  0  ok\n"
               "  2  usage error\n"
               "  3  cannot connect (no relay listening at the socket, or it closed before a snapshot)\n"
               "  4  access refused (socket permissions, or the relay's status-access-denied)\n"
               "  5  protocol error (the peer does not speak status protocol version 1)\n"
               "  6  --metrics --output or --screenshot: the file could not be written\n"
               "  --check only: the relay answered and is not ready (the lowest code that applies):\n"
               "  10 no Cloudly session (hop cloudly)\n"
               "  11 registration parked: only an operator's restart with a current bearer helps\n"
               "  12 registration refused (hop registration)\n"
               "  13 a relay origin is configured and no listener is bound\n"
               "  14 a node or ingress offer refused (hop palletRuntime or clusterIngress)\n"
               "  15 the relay is still starting (hop relay)\n"
               "  16 not ready for another reason\n"
               "  17 ready, but clock skew suspected (check NTP on this host)\n")
        .arg(status::defaultStatusSocketPath(status::StatusSocketSide::Client));
}

QString ConsoleCommandLine::versionText()
{
    return QStringLiteral("coreflow-console %1 (contract %2, status protocol 1)\n")
        .arg(QStringLiteral(COREFLOW_BUILD_VERSION), QStringLiteral(COREFLOW_CONTRACT_RELEASE));
}

} // namespace coreflow::console
