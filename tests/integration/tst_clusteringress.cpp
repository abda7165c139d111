// Cluster ingress: route table custody, the ingress lane and traffic statistics (docs/contract.md §10, §6.7).
// A LoopbackIngress dials the relay's real TLS listener; a LoopbackCloudly pushes and answers; the relay runs
// in-process on a ManualClock.
// Rules: CI-01..CI-24, PV-06, PV-07, PV-09, PV-24.
#include "tests/support/epolltestmain.h"
#include "tests/integration/logcapture.h"
#include "tests/peers/loopbackingress.h"
#include "tests/integration/relayfixture.h"
#include "tests/support/loggedrelaytest.h"

#include "service/cloudly/cloudlyconnector.h"
#include "shared/contract/methods.h"
#include "shared/contract/refusalnames.h"
#include "service/forwarding/sessionforwarder.h"
#include "service/ingress/clusteringress.h"

#include <QDir>
#include <QDirIterator>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSignalSpy>
#include <QTest>

using namespace coreflow;
using namespace coreflow::testing;
using coreflow::peers::Answer;
using coreflow::peers::LoopbackIngress;

namespace {

const QString kHint = QStringLiteral("pushClusterIngressRouteTableChanged");
const QString kPull = QStringLiteral("getClusterIngressRouteTable");
const QString kRegister = QStringLiteral("registerClusterIngress");
const QString kStatistics = QStringLiteral("getClusterTrafficStatistics");
const QString kPush = QStringLiteral("pushClusterRouteTable");

QJsonObject routeTable(qint64 revision, const QString &privateKey = QStringLiteral("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"))
{
    const QJsonObject target{{"nodeId", "node-a"}, {"address", "10.0.0.5"}, {"port", 30080}};
    return QJsonObject{
        {"clusterId", "cluster-1"},
        {"revision", revision},
        {"computedAt", 1700000000000LL + revision},
        {"routes", QJsonArray{QJsonObject{{"hostname", "a.example.com"}, {"certificateId", "cert-a"}, {"targets", QJsonArray{target}}},
                              QJsonObject{{"hostname", "b.example.com"}, {"certificateId", "cert-a"}, {"targets", QJsonArray{target}}}}},
        {"certificates", QJsonArray{QJsonObject{{"id", "cert-a"},
                                                {"hostnames", QJsonArray{"a.example.com", "b.example.com", "c.example.com"}},
                                                {"certificatePem", "-----BEGIN CERTIFICATE-----\nBBBB\n-----END CERTIFICATE-----\n"},
                                                {"privateKeyPem", privateKey}}}}};
}

QByteArray pushBody(const QJsonObject &table) { return peers::PeerEnvelope::compact({{"routeTable", table}}); }

QJsonObject errorOf(const peers::PeerFrame &frame) { return QJsonDocument::fromJson(frame.error.toByteArray()).object(); }
QJsonObject responseOf(const peers::PeerFrame &frame) { return QJsonDocument::fromJson(frame.response.toByteArray()).object(); }

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

// pushClusterRouteTable; the answered revision, or -1 for a refusal / no answer.
qint64 pushTable(RelayFixture &f, const QJsonObject &table)
{
    const auto answer = fromCloudly(f, kPush, pushBody(table));
    if (!answer || answer->hasError())
        return -1;
    return responseOf(*answer).value("revision").toInteger(-1);
}

std::unique_ptr<LoopbackIngress> connectIngress(RelayFixture &f, const QString &id = QStringLiteral("ingress-1"),
                                                const QString &release = QStringLiteral("33.1.0"))
{
    LoopbackIngress::Options options;
    options.ingressId = id;
    options.bearer = QByteArrayLiteral("ingress-bearer-") + id.toUtf8();
    options.release = release;
    options.url = QUrl(QStringLiteral("wss://localhost:%1/").arg(f.relayPort));
    options.caCertificates = {f.ca.caCertificate()};
    auto ingress = std::make_unique<LoopbackIngress>(options);
    ingress->open();
    if (!waitFor([&] { return ingress->isConnected(); }))
        qWarning("ingress %s could not connect: %s", qPrintable(id), qPrintable(ingress->lastError()));
    return ingress;
}

// Ingress -> relay; the answer frame.
template <typename Call>
std::optional<peers::PeerFrame> ask(Call call)
{
    std::optional<peers::PeerFrame> answer;
    call([&](const peers::PeerFrame &frame) { answer = frame; });
    waitFor([&] { return answer.has_value(); });
    return answer;
}

// A round trip on the ingress' own connection: the relay answers frames of one connection in order and
// writes to it in order, so once this answer is back every frame the relay sent the ingress before it
// (a route table hint, say) has arrived. The quiet checks end with it instead of a sleep.
bool settleIngressHop(LoopbackIngress &ingress)
{
    const auto answer = ask([&](auto cb) { ingress.call(QStringLiteral("coreflowTestBarrier"), QByteArray("{}"), cb); });
    if (!answer)
        QTest::qFail("the relay did not answer the ingress hop barrier", __FILE__, __LINE__);
    return answer.has_value();
}

std::unique_ptr<LoopbackIngress> boundIngress(RelayFixture &f, const QString &id = QStringLiteral("ingress-1"))
{
    auto ingress = connectIngress(f, id);
    const auto answer = ask([&](auto cb) { ingress->registerIngress(cb); });
    if (!answer || answer->hasError())
        qWarning("ingress %s was not registered", qPrintable(id));
    return ingress;
}

} // namespace

class TstClusterIngress : public LoggedRelayTest {
    Q_OBJECT

private Q_SLOTS:

    // CI-15, CI-16, CI-14: the registration travels to Cloudly byte for byte, bearer included; Cloudly's
    // acceptance binds the connection and comes back byte-identical beside the held revision. A table
    // adopted before any ingress is bound was hinted to nobody.
    void registrationCarriedUntouchedAndAnswersHeldRevision_CI14_CI15_CI16()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        QCOMPARE(pushTable(f, routeTable(7)), 7);
        QCOMPARE(log.count("route table revision 7 adopted while no cluster ingress is bound; hinted to nobody"), 1);

        const QByteArray acceptance = R"({ "offer" : {"sessionKind":"clusterIngress","release":"33.1.0"},"ingress":{"id":"ingress-1","generation":3} })";
        f.cloudly->setAnswer(kRegister, Answer::respondRaw(acceptance));
        auto ingress = connectIngress(f);
        const auto answer = ask([&](auto cb) { ingress->registerIngress(cb); });
        QVERIFY(answer && !answer->hasError());
        QCOMPARE(f.cloudly->callCount(kRegister), 1);
        QCOMPARE(f.cloudly->lastRawRequest(kRegister), ingress->registrationRequest());
        QVERIFY(f.cloudly->lastRawRequest(kRegister).contains("ingress-bearer-ingress-1"));
        QCOMPARE(answer->response.toByteArray(), QByteArray("{\"registration\":") + acceptance + ",\"routeTableRevision\":7}");
        QCOMPARE(ingress->registrationRevision(), 7);
        QCOMPARE(ingress->requestCount(kHint), 0);

        const auto status = f.relay->statusSnapshot().ingress;
        QVERIFY(status.bound);
        QCOMPARE(status.routeTableRevision, 7);
        QCOMPARE(status.routeCount, 2);
        QCOMPARE(status.hostnameCount, 3);

        const auto pulled = ask([&](auto cb) { ingress->pullRouteTable(cb); });
        QVERIFY(pulled && !pulled->hasError());
        QCOMPARE(ingress->routeTable().toObject(), routeTable(7));
    }

    // Issue 14 defect 1, contract §3.4 (D-57): a connection that has not registered has one
    // registerClusterIngress in flight at most; the second is refused by name and never reaches Cloudly.
    void unregisteredIngressHasOneRegistrationInFlight()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        f.cloudly->setAnswer(kRegister, Answer::respondRaw(R"({"offer":{"sessionKind":"clusterIngress","release":"33.1.0"},"ingress":{"id":"ingress-1","generation":1}})"));
        auto ingress = connectIngress(f);
        std::optional<peers::PeerFrame> first, second;
        ingress->registerIngress([&](const peers::PeerFrame &a) { first = a; });
        ingress->registerIngress([&](const peers::PeerFrame &a) { second = a; });
        QTRY_VERIFY(first && second);
        QVERIFY(!first->hasError());
        QVERIFY(second->hasError());
        QCOMPARE(second->errorRefusal().name, QStringLiteral("unregistered-request-in-flight"));
        QCOMPARE(f.cloudly->callCount(kRegister), 1);
        // Once bound, the ingress may register again.
        const auto again = ask([&](auto cb) { ingress->registerIngress(cb); });
        QVERIFY(again && !again->hasError());
        QCOMPARE(f.cloudly->callCount(kRegister), 2);
    }

    // CI-16, CI-22: Cloudly's refusal travels back byte-identical (error and retry) and binds nothing.
    void cloudlyRefusalTravelsUntouchedAndBindsNothing_CI16_CI22()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        QCOMPARE(pushTable(f, routeTable(2)), 2);
        const QByteArray error = R"({"text":"cluster-ingress-registration-refused: ingress-unknown: no ingress record","data":{"name":"cluster-ingress-registration-refused","reason":"ingress-unknown","retryAfterMs":60000}})";
        const QByteArray retry = R"({"waitForMs":60000,"reason":"ingress-unknown"})";
        f.cloudly->setAnswer(kRegister, Answer::errorRaw(error, retry));
        auto ingress = connectIngress(f);
        const auto answer = ask([&](auto cb) { ingress->registerIngress(cb); });
        QVERIFY(answer && answer->hasError());
        QCOMPARE(answer->error.toByteArray(), error);
        QCOMPARE(answer->retry.toByteArray(), retry);
        QVERIFY(!f.relay->statusSnapshot().ingress.bound);
        const auto pulled = ask([&](auto cb) { ingress->pullRouteTable(cb); });
        QCOMPARE(pulled->errorRefusal().name, QString(contract::refusal::ingressCallerNotBound));
    }

    // CI-17, CI-18: a later accepted registration supersedes; only the bound connection's close releases.
    void laterAcceptedSupersedesAndCloseReleasesOnlyTheBound_CI17_CI18()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        auto first = boundIngress(f, "ingress-a");
        auto second = boundIngress(f, "ingress-b");
        QVERIFY(first->registered() && second->registered());
        QCOMPARE(ask([&](auto cb) { first->pullRouteTable(cb); })->errorRefusal().name, QString(contract::refusal::ingressCallerNotBound));
        QVERIFY(!ask([&](auto cb) { second->pullRouteTable(cb); })->hasError());

        QCOMPARE(pushTable(f, routeTable(2)), 2);
        QVERIFY(waitFor([&] { return second->requestCount(kHint) == 1; }));
        QCOMPARE(first->requestCount(kHint), 0);

        const int connections = f.relay->forwarder()->connectionCount();
        first->close();
        QVERIFY(waitFor([&] { return f.relay->forwarder()->connectionCount() == connections - 1; }));
        QVERIFY(f.relay->statusSnapshot().ingress.bound);
        QVERIFY(!ask([&](auto cb) { second->pullRouteTable(cb); })->hasError());
        const auto stats = fromCloudly(f, kStatistics, R"({"sinceMs":0,"cursor":null,"limit":10})");
        QVERIFY(stats && !stats->hasError());
        QCOMPARE(second->requestCount(kStatistics), 1);

        second->close();
        QVERIFY(waitFor([&] { return !f.relay->statusSnapshot().ingress.bound; }));
        QCOMPARE(fromCloudly(f, kStatistics, R"({"sinceMs":0,"cursor":null,"limit":10})")->errorRefusal().name,
                 QString(contract::refusal::ingressNotBound));
        QCOMPARE(log.count("disconnected; no ingress is bound"), 1);
    }

    // CI-19: getClusterIngressRouteTable is answered for the bound connection alone — a node, or a
    // connection that never registered as the ingress, is refused by name.
    void nodeCallingRouteTableIsRefused_CI19()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        auto ingress = boundIngress(f);
        QCOMPARE(pushTable(f, routeTable(3)), 3);
        auto node = f.registeredNode("node-a");
        QVERIFY(node->session());
        std::optional<peers::PeerFrame> answer;
        node->call(kPull, QByteArray(R"({"appliedRevision":null})"), [&](const peers::PeerFrame &x) { answer = x; });
        QVERIFY(waitFor([&] { return answer.has_value(); }));
        QVERIFY(answer->response.isEmpty());
        QCOMPARE(answer->errorRefusal().text(), QStringLiteral("ingress-caller-not-bound: this connection is not the bound cluster ingress"));
        QVERIFY(!answer->raw.contains("PRIVATE KEY"));
        auto stranger = connectIngress(f, "ingress-unregistered");
        QCOMPARE(ask([&](auto cb) { stranger->pullRouteTable(cb); })->errorRefusal().name,
                 QString(contract::refusal::ingressCallerNotBound));
        QCOMPARE(f.relay->statusSnapshot().counters.refusalsByName.value("ingress-caller-not-bound"), 2);
    }

    // CI-03, CI-04, CI-11, CI-12: revision is the only idempotency; each adoption hints once with the
    // revision alone; ignored pushes hint nothing and answer the held revision.
    void revisionIsTheOnlyIdempotency_CI03_CI04_CI11_CI12()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        auto ingress = boundIngress(f);
        QCOMPARE(pushTable(f, routeTable(5)), 5);
        QVERIFY(waitFor([&] { return ingress->requestCount(kHint) == 1 && ingress->appliedRevision() == 5; }));
        QCOMPARE(ingress->requests(kHint).at(0).rawRequest, QByteArray(R"({"revision":5})"));
        QCOMPARE(pushTable(f, routeTable(5)), 5);
        QCOMPARE(pushTable(f, routeTable(3)), 5);
        QVERIFY(settleIngressHop(*ingress));
        QCOMPARE(ingress->requestCount(kHint), 1);
        QVERIFY(!ask([&](auto cb) { ingress->pullRouteTable(cb); })->hasError());
        QCOMPARE(ingress->routeTable().toObject(), routeTable(5));
        QCOMPARE(pushTable(f, routeTable(6)), 6);
        QVERIFY(waitFor([&] { return ingress->requestCount(kHint) == 2 && ingress->appliedRevision() == 6; }));
        QCOMPARE(ingress->requests(kHint).at(1).rawRequest, QByteArray(R"({"revision":6})"));
        QCOMPARE(ingress->routeTable().toObject(), routeTable(6));
        QCOMPARE(f.relay->statusSnapshot().ingress.routeTableRevision, 6);
    }

    // CI-05, CI-12: a table the validator refuses is refused with its first reason; the held table stays.
    void invalidTableIsRefusedAndHeldTableUntouched_CI05_CI12()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        auto ingress = boundIngress(f);
        QCOMPARE(pushTable(f, routeTable(5)), 5);
        QVERIFY(waitFor([&] { return ingress->requestCount(kHint) == 1; }));
        QJsonObject invalid = routeTable(9);
        QJsonArray routes = invalid["routes"].toArray();
        QJsonObject route = routes[1].toObject();
        route["certificateId"] = "cert-z";
        routes[1] = route;
        invalid["routes"] = routes;
        auto answer = fromCloudly(f, kPush, pushBody(invalid));
        QVERIFY(answer && answer->hasError());
        QCOMPARE(answer->errorRefusal().text(), QStringLiteral("route-table-invalid: field request.routeTable.routes[1].certificateId names no certificate"));
        answer = fromCloudly(f, kPush, R"({"table":{}})");
        QCOMPARE(answer->errorRefusal().text(), QStringLiteral("route-table-invalid: field request.routeTable is missing"));
        QVERIFY(settleIngressHop(*ingress));
        QCOMPARE(ingress->requestCount(kHint), 1);
        QVERIFY(!ask([&](auto cb) { ingress->pullRouteTable(cb); })->hasError());
        QCOMPARE(ingress->routeTable().toObject(), routeTable(5));
        QCOMPARE(f.relay->statusSnapshot().ingress.routeTableRevision, 5);
    }

    // CI-13: a failed hint (refused, or unanswered past its bound) is logged once and never retried.
    void failedHintIsLoggedOnceNeverRetried_CI13()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        auto ingress = boundIngress(f);
        ingress->setAnswer(kHint, Answer::refuse(QLatin1StringView("ingress-busy"), QStringLiteral("try later")));
        QCOMPARE(pushTable(f, routeTable(2)), 2);
        QVERIFY(waitFor([&] { return log.count("refused the hint for route table revision 2") == 1; }));
        f.clock.advance(60000);
        QVERIFY(settleIngressHop(*ingress));
        QCOMPARE(ingress->requestCount(kHint), 1);
        QCOMPARE(log.count("refused the hint for route table revision 2"), 1);

        ingress->setAnswer(kHint, Answer::silence());
        QCOMPARE(pushTable(f, routeTable(3)), 3);
        QVERIFY(waitFor([&] { return ingress->requestCount(kHint) == 2; }));
        f.clock.advance(7999);
        QVERIFY(settleIngressHop(*ingress));
        QCOMPARE(log.count("hint for route table revision 3 failed"), 0);
        f.clock.advance(1);
        QVERIFY(waitFor([&] { return log.count("hint for route table revision 3 failed: ingress-request-timeout ; not retried") == 1; }));
        f.clock.advance(60000);
        QVERIFY(settleIngressHop(*ingress));
        QCOMPARE(ingress->requestCount(kHint), 2);
        QCOMPARE(log.count("hint for route table revision 3 failed"), 1);
    }

    // CI-06..CI-10: the table is read with getClusterRouteTable only when asked (after an accepted
    // registration — never on the session registration), null is answered as null and said once per
    // transition, and a failed read keeps the last good table.
    void routeTableReads_CI06_CI07_CI08_CI09_CI10()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        // CI-06/CI-07: read once the relay's registration is accepted, never before it.
        QVERIFY(waitFor([&] { return f.cloudly->callCount("getClusterRouteTable") == 1; }));
        qsizetype registrationAt = -1, readAt = -1;
        for (qsizetype i = 0; i < f.cloudly->frames().size(); ++i) {
            const auto &frame = f.cloudly->frames().at(i);
            if (frame.method == "registerClusterRelay" && registrationAt < 0)
                registrationAt = i;
            if (frame.method == "getClusterRouteTable" && readAt < 0)
                readAt = i;
        }
        QVERIFY(registrationAt >= 0 && readAt > registrationAt);
        auto ingress = boundIngress(f);
        ClusterIngress *custody = f.relay->clusterIngress();
        const QString noneYet = QStringLiteral("Cloudly has computed no route table for this cluster yet");
        const QString noneKeeping = QStringLiteral("Cloudly has computed no route table for this cluster; keeping");
        QCOMPARE(log.count(noneYet), 1);

        for (int i = 1; i <= 2; ++i) {
            custody->refreshRouteTable();
            QVERIFY(waitFor([&] { return f.cloudly->callCount("getClusterRouteTable") == 1 + i; }));
        }
        QVERIFY(f.settleCloudlyHop()); // Cloudly's answers to the reads were processed before this one

        QCOMPARE(log.count(noneYet), 1);
        QVERIFY(!ask([&](auto cb) { ingress->pullRouteTable(cb); })->hasError());
        QCOMPARE(ingress->routeTableRaw(), QByteArray(R"({"routeTable":null})")); // CI-09: null, never an empty table
        QVERIFY(!f.relay->statusSnapshot().ingress.routeTableRevision.has_value());

        f.cloudly->setClusterRouteTable(routeTable(2));
        custody->refreshRouteTable(); // CI-06: adopted like a push, hinted
        QVERIFY(waitFor([&] { return ingress->requestCount(kHint) == 1 && ingress->appliedRevision() == 2; }));
        custody->refreshRouteTable(); // same revision again: read, ignored, not hinted
        QVERIFY(waitFor([&] { return log.count("ignored route table revision 2 from getClusterRouteTable") == 1; }));

        f.cloudly->setClusterRouteTable(QJsonValue(QJsonValue::Null));
        custody->refreshRouteTable();
        custody->refreshRouteTable();
        QVERIFY(waitFor([&] { return f.cloudly->callCount("getClusterRouteTable") == 7; }));
        QVERIFY(f.settleCloudlyHop());
        QCOMPARE(log.count(noneKeeping), 1); // CI-10: one more line for the transition
        QCOMPARE(custody->heldRevision(), 2);

        // CI-08: failed reads keep the last good table.
        f.cloudly->setAnswer("getClusterRouteTable", Answer::refuse(contract::refusal::relayNotConnected, QStringLiteral("no accepted registration")));
        custody->refreshRouteTable();
        QVERIFY(waitFor([&] { return log.count("Cloudly refused the route table read: relay-not-connected") == 1; }));
        QJsonObject invalid = routeTable(3);
        invalid["revision"] = 0;
        f.cloudly->setAnswer("getClusterRouteTable", Answer::respond({{"routeTable", invalid}}));
        custody->refreshRouteTable();
        QVERIFY(waitFor([&] { return log.count("refused the route table Cloudly answered: route-table-invalid: field response.routeTable.revision is below 1") == 1; }));
        f.cloudly->setAnswer("getClusterRouteTable", Answer::silence());
        custody->refreshRouteTable();
        QVERIFY(waitFor([&] { return f.cloudly->callCount("getClusterRouteTable") == 10; }));
        f.clock.advance(8000);
        QVERIFY(waitFor([&] { return log.count("route table read failed: cloudly-forward-timeout") == 1; }));
        QCOMPARE(custody->heldRevision(), 2);
        QVERIFY(!ask([&](auto cb) { ingress->pullRouteTable(cb); })->hasError());
        QCOMPARE(ingress->routeTable().toObject(), routeTable(2));
        QCOMPARE(ingress->requestCount(kHint), 1);

        // A newer table, then null again: one more transition line.
        f.cloudly->clearHandler("getClusterRouteTable");
        f.cloudly->setClusterRouteTable(routeTable(4));
        custody->refreshRouteTable();
        QVERIFY(waitFor([&] { return custody->heldRevision() == 4; }));
        f.cloudly->setClusterRouteTable(QJsonValue(QJsonValue::Null));
        custody->refreshRouteTable();
        QVERIFY(waitFor([&] { return log.count(noneKeeping) == 2; }));
    }

    // CI-07: a relay whose registration Cloudly refused (its session registration alone) reads nothing.
    void noReadWithoutAnAcceptedRegistration_CI07()
    {
        RelayFixture f;
        f.cloudly->setAnswer("registerClusterRelay", Answer::refuse(contract::refusal::relayNodeUnknown, QStringLiteral("no node record")));
        QVERIFY(f.startRelay());
        QVERIFY(waitFor([&] { return f.cloudly->callCount("registerClusterRelay") >= 1; }));
        QVERIFY(f.settleCloudlyHop()); // the refusal was read before the barrier: no read followed it
        QCOMPARE(f.cloudly->callCount("registerCloudlyClientSession"), 1);
        QCOMPARE(f.cloudly->callCount("getClusterRouteTable"), 0);
    }

    // CI-20, CI-21: statistics travel Cloudly -> relay -> bound ingress and back verbatim, or are
    // refused by name (not bound, timeout, connection lost).
    void trafficStatisticsCarriedToTheBoundIngress_CI20_CI21()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        const QByteArray question = R"({ "sinceMs" : 1700000000000, "cursor":null,"limit":100 })";
        auto answer = fromCloudly(f, kStatistics, question);
        QVERIFY(answer);
        QCOMPARE(answer->errorRefusal().text(), QStringLiteral("ingress-not-bound: no cluster ingress is bound to this relay"));

        auto ingress = boundIngress(f);
        answer = fromCloudly(f, kStatistics, question);
        QVERIFY(answer && !answer->hasError());
        QCOMPARE(ingress->requests(kStatistics).at(0).rawRequest, question);
        QCOMPARE(answer->response.toByteArray(), LoopbackIngress::trafficPage());

        const QByteArray error = R"({"text":"statistics-unavailable: collector restarting","data":{"name":"statistics-unavailable"}})";
        ingress->setAnswer(kStatistics, Answer::errorRaw(error));
        answer = fromCloudly(f, kStatistics, question);
        QCOMPARE(answer->error.toByteArray(), error);

        ingress->setAnswer(kStatistics, Answer::silence());
        std::optional<peers::PeerFrame> late;
        f.cloudly->push(kStatistics, question, [&](const peers::PeerFrame &x) { late = x; });
        QVERIFY(waitFor([&] { return ingress->requestCount(kStatistics) == 3; }));
        f.clock.advance(8000);
        QVERIFY(waitFor([&] { return late.has_value(); }));
        QCOMPARE(late->errorRefusal().text(),
                 QStringLiteral("ingress-request-timeout: getClusterTrafficStatistics got no answer from the ingress within 8000 ms"));

        late.reset();
        f.cloudly->push(kStatistics, question, [&](const peers::PeerFrame &x) { late = x; });
        QVERIFY(waitFor([&] { return ingress->requestCount(kStatistics) == 4; }));
        ingress->close();
        QVERIFY(waitFor([&] { return late.has_value(); }));
        QCOMPARE(late->errorRefusal().name, QString(contract::refusal::ingressConnectionLost));
    }

    // CI-23, CI-24: the relay's own registration refusals, in Cloudly's shape, retryAfterMs 5000.
    void relayRefusesInCloudlysShape_CI23_CI24()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        auto ingress = connectIngress(f);
        auto expectShape = [](const std::optional<peers::PeerFrame> &answer, const QString &reason) {
            QVERIFY(answer && answer->hasError());
            const QJsonObject error = errorOf(*answer);
            const QJsonObject data = error.value("data").toObject();
            QCOMPARE(data.value("name").toString(), QString(contract::refusal::clusterIngressRegistrationRefused));
            QCOMPARE(data.value("reason").toString(), reason);
            QCOMPARE(data.value("retryAfterMs").toInteger(), 5000);
            QVERIFY(error.value("text").toString().startsWith("cluster-ingress-registration-refused: " + reason + ": "));
            const QJsonObject retry = QJsonDocument::fromJson(answer->retry.toByteArray()).object();
            QCOMPARE(retry, (QJsonObject{{"waitForMs", 5000}, {"reason", reason}}));
        };

        // CI-24: an invalid body is not forwarded.
        const QByteArray missingId = R"({"offer":{"sessionKind":"clusterIngress","release":"33.1.0"},"nodeId":"n","authorization":"ingress-bearer-secret"})";
        auto answer = ask([&](auto cb) { ingress->call(kRegister, missingId, cb); });
        expectShape(answer, "registration-invalid");
        QCOMPARE(errorOf(*answer).value("text").toString(),
                 QStringLiteral("cluster-ingress-registration-refused: registration-invalid: field request.ingressId is missing"));
        QVERIFY(!answer->error.toByteArray().contains("ingress-bearer-secret"));
        QCOMPARE(f.cloudly->callCount(kRegister), 0);

        // CI-23: the forward fails (no answer within 8000 ms).
        f.cloudly->setAnswer(kRegister, Answer::silence());
        std::optional<peers::PeerFrame> late;
        ingress->registerIngress([&](const peers::PeerFrame &x) { late = x; });
        QVERIFY(waitFor([&] { return f.cloudly->callCount(kRegister) == 1; }));
        f.clock.advance(8000);
        QVERIFY(waitFor([&] { return late.has_value(); }));
        expectShape(late, "not-ready");
        QVERIFY(!f.relay->statusSnapshot().ingress.bound);

        // CI-23: no Cloudly session.
        f.cloudly->refuseConnections(true);
        f.cloudly->dropRelaySockets();
        QVERIFY(waitFor([&] { return !f.relay->cloudly()->isDispatchable(); }));
        answer = ask([&](auto cb) { ingress->registerIngress(cb); });
        expectShape(answer, "not-ready");
        QCOMPARE(f.cloudly->callCount(kRegister), 1);
        QCOMPARE(f.relay->statusSnapshot().counters.refusalsByName.value("cluster-ingress-registration-refused"), 3);
    }

    // PV-06, PV-07, PV-09, PV-24: the clusterIngress offer is judged before the body and before anything
    // is forwarded; a refused offer stands until a servable one arrives.
    void offerJudgedBeforeAnythingElse_PV06_PV07_PV09_data()
    {
        QTest::addColumn<QByteArray>("offerJson");
        QTest::addColumn<QString>("tail");
        QTest::newRow("another kind") << QByteArray(R"({"sessionKind":"palletRuntime","release":"33.1.0"})") << "palletRuntime@33.1.0";
        QTest::newRow("too old") << QByteArray(R"({"sessionKind":"clusterIngress","release":"31.9.9"})") << "clusterIngress@31.9.9";
        QTest::newRow("newer major") << QByteArray(R"({"sessionKind":"clusterIngress","release":"34.0.0"})") << "clusterIngress@34.0.0";
        QTest::newRow("unreadable") << QByteArray(R"({"sessionKind":"clusterIngress","release":"v33"})") << "no readable offer";
        QTest::newRow("absent") << QByteArray() << "no readable offer";
    }
    void offerJudgedBeforeAnythingElse_PV06_PV07_PV09()
    {
        QFETCH(QByteArray, offerJson);
        QFETCH(QString, tail);
        RelayFixture f;
        QVERIFY(f.startRelay());
        QSignalSpy refused(f.relay->clusterIngress(), &ClusterIngress::offerRefused);
        QSignalSpy accepted(f.relay->clusterIngress(), &ClusterIngress::offerAccepted);
        auto ingress = connectIngress(f);
        // The rest of the body is invalid too: the offer is what the peer hears about.
        const QByteArray body = offerJson.isEmpty() ? QByteArray(R"({"nodeId":"n"})") : "{\"offer\":" + offerJson + ",\"nodeId\":\"n\"}";
        const auto answer = ask([&](auto cb) { ingress->call(kRegister, body, cb); });
        QVERIFY(answer && answer->hasError());
        QVERIFY(answer->retry.isEmpty());
        const QJsonObject error = errorOf(*answer);
        const QJsonObject data = error.value("data").toObject();
        QCOMPARE(data.value("name").toString(), QString(contract::refusal::protocolOfferRefused));
        QCOMPARE(data.value("ownOffer").toObject(), (QJsonObject{{"sessionKind", "clusterIngress"}, {"release", "33.1.0"}}));
        if (tail == "no readable offer")
            QVERIFY(data.value("peerOffer").isNull());
        else
            QCOMPARE(data.value("peerOffer").toObject(), QJsonDocument::fromJson(offerJson).object());
        QCOMPARE(error.value("text").toString(),
                 QStringLiteral("protocol-offer-refused: this relay serves clusterIngress from 32.0.0 (it speaks 33.1.0); the peer offered ") + tail);
        QCOMPARE(f.cloudly->callCount(kRegister), 0);
        QCOMPARE(refused.size(), 1);
        QCOMPARE(accepted.size(), 0);
        const auto standing = f.relay->clusterIngress()->offerRefusal();
        QVERIFY(standing);
        QCOMPARE(standing->hop, QStringLiteral("clusterIngress"));
        QCOMPARE(standing->ownOffer, QStringLiteral("clusterIngress@33.1.0"));
        // D-62: the relay's readiness is the hops it serves; a peer's refused offer is counted.
        QVERIFY(f.relay->checkReadiness().ready);
        QCOMPARE(f.relay->statusSnapshot().counters.refusalsByName.value(QString(contract::refusal::protocolOfferRefused)), 1);

        // The oldest accepted release is servable and clears the standing refusal (PV-24).
        auto oldest = connectIngress(f, "ingress-old", "32.0.0");
        const auto ok = ask([&](auto cb) { oldest->registerIngress(cb); });
        QVERIFY(ok && !ok->hasError());
        QCOMPARE(accepted.size(), 1);
        QVERIFY(!f.relay->clusterIngress()->offerRefusal());
        QVERIFY(f.relay->statusSnapshot().ingress.bound);
    }

    // CI-03, CI-11: a burst of out-of-order pushes settles on the highest revision with exactly one hint
    // per adoption, in adoption order.
    void burstOfOutOfOrderPushesSettlesOnHighest_CI03_CI11()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        auto ingress = boundIngress(f);
        const QList<qint64> pushes{3, 1, 5, 2, 5, 4, 9, 7, 8, 9, 6};
        QList<qint64> answers(pushes.size(), -2);
        for (qsizetype i = 0; i < pushes.size(); ++i)
            f.cloudly->push(kPush, pushBody(routeTable(pushes.at(i))), [&answers, i](const peers::PeerFrame &x) {
                answers[i] = x.hasError() ? -1 : responseOf(x).value("revision").toInteger(-1);
            });
        QVERIFY(waitFor([&] { return !answers.contains(-2); }));
        QCOMPARE(answers, (QList<qint64>{3, 3, 5, 5, 5, 5, 9, 9, 9, 9, 9}));
        QVERIFY(waitFor([&] { return ingress->requestCount(kHint) == 3 && ingress->appliedRevision() == 9; }));
        QVERIFY(settleIngressHop(*ingress));
        const auto hints = ingress->requests(kHint);
        QCOMPARE(hints.size(), 3);
        QCOMPARE(hints.at(0).rawRequest, QByteArray(R"({"revision":3})"));
        QCOMPARE(hints.at(1).rawRequest, QByteArray(R"({"revision":5})"));
        QCOMPARE(hints.at(2).rawRequest, QByteArray(R"({"revision":9})"));
        QCOMPARE(ingress->routeTable().toObject(), routeTable(9));
        QCOMPARE(f.relay->statusSnapshot().ingress.routeTableRevision, 9);
        QCOMPARE(log.count("adopted route table revision"), 3);
    }

    // CI-01, CI-02: a canary private key reaches the bound ingress and nothing else: no log line, no
    // error, no status member, no file.
    void canaryPrivateKeyNeverLeaks_CI01_CI02()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        const QString canary = QStringLiteral("ROUTE-KEY-CANARY-") + QString::number(QDateTime::currentMSecsSinceEpoch());
        const QString keyPem = QStringLiteral("-----BEGIN PRIVATE KEY-----\n") + canary + QStringLiteral("\n-----END PRIVATE KEY-----\n");
        QStringList texts;
        auto ingress = boundIngress(f);
        QCOMPARE(pushTable(f, routeTable(4, keyPem)), 4);
        QVERIFY(waitFor([&] { return ingress->appliedRevision() == 4; }));
        QVERIFY(ingress->routeTableRaw().contains(canary.toUtf8())); // delivered to the bound ingress ...

        // ... refused tables carrying it in several places
        QJsonObject badHost = routeTable(5, keyPem);
        QJsonArray routes = badHost["routes"].toArray();
        QJsonObject route = routes[0].toObject();
        route["hostname"] = canary;
        routes[0] = route;
        badHost["routes"] = routes;
        QJsonObject keyObject = routeTable(6);
        QJsonArray certificates = keyObject["certificates"].toArray();
        QJsonObject certificate = certificates[0].toObject();
        certificate["privateKeyPem"] = QJsonObject{{"pem", keyPem}};
        certificates[0] = certificate;
        keyObject["certificates"] = certificates;
        QJsonObject unknownMember = routeTable(7, keyPem);
        unknownMember[canary] = keyPem;
        for (const QJsonObject &bad : {badHost, keyObject, unknownMember}) {
            const auto answer = fromCloudly(f, kPush, pushBody(bad));
            QVERIFY(answer && answer->hasError());
            texts << answer->errorRefusal().text();
            QVERIFY(!answer->error.toByteArray().contains(canary.toUtf8()));
        }
        // ... a read answering an invalid table with it, a stale push, a node's pull.
        QJsonObject staleRead = routeTable(8, keyPem);
        staleRead["computedAt"] = -1;
        f.cloudly->setClusterRouteTable(staleRead);
        f.relay->clusterIngress()->refreshRouteTable();
        QVERIFY(waitFor([&] { return log.count("refused the route table Cloudly answered") == 1; }));
        QCOMPARE(pushTable(f, routeTable(3, keyPem)), 4);
        auto node = f.registeredNode("node-a");
        std::optional<peers::PeerFrame> nodeAnswer;
        node->call(kPull, QByteArray(R"({"appliedRevision":4})"), [&](const peers::PeerFrame &x) { nodeAnswer = x; });
        QVERIFY(waitFor([&] { return nodeAnswer.has_value(); }));
        texts << nodeAnswer->errorRefusal().text();
        QVERIFY(!nodeAnswer->raw.contains(canary.toUtf8()));

        const QByteArray status = QJsonDocument(f.relay->statusSnapshot().toJson()).toJson();
        QVERIFY(status.contains("\"routeTableRevision\""));
        QVERIFY(f.stopRelay());

        QVERIFY(texts.size() == 4);
        for (const QString &text : texts)
            QVERIFY2(!text.contains(canary), qPrintable(text));
        QVERIFY2(!status.contains(canary.toUtf8()), "status leaks the route table key");
        const QStringList lines = log.lines();
        QVERIFY(lines.size() > 10);
        for (const QString &line : lines) {
            QVERIFY2(!line.contains(canary), qPrintable(QStringLiteral("log line leaks the route table key: ") + line));
            QVERIFY2(!line.contains("PRIVATE KEY"), qPrintable(line));
        }
        // CI-01: nothing written — not in the fixture's directory, not in the working directory.
        QDirIterator fixtureFiles(f.dir.path(), QDir::Files, QDirIterator::Subdirectories);
        QVERIFY(!fixtureFiles.hasNext());
        QDirIterator here(QDir::currentPath(), QDir::Files);
        while (here.hasNext()) {
            QFile file(here.next());
            if (file.size() > 64 * 1024 * 1024 || !file.open(QIODevice::ReadOnly))
                continue;
            QVERIFY2(!file.readAll().contains(canary.toUtf8()), qPrintable(file.fileName()));
        }
    }
};

COREFLOW_EPOLL_TEST_MAIN(TstClusterIngress)
#include "tst_clusteringress.moc"
