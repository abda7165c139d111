// The Corestore lane's pure parts: endpoint adoption and path joining (docs/contract.md §15
// "Endpoint", "Paths"), the exact readers of the inventory answers and the raw `services` bytes
// (§12.6, §12.7; CS-56, CS-59, CS-61, CS-62), the config push reader (§7.1; CS-03).
#include "service/app/clusterconfigpush.h"
#include "service/corestore/corestoreanswerreader.h"
#include "service/corestore/corestoreendpoint.h"

#include <QJsonDocument>
#include <QTest>

using namespace coreflow;

class TstCorestoreParts : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void endpointPathsJoinWithOneSlash_data()
    {
        QTest::addColumn<QString>("endpoint");
        QTest::addColumn<QByteArray>("target");
        QTest::newRow("no path") << "https://10.0.0.2:7443" << QByteArray("/control/inventory");
        QTest::newRow("root") << "https://10.0.0.2:7443/" << QByteArray("/control/inventory");
        QTest::newRow("base") << "https://cs.local/corestore" << QByteArray("/corestore/control/inventory");
        QTest::newRow("base slash") << "https://cs.local/corestore/" << QByteArray("/corestore/control/inventory");
        QTest::newRow("base slashes") << "https://cs.local/a/b//" << QByteArray("/a/b/control/inventory");
    }
    void endpointPathsJoinWithOneSlash()
    {
        QFETCH(QString, endpoint);
        QFETCH(QByteArray, target);
        QString why;
        const auto e = CorestoreEndpoint::from(QUrl(endpoint), &why);
        QVERIFY2(e, qPrintable(why));
        QCOMPARE(e->targetFor("/control/inventory"), target);
        QCOMPARE(e->origin().path(), QString());
    }
    void endpointsOutsideTheContractAreNotAdopted_data()
    {
        QTest::addColumn<QString>("endpoint");
        QTest::newRow("plain http off loopback") << "http://10.0.0.2:7443";
        QTest::newRow("user info") << "https://u:p@10.0.0.2/";
        QTest::newRow("query") << "https://10.0.0.2/?x=1";
        QTest::newRow("fragment") << "https://10.0.0.2/#f";
        QTest::newRow("ftp") << "ftp://10.0.0.2/";
        QTest::newRow("no host") << "https:///x";
    }
    void endpointsOutsideTheContractAreNotAdopted()
    {
        QFETCH(QString, endpoint);
        QString why;
        QVERIFY(!CorestoreEndpoint::from(QUrl(endpoint), &why));
        QVERIFY(!why.isEmpty());
        QVERIFY(!why.contains(QStringLiteral("10.0.0.2"))); // value-free
        QVERIFY(CorestoreEndpoint::from(QUrl(QStringLiteral("http://127.0.0.1:8080/")), &why)); // loopback test peers
    }

    // CS-59: the raw services bytes, exactly as sent.
    void legacyServicesAreTheRawBytes_CS59()
    {
        const QByteArray services = R"([ {"resources":[{"createdAt":1.7e12,"name":"n\u00e9","kind":"bucket"}],"serviceId":"s"} ])";
        const QByteArray body = "{ \"services\" : " + services + " }\n";
        // createdAt 1.7e12 is an integer value in JSON terms; Qt reads it as one.
        const auto read = CorestoreAnswerReader::readLegacyResources(body);
        QVERIFY2(read.ok, qPrintable(read.problem));
        QCOMPARE(read.rawServices.toByteArray(), services);
    }
    void answersOutsideTheShapeAreUnreadable_CS61_data()
    {
        QTest::addColumn<bool>("legacy");
        QTest::addColumn<QByteArray>("body");
        QTest::addColumn<QString>("problem");
        QTest::newRow("not json") << false << QByteArray("{") << "the body is not a JSON object";
        QTest::newRow("array") << false << QByteArray("[]") << "the body is not a JSON object";
        QTest::newRow("extra member") << false << QByteArray(R"({"services":[],"more":1})") << "field answer.more is unknown";
        QTest::newRow("missing") << false << QByteArray(R"({})") << "field answer.services is missing";
        QTest::newRow("repeated") << false << QByteArray(R"({"services":[],"services":[]})") << "field answer.services is repeated or not readable as raw JSON";
        QTest::newRow("volumes not strings") << false
                                              << QByteArray(R"({"services":[{"serviceId":"s","databases":[],"buckets":[],"volumes":[1]}]})")
                                              << "field answer.services[0].volumes is not an array of strings";
        QTest::newRow("legacy kind") << true << QByteArray(R"({"services":[{"serviceId":"s","resources":[{"kind":"x","name":"n","createdAt":1}]}]})")
                                     << "field answer.services[0].resources[0].kind is neither database nor bucket";
        QTest::newRow("legacy negative") << true
                                         << QByteArray(R"({"services":[{"serviceId":"s","resources":[{"kind":"bucket","name":"n","createdAt":-1}]}]})")
                                         << "field answer.services[0].resources[0].createdAt is negative";
        QTest::newRow("legacy twice") << true << QByteArray(R"({"services":[{"serviceId":"s","resources":[]},{"serviceId":"s","resources":[]}]})")
                                      << "field answer.services[1].serviceId repeats an earlier entry's";
    }
    void answersOutsideTheShapeAreUnreadable_CS61()
    {
        QFETCH(bool, legacy);
        QFETCH(QByteArray, body);
        QFETCH(QString, problem);
        const auto read = legacy ? CorestoreAnswerReader::readLegacyResources(body) : CorestoreAnswerReader::readInventory(body);
        QVERIFY(!read.ok);
        QCOMPARE(read.problem, problem);
    }
    void emptyInventoryIsReadable_CS56()
    {
        const QByteArray body = R"({"services":[]})"; // rawServices views it: it must outlive the read
        const auto read = CorestoreAnswerReader::readInventory(body);
        QVERIFY(read.ok);
        QCOMPARE(read.rawServices.toByteArray(), QByteArray("[]"));
    }

    // §7.1: the push reader counts grants and refuses a body outside the shape.
    void configPushIsReadExactly_CS03()
    {
        const QByteArray good = R"({"cluster":{"id":"c","name":"n","relay":null,"nodes":[{"id":"a","corestore":{"endpoint":"https://10.0.0.2:7443"},"corestoreDatabase":null}]},)"
                                R"("desiredState":{"bindings":[{"nodeId":"a","binding":{"name":"d","capability":"database","serviceId":"s","organizationId":"o","clusterId":null,"retention":null},)"
                                R"("grant":{"operation":"op","generation":1,"serviceId":"s","capability":"database","bindingName":"d","requestDigest":"00","expiresAt":1,"authority":"x"}},)"
                                R"({"nodeId":null,"binding":{"name":"e","capability":"pushnotification","serviceId":"s","organizationId":null,"clusterId":null,"retention":null},"grant":null}]}})";
        auto read = ClusterConfigPush::read(QJsonDocument::fromJson(good).object());
        QVERIFY2(read, qPrintable(read ? QString() : read.refusal().text()));
        QCOMPARE(read->grants, 1);
        QCOMPARE(read->desiredState->bindings.size(), 2);
        QCOMPARE(read->cluster.nodes.size(), 1);
        const QByteArray bad = R"({"cluster":{"id":"c","name":"n","relay":null,"nodes":[]},"desiredState":{"bindings":[{"nodeId":1,"binding":{},"grant":null}]}})";
        auto refused = ClusterConfigPush::read(QJsonDocument::fromJson(bad).object());
        QVERIFY(!refused);
        QCOMPARE(refused.refusal().name, QStringLiteral("request-invalid"));
        QCOMPARE(ClusterConfigPush::relayBlockWord(std::nullopt, std::nullopt), QStringLiteral("unchanged"));
        contract::ClusterRelayBlock x{QUrl("https://r.example:443")}, y{QUrl("https://s.example:443")};
        QCOMPARE(ClusterConfigPush::relayBlockWord(x, y), QStringLiteral("changed-not-adopted"));
        QCOMPARE(ClusterConfigPush::relayBlockWord(x, std::nullopt), QStringLiteral("removed-not-adopted"));
        QCOMPARE(ClusterConfigPush::relayBlockWord(std::nullopt, y), QStringLiteral("added-not-adopted"));
    }
};

QTEST_GUILESS_MAIN(TstCorestoreParts)
#include "tst_corestoreparts.moc"
