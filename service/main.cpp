// coreflow: the serve.zone cluster relay service (the host release's ExecStart).
// Exit codes (docs/contract.md §19.3): 0 stopped on a signal and the stop completed (also during the
// start); 1 the start failed (cause on stderr), the stop failed, or a second signal arrived while
// stopping; 2 usage error.
#include "service/app/coreflow.h"
#include "service/app/environmentsecret.h"
#include "service/app/processhardening.h"
#include "service/app/relayconfiguration.h"
#include "service/core/epolleventdispatcher.h"
#include "service/app/signalwatcher.h"
#include "service/statussocket/statusserver.h"
#include "service/core/logging.h"
#include "shared/contract/offers.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QFile>
#include <QLoggingCategory>
#include <QTimer>
#include <cstdio>

namespace {

void writeLogLine(QtMsgType type, const QMessageLogContext &context, const QString &message)
{
    // One line per event: a newline inside a message (e.g. a peer's refusal text) never splits it.
    QString line = qFormatLogMessage(type, context, message);
    line.replace(QLatin1Char('\n'), QLatin1String("\\n")).replace(QLatin1Char('\r'), QLatin1String("\\r"));
    const QByteArray bytes = line.toUtf8() + '\n';
    std::fwrite(bytes.constData(), 1, size_t(bytes.size()), stderr);
    std::fflush(stderr);
    if (type == QtFatalMsg)
        std::abort();
}

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
    if (!qEnvironmentVariableIsSet("QT_MESSAGE_PATTERN"))
        qSetMessagePattern(QStringLiteral("%{time yyyy-MM-ddTHH:mm:ss.zzzZ} %{if-debug}debug%{endif}%{if-info}info%{endif}%{if-warning}warn%{endif}%{if-critical}error%{endif}%{if-fatal}fatal%{endif} %{category}: %{message}"));
    qInstallMessageHandler(writeLogLine);
    // Debug lines (one per forwarded frame) are off unless asked for: QT_LOGGING_RULES overrides this,
    // e.g. QT_LOGGING_RULES="coreflow.*.debug=true". At cluster scale they cost more CPU than the
    // forwarding itself (bench/README.md).
    QLoggingCategory::setFilterRules(QStringLiteral("coreflow.*.debug=false"));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral(
        "Coreflow relay: the one session a serve.zone cluster keeps to Cloudly.\n\n"
        "Configured by environment (or systemd credentials in $CREDENTIALS_DIRECTORY):\n"
        "  CLOUDLY_URL                            required: Cloudly endpoint (https:// or wss://)\n"
        "  SERVEZONE_CLUSTER_RELAY_AUTHORIZATION  required: the relay bearer (use LoadCredential=)\n"
        "  COREFLOW_NODE_ID                       with a relay block: the node this relay runs on\n"
        "  COREFLOW_RELAY_BIND_HOSTNAME           with a relay block: the listener address\n"
        "  COREFLOW_RELAY_BIND_PORT               listener port (default 8443)\n\n"
        "Exit codes: 0 stopped on SIGTERM/SIGINT; 1 start failed, stop failed or second signal; 2 usage."));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption caFile(QStringLiteral("ca-file"),
                                    QStringLiteral("Additional PEM trust anchors for the Cloudly connection (repeatable)."),
                                    QStringLiteral("path"));
    const QCommandLineOption statusSocket(QStringLiteral("status-socket"),
                                          QStringLiteral("Path of the read-only status socket (default: $RUNTIME_DIRECTORY/status.sock)."),
                                          QStringLiteral("path"));
    const QCommandLineOption operatorGroup(QStringLiteral("operator-group"),
                                           QStringLiteral("Group whose members may read the status socket."),
                                           QStringLiteral("group"));
    parser.addOptions({caFile, statusSocket, operatorGroup});
    if (!parser.parse(QCoreApplication::arguments())) {
        std::fprintf(stderr, "coreflow: %s\n", qPrintable(parser.errorText()));
        return 2;
    }
    if (parser.isSet(QStringLiteral("help"))) {
        std::fputs(qPrintable(parser.helpText()), stdout);
        return 0;
    }
    if (parser.isSet(QStringLiteral("version"))) {
        std::printf("coreflow %s (contract release %s)\n", COREFLOW_BUILD_VERSION, qPrintable(coreflow::contract::contractRelease()));
        return 0;
    }
    if (!parser.positionalArguments().isEmpty()) {
        std::fprintf(stderr, "coreflow: unexpected argument %s\n", qPrintable(parser.positionalArguments().first()));
        return 2;
    }

    auto configuration = [&environmentBearer] {
        coreflow::ConfigurationReader reader(QProcessEnvironment::systemEnvironment());
        if (environmentBearer)
            reader.provideSecret(QStringLiteral("SERVEZONE_CLUSTER_RELAY_AUTHORIZATION"), std::move(*environmentBearer));
        environmentBearer.reset();
        return reader.read(); // the reader and its copy go here; the configuration holds the one bearer
    }();
    if (!configuration) {
        std::fprintf(stderr, "coreflow: start failed: %s\n", qPrintable(configuration.refusal().text()));
        return 1;
    }
    coreflow::RelayConfiguration config = std::move(configuration).value();
    for (const QString &path : parser.values(caFile)) {
        QFile file(path);
        const auto certs = file.open(QIODevice::ReadOnly) ? QSslCertificate::fromData(file.readAll(), QSsl::Pem)
                                                          : QList<QSslCertificate>();
        if (certs.isEmpty()) {
            std::fprintf(stderr, "coreflow: start failed: --ca-file %s holds no PEM certificate\n", qPrintable(path));
            return 1;
        }
        config.extraCaCertificates += certs;
    }
    // The status socket is always served by the executable: --status-socket, else the default path
    // ($RUNTIME_DIRECTORY/status.sock under systemd), the same one coreflow-console looks at.
    config.statusSocketPath = parser.isSet(statusSocket) ? parser.value(statusSocket) : coreflow::StatusServer::defaultSocketPath();
    config.operatorGroup = parser.value(operatorGroup);

    coreflow::SystemClock clock;
    coreflow::Coreflow relay(std::move(config), clock);
    coreflow::SignalWatcher signalWatcher;
    if (!signalWatcher.install()) {
        std::fprintf(stderr, "coreflow: start failed: cannot install signal handlers\n");
        return 1;
    }
    QObject::connect(&signalWatcher, &coreflow::SignalWatcher::signalReceived, &relay, [&relay](int) { relay.stop(); });
    QObject::connect(&relay, &coreflow::Coreflow::stopped, &app, [](bool ok) { QCoreApplication::exit(ok ? 0 : 1); });
    QObject::connect(&relay, &coreflow::Coreflow::startFailed, &app, [](const QString &reason) {
        std::fprintf(stderr, "coreflow: start failed: %s\n", qPrintable(reason));
        QCoreApplication::exit(1);
    });
    QTimer::singleShot(0, &relay, &coreflow::Coreflow::start);
    return app.exec();
}
