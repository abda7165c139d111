// registry_bench_relay: the pull endpoint alone, for bench/registry/run.sh: the relay's own listener
// (RelayListener: its TLS and its HTTP/1.1 server loop) in front of RegistryProxy, forwarding to
// --cloudly.
//   registry_bench_relay --cert PEM --key PEM --cloudly URL [--ca PEM]
// Listens on 127.0.0.1 at an ephemeral port and prints "PORT <n>"; runs until killed (SIGTERM).
// Runs the daemon's event dispatcher (EpollEventDispatcher) when built with the service, like
// `coreflow` does; COREFLOW_EVENT_DISPATCHER=qt keeps Qt's default, as it does for the daemon.
#include "service/listener/relaylistener.h"

#ifdef COREFLOW_BENCH_EPOLL_DISPATCHER
#include "service/core/epolleventdispatcher.h"
#endif

#include "service/registry/registryproxy.h"
#include "shared/util/clock.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QFile>
#include <QLoggingCategory>
#include <QSslKey>
#include <csignal>
#include <cstdio>

using namespace coreflow;

namespace {
QByteArray readFile(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}
} // namespace

int main(int argc, char **argv)
{
#ifdef COREFLOW_BENCH_EPOLL_DISPATCHER
    if (qgetenv("COREFLOW_EVENT_DISPATCHER") != "qt") {
        auto *dispatcher = new EpollEventDispatcher;
        if (dispatcher->isValid())
            QCoreApplication::setEventDispatcher(dispatcher);
        else
            delete dispatcher;
    }
#endif
    QCoreApplication app(argc, argv);
    std::signal(SIGTERM, [](int) { QCoreApplication::quit(); });
    QCommandLineParser parser;
    parser.addOptions({{QStringLiteral("cert"), QStringLiteral("listener certificate (PEM)"), QStringLiteral("pem")},
                       {QStringLiteral("key"), QStringLiteral("listener key (PEM)"), QStringLiteral("pem")},
                       {QStringLiteral("cloudly"), QStringLiteral("CLOUDLY_URL"), QStringLiteral("url")},
                       {QStringLiteral("ca"), QStringLiteral("extra CA for the registry (PEM)"), QStringLiteral("pem")}});
    parser.process(app);
    QLoggingCategory::setFilterRules(QStringLiteral("coreflow.registry.info=false"));
    const QList<QSslCertificate> certs = QSslCertificate::fromData(readFile(parser.value(QStringLiteral("cert"))));
    const QSslKey key(readFile(parser.value(QStringLiteral("key"))), QSsl::Rsa);
    if (certs.isEmpty() || key.isNull()) {
        std::fprintf(stderr, "registry_bench_relay: unreadable --cert/--key\n");
        return 2;
    }
    QList<QSslCertificate> extra;
    if (parser.isSet(QStringLiteral("ca")))
        extra = QSslCertificate::fromData(readFile(parser.value(QStringLiteral("ca"))));

    RelayListener relayListener;
    quint16 port = 0;
    QSslConfiguration tls = QSslConfiguration::defaultConfiguration();
    tls.setLocalCertificateChain(certs);
    tls.setPrivateKey(key);
    if (!relayListener.listen(QStringLiteral("127.0.0.1"), 0, tls))
        port = relayListener.boundPort();
    if (port == 0)
        return 3;
    SystemClock clock;
    RegistryProxy proxy(QUrl(parser.value(QStringLiteral("cloudly"))),
                        QUrl(QStringLiteral("https://127.0.0.1:%1").arg(port)), extra, clock);
    // Tuning knobs for experiments (bytes): COREFLOW_BENCH_WATERMARK, COREFLOW_BENCH_BUDGET.
    if (qEnvironmentVariableIsSet("COREFLOW_BENCH_WATERMARK"))
        proxy.setWatermarkBytes(qEnvironmentVariableIntValue("COREFLOW_BENCH_WATERMARK"));
    if (qEnvironmentVariableIsSet("COREFLOW_BENCH_BUDGET"))
        proxy.setInFlightBudgetBytes(qEnvironmentVariableIntValue("COREFLOW_BENCH_BUDGET"));
    relayListener.setHttpHandler(&proxy);
    std::printf("PORT %u\n", unsigned(port));
    std::fflush(stdout);
    const int rc = app.exec();
    relayListener.setHttpHandler(nullptr);
    return rc;
}
