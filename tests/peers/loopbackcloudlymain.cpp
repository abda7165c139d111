// coreflow-loopback-cloudly: LoopbackCloudly as a process, for the demo (resources/demo.sh).
//
//   coreflow-loopback-cloudly --bearer-file PATH [--port N] [--relay-origin https://host:port]
//                             [--ca-dir DIR] [--nodes N] [--cluster-id ID] [--relay-certificate-days N]
//                             [--registry-port N] [--corestore NODE=ENDPOINT]... [--corestore-token-file PATH]
//                             [--verbose]
//
// Prints one line per event on stdout. The first line is "cloudly listening at wss://localhost:PORT/".
// After each node registers it pushes applyRuntimeAssignment { session, assignment: { id, image } } to
// that node through the relay and prints "node <id> acknowledged applyRuntimeAssignment" per ack;
// with --nodes N it prints "all N nodes acknowledged applyRuntimeAssignment" once N nodes have.
// It answers getClusterRouteTable with a small demo table (revision 1, two routes; its certificate and
// key are placeholders).
// --registry-port N: one origin for the session and the registry (docs/contract.md §17): connections
// whose first request is under /v2/ are piped to plain HTTP on 127.0.0.1:N (a docker-registry).
// --corestore NODE=ENDPOINT: the cluster document (getClusterConfig cluster.nodes) names NODE with
// that Corestore endpoint (§12); --corestore-token-file: the control token the §12.1 enrollment seals
// for the relay (the Corestore peer accepts the same token).
// Commands, one per line on stdin (the demo writes them into a FIFO):
//   hold   hands the relay a DNS lease renewal run for every registered node
//          (holdRuntimeNetworkDnsLeaseRenewals: 5 renewals on Cloudly's grid, the first window opened
//          12 minutes ago; docs/contract.md §9) and prints "relay holds N renewals for node <id>"
//   away   drops the relay's sockets and stops listening ("cloudly away"): reconnects are refused
//   back   listens again on the same port ("cloudly back at wss://…")
//   inventory NODE   dispatches getClusterCorestoreInventory { nodeId: NODE } to the relay (§12.6) and
//          prints "corestore inventory of node <id>: <n> services" or "... refused: <name>: <text>"
//   vpn NODE=PUBLICKEY@ADDRESS...   pushes applyClusterVpnNetwork (§11.2) with the next revision of a
//          network (prefix 100.96.0.0/16, valid an hour) of these members, each granted to reach every
//          other, and prints "relay answered applyClusterVpnNetwork revision <r>: <state>[: <reason>]"
//          or "... refused: <name>: <text>"
//   binding NODE SERVICE NAME   pushes pushClusterConfig (§7.1) with a desired state (§12.3) of one
//          objectstorage binding on NODE under a fresh publication grant (its requestDigest the
//          SHA-256 of the canonical BindingRequest, §12.2) and prints "config push adopted <n> grants"
//   backup NODE SERVICE BACKUP   dispatches backupClusterService (§13.1) with database, no volumes, no
//          object storage and replication enabled; the closure the relay sends (§13.4) is checked by a
//          LoopbackClosureStore; prints "backup <b> of service <s> on node <n> answered: database
//          snapshot <id>; closure received: <bytes> bytes, sha256 <hex>, receipt issued" (or what failed)
// getClusterVpnNetwork (§6.8) answers the last network `vpn` pushed, null before.
// Printed as the relay asks: "relay advertises its VPN hub at <address>:<port>, public key <base64>"
// (registerClusterRelay's relay.vpnHub, §6.6), "binding <service>/<name> on node <n> reported <status>
// [(<reason>)]" (reportClusterPlatformBindingStatus, §12.5, answered accepted), "relay published the
// credential material of binding <service>/<name>: envelope opened" (§12.4, opened for real).
// Exits 0 on SIGTERM/SIGINT, 2 on bad arguments, 1 when it cannot listen.
#include "tests/peers/dnsleaserenewalrunbuilder.h"
#include "tests/peers/loopbackclosurestore.h"
#include "tests/peers/loopbackcloudly.h"
#include "tests/peers/peercontractnames.h"
#include "tests/peers/quitonsignal.h"
#include "tests/peers/testcertificateauthority.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QCryptographicHash>
#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QUuid>
#include <QSocketNotifier>
#include <QDir>
#include <QFile>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QSet>
#include <QTimer>

#include <cstdio>
#include <unistd.h>
#include <memory>

using namespace coreflow;
using namespace coreflow::peers;

namespace {

void say(const QString &line)
{
    std::fputs(line.toUtf8().constData(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
}

int fail(const QString &message, int code)
{
    std::fputs(("coreflow-loopback-cloudly: " + message + '\n').toUtf8().constData(), stderr);
    return code;
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("coreflow-loopback-cloudly"));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Loopback Cloudly for the Coreflow relay demo"));
    parser.addHelpOption();
    const QCommandLineOption portOpt(QStringLiteral("port"), QStringLiteral("Port on 127.0.0.1 (0: any free)."),
                                     QStringLiteral("port"), QStringLiteral("0"));
    const QCommandLineOption bearerFileOpt(QStringLiteral("bearer-file"),
                                           QStringLiteral("File holding the relay bearer, read verbatim."),
                                           QStringLiteral("path"));
    const QCommandLineOption originOpt(QStringLiteral("relay-origin"),
                                       QStringLiteral("https://host[:port] answered as cluster.relay.origin."),
                                       QStringLiteral("origin"));
    const QCommandLineOption caDirOpt(QStringLiteral("ca-dir"), QStringLiteral("Directory to write ca.pem into."),
                                      QStringLiteral("dir"));
    const QCommandLineOption nodesOpt(QStringLiteral("nodes"), QStringLiteral("Number of nodes expected."),
                                      QStringLiteral("n"), QStringLiteral("0"));
    const QCommandLineOption clusterOpt(QStringLiteral("cluster-id"), QStringLiteral("Cluster id."),
                                        QStringLiteral("id"), QStringLiteral("cluster-1"));
    const QCommandLineOption verboseOpt(QStringLiteral("verbose"), QStringLiteral("Log every frame to stderr."));
    const QCommandLineOption certDaysOpt(QStringLiteral("relay-certificate-days"),
                                         QStringLiteral("Lifetime of the relay listener certificates it issues, days."),
                                         QStringLiteral("days"), QStringLiteral("90"));
    const QCommandLineOption registryPortOpt(QStringLiteral("registry-port"),
                                             QStringLiteral("Pipe /v2/ on Cloudly's origin to plain HTTP on 127.0.0.1:N."),
                                             QStringLiteral("port"));
    const QCommandLineOption corestoreOpt(QStringLiteral("corestore"),
                                          QStringLiteral("NODE=ENDPOINT: a cluster node with that Corestore endpoint (repeatable)."),
                                          QStringLiteral("node=endpoint"));
    const QCommandLineOption corestoreTokenOpt(QStringLiteral("corestore-token-file"),
                                               QStringLiteral("File holding the Corestore control token the enrollment hands out."),
                                               QStringLiteral("path"));
    parser.addOptions({portOpt, bearerFileOpt, originOpt, caDirOpt, nodesOpt, clusterOpt, verboseOpt, certDaysOpt, registryPortOpt,
                       corestoreOpt, corestoreTokenOpt});
    parser.process(app);

    if (!parser.isSet(verboseOpt))
        QLoggingCategory::setFilterRules(QStringLiteral("coreflow.peers.*.debug=false\ncoreflow.peers.*.info=false"));

    bool ok = false;
    const uint port = parser.value(portOpt).toUInt(&ok);
    if (!ok || port > 65535)
        return fail(QStringLiteral("--port must be a port number"), 2);
    const int expectedNodes = parser.value(nodesOpt).toInt(&ok);
    if (!ok || expectedNodes < 0)
        return fail(QStringLiteral("--nodes must be a non-negative number"), 2);
    if (!parser.isSet(bearerFileOpt))
        return fail(QStringLiteral("--bearer-file is required"), 2);
    QFile bearerFile(parser.value(bearerFileOpt));
    if (!bearerFile.open(QIODevice::ReadOnly))
        return fail(QStringLiteral("cannot read the bearer file: %1").arg(bearerFile.errorString()), 2);
    const QByteArray bearer = bearerFile.readAll();
    if (bearer.isEmpty())
        return fail(QStringLiteral("the bearer file is empty"), 2);

    QuitOnSignal quitOnSignal;
    QObject::connect(&quitOnSignal, &QuitOnSignal::aboutToQuit, [](int) { say(QStringLiteral("stopping")); });

    TestCertificateAuthority ca(QStringLiteral("Coreflow demo CA"));
    if (ca.caCertificate().isNull())
        return fail(QStringLiteral("could not create the test CA"), 1);
    if (parser.isSet(caDirOpt)) {
        const QString dir = parser.value(caDirOpt);
        QDir().mkpath(dir);
        const QString path = QDir(dir).filePath(QStringLiteral("ca.pem"));
        if (!ca.writeCaPem(path))
            return fail(QStringLiteral("cannot write %1").arg(path), 1);
        say(QStringLiteral("CA certificate written to %1").arg(path));
    }

    LoopbackCloudly::Options options;
    options.bearer = bearer;
    options.clusterId = parser.value(clusterOpt);
    options.relayOrigin = parser.value(originOpt);
    options.port = quint16(port);
    options.relayCertificateLifetimeMs = qMax(1, parser.value(certDaysOpt).toInt()) * 86'400'000LL;
    quint16 registryPort = 0;
    if (parser.isSet(registryPortOpt)) {
        const uint n = parser.value(registryPortOpt).toUInt(&ok);
        if (!ok || n == 0 || n > 65535)
            return fail(QStringLiteral("--registry-port must be a port number"), 2);
        registryPort = quint16(n);
        options.httpFront = true;
    }
    for (const QString &spec : parser.values(corestoreOpt)) {
        const qsizetype eq = spec.indexOf(QLatin1Char('='));
        if (eq <= 0)
            return fail(QStringLiteral("--corestore wants NODE=ENDPOINT"), 2);
        options.clusterNodes.append(QJsonObject{{"id", spec.left(eq)},
                                                {"corestore", QJsonObject{{"endpoint", spec.mid(eq + 1)}}},
                                                {"corestoreDatabase", QJsonValue::Null}});
    }
    LoopbackCloudly cloudly(ca, options);
    if (parser.isSet(corestoreTokenOpt)) {
        QFile tokenFile(parser.value(corestoreTokenOpt));
        if (!tokenFile.open(QIODevice::ReadOnly))
            return fail(QStringLiteral("cannot read the Corestore token file"), 2);
        cloudly.corestoreRecipients().setToken(tokenFile.readAll().trimmed());
    }
    if (registryPort != 0)
        cloudly.setHttpPassthrough(registryPort);
    if (!cloudly.listen())
        return fail(QStringLiteral("cannot listen on 127.0.0.1:%1").arg(port), 1);
    say(QStringLiteral("cloudly listening at %1").arg(cloudly.url().toString()));

    QObject::connect(&cloudly, &LoopbackCloudly::relayConnected, [] { say(QStringLiteral("relay connected")); });
    QObject::connect(&cloudly, &LoopbackCloudly::relayDisconnected, [] { say(QStringLiteral("relay disconnected")); });
    QObject::connect(&cloudly, &LoopbackCloudly::requestReceived, [](const QString &method) {
        bool nodeMethod = false;
        for (const auto &m : method::forwardedNodeMethods)
            nodeMethod = nodeMethod || method == m;
        say(nodeMethod ? QStringLiteral("relay forwarded %1 from a node").arg(method)
                       : QStringLiteral("relay called %1").arg(method));
    });
    QObject::connect(&cloudly, &LoopbackCloudly::sessionRegistered,
                     [] { say(QStringLiteral("relay session registered (cloudlyClient)")); });

    int assignmentCounter = 0;
    QSet<QString> acknowledged;
    bool announcedAll = false;
    // Pushes the assignment; retries a few times when the relay has not routed the node yet.
    std::shared_ptr<std::function<void(PeerSessionBinding, QString, int)>> pushAssignment =
        std::make_shared<std::function<void(PeerSessionBinding, QString, int)>>();
    *pushAssignment = [&, weak = std::weak_ptr(pushAssignment)](PeerSessionBinding binding, QString assignmentId,
                                                                 int attempt) {
        const QByteArray digest =
            QCryptographicHash::hash(assignmentId.toUtf8(), QCryptographicHash::Sha256).toHex();
        const QJsonObject request{
            {QStringLiteral("session"), binding.toJson()},
            {QStringLiteral("assignment"),
             QJsonObject{{QStringLiteral("id"), assignmentId},
                         {QStringLiteral("image"), QStringLiteral("registry.example/app@sha256:") + QString::fromLatin1(digest)}}}};
        say(QStringLiteral("pushing applyRuntimeAssignment %1 to node %2").arg(assignmentId, binding.nodeId));
        const QString id = cloudly.push(
            QString(method::applyRuntimeAssignment), request,
            [&, weak, binding, assignmentId, attempt](const PeerFrame &answer) {
                if (!answer.hasError()) {
                    say(QStringLiteral("node %1 acknowledged applyRuntimeAssignment").arg(binding.nodeId));
                    acknowledged.insert(binding.nodeId);
                    if (expectedNodes > 0 && !announcedAll && acknowledged.size() >= expectedNodes) {
                        announcedAll = true;
                        say(QStringLiteral("all %1 nodes acknowledged applyRuntimeAssignment").arg(expectedNodes));
                    }
                    return;
                }
                const PeerRefusal refusal = answer.errorRefusal();
                say(QStringLiteral("node %1 did not take applyRuntimeAssignment: %2").arg(binding.nodeId, refusal.text()));
                if (refusal.name == refusal::nodeNotConnected && attempt < 10) {
                    QTimer::singleShot(200, &cloudly, [weak, binding, assignmentId, attempt] {
                        if (auto fn = weak.lock())
                            (*fn)(binding, assignmentId, attempt + 1);
                    });
                }
            });
        if (id.isEmpty())
            say(QStringLiteral("cannot push to node %1: no relay connected").arg(binding.nodeId));
    };
    QObject::connect(&cloudly, &LoopbackCloudly::palletSessionRegistered, [&](const PeerSessionBinding &binding) {
        say(QStringLiteral("node %1 registered: session %2, generation %3")
                .arg(binding.nodeId, binding.sessionId)
                .arg(binding.relayRegistrationGeneration));
        const QString assignmentId = QStringLiteral("demo-assignment-%1").arg(++assignmentCounter);
        // Next turn of the event loop: the registration answer is on the wire before the push.
        QTimer::singleShot(0, &cloudly, [pushAssignment, binding, assignmentId] { (*pushAssignment)(binding, assignmentId, 1); });
    });

    // The route table the ingress pulls through the relay (docs/contract.md §10.5).
    const QJsonObject target{{"nodeId", "node-a"}, {"address", "10.0.0.5"}, {"port", 30080}};
    cloudly.setClusterRouteTable(QJsonObject{
        {"clusterId", options.clusterId},
        {"revision", 1},
        {"computedAt", double(QDateTime::currentMSecsSinceEpoch())},
        {"routes", QJsonArray{QJsonObject{{"hostname", "app.demo.example"}, {"certificateId", "cert-demo"}, {"targets", QJsonArray{target}}},
                              QJsonObject{{"hostname", "api.demo.example"}, {"certificateId", "cert-demo"}, {"targets", QJsonArray{target}}}}},
        {"certificates", QJsonArray{QJsonObject{{"id", "cert-demo"},
                                                {"hostnames", QJsonArray{"app.demo.example", "api.demo.example"}},
                                                {"certificatePem", "-----BEGIN CERTIFICATE-----\nZGVtbw==\n-----END CERTIFICATE-----\n"},
                                                {"privateKeyPem", "-----BEGIN PRIVATE KEY-----\nZGVtbw==\n-----END PRIVATE KEY-----\n"}}}}});

    // The VPN hub the relay advertises in registerClusterRelay (docs/contract.md §6.6 relay.vpnHub).
    QObject::connect(&cloudly, &LoopbackCloudly::requestReceived, [&cloudly](const QString &method) {
        if (method != QLatin1String("registerClusterRelay"))
            return;
        const auto request = cloudly.lastRequest(method);
        const QJsonValue hub = request ? QJsonDocument::fromJson(request->rawRequest).object().value("relay").toObject().value("vpnHub")
                                       : QJsonValue();
        if (hub.isObject())
            say(QStringLiteral("relay advertises its VPN hub at %1:%2, public key %3")
                    .arg(hub.toObject().value("address").toString())
                    .arg(hub.toObject().value("quicPort").toInt())
                    .arg(hub.toObject().value("publicKey").toString()));
    });

    // Platform bindings (§12): the desired state starts empty; `binding` pushes one. Reports are
    // answered accepted and printed; the publication is the loopback Cloudly's own (envelopes opened).
    QJsonObject desiredState{{"bindings", QJsonArray{}}};
    cloudly.setHandler(QStringLiteral("getClusterPlatformDesiredState"), [&desiredState](const PeerFrame &, const QJsonObject &) {
        return Answer::respond(QJsonObject{{"desiredState", desiredState}});
    });
    cloudly.setHandler(QStringLiteral("reportClusterPlatformBindingStatus"), [](const PeerFrame &, const QJsonObject &request) {
        const QString reason = request.value("statusReason").toString();
        say(QStringLiteral("binding %1/%2 on node %3 reported %4%5")
                .arg(request.value("serviceId").toString(), request.value("bindingName").toString(),
                     request.value("nodeId").isString() ? request.value("nodeId").toString() : QStringLiteral("(none)"),
                     request.value("status").toString(), reason.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(reason)));
        return Answer::respond(QJsonObject{{"accepted", true}});
    });
    QObject::connect(&cloudly, &LoopbackCloudly::requestReceived, [&cloudly](const QString &method) {
        if (method != QLatin1String("publishCorestoreCredentialMaterial"))
            return;
        const auto frame = cloudly.lastRequest(method);
        const QJsonObject request = frame ? QJsonDocument::fromJson(frame->rawRequest).object() : QJsonObject();
        const qsizetype openedBefore = cloudly.secretIngress().opened().size();
        // The ingress opens the envelope while answering, right after this signal.
        QTimer::singleShot(0, &cloudly, [&cloudly, request, openedBefore] {
            const bool opened = cloudly.secretIngress().opened().size() > openedBefore;
            say(QStringLiteral("relay published the credential material of binding %1/%2: %3")
                    .arg(request.value("serviceId").toString(), request.value("bindingName").toString(),
                         opened ? QStringLiteral("envelope opened") : QStringLiteral("envelope NOT opened")));
        });
    });

    // The VPN network the relay pulls after each acceptance (§6.8): none until `vpn` pushed one.
    QJsonValue vpnNetwork = QJsonValue(QJsonValue::Null);
    cloudly.setHandler(QStringLiteral("getClusterVpnNetwork"), [&vpnNetwork](const PeerFrame &, const QJsonObject &) {
        return Answer::respond(QJsonObject{{"network", vpnNetwork}});
    });

    // Cloudly's side of the database closure streams (§13.4), for `backup`.
    LoopbackClosureStore closureStore(cloudly);

    QHash<QString, PeerSessionBinding> bindings; // node id -> its latest session
    QObject::connect(&cloudly, &LoopbackCloudly::palletSessionRegistered,
                     [&bindings](const PeerSessionBinding &binding) { bindings.insert(binding.nodeId, binding); });
    QByteArray commandBuffer;
    QSocketNotifier commands(0, QSocketNotifier::Read);
    QObject::connect(&commands, &QSocketNotifier::activated, [&] {
        char chunk[256];
        const ssize_t n = ::read(0, chunk, sizeof(chunk));
        if (n <= 0) {
            commands.setEnabled(false); // stdin closed: no more commands
            return;
        }
        commandBuffer.append(chunk, n);
        qsizetype nl;
        while ((nl = commandBuffer.indexOf('\n')) >= 0) {
            const QByteArray command = commandBuffer.left(nl).trimmed();
            commandBuffer.remove(0, nl + 1);
            if (command == "away") {
                cloudly.stopListening();
                cloudly.dropRelaySockets();
                say(QStringLiteral("cloudly away: listener closed, the relay's session dropped"));
            } else if (command == "back") {
                say(cloudly.listen() ? QStringLiteral("cloudly back at %1").arg(cloudly.url().toString())
                                     : QStringLiteral("cloudly could not listen again"));
            } else if (command == "hold") {
                for (const PeerSessionBinding &binding : std::as_const(bindings)) {
                    const QJsonObject projection = DnsLeaseRenewalRunBuilder::projection("demo-" + binding.nodeId, 1);
                    const QJsonArray renewals = DnsLeaseRenewalRunBuilder::grid(
                        binding, projection, QDateTime::currentMSecsSinceEpoch() - 12 * 60000, 5);
                    const QString nodeId = binding.nodeId;
                    cloudly.push(QStringLiteral("holdRuntimeNetworkDnsLeaseRenewals"),
                                 DnsLeaseRenewalRunBuilder::holdRequest(binding, projection, renewals), [nodeId](const PeerFrame &answer) {
                                     say(answer.hasError() ? QStringLiteral("relay did not hold renewals for node %1: %2")
                                                                 .arg(nodeId, answer.errorRefusal().text())
                                                           : QStringLiteral("relay holds %1 renewals for node %2")
                                                                 .arg(answer.responseObject().value().value("held").toInt())
                                                                 .arg(nodeId));
                                 });
                }
            } else if (command.startsWith("inventory ")) {
                const QString nodeId = QString::fromUtf8(command.mid(10).trimmed());
                const QString sent = cloudly.push(QStringLiteral("getClusterCorestoreInventory"), QJsonObject{{"nodeId", nodeId}},
                                                  [nodeId](const PeerFrame &answer) {
                    if (answer.hasError()) {
                        say(QStringLiteral("corestore inventory of node %1 refused: %2").arg(nodeId, answer.errorRefusal().text()));
                        return;
                    }
                    const QJsonObject response = answer.responseObject().value();
                    if (!response.value("reachable").toBool()) {
                        say(QStringLiteral("corestore inventory of node %1: unreachable: %2")
                                .arg(nodeId, response.value("reason").toString()));
                        return;
                    }
                    say(QStringLiteral("corestore inventory of node %1: %2 services")
                            .arg(nodeId)
                            .arg(response.value("services").toArray().size()));
                });
                if (sent.isEmpty())
                    say(QStringLiteral("cannot ask for the inventory of node %1: no relay connected").arg(nodeId));
            } else if (command.startsWith("vpn ")) {
                static qint64 revision = 0;
                const qint64 now = QDateTime::currentMSecsSinceEpoch();
                QJsonArray members;
                QStringList nodeIds;
                for (const QByteArray &spec : command.mid(4).trimmed().split(' ')) {
                    const qsizetype eq = spec.indexOf('='), at = spec.lastIndexOf('@');
                    if (eq <= 0 || at <= eq)
                        continue;
                    nodeIds << QString::fromUtf8(spec.left(eq));
                    members.append(QJsonObject{{"nodeId", nodeIds.last()},
                                               {"publicKey", QString::fromLatin1(spec.mid(eq + 1, at - eq - 1))},
                                               {"address", QString::fromLatin1(spec.mid(at + 1))},
                                               {"expiresAt", double(now + 3600000)}});
                }
                QJsonArray grants;
                for (const QString &from : nodeIds)
                    for (const QString &to : nodeIds)
                        if (from != to)
                            grants.append(QJsonObject{{"from", from}, {"to", to}});
                const qint64 r = ++revision;
                // Cloudly's network authority key: the relay only compares it between pushes (§11.2).
                const QJsonObject network{{"authority", QJsonObject{{"id", "demo-authority"}, {"publicKey", QString::fromLatin1(QByteArray(32, 'D').toBase64())}}},
                                          {"revision", double(r)},
                                          {"controlPrefix", "100.96.0.0/16"},
                                          {"expiresAt", double(now + 3600000)},
                                          {"members", members},
                                          {"grants", grants}};
                vpnNetwork = network;
                const QString sent = cloudly.push(QStringLiteral("applyClusterVpnNetwork"), QJsonObject{{"network", network}}, [r](const PeerFrame &answer) {
                    if (answer.hasError()) {
                        say(QStringLiteral("relay answered applyClusterVpnNetwork revision %1 refused: %2").arg(r).arg(answer.errorRefusal().text()));
                        return;
                    }
                    const QJsonObject response = answer.responseObject().value();
                    const QString reason = response.value("reason").toString();
                    say(QStringLiteral("relay answered applyClusterVpnNetwork revision %1: %2%3")
                            .arg(r)
                            .arg(response.value("state").toString(), reason.isEmpty() ? QString() : QStringLiteral(": ") + reason));
                });
                if (sent.isEmpty())
                    say(QStringLiteral("cannot push the VPN network: no relay connected"));
            } else if (command.startsWith("binding ")) {
                const QList<QByteArray> words = command.mid(8).simplified().split(' ');
                if (words.size() != 3) {
                    say(QStringLiteral("binding wants NODE SERVICE NAME"));
                    continue;
                }
                const QString nodeId = QString::fromUtf8(words[0]), serviceId = QString::fromUtf8(words[1]), name = QString::fromUtf8(words[2]);
                // §12.2: the canonical BindingRequest (keys sorted, no whitespace) and its SHA-256.
                const QJsonObject bindingRequest{{"capability", "objectstorage"}, {"serviceId", serviceId}, {"bindingName", name}, {"retention", QJsonValue::Null}};
                const QByteArray digest = QCryptographicHash::hash(QJsonDocument(bindingRequest).toJson(QJsonDocument::Compact), QCryptographicHash::Sha256).toHex();
                const QString organization = QStringLiteral("org-demo");
                cloudly.secretIngress().setOrganization(serviceId, organization);
                desiredState = QJsonObject{{"bindings", QJsonArray{QJsonObject{
                    {"nodeId", nodeId},
                    {"binding", QJsonObject{{"name", name}, {"capability", "objectstorage"}, {"serviceId", serviceId}, {"organizationId", organization},
                                            {"clusterId", options.clusterId}, {"retention", QJsonValue::Null}}},
                    {"grant", QJsonObject{{"operation", "op-" + name}, {"generation", 1}, {"serviceId", serviceId}, {"capability", "objectstorage"},
                                          {"bindingName", name}, {"requestDigest", QString::fromLatin1(digest)},
                                          {"expiresAt", double(QDateTime::currentMSecsSinceEpoch() + 86400000)},
                                          {"authority", QStringLiteral("demo-grant-") + QUuid::createUuid().toString(QUuid::WithoutBraces)}}}}}}};
                const QJsonObject cluster{{"id", options.clusterId}, {"name", options.clusterName},
                                          {"relay", QJsonObject{{"origin", options.relayOrigin}}}, {"nodes", options.clusterNodes}};
                const QString sent = cloudly.push(QStringLiteral("pushClusterConfig"), QJsonObject{{"cluster", cluster}, {"desiredState", desiredState}},
                                                  [](const PeerFrame &answer) {
                    if (answer.hasError()) {
                        say(QStringLiteral("config push refused: %1").arg(answer.errorRefusal().text()));
                        return;
                    }
                    const QJsonObject response = answer.responseObject().value();
                    say(QStringLiteral("config push adopted %1 grants (reconciling: %2)")
                            .arg(response.value("adopted").toObject().value("grants").toInt())
                            .arg(response.value("reconciling").toBool() ? "yes" : "no"));
                });
                if (sent.isEmpty())
                    say(QStringLiteral("cannot push the config: no relay connected"));
            } else if (command.startsWith("backup ")) {
                const QList<QByteArray> words = command.mid(7).simplified().split(' ');
                if (words.size() != 3) {
                    say(QStringLiteral("backup wants NODE SERVICE BACKUP"));
                    continue;
                }
                const QString nodeId = QString::fromUtf8(words[0]), serviceId = QString::fromUtf8(words[1]), backupId = QString::fromUtf8(words[2]);
                const QJsonObject request{{"nodeId", nodeId}, {"serviceId", serviceId}, {"backupId", backupId}, {"database", true},
                                          {"volumes", QJsonArray{}}, {"objectStorage", false}, {"replication", QJsonObject{{"enabled", true}}}};
                const QString sent = cloudly.push(QStringLiteral("backupClusterService"), request, [&closureStore, nodeId, serviceId, backupId](const PeerFrame &answer) {
                    const QString what = QStringLiteral("backup %1 of service %2 on node %3").arg(backupId, serviceId, nodeId);
                    if (answer.hasError()) {
                        say(QStringLiteral("%1 refused: %2").arg(what, answer.errorRefusal().text()));
                        return;
                    }
                    const QJsonObject database = answer.responseObject().value().value("snapshots").toObject().value("database").toObject();
                    QString closure = QStringLiteral("no closure received");
                    for (const auto &in : closureStore.incoming())
                        if (in.backupId == backupId && in.serviceId == serviceId)
                            closure = in.completed && in.violation.isEmpty() && in.computedSha256 == in.statedSha256
                                ? QStringLiteral("closure received: %1 bytes, sha256 %2, receipt issued").arg(in.receivedBytes).arg(QString::fromLatin1(in.computedSha256))
                                : QStringLiteral("closure NOT stored: %1 bytes%2").arg(in.receivedBytes).arg(in.violation.isEmpty() ? QString() : ", " + in.violation);
                    say(QStringLiteral("%1 answered: database snapshot %2; %3")
                            .arg(what, database.value("snapshotId").toString(QStringLiteral("none")), closure));
                });
                if (sent.isEmpty())
                    say(QStringLiteral("cannot ask for a backup: no relay connected"));
            } else if (!command.isEmpty()) {
                say(QStringLiteral("unknown command: %1").arg(QString::fromUtf8(command)));
            }
        }
    });

    const int rc = QCoreApplication::exec();
    cloudly.dropRelaySockets();
    return rc;
}
