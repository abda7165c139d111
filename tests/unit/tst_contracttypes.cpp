// Contract types and offers (docs/contract.md §2, §4; PV-01, PV-02, PV-05, PV-06).
#include "shared/contract/offers.h"
#include "shared/contract/refusalnames.h"
#include "shared/contract/types.h"

#include <QJsonDocument>
#include <QTest>

using namespace coreflow::contract;

namespace {
QJsonObject obj(const char *json) { return QJsonDocument::fromJson(json).object(); }
} // namespace

class TstContractTypes : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // PV-01/PV-02: one release, one offer source for both Cloudly carriers; no other version number.
    void offersCarryTheReleaseOnly_PV01_PV02()
    {
        QCOMPARE(contractRelease(), QStringLiteral("33.1.0"));
        const QJsonObject offer = offerForCloudlySession().toJson();
        QCOMPARE(offer.keys(), (QStringList{"release", "sessionKind"}));
        QCOMPARE(offer.value("release").toString(), QStringLiteral("33.1.0"));
        QCOMPARE(offerForCloudlySession(), offerForCloudlySession());
    }

    void peerMinimums_PV05_PV06()
    {
        QCOMPARE(oldestAcceptedPalletRuntime().toString(), QStringLiteral("32.10.1"));
        QCOMPARE(oldestAcceptedClusterIngress().toString(), QStringLiteral("32.0.0"));
        QVERIFY(*Release::parse("32.10.0") < oldestAcceptedPalletRuntime());
        QVERIFY(!(*Release::parse("32.10.1") < oldestAcceptedPalletRuntime()));
        QVERIFY(!Release::parse("32.10").has_value());
        QVERIFY(!Release::parse("v33.1.0").has_value());
    }

    void offerReaderIsExact()
    {
        QVERIFY(ProtocolOffer::read(obj("{\"sessionKind\":\"palletRuntime\",\"release\":\"33.1.0\"}"), "request.offer").ok());
        auto extra = ProtocolOffer::read(obj("{\"sessionKind\":\"palletRuntime\",\"release\":\"33.1.0\",\"schemaVersion\":2}"), "request.offer");
        QVERIFY(!extra.ok());
        QCOMPARE(extra.refusal().reason, QStringLiteral("field request.offer.schemaVersion is unknown"));
        auto bad = ProtocolOffer::read(obj("{\"sessionKind\":\"palletRuntime\",\"release\":\"latest\"}"), "request.offer");
        QVERIFY(!bad.ok());
        QVERIFY(bad.refusal().reason.contains("request.offer.release"));
    }

    void sessionBinding()
    {
        auto b = SessionBinding::read(obj("{\"nodeId\":\"n1\",\"clusterId\":\"c1\",\"sessionId\":\"s1\",\"relayRegistrationGeneration\":3}"), "request.session");
        QVERIFY(b.ok());
        QCOMPARE(b->relayRegistrationGeneration, 3);
        auto again = SessionBinding::read(b->toJson(), "x");
        QVERIFY(again.ok());
        QCOMPARE(again.value(), b.value());
        auto missing = SessionBinding::read(obj("{\"nodeId\":\"n1\",\"clusterId\":\"c1\",\"sessionId\":\"s1\"}"), "request.session");
        QVERIFY(!missing.ok());
        QCOMPARE(missing.refusal().reason, QStringLiteral("field request.session.relayRegistrationGeneration is missing"));
    }

    // LO-08/LO-10, D-19: the relay block names an https origin; without a port it names none (not 443).
    void relayBlock_LO08()
    {
        auto withPort = ClusterRelayBlock::read(obj("{\"origin\":\"https://relay.example.com:8443\"}"), "relay");
        QVERIFY(withPort.ok());
        QCOMPARE(withPort->domain(), QStringLiteral("relay.example.com"));
        QCOMPARE(withPort->originPort(), std::optional<int>(8443));
        auto noPort = ClusterRelayBlock::read(obj("{\"origin\":\"https://relay.example.com\"}"), "relay");
        QVERIFY(noPort.ok());
        QCOMPARE(noPort->originPort(), std::optional<int>());
        for (const char *bad : {"{\"origin\":\"http://relay.example.com\"}", "{\"origin\":\"https://relay.example.com/path\"}",
                                "{\"origin\":\"https://u:p@relay.example.com\"}", "{\"origin\":7}"}) {
            auto r = ClusterRelayBlock::read(obj(bad), "relay");
            QVERIFY2(!r.ok(), bad);
            QVERIFY(r.refusal().reason.contains("relay.origin"));
        }
    }

    void clusterConfig()
    {
        auto c = ClusterConfig::read(obj("{\"id\":\"c1\",\"name\":\"one\",\"relay\":null,\"nodes\":[{\"id\":\"n1\",\"corestore\":{\"endpoint\":\"https://n1:9000\"},\"corestoreDatabase\":null}]}"), "response.cluster");
        QVERIFY(c.ok());
        QVERIFY(!c->relay.has_value());
        QCOMPARE(c->nodes.size(), 1);
        QCOMPARE(c->nodes.first().corestoreEndpoint->port(), 9000);
        auto bad = ClusterConfig::read(obj("{\"id\":\"c1\",\"name\":\"one\",\"relay\":null,\"nodes\":[{\"id\":1}]}"), "response.cluster");
        QVERIFY(!bad.ok());
        QVERIFY(bad.refusal().reason.contains("response.cluster.nodes[0].id"));
    }

    // The identity token is a Secret: reading it never makes it printable.
    void identityTokenIsSecret()
    {
        auto id = ClusterIdentity::read(obj("{\"token\":\"tok-123\",\"clusterId\":\"c1\",\"expiresAt\":1700000000000}"), "identity");
        QVERIFY(id.ok());
        QCOMPARE(id->token.reveal().toByteArray(), QByteArray("tok-123"));
        QVERIFY(!id->token.describe().contains("tok-123"));
    }
};

QTEST_GUILESS_MAIN(TstContractTypes)
#include "tst_contracttypes.moc"
