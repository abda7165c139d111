// coreflow-bench-bindings: the figure of issue 18 — N platform bindings over M nodes reconciled and
// published through the built `coreflow` (a child process, real TLS sockets on 127.0.0.1) against the
// loopback peers in this process: one LoopbackCloudly (desired state, reports, and the secret ingress,
// which opens every sealed envelope and checks context and digest) and one LoopbackCorestore per node.
// Prints (and with --json writes), never asserts:
//   - the time from the pushClusterConfig that carries the N bindings to the last `ready` report
//     Cloudly accepted (each binding: reconcile, material, recipient read, seal, publish, receipt,
//     report), and the relay's CPU time over it (user + system, all threads, /proc/<pid>/stat);
//   - the relay's RSS before the push (accepted, nothing desired) and once every binding is ready and
//     the relay holds N grants with their sealed requests and receipts: (after - before) / N is the
//     RSS held per binding. It includes the relay's pooled HTTPS connections to the M Corestores.
// Half the bindings are databases (each node's corestoreDatabase), half object storage (no retention).
// Run: coreflow-bench-bindings --relay build/service/coreflow [--bindings 1000] [--nodes 50] [--json F]
#include "tests/integration/relayfixture.h"
#include "tests/peers/loopbackcorestore.h"
#include "tests/support/processwait.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QCryptographicHash>
#include <QDateTime>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>
#include <csignal>
#include <cstdio>
#include <memory>
#include <unistd.h>

using namespace coreflow;
using coreflow::peers::Answer;
using coreflow::peers::LoopbackCorestore;

namespace {

qint64 rssKiB(qint64 pid)
{
    QFile status(QStringLiteral("/proc/%1/status").arg(pid));
    if (!status.open(QIODevice::ReadOnly))
        return -1;
    for (const QByteArray &line : status.readAll().split('\n'))
        if (line.startsWith("VmRSS:"))
            return line.mid(6).trimmed().split(' ').value(0).toLongLong();
    return -1;
}

// utime + stime of every thread of pid, in ms.
double cpuMs(qint64 pid)
{
    QFile stat(QStringLiteral("/proc/%1/stat").arg(pid));
    if (!stat.open(QIODevice::ReadOnly))
        return -1;
    const QByteArray line = stat.readAll();
    const QList<QByteArray> fields = line.mid(line.lastIndexOf(')') + 2).split(' ');
    const double ticks = double(fields.value(11).toLongLong() + fields.value(12).toLongLong());
    return ticks * 1000.0 / double(sysconf(_SC_CLK_TCK));
}

QString digestOf(const QJsonObject &request)
{
    return QString::fromLatin1(QCryptographicHash::hash(QJsonDocument(request).toJson(QJsonDocument::Compact), QCryptographicHash::Sha256).toHex());
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QCommandLineParser parser;
    parser.addHelpOption();
    const QCommandLineOption relayOption("relay", "the built coreflow executable", "path");
    const QCommandLineOption bindingsOption("bindings", "platform bindings (default 1000)", "n", "1000");
    const QCommandLineOption nodesOption("nodes", "nodes, each with its own loopback Corestore (default 50)", "n", "50");
    const QCommandLineOption jsonOption("json", "write the figures to this file", "path");
    const QCommandLineOption timeoutOption("timeout", "give up after this many seconds (default 600)", "s", "600");
    parser.addOptions({relayOption, bindingsOption, nodesOption, jsonOption, timeoutOption});
    parser.process(app);
    const QString relayBinary = parser.value(relayOption);
    const int bindings = parser.value(bindingsOption).toInt();
    const int nodes = parser.value(nodesOption).toInt();
    if (relayBinary.isEmpty() || !QFile::exists(relayBinary) || bindings < 1 || nodes < 1) {
        std::fprintf(stderr, "coreflow-bench-bindings: --relay PATH (an existing coreflow), --bindings >= 1, --nodes >= 1\n");
        return 2;
    }
    qputenv("QT_LOGGING_RULES", "*.info=false;*.debug=false");

    testing::RelayFixture f;
    const QByteArray token = "bench-corestore-control-token-0123456789";
    f.cloudly->corestoreRecipients().setToken(token);
    std::vector<std::unique_ptr<LoopbackCorestore>> corestores;
    QJsonArray clusterNodes;
    for (int n = 0; n < nodes; ++n) {
        auto corestore = std::make_unique<LoopbackCorestore>(f.ca);
        if (!corestore->listen())
            qFatal("loopback Corestore %d cannot listen", n);
        corestore->setAcceptedToken(token);
        clusterNodes.append(QJsonObject{{"id", QStringLiteral("node-%1").arg(n)},
                                        {"corestore", QJsonObject{{"endpoint", corestore->endpoint().toString()}}},
                                        {"corestoreDatabase", QJsonObject{{"host", QStringLiteral("10.1.%1.5").arg(n)}, {"port", 27017}}}});
        corestores.push_back(std::move(corestore));
    }
    f.cloudly->options().clusterNodes = clusterNodes;

    constexpr int services = 20;
    for (int s = 0; s < services; ++s)
        f.cloudly->secretIngress().setOrganization(QStringLiteral("svc-%1").arg(s), QStringLiteral("org-1"));
    QJsonArray desired;
    for (int i = 0; i < bindings; ++i) {
        const int node = i % nodes;
        const QString serviceId = QStringLiteral("svc-%1").arg(i % services);
        const QString name = QStringLiteral("binding-%1").arg(i);
        const bool database = i % 2 == 0;
        const QString capability = database ? QStringLiteral("database") : QStringLiteral("objectstorage");
        QJsonObject request{{"bindingName", name}, {"capability", capability}, {"serviceId", serviceId}};
        if (database)
            request.insert("endpoint", QJsonObject{{"host", QStringLiteral("10.1.%1.5").arg(node)}, {"port", 27017}});
        else
            request.insert("retention", QJsonValue::Null);
        desired.append(QJsonObject{
            {"nodeId", QStringLiteral("node-%1").arg(node)},
            {"binding", QJsonObject{{"name", name}, {"capability", capability}, {"serviceId", serviceId}, {"organizationId", "org-1"},
                                    {"clusterId", f.cloudly->options().clusterId}, {"retention", QJsonValue::Null}}},
            {"grant", QJsonObject{{"operation", QStringLiteral("grant-op-%1").arg(i)}, {"generation", 1}, {"serviceId", serviceId},
                                  {"capability", capability}, {"bindingName", name}, {"requestDigest", digestOf(request)},
                                  {"expiresAt", QDateTime::currentMSecsSinceEpoch() + 86'400'000LL},
                                  {"authority", QStringLiteral("bench-grant-authority-%1").arg(i)}}}});
    }

    QJsonObject state{{"bindings", QJsonArray{}}};
    f.cloudly->setHandler("getClusterPlatformDesiredState",
                          [&state](const peers::PeerFrame &, const QJsonObject &) { return Answer::respond(QJsonObject{{"desiredState", state}}); });
    QSet<QString> ready;
    int reports = 0;
    QElapsedTimer sincePush;
    qint64 lastReadyNs = 0;
    f.cloudly->setHandler("reportClusterPlatformBindingStatus", [&](const peers::PeerFrame &, const QJsonObject &request) {
        ++reports;
        if (request.value("status").toString() == QLatin1String("ready")) {
            ready.insert(request.value("serviceId").toString() + '/' + request.value("bindingName").toString());
            lastReadyNs = sincePush.nsecsElapsed();
        }
        return Answer::respond(QJsonObject{{"accepted", true}});
    });

    QTemporaryDir dir;
    f.ca.writeCaPem(dir.filePath("ca.pem"));
    QDir().mkpath(dir.filePath("creds"));
    {
        QFile cred(dir.filePath("creds/SERVEZONE_CLUSTER_RELAY_AUTHORIZATION"));
        if (!cred.open(QIODevice::WriteOnly))
            qFatal("cannot write the credential file");
        cred.write(f.bearer);
    }
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove("SERVEZONE_CLUSTER_RELAY_AUTHORIZATION");
    env.remove("QT_LOGGING_RULES"); // the relay logs as it does in production (info on, debug off)
    env.insert("CREDENTIALS_DIRECTORY", dir.filePath("creds"));
    env.insert("CLOUDLY_URL", f.cloudly->url().toString());
    env.insert("COREFLOW_NODE_ID", "node-relay");
    env.insert("COREFLOW_RELAY_BIND_HOSTNAME", "127.0.0.1");
    env.insert("COREFLOW_RELAY_BIND_PORT", QString::number(f.relayPort));
    QProcess relay;
    relay.setProcessEnvironment(env);
    relay.start(relayBinary, {"--ca-file", dir.filePath("ca.pem"), "--status-socket", dir.filePath("status.sock")});
    QByteArray err;
    if (!testing::waitForStderr(relay, "the relay is open for Cloudly dispatch", err, 60000)) {
        std::fprintf(stderr, "coreflow-bench-bindings: the relay did not open:\n%s\n", err.constData());
        return 1;
    }
    const qint64 pid = relay.processId();
    // Accepted with nothing desired: the baseline.
    if (!QTest::qWaitFor([&] { return f.cloudly->callCount("getClusterPlatformDesiredState") >= 1; }, 30000)) {
        std::fprintf(stderr, "coreflow-bench-bindings: no desired-state read after the acceptance\n");
        return 1;
    }
    QTest::qWait(1000);
    (void)relay.readAllStandardError();
    const qint64 rssBefore = rssKiB(pid);
    const double cpuBefore = cpuMs(pid);

    state = QJsonObject{{"bindings", desired}};
    const QJsonObject cluster{{"id", f.cloudly->options().clusterId}, {"name", "Loopback cluster"},
                              {"relay", QJsonObject{{"origin", f.cloudly->options().relayOrigin}}}, {"nodes", clusterNodes}};
    bool pushAnswered = false;
    sincePush.start();
    f.cloudly->push("pushClusterConfig", QJsonObject{{"cluster", cluster}, {"desiredState", state}},
                    [&](const peers::PeerFrame &) { pushAnswered = true; });
    const int timeoutMs = parser.value(timeoutOption).toInt() * 1000;
    const bool done = QTest::qWaitFor([&] { return ready.size() >= bindings || relay.state() != QProcess::Running; }, timeoutMs);
    const double cpuAfter = cpuMs(pid);
    const double seconds = double(lastReadyNs) / 1e9;
    QTest::qWait(1000);
    (void)relay.readAllStandardError();
    const qint64 rssAfter = rssKiB(pid);
    const int opened = int(f.cloudly->secretIngress().opened().size());
    int corestoreCalls = 0;
    for (const auto &c : corestores)
        corestoreCalls += c->totalRequestCount();

    const double perBinding = double(rssAfter - rssBefore) / bindings;
    std::printf("bindings: %d over %d nodes %s: %lld ready in %.2f s (%.0f /s), relay CPU %.0f ms (%.0f us per binding)\n", bindings, nodes,
                done && ready.size() >= bindings ? "reconciled and published" : "NOT ALL READY", static_cast<long long>(ready.size()), seconds,
                seconds > 0 ? ready.size() / seconds : 0.0, cpuAfter - cpuBefore, (cpuAfter - cpuBefore) * 1000.0 / bindings);
    std::printf("bindings: %d Corestore calls, %d envelopes opened by Cloudly, %d reports, push answered: %s\n", corestoreCalls, opened, reports,
                pushAnswered ? "yes" : "no");
    std::printf("bindings: relay RSS %lld KiB -> %lld KiB = %.2f KiB per binding held\n", static_cast<long long>(rssBefore),
                static_cast<long long>(rssAfter), perBinding);

    if (parser.isSet(jsonOption)) {
        QFile out(parser.value(jsonOption));
        if (out.open(QIODevice::WriteOnly)) {
            out.write(QJsonDocument(QJsonObject{{"bindings", bindings},
                                                {"nodes", nodes},
                                                {"ready", int(ready.size())},
                                                {"seconds", seconds},
                                                {"relayCpuMs", cpuAfter - cpuBefore},
                                                {"relayRssBeforeKiB", rssBefore},
                                                {"relayRssAfterKiB", rssAfter},
                                                {"rssKiBPerBinding", perBinding},
                                                {"corestoreCalls", corestoreCalls},
                                                {"envelopesOpened", opened},
                                                {"reports", reports},
                                                {"loadAverage", QString::fromLatin1([] {
                                                     QFile l(QStringLiteral("/proc/loadavg"));
                                                     return l.open(QIODevice::ReadOnly) ? l.readAll().trimmed() : QByteArray();
                                                 }())}})
                          .toJson());
        }
    }
    ::kill(pid_t(pid), SIGTERM);
    if (!relay.waitForFinished(15000))
        relay.kill();
    return done && ready.size() >= bindings ? 0 : 1;
}
