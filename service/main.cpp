// coreflow: the serve.zone cluster relay service (the host release's ExecStart).
// Exit codes (docs/contract.md §19.3): 0 stopped on a signal and the stop completed (also during the
// start); 1 the start failed (cause on stderr), the stop failed, or a second signal arrived while
// stopping; 2 usage error.
#include "service/app/coreflow.h"
#include "service/app/environmentsecret.h"
#include "service/app/journalstream.h"
#include "service/app/normalizedpath.h"
#include "service/app/processhardening.h"
#include "service/app/relayconfiguration.h"
#include "service/core/epolleventdispatcher.h"
#include "service/app/signalwatcher.h"
#include "service/statussocket/statusserver.h"
#include "service/core/logging.h"
#include "shared/contract/offers.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QLoggingCategory>
#include <QTimer>
#include <cstdio>

namespace {

// stderr is the journal (JOURNAL_STREAM names its device and inode): lines carry their syslog priority
// and no timestamp (contract §19.3, Logs).
bool g_stderrIsJournal = false;

void writeLine(QtMsgType type, QString line)
{
    // One line per event: a newline inside a message (e.g. a peer's refusal text) never splits it.
    line.replace(QLatin1Char('\n'), QLatin1String("\\n")).replace(QLatin1Char('\r'), QLatin1String("\\r"));
    const QByteArray bytes = (g_stderrIsJournal ? QByteArray(coreflow::JournalStream::priorityPrefix(type)) : QByteArray())
                             + line.toUtf8() + '\n';
    std::fwrite(bytes.constData(), 1, size_t(bytes.size()), stderr);
    std::fflush(stderr);
}

void writeLogLine(QtMsgType type, const QMessageLogContext &context, const QString &message)
{
    writeLine(type, qFormatLogMessage(type, context, message));
    if (type == QtFatalMsg)
        std::abort();
}

// `coreflow: start failed: <cause>` (contract §19.3): exit 1.
int startFailed(const QString &cause)
{
    writeLine(QtCriticalMsg, QStringLiteral("coreflow: start failed: ") + cause);
    return 1;
}

// `coreflow: <what>` (contract §19.2): exit 2, before anything starts.
int usageError(const QString &what)
{
    writeLine(QtCriticalMsg, QStringLiteral("coreflow: ") + what);
    return 2;
}

const char *kHelp =
    "Coreflow relay: the one session a serve.zone cluster keeps to Cloudly.\n"
    "\n"
    "Variables (docs/contract.md 19.1):\n"
    "  CLOUDLY_URL                            required: Cloudly endpoint (https:// or wss://; http:// or\n"
    "                                         ws:// only to a loopback host, e.g. a local test Cloudly)\n"
    "  SERVEZONE_CLUSTER_RELAY_AUTHORIZATION  required: the relay bearer, stored without a trailing\n"
    "                                         newline (systemd: LoadCredentialEncrypted=, never Environment=)\n"
    "  COREFLOW_NODE_ID                       with a relay block: the node this relay runs on\n"
    "  COREFLOW_RELAY_BIND_HOSTNAME           with a relay block: the listener address\n"
    "  COREFLOW_RELAY_BIND_PORT               listener port (default 8443)\n"
    "  COREFLOW_VPN_BIND_HOSTNAME             with a managed VPN hub: its unicast IPv4 address\n"
    "  COREFLOW_VPN_QUIC_PORT                 with a managed VPN hub: its UDP port (both or neither)\n"
    "\n"
    "Sources, first found wins: the process environment, $CREDENTIALS_DIRECTORY/<NAME> (systemd\n"
    "credentials), /run/secrets/<NAME> (Docker secrets); in a build tree only, the working directory's\n"
    ".nogit/env.yml, env.yaml or env.json. File values are read byte for byte. qenv.yml beside the\n"
    "executable lists the variables a start refuses to go without.\n"
    "\n"
    "Exit codes: 0 stopped on SIGTERM/SIGINT (also during the start), --help, --version; 1 start failed,\n"
    "stop failed or second signal; 2 usage error.";

} // namespace

int main(int argc, char *argv[])
{
    // Before anything reads a secret: libsodium, no core dumps, not dumpable (contract §19.4).
    if (const QString failed = coreflow::ProcessHardening::apply(); !failed.isEmpty()) {
        std::fprintf(stderr, "coreflow: start failed: %s\n", qPrintable(failed));
        return 1;
    }
    // The bearer leaves the environment before Qt or QProcessEnvironment copies it.
    std::optional<coreflow::Secret> environmentBearer = coreflow::EnvironmentSecret::take("SERVEZONE_CLUSTER_RELAY_AUTHORIZATION");
    // epoll instead of Qt's poll()-based dispatcher: a loop turn costs O(ready sockets), not O(nodes)
    // (bench/README.md). COREFLOW_EVENT_DISPATCHER=qt keeps Qt's default.
    if (qgetenv("COREFLOW_EVENT_DISPATCHER") != "qt") {
        auto *dispatcher = new coreflow::EpollEventDispatcher;
        if (dispatcher->isValid())
            QCoreApplication::setEventDispatcher(dispatcher);
        else
            delete dispatcher;
    }
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("coreflow"));
    QCoreApplication::setApplicationVersion(QStringLiteral(COREFLOW_BUILD_VERSION));
    g_stderrIsJournal = coreflow::JournalStream::matches(qgetenv("JOURNAL_STREAM"), 2);
    const QString levelAndMessage = QStringLiteral(
        "%{if-debug}debug%{endif}%{if-info}info%{endif}%{if-warning}warn%{endif}%{if-critical}error%{endif}%{if-fatal}fatal%{endif} %{category}: %{message}");
    if (!qEnvironmentVariableIsSet("QT_MESSAGE_PATTERN"))
        qSetMessagePattern(g_stderrIsJournal ? levelAndMessage : QStringLiteral("%{time yyyy-MM-ddTHH:mm:ss.zzzZ} ") + levelAndMessage);
    qInstallMessageHandler(writeLogLine);
    // Debug lines (one per forwarded frame) are off unless asked for: QT_LOGGING_RULES overrides this,
    // e.g. QT_LOGGING_RULES="coreflow.*.debug=true". At cluster scale they cost more CPU than the
    // forwarding itself (bench/README.md).
    QLoggingCategory::setFilterRules(QStringLiteral("coreflow.*.debug=false"));

    QCommandLineParser parser;
    parser.setApplicationDescription(QString::fromLatin1(kHelp));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption caFile(QStringLiteral("ca-file"),
                                    QStringLiteral("Additional PEM trust anchors for the Cloudly connection (repeatable; absolute, normalized path)."),
                                    QStringLiteral("path"));
    const QCommandLineOption statusSocket(QStringLiteral("status-socket"),
                                          QStringLiteral("Path of the read-only status socket (absolute, normalized; default: $RUNTIME_DIRECTORY/status.sock)."),
                                          QStringLiteral("path"));
    const QCommandLineOption operatorGroup(QStringLiteral("operator-group"),
                                           QStringLiteral("Group whose members may read the status socket."),
                                           QStringLiteral("group"));
    parser.addOptions({caFile, statusSocket, operatorGroup});
    if (!parser.parse(QCoreApplication::arguments()))
        return usageError(parser.errorText());
    if (parser.isSet(QStringLiteral("help")) || parser.isSet(QStringLiteral("help-all"))) {
        std::fputs(qPrintable(parser.helpText()), stdout);
        return 0;
    }
    if (parser.isSet(QStringLiteral("version"))) {
        std::printf("coreflow %s (contract release %s)\n", COREFLOW_BUILD_VERSION, qPrintable(coreflow::contract::contractRelease()));
        return 0;
    }
    if (!parser.positionalArguments().isEmpty())
        return usageError(QStringLiteral("unexpected argument %1").arg(parser.positionalArguments().first()));

    // The start line (contract §19.3): the first line of every start, before anything can refuse it.
    qCInfo(logApp).noquote() << QStringLiteral("coreflow %1 starting (contract release %2, pid %3)")
                                    .arg(QStringLiteral(COREFLOW_BUILD_VERSION), coreflow::contract::contractRelease())
                                    .arg(QCoreApplication::applicationPid());

    // SIGTERM/SIGINT are caught from here on: a stop asked for while the configuration is read ends the
    // start with exit 0 once the read returns (contract §19.3, UC-13), never with the default 143.
    coreflow::SignalWatcher signalWatcher;
    if (!signalWatcher.install())
        return startFailed(QStringLiteral("cannot install signal handlers"));
    bool stopAskedEarly = false;
    const QMetaObject::Connection earlyStop =
        QObject::connect(&signalWatcher, &coreflow::SignalWatcher::signalReceived, &app, [&stopAskedEarly](int) { stopAskedEarly = true; });
    auto stoppedBeforeStart = [&] {
        QCoreApplication::processEvents(); // delivers a signal that arrived during the read
        if (stopAskedEarly)
            qCInfo(logApp) << "stopped before the start";
        return stopAskedEarly;
    };

    // Launch facts: qenv.yml beside the executable; the working directory's .nogit overlay only when the
    // executable lies in a build tree (contract §19.1).
    auto configuration = [&environmentBearer] {
        coreflow::ConfigurationReader reader(coreflow::ConfigurationSources::rootsForExecutable(
            QProcessEnvironment::systemEnvironment(), QCoreApplication::applicationDirPath(), QDir::currentPath()));
        if (environmentBearer)
            reader.provideSecret(QStringLiteral("SERVEZONE_CLUSTER_RELAY_AUTHORIZATION"), std::move(*environmentBearer));
        environmentBearer.reset();
        return reader.read(); // the reader and its copy go here; the configuration holds the one bearer
    }();
    if (stoppedBeforeStart())
        return 0;
    if (!configuration)
        return startFailed(configuration.refusal().text());
    coreflow::RelayConfiguration config = std::move(configuration).value();
    // Paths in a unit file must mean one file whatever the working directory (§19.2, D-27).
    for (const QCommandLineOption *option : {&caFile, &statusSocket})
        for (const QString &path : parser.values(*option))
            if (!coreflow::NormalizedPath::isAbsoluteNormalized(path))
                return startFailed(QStringLiteral("configuration-invalid: --%1 %2 is not an absolute, normalized path")
                                       .arg(option->names().first(), path));
    for (const QString &path : parser.values(caFile)) {
        QFile file(path);
        const auto certs = file.open(QIODevice::ReadOnly) ? QSslCertificate::fromData(file.readAll(), QSsl::Pem)
                                                          : QList<QSslCertificate>();
        if (certs.isEmpty())
            return startFailed(QStringLiteral("--ca-file %1 holds no PEM certificate").arg(path));
        config.extraCaCertificates += certs;
    }
    // The status socket is always served by the executable: --status-socket, else the default path
    // ($RUNTIME_DIRECTORY/status.sock under systemd), the same one coreflow-console looks at.
    config.statusSocketPath = parser.isSet(statusSocket) ? parser.value(statusSocket) : coreflow::StatusServer::defaultSocketPath();
    config.operatorGroup = parser.value(operatorGroup);

    coreflow::SystemClock clock;
    coreflow::Coreflow relay(std::move(config), clock);
    if (stoppedBeforeStart())
        return 0;
    QObject::disconnect(earlyStop);
    QObject::connect(&signalWatcher, &coreflow::SignalWatcher::signalReceived, &relay, [&relay](int) { relay.stop(); });
    QObject::connect(&relay, &coreflow::Coreflow::stopped, &app, [](bool ok) { QCoreApplication::exit(ok ? 0 : 1); });
    QObject::connect(&relay, &coreflow::Coreflow::startFailed, &app, [](const QString &reason) { QCoreApplication::exit(startFailed(reason)); });
    QTimer::singleShot(0, &relay, &coreflow::Coreflow::start);
    return app.exec();
}
