// coreflow-bench-closures: database closures through the relay's composition root in-process (real
// TLS sockets on 127.0.0.1; the loopback Cloudly with its closure side and a LoopbackCorestore in the
// same process). Prints, never asserts:
//   1. send (backupServiceDatabaseClosure): MiB/s from Corestore's export to Cloudly's receipt, and the
//      process's peak RSS growth (VmHWM) meanwhile — peers included, so an upper bound for the relay;
//   2. receive (restoreServiceDatabaseClosure): MiB/s from Cloudly's open to the relay's answer. The
//      loopback Corestore (Qt 6.4 HttpServer) holds a restore body whole, so this RSS figure is the
//      peer's, not the relay's, and is not printed.
#include "service/closures/closurestreams.h"
#include "tests/integration/relayfixture.h"
#include "tests/peers/loopbackclosurestore.h"
#include "tests/peers/loopbackcorestore.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>
#include <cstdio>

using namespace coreflow;

namespace {

qint64 statusKiB(const char *key)
{
    QFile status(QStringLiteral("/proc/self/status"));
    if (!status.open(QIODevice::ReadOnly))
        return -1;
    for (const QByteArray &line : status.readAll().split('\n'))
        if (line.startsWith(key))
            return line.mid(qsizetype(strlen(key))).trimmed().split(' ').value(0).toLongLong();
    return -1;
}

// Resets VmHWM to the current RSS (Linux: "5" to clear_refs).
void resetPeak()
{
    QFile clear(QStringLiteral("/proc/self/clear_refs"));
    if (clear.open(QIODevice::WriteOnly))
        clear.write("5");
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const qint64 sendMiB = argc > 1 ? atoll(argv[1]) : 256;
    const qint64 restoreMiB = argc > 2 ? atoll(argv[2]) : 64;
    qputenv("QT_LOGGING_RULES", "coreflow.*.info=false;peers.*.info=false");

    testing::RelayFixture f;
    peers::LoopbackCorestore corestore(f.ca);
    if (!corestore.listen())
        qFatal("loopback Corestore cannot listen");
    corestore.setAcceptedToken(f.cloudly->corestoreRecipients().token());
    f.cloudly->options().clusterNodes = QJsonArray{QJsonObject{{"id", "node-a"},
                                                               {"corestore", QJsonObject{{"endpoint", corestore.endpoint().toString()}}},
                                                               {"corestoreDatabase", QJsonValue::Null}}};
    peers::LoopbackClosureStore store(*f.cloudly);
    if (!f.startRelay())
        qFatal("relay did not start");

    const auto run = [&](const QString &method, const QString &backupId) {
        bool done = false, ok = false;
        f.cloudly->push(method, QJsonObject{{"nodeId", "node-a"}, {"serviceId", "svc"}, {"backupId", backupId}},
                        [&](const peers::PeerFrame &frame) {
                            done = true;
                            ok = !frame.hasError();
                        });
        while (!done)
            QTest::qWait(2);
        return ok;
    };

    // 1. Send.
    corestore.setClosureSizeBytes(sendMiB * 1024 * 1024);
    QTest::qWait(200);
    resetPeak();
    const qint64 rssBefore = statusKiB("VmRSS:");
    QElapsedTimer timer;
    timer.start();
    const bool sent = run(QStringLiteral("backupServiceDatabaseClosure"), QStringLiteral("bench-send"));
    const double sendSeconds = double(timer.elapsed()) / 1000.0;
    const qint64 peak = statusKiB("VmHWM:");
    std::printf("send     %5lld MiB  %s  %7.1f MiB/s  peak RSS growth %lld KiB (process, peers included)\n", (long long)sendMiB,
                sent ? "ok    " : "FAILED", double(sendMiB) / sendSeconds, (long long)(peak - rssBefore));

    // 2. Receive.
    store.holdClosure(QStringLiteral("svc"), QStringLiteral("bench-restore"), QStringLiteral("node-a"), restoreMiB * 1024 * 1024, 5);
    timer.restart();
    const bool restored = run(QStringLiteral("restoreServiceDatabaseClosure"), QStringLiteral("bench-restore"));
    const double restoreSeconds = double(timer.elapsed()) / 1000.0;
    std::printf("restore  %5lld MiB  %s  %7.1f MiB/s  (largest credit outstanding %lld bytes)\n", (long long)restoreMiB,
                restored ? "ok    " : "FAILED", double(restoreMiB) / restoreSeconds,
                (long long)(store.outgoing().isEmpty() ? -1 : store.outgoing().first().largestOutstanding));
    f.stopRelay();
    return sent && restored ? 0 : 1;
}
