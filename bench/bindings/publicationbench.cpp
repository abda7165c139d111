// coreflow-bench-publication: credential publication (docs/contract.md §12.4) under load, through the
// relay's composition root in-process (real TLS sockets on 127.0.0.1; the loopback Cloudly in the same
// process reads its recipient, opens each sealed envelope, checks context and digest, and answers a
// receipt). Prints, never asserts:
//   1. publications per second, `inFlight` at a time, each a recipient read, a seal and a publish;
//   2. the process's RSS growth per grant then held (request ciphertext + verified receipt). The figure
//      includes the loopback Cloudly's own record of each opened envelope (same process), so it is an
//      upper bound for the relay's own cost.
#include "service/bindings/credentialpublisher.h"
#include "tests/integration/relayfixture.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonDocument>
#include <QTest>
#include <cstdio>

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

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const int publications = argc > 1 ? atoi(argv[1]) : 1000;
    const int inFlight = argc > 2 ? atoi(argv[2]) : 16;
    qputenv("QT_LOGGING_RULES", "coreflow.*.info=false");

    testing::RelayFixture f;
    f.cloudly->secretIngress().setOrganization(QStringLiteral("svc"), QStringLiteral("org-1"));
    if (!f.startRelay())
        qFatal("relay did not start");
    CredentialPublisher &publisher = *f.relay->credentialPublisher();
    const QByteArray material = QJsonDocument(QJsonObject{{"capability", "database"},
                                                          {"endpoint", QJsonObject{{"host", "10.0.0.5"}, {"port", 27017}}},
                                                          {"database", "app"},
                                                          {"username", "app-user"},
                                                          {"password", "bench-password-0123456789abcdef"},
                                                          {"uri", "mongodb://app-user:bench-password-0123456789abcdef@10.0.0.5:27017/app"}})
                                    .toJson(QJsonDocument::Compact);

    QTest::qWait(200);
    const qint64 rssBefore = rssKiB();
    int answered = 0, published = 0, sent = 0;
    QElapsedTimer timer;
    timer.start();
    while (answered < publications) {
        while (sent < publications && sent - answered < inFlight) {
            BindingPublicationRequest request;
            request.nodeId = QStringLiteral("node-%1").arg(sent % 50);
            request.serviceId = QStringLiteral("svc");
            request.bindingName = QStringLiteral("db-%1").arg(sent);
            request.capability = QStringLiteral("database");
            request.organizationId = QStringLiteral("org-1");
            request.clusterId = f.cloudly->options().clusterId;
            request.grantOperation = QStringLiteral("grant-op-%1").arg(sent);
            request.grantGeneration = 1;
            publisher.publish(request, Secret(QByteArrayView(material)), [&](const BindingPublicationOutcome &outcome) {
                ++answered;
                published += outcome.kind == BindingPublicationOutcome::Kind::Published ? 1 : 0;
            });
            ++sent;
        }
        QCoreApplication::processEvents(QEventLoop::AllEvents, 5);
    }
    const double seconds = double(timer.nsecsElapsed()) / 1e9;
    QTest::qWait(200);
    const qint64 rssAfter = rssKiB();
    std::printf("publications: %d in %.2f s = %.0f /s (%d in flight, %d published, %d sealed, %d held)\n", publications, seconds,
                publications / seconds, inFlight, published, publisher.sealsMade(), publisher.heldCount());
    std::printf("RSS %lld KiB -> %lld KiB = %.2f KiB per held grant (relay custody and the loopback Cloudly's record)\n",
                static_cast<long long>(rssBefore), static_cast<long long>(rssAfter),
                publisher.heldCount() > 0 ? double(rssAfter - rssBefore) / publisher.heldCount() : 0.0);
    f.stopRelay();
    return 0;
}
