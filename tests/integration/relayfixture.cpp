#include "tests/integration/relayfixture.h"

#include "tests/peers/peerenvelope.h"
#include "tests/peers/reservedloopbackport.h"

#include "service/cloudly/cloudlyconnector.h"

#include <QDateTime>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTest>
#include <QUuid>

namespace coreflow::testing {

RelayFixture::RelayFixture(bool relayBlock, const std::function<void(peers::LoopbackCloudly::Options &)> &tweakCloudly)
    : clock(QDateTime::currentMSecsSinceEpoch()),
      bearer(QByteArrayLiteral("canary-bearer-") + QUuid::createUuid().toByteArray(QUuid::WithoutBraces))
{
    relayPort = freePort();
    peers::LoopbackCloudly::Options options;
    options.bearer = bearer;
    // Cloudly and the relay share one clock, so identity lifetimes mean the same to both.
    options.now = [this] { return clock.nowMs(); };
    if (relayBlock)
        options.relayOrigin = QStringLiteral("https://localhost:%1").arg(relayPort);
    if (tweakCloudly)
        tweakCloudly(options);
    cloudly = std::make_unique<peers::LoopbackCloudly>(ca, options);
    if (!cloudly->listen())
        qFatal("loopback Cloudly cannot listen");
}

RelayFixture::~RelayFixture()
{
    relay.reset();
    cloudly.reset();
}

quint16 RelayFixture::freePort() { return test::reservedLoopbackPort(); }

RelayConfiguration RelayFixture::configuration() const
{
    RelayConfiguration config;
    config.cloudlyUrl = cloudly->url();
    config.bearer = Secret(bearer);
    config.nodeId = QStringLiteral("node-relay");
    config.bindHostname = QStringLiteral("127.0.0.1");
    config.bindPort = relayPort;
    config.extraCaCertificates = {ca.caCertificate()};
    return config;
}

Coreflow &RelayFixture::makeRelay(const RelayConfiguration &config, const contract::RelayTiming &timing)
{
    contract::RelayTiming used = timing;
    if (!keepalive) {
        used.sessionPingIntervalMs = 0;
        used.sessionSilenceDeadlineMs = 0;
    }
    if (!registrationDeadline)
        used.registrationDeadlineMs = 0;
    relay = std::make_unique<Coreflow>(config, clock, used);
    return *relay;
}

bool RelayFixture::startRelay()
{
    if (!relay)
        makeRelay(configuration());
    QSignalSpy started(relay.get(), &Coreflow::started);
    QSignalSpy failed(relay.get(), &Coreflow::startFailed);
    relay->start();
    (void)QTest::qWaitFor([&] { return !started.isEmpty() || !failed.isEmpty(); }, 10000);
    if (!failed.isEmpty())
        qWarning("relay start failed: %s", qPrintable(failed.first().first().toString()));
    return !started.isEmpty();
}

QString RelayFixture::waitForStartFailure()
{
    QSignalSpy failed(relay.get(), &Coreflow::startFailed);
    (void)QTest::qWaitFor([&] { return !failed.isEmpty(); }, 10000);
    return failed.isEmpty() ? QString() : failed.first().first().toString();
}

bool RelayFixture::stopRelay()
{
    QSignalSpy stopped(relay.get(), &Coreflow::stopped);
    relay->stop();
    (void)QTest::qWaitFor([&] { return !stopped.isEmpty(); }, 10000);
    return !stopped.isEmpty() && stopped.first().first().toBool();
}

bool RelayFixture::settleCloudlyHop()
{
    bool answered = false;
    cloudly->push(QStringLiteral("getSwarmNodes"), QByteArray("{}"), [&](const peers::PeerFrame &) { answered = true; });
    (void)QTest::qWaitFor([&] { return answered; }, 10000);
    if (!answered)
        QTest::qFail("the relay did not answer the Cloudly hop barrier within 10 s", __FILE__, __LINE__);
    return answered;
}

bool RelayFixture::renewIdentity(bool mayPark)
{
    const qint64 due = relay->cloudly()->identityRenewalDueMs();
    if (due <= 0) {
        QTest::qFail("no identity renewal is armed", __FILE__, __LINE__);
        return false;
    }
    const int before = cloudly->callCount(QStringLiteral("refreshClusterIdentity"));
    clock.advance(due - clock.nowMs());
    const bool renewed = QTest::qWaitFor([&] {
        return cloudly->callCount(QStringLiteral("refreshClusterIdentity")) == before + 1
               && (relay->cloudly()->identityRenewalDueMs() > due || (mayPark && relay->cloudly()->isParked()));
    }, 5000);
    if (!renewed)
        QTest::qFail("the identity was not renewed (or the next renewal not armed) within 5 s", __FILE__, __LINE__);
    return renewed;
}

std::optional<peers::PeerFrame> RelayFixture::dispatch(const QString &method, const QByteArray &rawRequest)
{
    std::optional<peers::PeerFrame> answer;
    cloudly->push(method, rawRequest, [&](const peers::PeerFrame &frame) { answer = frame; });
    (void)QTest::qWaitFor([&] { return answer.has_value(); }, 5000);
    return answer;
}

std::optional<peers::PeerFrame> RelayFixture::dispatch(const QString &method, const QJsonObject &request)
{
    return dispatch(method, peers::PeerEnvelope::compact(request));
}

bool RelayFixture::settleNodeHop(peers::SimulatedPalletNode &node)
{
    bool answered = false;
    node.call(QStringLiteral("coreflowTestBarrier"), QByteArray("{}"), [&](const peers::PeerFrame &) { answered = true; });
    (void)QTest::qWaitFor([&] { return answered; }, 10000);
    if (!answered)
        QTest::qFail("the relay did not answer the node hop barrier within 10 s", __FILE__, __LINE__);
    return answered;
}

bool RelayFixture::takeCloudlySessionDown()
{
    cloudly->refuseConnections(true);
    cloudly->dropRelaySockets();
    (void)QTest::qWaitFor([&] { return !relay->cloudly()->isDispatchable(); }, 4000);
    return !relay->cloudly()->isDispatchable();
}

bool RelayFixture::bringCloudlySessionBack()
{
    cloudly->refuseConnections(false);
    // The reconnect waits on the relay's clock: each check moves the clock to the next attempt.
    (void)QTest::qWaitFor([&] {
        const qint64 due = relay->cloudly()->reconnectDueMs();
        if (due > 0)
            clock.advance(qMax<qint64>(0, due - clock.nowMs()));
        return relay->cloudly()->isDispatchable();
    }, 4000);
    return relay->cloudly()->isDispatchable();
}

peers::SimulatedPalletNode::Options RelayFixture::nodeOptions(const QString &nodeId, quint16 port) const
{
    peers::SimulatedPalletNode::Options options;
    options.nodeId = nodeId;
    options.bearer = QByteArrayLiteral("node-bearer-") + nodeId.toUtf8();
    options.url = QUrl(QStringLiteral("wss://localhost:%1/").arg(port ? port : relayPort));
    options.caCertificates = {ca.caCertificate()};
    return options;
}

std::unique_ptr<peers::SimulatedPalletNode> RelayFixture::connectNode(const QString &nodeId)
{
    auto node = std::make_unique<peers::SimulatedPalletNode>(nodeOptions(nodeId));
    QSignalSpy connected(node.get(), &peers::SimulatedPalletNode::connected);
    node->open();
    (void)QTest::qWaitFor([&] { return !connected.isEmpty(); }, 5000);
    if (connected.isEmpty())
        qWarning("node %s could not connect: %s", qPrintable(nodeId), qPrintable(node->lastError()));
    return node;
}

std::unique_ptr<peers::SimulatedPalletNode> RelayFixture::registeredNode(const QString &nodeId)
{
    auto node = connectNode(nodeId);
    QSignalSpy registered(node.get(), &peers::SimulatedPalletNode::sessionRegistered);
    node->registerSession();
    (void)QTest::qWaitFor([&] { return !registered.isEmpty(); }, 5000);
    if (registered.isEmpty())
        qWarning("node %s did not register", qPrintable(nodeId));
    return node;
}

} // namespace coreflow::testing
