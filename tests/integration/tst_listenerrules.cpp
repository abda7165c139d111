// Rules of the cluster-side listener and the node lane that no other test named (issue 16), each
// checked through a running relay with the loopback peers (docs/contract.md §2, §5, §6.4, §8, §19.3):
// CL-03 (the bind is local configuration), FW-12 (the push handlers are detached when the listener
// stops), FW-23 (what a projection ACK is read for), LO-12 (the listener keeps its start origin and
// certificate), OC-10 (per node: connection, binding, carrier count), PV-04 (one offer per session
// kind, each judged against its own oldest release).
#include "tests/support/epolltestmain.h"
#include "tests/integration/logcapture.h"
#include "tests/integration/relayfixture.h"
#include "tests/peers/dnsleaserenewalrunbuilder.h"
#include "tests/peers/loopbackingress.h"

#include "service/cloudly/cloudlyconnector.h"
#include "service/escrow/leaseescrow.h"

#include <QJsonDocument>
#include <QSignalSpy>
#include <QSslConfiguration>
#include <QSslSocket>
#include <QTcpSocket>
#include <QTest>

using namespace coreflow;
using namespace coreflow::testing;
using coreflow::peers::Answer;
using Builder = coreflow::peers::DnsLeaseRenewalRunBuilder;

namespace {

QJsonObject errorOf(const peers::PeerFrame &frame) { return QJsonDocument::fromJson(frame.error.toByteArray()).object(); }
QByteArray compact(const QJsonObject &o) { return QJsonDocument(o).toJson(QJsonDocument::Compact); }

template <typename Predicate>
bool waitFor(Predicate predicate, int ms = 5000)
{
    return QTest::qWaitFor(predicate, ms);
}

// Cloudly -> relay; the relay's answer frame (nullopt if none arrived).
std::optional<peers::PeerFrame> fromCloudly(RelayFixture &f, const QString &method, const QByteArray &body)
{
    std::optional<peers::PeerFrame> answer;
    f.cloudly->push(method, body, [&](const peers::PeerFrame &frame) { answer = frame; });
    waitFor([&] { return answer.has_value(); });
    return answer;
}

// The leaf a TLS client is served on 127.0.0.1:port (verified against the test CA as "localhost").
QSslCertificate servedCertificate(RelayFixture &f)
{
    QSslSocket tls;
    QSslConfiguration ssl = QSslConfiguration::defaultConfiguration();
    ssl.setCaCertificates({f.ca.caCertificate()});
    tls.setSslConfiguration(ssl);
    tls.connectToHostEncrypted(QStringLiteral("127.0.0.1"), f.relayPort, QStringLiteral("localhost"));
    waitFor([&] { return tls.isEncrypted() || tls.state() == QAbstractSocket::UnconnectedState; });
    const QSslCertificate served = tls.isEncrypted() ? tls.peerCertificate() : QSslCertificate();
    tls.abort();
    return served;
}

// Whether a TCP connection to address:port is accepted.
bool accepts(const QString &address, quint16 port)
{
    QTcpSocket tcp;
    tcp.connectToHost(address, port);
    waitFor([&] { return tcp.state() == QAbstractSocket::ConnectedState || tcp.state() == QAbstractSocket::UnconnectedState; });
    const bool connected = tcp.state() == QAbstractSocket::ConnectedState;
    tcp.abort();
    return connected;
}

std::unique_ptr<peers::LoopbackIngress> connectIngress(RelayFixture &f, const QString &release)
{
    peers::LoopbackIngress::Options options;
    options.release = release;
    options.url = QUrl(QStringLiteral("wss://localhost:%1/").arg(f.relayPort));
    options.caCertificates = {f.ca.caCertificate()};
    auto ingress = std::make_unique<peers::LoopbackIngress>(options);
    ingress->open();
    waitFor([&] { return ingress->isConnected(); });
    return ingress;
}

} // namespace

class TstListenerRules : public QObject {
    Q_OBJECT
    LogCapture log;


private Q_SLOTS:
    void init()
    {
        log.install();
        log.clear();
    }

    // CL-03: the listener binds COREFLOW_RELAY_BIND_HOSTNAME/PORT, whatever the cluster document says:
    // an origin naming another loopback address and nodes publishing further addresses move nothing.
    void bindIsLocalConfiguration_CL03()
    {
        quint16 port = 0;
        RelayFixture f(true, [&port](peers::LoopbackCloudly::Options &o) {
            port = quint16(QUrl(o.relayOrigin).port());
            o.relayOrigin = QStringLiteral("https://127.0.0.2:%1").arg(port);
            o.clusterNodes = QJsonArray{QJsonObject{{"id", "node-relay"},
                                                    {"corestore", QJsonObject{{"endpoint", "https://127.0.0.3:9443/"}}},
                                                    {"corestoreDatabase", QJsonObject{{"host", "127.0.0.4"}, {"port", 5432}}}}};
        });
        QCOMPARE(port, f.relayPort);
        QVERIFY(f.startRelay());
        QTRY_COMPARE(f.cloudly->callCount("registerClusterRelay"), 1);
        QCOMPARE(f.relay->statusSnapshot().listener.address, QStringLiteral("127.0.0.1"));
        QCOMPARE(f.relay->statusSnapshot().listener.port, int(f.relayPort));
        QVERIFY(accepts(QStringLiteral("127.0.0.1"), f.relayPort));
        for (const char *other : {"127.0.0.2", "127.0.0.3", "127.0.0.4"})
            QVERIFY2(!accepts(QString::fromLatin1(other), f.relayPort), other);
        const QJsonObject relay = QJsonDocument::fromJson(f.cloudly->lastRequest("registerClusterRelay")->rawRequest)
                                      .object().value("relay").toObject();
        QCOMPARE(relay.value("listenAddress").toString(), QStringLiteral("127.0.0.1"));
        QCOMPARE(relay.value("listenPort").toInt(), int(f.relayPort));
    }

    // FW-12: when the listener stops, the four node pushes (and the ingress' Cloudly methods) are
    // detached: while the stop still drains a call of the relay's own, Cloudly's dispatches of them
    // find no handler (method-not-served), not a lost node.
    void pushHandlersDetachedWhenTheListenerStops_FW12()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        QTRY_COMPARE(f.cloudly->callCount("registerClusterRelay"), 1);
        auto node = f.registeredNode("node-a");
        QVERIFY(node->session());
        const QByteArray push = compact({{"session", node->session()->toJson()}});
        const auto before = fromCloudly(f, "applyRuntimeAssignment", push);
        QVERIFY(before && !before->hasError());

        // A registration Cloudly never answers keeps the stop draining (§19.3 step 4) for 8000 ms.
        f.cloudly->setAnswer("registerClusterRelay", Answer::silence());
        QVERIFY(f.renewIdentity());
        QTRY_COMPARE(f.cloudly->callCount("registerClusterRelay"), 2);
        QSignalSpy stopped(f.relay.get(), &Coreflow::stopped);
        f.relay->stop();
        QTRY_VERIFY(!node->isConnected());
        for (const char *method : {"applyRuntimeAssignment", "applyRuntimeNetworkSigningAuthority", "applyRuntimeNetworkProjection",
                                   "applyRuntimeNetworkDnsLeaseRenewal", "pushClusterRouteTable", "getClusterTrafficStatistics"}) {
            const auto answer = fromCloudly(f, QString::fromLatin1(method), push);
            QVERIFY2(answer, method);
            QVERIFY2(answer->hasError(), method);
            QCOMPARE(errorOf(*answer).value("text").toString(),
                     QStringLiteral("method-not-served: the Cloudly session serves no method %1").arg(QLatin1StringView(method)));
        }
        QVERIFY(stopped.isEmpty());
        f.clock.advance(8000);
        QTRY_COMPARE(stopped.size(), 1);
        QVERIFY(stopped.first().first().toBool());
    }

    // FW-23: of a projection ACK the relay reads { id, generation, digest } of response.projection and
    // nothing else: the push request's projection does not count, nor other members of the ACK; the
    // digest does (same id and generation, another digest retires the run, FW-24).
    void projectionAckReadForItsReferenceOnly_FW23()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        auto node = f.registeredNode("node-a");
        QVERIFY(node->session());
        const auto b = *node->session();
        const QJsonObject held = Builder::projection("proj-1", 2);
        std::optional<peers::PeerFrame> holdAnswer = fromCloudly(
            f, "holdRuntimeNetworkDnsLeaseRenewals", compact(Builder::holdRequest(b, held, Builder::grid(b, held, f.clock.nowMs(), 2))));
        QVERIFY(holdAnswer && !holdAnswer->hasError());
        QVERIFY(f.relay->escrow()->holdsRunFor("node-a"));

        auto pushAcked = [&](const QJsonObject &requestProjection, const QJsonObject &ack) {
            node->setPushAnswer("applyRuntimeNetworkProjection", Answer::respond(ack));
            const auto answer = fromCloudly(f, "applyRuntimeNetworkProjection",
                                            compact({{"session", b.toJson()}, {"projection", requestProjection}}));
            QVERIFY(answer && !answer->hasError());
            QCOMPARE(QJsonDocument::fromJson(answer->response.toByteArray()).object(), ack); // carried verbatim (FW-15)
        };
        // The request names a newer projection, the ACK the held one: the run stays.
        pushAcked(Builder::projection("proj-2", 9), QJsonObject{{"projection", held}, {"admitted", true}});
        QVERIFY(f.relay->escrow()->holdsRunFor("node-a"));
        // Members beside the reference say "replaced" in every other way: the run stays.
        pushAcked(held, QJsonObject{{"projection", held},
                                    {"admitted", false},
                                    {"replacedBy", Builder::projection("proj-3", 1)},
                                    {"renewals", QJsonArray{}},
                                    {"generation", 99}});
        QVERIFY(f.relay->escrow()->holdsRunFor("node-a"));
        // The same id and generation with another digest: the node holds another projection.
        QJsonObject otherDigest = held;
        otherDigest["digest"] = Builder::projection("proj-1", 2, "another salt").value("digest");
        QVERIFY(otherDigest.value("digest") != held.value("digest"));
        pushAcked(held, QJsonObject{{"projection", otherDigest}, {"admitted", true}});
        QVERIFY(!f.relay->escrow()->holdsRunFor("node-a"));
    }

    // LO-12 (and PF-02): the listener keeps the origin and certificate it started with. Cloudly's
    // cluster document and certificate change, the relay renews its identity and registers again
    // (Cloudly now publishing another origin, RR-20), a config push arrives (not served in this release):
    // the node socket stays open, the same certificate is served, nothing is read again.
    void listenerKeepsItsStartOrigin_LO12()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        QTRY_COMPARE(f.cloudly->callCount("registerClusterRelay"), 1);
        const QString origin = f.relay->statusSnapshot().listener.origin;
        QCOMPARE(origin, QStringLiteral("https://localhost:%1").arg(f.relayPort));
        const QSslCertificate started = servedCertificate(f);
        QVERIFY(!started.isNull());
        auto node = f.registeredNode("node-a");
        QVERIFY(node->session());

        const QString moved = QStringLiteral("https://relay.example.net:%1").arg(f.relayPort);
        f.cloudly->setRelayOrigin(moved);
        f.cloudly->setRelayCertificate(f.ca.issueLocalhost());
        QVERIFY(f.renewIdentity());
        QTRY_COMPARE(f.cloudly->callCount("registerClusterRelay"), 2);
        QTRY_VERIFY(log.contains(moved));
        const auto push = fromCloudly(f, "pushClusterConfig",
                                      compact({{"cluster", QJsonObject{{"id", "cluster-1"}, {"name", "Loopback cluster"},
                                                                       {"relay", QJsonObject{{"origin", moved}}}, {"nodes", QJsonArray{}}}},
                                               {"desiredState", QJsonValue::Null}}));
        // pushClusterConfig is served (contract §7.1): the changed block is reported by name, logged
        // once (LO-11) and not adopted (LO-12).
        QVERIFY(push && !push->hasError());
        QCOMPARE(QJsonDocument::fromJson(push->response.toByteArray()).object().value("relayBlock").toString(),
                 QStringLiteral("changed-not-adopted"));
        QTRY_COMPARE(log.count(QStringLiteral("relay block changed (%1 -> %2); not adopted until the relay restarts").arg(origin, moved)), 1);

        QVERIFY(f.settleNodeHop(*node));
        QVERIFY(node->isConnected());
        QCOMPARE(servedCertificate(f), started);
        QCOMPARE(f.relay->statusSnapshot().listener.origin, origin);
        // getClusterConfig is read again after each accepted registration (Corestore endpoints only,
        // contract §6.4); the certificate never.
        QCOMPARE(f.cloudly->callCount("getClusterRelayCertificate"), 1);
        bool answered = false;
        node->callWithSession("reportRuntimeNetworkProtection", {}, [&](const peers::PeerFrame &x) { answered = !x.hasError(); });
        QTRY_VERIFY(answered);
    }

    // OC-10: per carried node the relay keeps its connection, the binding Cloudly issued and the carrier
    // count it registered under: a node still carried after the count rose shows its own count, and no
    // value of its registration (nonce, extra members, Cloudly's extra answer members) is held in status.
    void perNodeCustodyIsConnectionBindingAndCount_OC10()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        const QString canary = QStringLiteral("oc10-canary-") + QString::number(QDateTime::currentMSecsSinceEpoch());
        f.cloudly->setHandler("registerPalletRuntimeSession", [&](const peers::PeerFrame &frame, const QJsonObject &request) {
            Answer a = f.cloudly->defaultAnswer(frame, request);
            QJsonObject response = QJsonDocument::fromJson(a.rawResponse).object();
            response["welcome"] = canary + "-answer";
            return Answer::respond(response);
        });
        auto optionsA = f.nodeOptions("node-a");
        optionsA.nodeInstanceNonce = canary + "-nonce";
        auto a = std::make_unique<peers::SimulatedPalletNode>(optionsA);
        a->open();
        QTRY_VERIFY(a->isConnected());
        bool registered = false;
        a->registerSession([&](const peers::PeerFrame &x) { registered = !x.hasError(); });
        QTRY_VERIFY(registered);
        auto b = f.registeredNode("node-b");
        QVERIFY(b->session());
        QCOMPARE(f.relay->cloudly()->carrierCount(), 1);

        // A new carrier: the wave closes node-a at once and node-b 75 ms later (clock), §8.4.
        QVERIFY(f.takeCloudlySessionDown());
        QVERIFY(f.bringCloudlySessionBack());
        QCOMPARE(f.relay->cloudly()->carrierCount(), 2);
        QTRY_VERIFY(!a->isConnected());
        QVERIFY(f.settleNodeHop(*b));
        const auto nodes = f.relay->statusSnapshot().nodes;
        QCOMPARE(nodes.size(), 1);
        QCOMPARE(nodes.first().nodeId, QStringLiteral("node-b"));
        QCOMPARE(nodes.first().carrierCount, 1);

        // node-a registers again under the new count; its binding is the one Cloudly issued now.
        auto again = f.registeredNode("node-a");
        QVERIFY(again->session());
        bool forwarded = false;
        again->callWithSession("reportRuntimeNetworkProtection", {}, [&](const peers::PeerFrame &x) { forwarded = !x.hasError(); });
        QTRY_VERIFY(forwarded);
        QCOMPARE(*f.cloudly->bindingFor("node-a"), *again->session());
        for (const auto &n : f.relay->statusSnapshot().nodes)
            if (n.nodeId == QLatin1String("node-a"))
                QCOMPARE(n.carrierCount, 2);
        const QByteArray status = QJsonDocument(f.relay->statusSnapshot().toJson()).toJson();
        QVERIFY(!status.contains(canary.toUtf8()));
        QVERIFY(!status.contains(again->session()->sessionId.toUtf8()));
    }

    // PV-04: the cluster hop has one offer per session kind, each with its own oldest release: 32.5.0
    // is below palletRuntime's 32.10.1 and above clusterIngress' 32.0.0, so the same release is refused
    // to a node and served to an ingress; each refusal names its own lane's offer.
    void offersJudgedPerSessionKind_PV04()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        auto options = f.nodeOptions("node-old");
        options.release = QStringLiteral("32.5.0");
        peers::SimulatedPalletNode node(options);
        node.open();
        QTRY_VERIFY(node.isConnected());
        std::optional<peers::PeerFrame> nodeAnswer;
        node.registerSession([&](const peers::PeerFrame &x) { nodeAnswer = x; });
        QTRY_VERIFY(nodeAnswer);
        QVERIFY(nodeAnswer->hasError());
        const QJsonObject error = errorOf(*nodeAnswer);
        QCOMPARE(error.value("text").toString(),
                 QStringLiteral("protocol-offer-refused: this relay serves palletRuntime from 32.10.1 (it speaks 33.1.0); the peer offered palletRuntime@32.5.0"));
        QCOMPARE(error.value("data").toObject().value("ownOffer").toObject(),
                 (QJsonObject{{"sessionKind", "palletRuntime"}, {"release", "33.1.0"}}));
        QCOMPARE(f.cloudly->callCount("registerPalletRuntimeSession"), 0);

        auto ingress = connectIngress(f, QStringLiteral("32.5.0"));
        QVERIFY(ingress->isConnected());
        std::optional<peers::PeerFrame> ingressAnswer;
        ingress->registerIngress([&](const peers::PeerFrame &x) { ingressAnswer = x; });
        QTRY_VERIFY(ingressAnswer);
        QVERIFY2(!ingressAnswer->hasError(), ingressAnswer->error.toByteArray().constData());
        QCOMPARE(f.cloudly->callCount("registerClusterIngress"), 1);

        // An ingress below its own oldest release is refused naming the ingress lane's offer.
        auto older = connectIngress(f, QStringLiteral("31.9.9"));
        std::optional<peers::PeerFrame> olderAnswer;
        older->registerIngress([&](const peers::PeerFrame &x) { olderAnswer = x; });
        QTRY_VERIFY(olderAnswer);
        QCOMPARE(errorOf(*olderAnswer).value("text").toString(),
                 QStringLiteral("protocol-offer-refused: this relay serves clusterIngress from 32.0.0 (it speaks 33.1.0); the peer offered clusterIngress@31.9.9"));
        // The node lane's oldest release is served.
        auto oldest = f.nodeOptions("node-oldest");
        oldest.release = QStringLiteral("32.10.1");
        peers::SimulatedPalletNode servable(oldest);
        servable.open();
        QTRY_VERIFY(servable.isConnected());
        bool ok = false;
        servable.registerSession([&](const peers::PeerFrame &x) { ok = !x.hasError(); });
        QTRY_VERIFY(ok);
    }
};

COREFLOW_EPOLL_TEST_MAIN(TstListenerRules)
#include "tst_listenerrules.moc"
