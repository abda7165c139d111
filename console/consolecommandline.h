#pragma once
// ConsoleCommandLine: coreflow-console's arguments.
//
//   coreflow-console [--socket PATH]            the desktop window (needs a display)
//   coreflow-console --text  [--socket PATH]    one snapshot as plain text, then exit
//   coreflow-console --json  [--socket PATH]    one snapshot as JSON (the status object), then exit
//   coreflow-console --watch [--socket PATH]    a refreshing plain-text view until interrupted
//   coreflow-console --check [--socket PATH]    readiness as an exit code and one line (ReadinessCheck)
//   coreflow-console --metrics [--output FILE] [--socket PATH]   Prometheus text (MetricsExposition)
//   coreflow-console --screenshot FILE [--socket PATH]   the window's overview, after the first
//                    snapshot, written to FILE as PNG, then exit (QT_QPA_PLATFORM=offscreen needs no display)
//   coreflow-console --help | --version
// --text, --json, --watch, --check and --metrics are mutually exclusive. Exit codes: consoleexitcodes.h (listed by --help).
#include <QString>
#include <QStringList>

namespace coreflow::console {

class ConsoleCommandLine {
public:
    enum class Mode { Gui, Text, Json, Watch, Check, Metrics, Help, Version, UsageError };

    Mode mode = Mode::Gui;
    QString socketPath; // resolved: --socket, else the client-side default path
    QString outputPath; // --metrics --output FILE; "" for stdout
    QString screenshotPath; // --screenshot FILE (window mode only); "" for the interactive window
    QString error;      // UsageError: what was wrong

    // arguments include the program name (as QCoreApplication::arguments() / argv).
    static ConsoleCommandLine parse(const QStringList &arguments);
    static QString helpText();
    static QString versionText();
    // True when the mode needs no display (everything but Gui).
    bool headless() const { return mode != Mode::Gui; }
};

} // namespace coreflow::console
