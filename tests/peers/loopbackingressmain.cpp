// coreflow-loopback-ingress: LoopbackIngress as a process, for the demo (resources/demo.sh).
//
//   coreflow-loopback-ingress --url wss://localhost:PORT/ --ca-file ca.pem [--ingress-id ID] [--node-id ID]
//
// Dials the relay, registers (registerClusterIngress, docs/contract.md §10.2), pulls the route table
// (getClusterIngressRouteTable) and prints one line per event on stdout; pulls again on every hint the
// relay sends. Exits 0 on SIGTERM/SIGINT, 2 on bad arguments, 1 when it cannot connect.
#include "tests/peers/loopbackingress.h"
#include "tests/peers/quitonsignal.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QJsonArray>
#include <QJsonObject>
#include <QLoggingCategory>

#include <cstdio>

using namespace coreflow::peers;

namespace {
void say(const QString &line)
{
    std::fputs(line.toUtf8().constData(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
}
} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QCommandLineParser parser;
    parser.addHelpOption();
    const QCommandLineOption urlOpt(QStringLiteral("url"), QStringLiteral("Relay listener, wss://host:port/."), QStringLiteral("url"));
    const QCommandLineOption caOpt(QStringLiteral("ca-file"), QStringLiteral("PEM CA certificate(s) to trust."), QStringLiteral("path"));
    const QCommandLineOption idOpt(QStringLiteral("ingress-id"), QStringLiteral("Ingress id."), QStringLiteral("id"),
                                   QStringLiteral("ingress-1"));
    const QCommandLineOption nodeOpt(QStringLiteral("node-id"), QStringLiteral("Node the ingress runs on."), QStringLiteral("id"),
                                     QStringLiteral("node-a"));
    parser.addOptions({urlOpt, caOpt, idOpt, nodeOpt});
    parser.process(app);
    QLoggingCategory::setFilterRules(QStringLiteral("coreflow.peers.*.debug=false\ncoreflow.peers.*.info=false"));

    const QUrl url(parser.value(urlOpt), QUrl::StrictMode);
    const QList<QSslCertificate> cas = QSslCertificate::fromPath(parser.value(caOpt), QSsl::Pem);
    if (!url.isValid() || url.scheme() != QLatin1String("wss") || cas.isEmpty()) {
        std::fputs("coreflow-loopback-ingress: --url wss://… and --ca-file are required\n", stderr);
        return 2;
    }
    QuitOnSignal quitOnSignal;
    LoopbackIngress::Options options;
    options.ingressId = parser.value(idOpt);
    options.nodeId = parser.value(nodeOpt);
    options.bearer = QByteArrayLiteral("demo-ingress-bearer-") + options.ingressId.toUtf8();
    options.url = url;
    options.caCertificates = cas;
    LoopbackIngress ingress(options);
    const QString id = options.ingressId;
    auto pull = [&ingress, id] {
        ingress.pullRouteTable([&ingress, id](const PeerFrame &answer) {
            if (answer.hasError()) {
                say(QStringLiteral("ingress %1 could not pull the route table: %2").arg(id, answer.errorRefusal().text()));
                return;
            }
            const QJsonObject table = ingress.routeTable().toObject();
            say(QStringLiteral("ingress %1 pulled route table revision %2: %3 routes")
                    .arg(id)
                    .arg(ingress.appliedRevision().value_or(-1))
                    .arg(table.value(QStringLiteral("routes")).toArray().size()));
        });
    };
    QObject::connect(&ingress, &LoopbackIngress::connected, [&ingress, id, pull] {
        say(QStringLiteral("ingress %1 connected; registering").arg(id));
        ingress.registerIngress([id, pull](const PeerFrame &answer) {
            if (answer.hasError()) {
                say(QStringLiteral("ingress %1 registration refused: %2").arg(id, answer.errorRefusal().text()));
                return;
            }
            say(QStringLiteral("ingress %1 registered").arg(id));
            pull();
        });
    });
    QObject::connect(&ingress, &LoopbackIngress::connectionFailed, [id](const QString &error) {
        say(QStringLiteral("ingress %1 could not connect: %2").arg(id, error));
        QCoreApplication::exit(1);
    });
    QObject::connect(&ingress, &LoopbackIngress::routeTablePulled, [] {});
    QObject::connect(&ingress, &LoopbackIngress::disconnected, [id] { say(QStringLiteral("ingress %1 disconnected").arg(id)); });
    ingress.open();
    return QCoreApplication::exec();
}
