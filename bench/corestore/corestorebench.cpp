// coreflow-bench-corestore: the Corestore lane under load, through the relay's composition root
// in-process (real TLS sockets on 127.0.0.1; the loopback Cloudly and LoopbackCorestore peers in the
// same process). Prints, never asserts:
//   1. getClusterCorestoreInventory calls per second against one loopback Corestore, 16 in flight
//      (Cloudly -> relay -> Corestore -> relay -> Cloudly, each a full round trip);
//   2. the process's RSS growth per idle pooled connection: N nodes, each with its own Corestore
//      origin, one call each leaves one idle kept-alive connection per pool. The figure includes the
//      loopback Corestore's server side of each connection (same process), so it is an upper bound
//      for the relay's own cost.
#include "service/corestore/corestoreclient.h"
#include "tests/integration/relayfixture.h"
#include "tests/peers/loopbackcorestore.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>
#include <cstdio>
#include <memory>
#include <vector>

using namespace coreflow;

namespace {

qint64 rssKiB()
{
    QFile status(QStringLiteral("/proc/self/status"));
    if (!status.open(QIODevice::ReadOnly))
        return -1;
    for (const QByteArray &line : status.readAll().split('\n'))
        if (line.startsWith("VmRSS:"))
            return line.mid(6).trimmed().split(' ').value(0).toLongLong();
    return -1;
}

QJsonObject node(const QString &id, const QUrl &endpoint)
{
    return QJsonObject{{"id", id}, {"corestore", QJsonObject{{"endpoint", endpoint.toString()}}}, {"corestoreDatabase", QJsonValue::Null}};
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const int calls = argc > 1 ? atoi(argv[1]) : 2000;
    const int nodes = argc > 2 ? atoi(argv[2]) : 100;
    qputenv("QT_LOGGING_RULES", "coreflow.*.info=false");

    testing::RelayFixture f;
    std::vector<std::unique_ptr<peers::LoopbackCorestore>> corestores;
    QJsonArray clusterNodes;
    for (int i = 0; i < nodes; ++i) {
        corestores.push_back(std::make_unique<peers::LoopbackCorestore>(f.ca));
        if (!corestores.back()->listen())
            qFatal("loopback Corestore cannot listen");
        corestores.back()->setAcceptedToken(f.cloudly->corestoreRecipients().token());
        clusterNodes.append(node(QStringLiteral("node-%1").arg(i), corestores.back()->endpoint()));
    }
    f.cloudly->options().clusterNodes = clusterNodes;
    if (!f.startRelay())
        qFatal("relay did not start");

    int answered = 0, reachable = 0;
    auto ask = [&](const QString &nodeId) {
        f.cloudly->push(QStringLiteral("getClusterCorestoreInventory"), QJsonObject{{"nodeId", nodeId}}, [&](const peers::PeerFrame &frame) {
            ++answered;
            reachable += frame.response.toByteArray().contains("\"reachable\":true") ? 1 : 0;
        });
    };
    ask(QStringLiteral("node-0")); // enrolls
    while (answered < 1)
        QTest::qWait(5);

    // 1. Calls per second against one Corestore, 16 in flight.
    answered = reachable = 0;
    int sent = 0;
    QElapsedTimer timer;
    timer.start();
    while (answered < calls) {
        while (sent < calls && sent - answered < 16) {
            ask(QStringLiteral("node-0"));
            ++sent;
        }
        QCoreApplication::processEvents(QEventLoop::AllEvents, 5);
    }
    const double seconds = double(timer.nsecsElapsed()) / 1e9;
    std::printf("corestore calls: %d in %.2f s = %.0f calls/s (16 in flight, %d reachable), relay connections to it: %d\n", calls, seconds,
                calls / seconds, reachable, f.relay->corestore()->connectionCount());

    // 2. RSS per idle pooled connection: one call per other node, each leaving one idle connection.
    QTest::qWait(200);
    const int before = f.relay->corestore()->connectionCount();
    const qint64 rssBefore = rssKiB();
    answered = 0;
    for (int i = 1; i < nodes; ++i)
        ask(QStringLiteral("node-%1").arg(i));
    while (answered < nodes - 1)
        QTest::qWait(5);
    QTest::qWait(200);
    const int after = f.relay->corestore()->connectionCount();
    const qint64 rssAfter = rssKiB();
    const int added = after - before;
    std::printf("idle pooled connections: %d -> %d; RSS %lld KiB -> %lld KiB = %.1f KiB per connection (client and loopback server side)\n",
                before, after, static_cast<long long>(rssBefore), static_cast<long long>(rssAfter),
                added > 0 ? double(rssAfter - rssBefore) / added : 0.0);
    f.stopRelay();
    return 0;
}
