// coreflow-simulated-pallet: SimulatedPalletNode as a process, for the demo (resources/demo.sh).
//
//   coreflow-simulated-pallet --url wss://localhost:PORT/ --ca-file ca.pem --node-id ID
//                             (--bearer TOKEN | --bearer-file PATH) [--verbose]
//
// Dials the relay, registers (registerPalletRuntimeSession), answers pushes ({ acknowledged: true,
// nodeId }) and prints one line per event on stdout. Redials every second after a failed dial or a
// lost connection. Takes the DNS lease renewals the relay's escrow offers when their window is current by
// its clock. Exits 0 on SIGTERM/SIGINT, 2 on bad arguments.
#include "tests/peers/dnsleaserenewalrunbuilder.h"
#include "tests/peers/quitonsignal.h"
#include "tests/peers/simulatedpalletnode.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDateTime>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QTimer>

#include <cstdio>

using namespace coreflow;
using namespace coreflow::peers;

namespace {

void say(const QString &line)
{
    std::fputs(line.toUtf8().constData(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
}

int fail(const QString &message)
{
    std::fputs(("coreflow-simulated-pallet: " + message + '\n').toUtf8().constData(), stderr);
    return 2;
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("coreflow-simulated-pallet"));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Simulated Pallet node for the Coreflow relay demo"));
    parser.addHelpOption();
    const QCommandLineOption urlOpt(QStringLiteral("url"), QStringLiteral("Relay listener, wss://host:port/."),
                                    QStringLiteral("url"));
    const QCommandLineOption caOpt(QStringLiteral("ca-file"), QStringLiteral("PEM CA certificate(s) to trust."),
                                   QStringLiteral("path"));
    const QCommandLineOption nodeOpt(QStringLiteral("node-id"), QStringLiteral("Node id."), QStringLiteral("id"));
    const QCommandLineOption bearerOpt(QStringLiteral("bearer"), QStringLiteral("Node authorization."),
                                       QStringLiteral("token"));
    const QCommandLineOption bearerFileOpt(QStringLiteral("bearer-file"),
                                           QStringLiteral("File holding the node authorization, read verbatim."),
                                           QStringLiteral("path"));
    const QCommandLineOption verboseOpt(QStringLiteral("verbose"), QStringLiteral("Log every frame to stderr."));
    parser.addOptions({urlOpt, caOpt, nodeOpt, bearerOpt, bearerFileOpt, verboseOpt});
    parser.process(app);

    if (!parser.isSet(verboseOpt))
        QLoggingCategory::setFilterRules(QStringLiteral("coreflow.peers.*.debug=false\ncoreflow.peers.*.info=false"));

    const QUrl url(parser.value(urlOpt), QUrl::StrictMode);
    if (!url.isValid() || url.scheme() != QLatin1String("wss"))
        return fail(QStringLiteral("--url must be a wss:// URL"));
    if (!parser.isSet(nodeOpt) || parser.value(nodeOpt).isEmpty())
        return fail(QStringLiteral("--node-id is required"));
    if (!parser.isSet(caOpt))
        return fail(QStringLiteral("--ca-file is required"));
    const QList<QSslCertificate> cas = QSslCertificate::fromPath(parser.value(caOpt), QSsl::Pem);
    if (cas.isEmpty())
        return fail(QStringLiteral("no PEM certificate in %1").arg(parser.value(caOpt)));
    QByteArray bearer = parser.value(bearerOpt).toUtf8();
    if (parser.isSet(bearerFileOpt)) {
        QFile f(parser.value(bearerFileOpt));
        if (!f.open(QIODevice::ReadOnly))
            return fail(QStringLiteral("cannot read the bearer file: %1").arg(f.errorString()));
        bearer = f.readAll();
    }
    if (bearer.isEmpty())
        return fail(QStringLiteral("--bearer or --bearer-file is required"));

    QuitOnSignal quitOnSignal(false);
    SimulatedPalletNode::Options options;
    options.nodeId = parser.value(nodeOpt);
    options.bearer = bearer;
    options.url = url;
    options.caCertificates = cas;
    SimulatedPalletNode node(options);
    const QString id = options.nodeId;
    bool stopping = false;
    QObject::connect(&quitOnSignal, &QuitOnSignal::aboutToQuit, [&node, &stopping, id](int) {
        stopping = true;
        say(QStringLiteral("node %1 stopping").arg(id));
        if (!node.isConnected()) {
            QCoreApplication::exit(0);
            return;
        }
        // A clean close frame, then quit (at the latest after 500 ms).
        QObject::connect(&node, &SimulatedPalletNode::disconnected, qApp, [] { QCoreApplication::exit(0); });
        QTimer::singleShot(500, qApp, [] { QCoreApplication::exit(0); });
        node.close(1001, QStringLiteral("node stopping"));
    });

    QTimer redial;
    redial.setSingleShot(true);
    redial.setInterval(1000);
    QObject::connect(&redial, &QTimer::timeout, &node, [&node, id, url] {
        say(QStringLiteral("node %1 dialling %2").arg(id, url.toString()));
        node.open();
    });

    QObject::connect(&node, &SimulatedPalletNode::connected, [&node, id] {
        say(QStringLiteral("node %1 connected; registering").arg(id));
        node.registerSession();
    });
    QObject::connect(&node, &SimulatedPalletNode::connectionFailed, [&redial, id](const QString &error) {
        say(QStringLiteral("node %1 could not connect (%2); redialling in 1 s").arg(id, error));
        redial.start();
    });
    QObject::connect(&node, &SimulatedPalletNode::disconnected, [&node, &redial, &stopping, id] {
        if (stopping)
            return;
        say(QStringLiteral("node %1 disconnected (close code %2); redialling in 1 s").arg(id).arg(node.closeCode()));
        redial.start();
    });
    QObject::connect(&node, &SimulatedPalletNode::sessionRegistered, [id](const PeerSessionBinding &binding) {
        say(QStringLiteral("node %1 registered: session %2, cluster %3, generation %4")
                .arg(id, binding.sessionId, binding.clusterId)
                .arg(binding.relayRegistrationGeneration));
    });
    QObject::connect(&node, &SimulatedPalletNode::sessionRefused, [id](const PeerRefusal &refusal) {
        say(QStringLiteral("node %1 registration refused: %2").arg(id, refusal.text()));
    });
    QObject::connect(&node, &SimulatedPalletNode::pushReceived, [&node, id](const QString &method) {
        const QJsonObject request =
            QJsonDocument::fromJson(node.lastPushRawRequest(method)).object();
        const QString assignment =
            request.value(QStringLiteral("assignment")).toObject().value(QStringLiteral("id")).toString();
        say(assignment.isEmpty() ? QStringLiteral("node %1 received %2 and answered it").arg(id, method)
                                 : QStringLiteral("node %1 received %2 (assignment %3) and acknowledged it")
                                       .arg(id, method, assignment));
    });

    // DNS lease renewals the relay's escrow offers while Cloudly is away (docs/contract.md §9): admitted
    // when the window is current by this node's clock.
    node.setPushHandler(QStringLiteral("applyRuntimeNetworkDnsLeaseRenewal"), [id](const PeerFrame &, const QJsonObject &request) {
        const Answer answer = DnsLeaseRenewalRunBuilder::acknowledge(request, QDateTime::currentMSecsSinceEpoch());
        say(QStringLiteral("node %1 took DNS lease renewal sequence %2 from the relay's escrow")
                .arg(id)
                .arg(qint64(request.value(QStringLiteral("renewal")).toObject().value(QStringLiteral("sequence")).toDouble())));
        return answer;
    });

    say(QStringLiteral("node %1 dialling %2").arg(id, url.toString()));
    node.open();
    return QCoreApplication::exec();
}
