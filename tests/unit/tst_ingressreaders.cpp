// The ingress lane's pure readers: RouteTable (the project's validateClusterRouteTable, docs/contract.md
// §10.5) and IngressRegistration (validateClusterIngressRegistration, §10.1). Rules: CI-02 (reasons and
// descriptions never quote material), CI-05 (the first reason wins), CI-24 (registration shape).
#include "shared/contract/refusalnames.h"
#include "service/ingress/ingressregistration.h"
#include "service/ingress/routetable.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

using namespace coreflow;

namespace {
const QString kKeyCanary = QStringLiteral("-----BEGIN PRIVATE KEY-----\nKEY-CANARY-7f3a\n-----END PRIVATE KEY-----\n");

QJsonObject target(const QString &address = QStringLiteral("10.0.0.5"), int port = 30080)
{
    return {{"nodeId", "node-a"}, {"address", address}, {"port", port}};
}

QJsonObject validTable(qint64 revision = 3)
{
    return QJsonObject{
        {"clusterId", "cluster-1"},
        {"revision", revision},
        {"computedAt", 1700000000000LL},
        {"routes", QJsonArray{QJsonObject{{"hostname", "a.example.com"}, {"certificateId", "cert-a"},
                                          {"targets", QJsonArray{target(), target("10.0.0.6", 30081)}}},
                              QJsonObject{{"hostname", "b.example.com"}, {"certificateId", "cert-a"},
                                          {"targets", QJsonArray{target()}}}}},
        {"certificates", QJsonArray{QJsonObject{{"id", "cert-a"},
                                                {"hostnames", QJsonArray{"a.example.com", "b.example.com", "c.example.com"}},
                                                {"certificatePem", "-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n"},
                                                {"privateKeyPem", kKeyCanary}}}}};
}

// Sets a member deep inside the table: path like {"routes", 0, "hostname"}.
QJsonValue setAt(QJsonValue node, const QVariantList &path, const QJsonValue &value, int i = 0)
{
    if (i == path.size())
        return value;
    if (path.at(i).typeId() == QMetaType::Int) {
        QJsonArray a = node.toArray();
        const int index = path.at(i).toInt();
        a[index] = setAt(a.at(index), path, value, i + 1);
        return a;
    }
    QJsonObject o = node.toObject();
    const QString key = path.at(i).toString();
    if (i + 1 == path.size() && value.isUndefined())
        o.remove(key);
    else
        o[key] = setAt(o.value(key), path, value, i + 1);
    return o;
}
} // namespace

class TstIngressReaders : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void validTableIsHeldAsSecret_CI01()
    {
        const auto table = RouteTable::read(validTable(7), QStringLiteral("request.routeTable"));
        QVERIFY2(table.ok(), qPrintable(table.ok() ? QString() : table.refusal().text()));
        QCOMPARE(table->revision(), 7);
        QCOMPARE(table->routeCount(), 2);
        QCOMPARE(table->hostnameCount(), 3); // distinct hostnames named by routes and certificates
        QCOMPARE(table->describe(), QStringLiteral("revision 7 (2 routes, 3 hostnames)"));
        QVERIFY(!table->describe().contains("KEY-CANARY"));
        // The material is the whole table, compact.
        const QJsonObject back = QJsonDocument::fromJson(table->material().reveal().toByteArray()).object();
        QCOMPARE(back, validTable(7));
    }

    void invalidTablesFirstReason_CI05_data()
    {
        QTest::addColumn<QVariantList>("path");
        QTest::addColumn<QJsonValue>("value");
        QTest::addColumn<QString>("reason");
        const QJsonValue gone(QJsonValue::Undefined);
        QTest::newRow("missing revision") << QVariantList{"revision"} << gone << "field t.revision is missing";
        QTest::newRow("unknown top key") << QVariantList{"extra"} << QJsonValue(1) << "field t has a member the contract does not name";
        QTest::newRow("revision 0") << QVariantList{"revision"} << QJsonValue(0) << "field t.revision is below 1";
        QTest::newRow("revision fraction") << QVariantList{"revision"} << QJsonValue(1.5) << "field t.revision is not an integer";
        QTest::newRow("route not object") << QVariantList{"routes", 1} << QJsonValue("x") << "field t.routes[1] is not an object";
        QTest::newRow("route unknown key") << QVariantList{"routes", 0, "weight"} << QJsonValue(2) << "field t.routes[0] has a member the contract does not name";
        QTest::newRow("hostname uppercase") << QVariantList{"routes", 1, "hostname"} << QJsonValue("B.EXAMPLE.COM")
                                            << "field t.routes[1].hostname is not a lowercase DNS name";
        QTest::newRow("hostname repeated") << QVariantList{"routes", 1, "hostname"} << QJsonValue("a.example.com")
                                           << "field t.routes[1].hostname repeats the hostname of routes[0]";
        QTest::newRow("certificate hostname malformed") << QVariantList{"certificates", 0, "hostnames", 2} << QJsonValue("-x.example.com")
                                                        << "field t.certificates[0].hostnames[2] is not a lowercase DNS name";
        QTest::newRow("certificateId names none") << QVariantList{"routes", 1, "certificateId"} << QJsonValue("cert-z")
                                                  << "field t.routes[1].certificateId names no certificate";
        QTest::newRow("certificate lacks hostname")
            << QVariantList{"certificates", 0, "hostnames"} << QJsonValue(QJsonArray{"a.example.com"})
            << "field t.routes[1].certificateId names certificates[0], whose hostnames do not contain the route's hostname";
        QTest::newRow("no targets") << QVariantList{"routes", 0, "targets"} << QJsonValue(QJsonArray{})
                                    << "field t.routes[0].targets is empty";
        QTest::newRow("address not IPv4") << QVariantList{"routes", 0, "targets", 1, "address"} << QJsonValue("fd00::1")
                                          << "field t.routes[0].targets[1].address is not an IPv4 literal";
        QTest::newRow("octet out of range") << QVariantList{"routes", 0, "targets", 0, "address"} << QJsonValue("10.0.0.256")
                                            << "field t.routes[0].targets[0].address is not an IPv4 literal";
        QTest::newRow("port 0") << QVariantList{"routes", 1, "targets", 0, "port"} << QJsonValue(0)
                                << "field t.routes[1].targets[0].port is not in 1..65535";
        QTest::newRow("port too high") << QVariantList{"routes", 1, "targets", 0, "port"} << QJsonValue(65536)
                                       << "field t.routes[1].targets[0].port is not in 1..65535";
        QTest::newRow("key not string") << QVariantList{"certificates", 0, "privateKeyPem"} << QJsonValue(5)
                                        << "field t.certificates[0].privateKeyPem is not a string";
        QTest::newRow("key empty") << QVariantList{"certificates", 0, "privateKeyPem"} << QJsonValue("")
                                   << "field t.certificates[0].privateKeyPem is empty";
        QTest::newRow("target node id empty") << QVariantList{"routes", 0, "targets", 0, "nodeId"} << QJsonValue("")
                                              << "field t.routes[0].targets[0].nodeId is not an id (non-empty, at most 256 characters, no control characters)";
    }
    void invalidTablesFirstReason_CI05()
    {
        QFETCH(QVariantList, path);
        QFETCH(QJsonValue, value);
        QFETCH(QString, reason);
        const QJsonObject table = setAt(validTable(), path, value).toObject();
        const auto read = RouteTable::read(table, QStringLiteral("t"));
        QVERIFY(!read.ok());
        QCOMPARE(read.refusal().name, QString(contract::refusal::routeTableInvalid));
        QCOMPARE(read.refusal().reason, reason);
    }

    // CI-05 ordering: the shape problem comes before a revision problem, which comes before references.
    void firstFailureWinsInContractOrder_CI05()
    {
        QJsonObject table = setAt(validTable(), {"revision"}, 0).toObject();
        table = setAt(table, {"routes", 0, "certificateId"}, "nope").toObject();
        QCOMPARE(RouteTable::read(table, "t").refusal().reason, QStringLiteral("field t.revision is below 1"));
        table = setAt(table, {"certificates", 0, "extra"}, true).toObject();
        QCOMPARE(RouteTable::read(table, "t").refusal().reason, QStringLiteral("field t.certificates[0] has a member the contract does not name"));
        QJsonObject dup = validTable();
        QJsonArray certs = dup.value("certificates").toArray();
        certs.append(certs.at(0));
        dup["certificates"] = certs;
        QCOMPARE(RouteTable::read(dup, "t").refusal().reason, QStringLiteral("field t.certificates[1].id repeats the id of certificates[0]"));
    }

    // CI-02: a refused value never appears in the reason, wherever it sits.
    void reasonsNeverQuoteMaterial_CI02()
    {
        const QString canary = QStringLiteral("CANARY-VALUE-91");
        const QList<QVariantList> paths{{"clusterId"}, {"routes", 0, "hostname"}, {"routes", 0, "certificateId"},
                                        {"routes", 0, "targets", 0, "address"}, {"certificates", 0, "hostnames", 0},
                                        {"certificates", 0, "id"}};
        for (const QVariantList &path : paths) {
            QJsonObject table = setAt(validTable(), path, canary + QStringLiteral("\n\x01")).toObject();
            table = setAt(table, {"certificates", 0, "privateKeyPem"}, 17).toObject();
            const auto read = RouteTable::read(table, "t");
            QVERIFY(!read.ok());
            QVERIFY2(!read.refusal().text().contains(canary), qPrintable(read.refusal().text()));
            QVERIFY(!read.refusal().text().contains("KEY-CANARY"));
        }
        QJsonObject namedByCanary = validTable();
        namedByCanary[canary] = 1;
        QVERIFY(!RouteTable::read(namedByCanary, "t").refusal().text().contains(canary));
        const QJsonObject keyIsObject = setAt(validTable(), {"certificates", 0, "privateKeyPem"}, QJsonObject{{"k", kKeyCanary}}).toObject();
        QVERIFY(!RouteTable::read(keyIsObject, "t").refusal().text().contains("KEY-CANARY"));
    }

    void hostnameAndAddressForms()
    {
        QVERIFY(RouteTable::isHostname("a.example.com"));
        QVERIFY(RouteTable::isHostname("x-1.b2.example"));
        QVERIFY(!RouteTable::isHostname("localhost"));
        QVERIFY(!RouteTable::isHostname("*.example.com"));
        QVERIFY(!RouteTable::isHostname("a..example.com"));
        QVERIFY(!RouteTable::isHostname("a.example.com."));
        QVERIFY(!RouteTable::isHostname(QString(64, QLatin1Char('a')) + ".com"));
        QVERIFY(RouteTable::isIpv4Literal("0.0.0.0"));
        QVERIFY(RouteTable::isIpv4Literal("255.255.255.255"));
        QVERIFY(!RouteTable::isIpv4Literal("01.2.3.4"));
        QVERIFY(!RouteTable::isIpv4Literal("1.2.3"));
        QVERIFY(!RouteTable::isIpv4Literal(" 1.2.3.4"));
    }

    // CI-24: the registration body's exact shape; the bearer is never quoted.
    void ingressRegistrationShape_CI24()
    {
        const QJsonObject offer{{"sessionKind", "clusterIngress"}, {"release", "33.1.0"}};
        QJsonObject body{{"offer", offer}, {"ingressId", "ingress-1"}, {"nodeId", "node-a"}, {"authorization", "BEARER-CANARY"}};
        auto ok = IngressRegistration::read(body, "request");
        QVERIFY(ok.ok());
        QCOMPARE(ok->ingressId(), QStringLiteral("ingress-1"));
        QCOMPARE(ok->nodeId(), QStringLiteral("node-a"));

        auto reasonFor = [&](QJsonObject b) {
            auto r = IngressRegistration::read(b, "request");
            return r.ok() ? QString() : r.refusal().reason;
        };
        QJsonObject b = body;
        b.remove("ingressId");
        QCOMPARE(reasonFor(b), QStringLiteral("field request.ingressId is missing"));
        b = body;
        b["extra"] = 1;
        QCOMPARE(reasonFor(b), QStringLiteral("field request has a member the contract does not name"));
        b = body;
        b["authorization"] = "";
        QCOMPARE(reasonFor(b), QStringLiteral("field request.authorization is empty"));
        b = body;
        b["authorization"] = 5;
        QCOMPARE(reasonFor(b), QStringLiteral("field request.authorization is not a string"));
        b = body;
        b["nodeId"] = "";
        QVERIFY(reasonFor(b).startsWith("field request.nodeId is not an id"));
        b = body;
        b["offer"] = QJsonObject{{"sessionKind", "clusterIngress"}, {"release", "33.1.0"}, {"x", 1}};
        QCOMPARE(reasonFor(b), QStringLiteral("field request.offer has a member the contract does not name"));
        b = body;
        b["BEARER-CANARY"] = 1;
        QVERIFY(!reasonFor(b).contains("BEARER-CANARY"));
        b = body;
        b["ingressId"] = QJsonArray{"BEARER-CANARY"};
        QVERIFY(!reasonFor(b).contains("BEARER-CANARY"));
        QVERIFY(!reasonFor(b).isEmpty());
    }
};

QTEST_GUILESS_MAIN(TstIngressReaders)
#include "tst_ingressreaders.moc"
