#include "tests/console/consolefixtures.h"

namespace coreflow::consoletest {

namespace {
status::RelayStatus base()
{
    status::RelayStatus s;
    s.build = QStringLiteral("0.1.0");
    s.contractRelease = QStringLiteral("33.1.0");
    s.nodeId = QStringLiteral("relay-fra-1");
    s.startedAtMs = t0;
    s.generatedAtMs = t0 + 3'600'000;
    s.ready = true;
    s.cloudly = {true, true, 4, t0 + 86'400'000, QStringLiteral("cred-8c1f"), 3, QStringLiteral("wss://cloudly.example.net/relay"),
                 t0 + 3'599'000, QStringLiteral("live"), t0 + 1'800'000, QStringLiteral("session-lost"), 0};
    s.registration = {7, QStringLiteral("accepted"), t0 + 1'805'000};
    s.listener = {true, QStringLiteral("0.0.0.0"), 8443, QStringLiteral("https://relay-fra-1.example.net"), QString(),
                  QStringLiteral("relay-fra-1.example.net"), t0 + 3'600'000 + 60LL * 86'400'000};
    s.ingress = {true, 17, 12, 9};
    s.vpn.bound = true;
    s.vpn.address = QStringLiteral("10.70.0.1");
    s.vpn.quicPort = 4433;
    s.vpn.networkRevision = 5;
    s.vpn.memberCount = 3;
    s.vpn.publicKey = QStringLiteral("q83vEjRWeJCrze8SNFZ4kKvN7xI0VniQq83vEjRWeJA=");
    s.vpn.state = QStringLiteral("bound");
    s.vpn.networkExpiresAtMs = t0 + 86'400'000;
    s.vpn.membersConnected = 2;
    s.vpn.drops.insert(QStringLiteral("ungranted-pair"), 4);
    s.counters.forwards = 1234;
    s.counters.pushes = 321;
    s.counters.reconnects = 2;
    s.counters.refusalsByName.insert(QStringLiteral("node-not-connected"), 3);
    s.counters.refusalsByName.insert(QStringLiteral("method-not-served"), 1);
    return s;
}
} // namespace

status::RelayStatus readyStatus()
{
    status::RelayStatus s = base();
    s.nodes = {
        {QStringLiteral("node-b"), t0 + 60'000, 2, QStringLiteral("pushContainerStatus"), t0 + 3'500'000, 1, t0 + 3'570'000,
         QStringLiteral("awaiting-pong"), QStringLiteral("10.0.0.12:40112"), QStringLiteral("33.1.0"), t0 + 59'000, 48'213,
         1'204'877},
        {QStringLiteral("node-a"), t0 + 30'000, 1, QStringLiteral("getServiceConfig"), t0 + 3'590'000, 0, t0 + 3'595'000,
         QStringLiteral("live"), QStringLiteral("10.0.0.11:51234"), QStringLiteral("33.1.0"), t0 + 29'500, 9'120, 88'004},
        {QStringLiteral("node-c"), t0 + 90'000, 5, QString(), 0, 0, 0, QStringLiteral("off"), QStringLiteral("[fd00::13]:40001"),
         QStringLiteral("33.0.2"), t0 + 89'000, 512, 1'024},
    };
    s.escrow = {
        {QStringLiteral("node-a"), QStringLiteral("proj-a1"), 4, 2, t0 + 3'000'000, t0 + 3'900'000, t0 + 3'900'000,
         QStringLiteral("admitted"), t0 + 4'500'000},
        {QStringLiteral("node-b"), QStringLiteral("proj-b7"), 1, 0, 0, 0, t0 + 7'200'000, QString(), t0 + 8'100'000},
    };
    s.bindings = {{QStringLiteral("corestore-main"), QStringLiteral("database"), QStringLiteral("node-a"), QStringLiteral("ready"), QString(),
                   QStringLiteral("svc-shop"), QStringLiteral("grant-op-1"), 2, 1, 0}};
    // §18.1 backups: a replicated restore taking its closure from Cloudly, and two transfers that ended.
    s.backups.operations = {{QStringLiteral("restore"), QStringLiteral("node-a"), QStringLiteral("svc-shop"), QStringLiteral("b-17"),
                             t0 + 3'500'000, QStringLiteral("closure"), 0, 3}};
    s.backups.transfers = {{QStringLiteral("6f1c2a4e-9b7d-4c3a-8e21-5d0f3b9a7c11"), QStringLiteral("receive"), QStringLiteral("node-a"),
                            QStringLiteral("svc-shop"), QStringLiteral("b-17"), t0 + 3'500'000, QStringLiteral("streaming"), 52'428'800,
                            209'715'200, QStringLiteral("cloudly")}};
    s.backups.recent = {{QStringLiteral("0b9e8d7c-6a5f-4e3d-9c2b-1a0f9e8d7c6b"), QStringLiteral("send"), QStringLiteral("node-a"),
                         QStringLiteral("svc-shop"), QStringLiteral("b-16"), t0 + 1'000'000, t0 + 1'060'000, 104'857'600, 104'857'600,
                         QStringLiteral("stored")},
                        {QStringLiteral("3d2c1b0a-9f8e-4d7c-8b6a-5f4e3d2c1b0a"), QStringLiteral("send"), QStringLiteral("node-b"),
                         QStringLiteral("svc-mail"), QStringLiteral("b-9"), t0 + 2'000'000, t0 + 2'030'000, 4'194'304, 8'388'608,
                         QStringLiteral("closure-transfer-stalled")}};
    s.backups.closureBytesSent = 109'051'904;
    s.backups.closureBytesReceived = 52'428'800;
    s.backups.transfersByOutcome = {{QStringLiteral("stored"), 1}, {QStringLiteral("closure-transfer-stalled"), 1}};
    return s;
}

status::RelayStatus refusedStatus()
{
    // The relay's own line (service/cloudly/cloudlyconnector.cpp): offers are "kind@release".
    status::RelayStatus s = base();
    s.ready = false;
    s.cloudly.connected = true; // Cloudly answered, with an offer this relay cannot serve
    s.cloudly.dispatchable = false;
    s.cloudly.carrierCount = 0;
    s.ingress = {false, std::nullopt, 0, 0};
    s.vpn = status::VpnHubStatus{};
    s.refusals = {
        {QStringLiteral("cloudly"), QStringLiteral("cloudlyClient@34.0.0"), QStringLiteral("cloudlyClient@33.1.0"),
         QStringLiteral("Cloudly answered with cloudlyClient@34.0.0, which this relay (cloudlyClient@33.1.0) cannot serve "
                        "(offered again every 300000 ms)")},
    };
    // A peer's refused offer is counted, never a readiness refusal (docs/contract.md §2.2, D-62).
    s.counters.refusalsByName.insert(QStringLiteral("protocol-offer-refused"), 2);
    return s;
}

status::RelayStatus parkedStatus()
{
    // service/registration/relayregistration.cpp park(); ReadinessBoard then reports exactly one
    // registration entry, the park line itself. A parked relay keeps its Cloudly session (it only stops
    // renewing and re-offering), so nothing else is refused.
    status::RelayStatus s = base();
    s.ready = false;
    s.parked = true;
    s.parkedLine = QStringLiteral("relay parked: this relay is bound to cluster relay credential cred-8c1f generation 3, which "
                                  "Cloudly no longer accepts; only a restart holding the bearer of the current generation "
                                  "serves this cluster again");
    s.refusals = {{QStringLiteral("registration"), std::nullopt, std::nullopt, s.parkedLine}};
    return s;
}

status::RelayStatus fiftyNodesStatus()
{
    status::RelayStatus s = base();
    for (int i = 0; i < 50; ++i)
        s.nodes.append({QStringLiteral("node-%1").arg(i, 2, 10, QLatin1Char('0')), t0 + i * 1000, (i * 7) % 11,
                        i % 2 ? QStringLiteral("pushContainerStatus") : QStringLiteral("getServiceConfig"),
                        t0 + 3'000'000 + i * 500, i % 3, t0 + 3'590'000 + i * 100,
                        i % 5 ? QStringLiteral("live") : QStringLiteral("awaiting-pong"),
                        QStringLiteral("10.0.1.%1:4%2").arg(i).arg(i, 4, 10, QLatin1Char('0')), QStringLiteral("33.1.0"),
                        t0 + i * 1000 - 500, 1000 + i, 2000 + i});
    return s;
}

} // namespace coreflow::consoletest
