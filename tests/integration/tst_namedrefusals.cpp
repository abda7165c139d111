// Every method Cloudly may dispatch that the relay does not serve is answered by name (seed "Pending
// relay functions", "Corestore through the relay"; docs/contract.md §16). Rules: PF-01 (pending
// functions: prompt named refusal), PF-02..PF-05 (why each is pending), PF-06 (retired Swarm methods
// name capability and new owner), CS-83 and OV-04 (removed methods are not registered at all).
#include "tests/support/epolltestmain.h"
#include "tests/integration/logcapture.h"
#include "tests/integration/relayfixture.h"

#include "service/namedrefusals/namedrefusals.h"
#include "shared/contract/methods.h"
#include "shared/contract/refusalnames.h"

#include <QJsonDocument>
#include <QTest>

using namespace coreflow;
using namespace coreflow::testing;

namespace {
QJsonObject errorOf(const peers::PeerFrame &frame)
{
    return QJsonDocument::fromJson(frame.error.toByteArray()).object();
}

// Pushes method from Cloudly and waits for the relay's answer without moving the clock (prompt, no timeout).
std::optional<peers::PeerFrame> dispatch(RelayFixture &f, const QString &method, const QByteArray &body = "{}")
{
    std::optional<peers::PeerFrame> answer;
    f.cloudly->push(method, body, [&](const peers::PeerFrame &frame) { answer = frame; });
    for (int i = 0; i < 200 && !answer; ++i)
        QTest::qWait(10);
    return answer;
}
} // namespace

class TstNamedRefusals : public QObject {
    Q_OBJECT
    LogCapture log;

private Q_SLOTS:
    void init()
    {
        log.install();
        log.clear();
    }

    // PF-06: every retired Swarm method answers retired-swarm-method naming the capability and the owner.
    void retiredSwarmMethodsNameCapabilityAndOwner_PF06()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        const auto entries = NamedRefusals::retiredSwarmEntries();
        QCOMPARE(entries.size(), qsizetype(contract::method::retiredSwarmMethods.size()));
        const qint64 before = f.clock.nowMs();
        for (const auto &name : contract::method::retiredSwarmMethods) {
            const QString method(name);
            const auto answer = dispatch(f, method, R"({"anything":[1,2,{"x":null}]})");
            QVERIFY2(answer, qPrintable(method));
            QVERIFY(answer->hasError());
            QVERIFY(answer->response.isEmpty());
            const QJsonObject error = errorOf(*answer);
            const QJsonObject data = error.value("data").toObject();
            QCOMPARE(data.value("name").toString(), QString(contract::refusal::retiredSwarmMethod));
            QCOMPARE(data.value("method").toString(), method);
            QVERIFY(!data.value("capability").toString().isEmpty());
            QVERIFY(!data.value("owner").toString().isEmpty());
            QCOMPARE(error.value("text").toString(),
                     QStringLiteral("retired-swarm-method: %1 belonged to the retired Swarm reconciler (%2); %3 owns it now")
                         .arg(method, data.value("capability").toString(), data.value("owner").toString()));
            QCOMPARE(log.count(QStringLiteral("answered %1 from Cloudly with retired-swarm-method").arg(method)), 1);
        }
        QCOMPARE(f.clock.nowMs(), before); // answered at once: no timer was needed
        // The contract's list (docs/contract.md §16.1), spot-checked.
        const auto answer = dispatch(f, "updateTrafficRoutes");
        QCOMPARE(errorOf(*answer).value("data").toObject().value("owner").toString(),
                 QStringLiteral("the cluster ingress (getClusterIngressRouteTable)"));
        QCOMPARE(f.relay->statusSnapshot().counters.refusalsByName.value("retired-swarm-method"), 9);
    }

    // PF-01..PF-05: each pending function answers relay-function-pending stating why, at once.
    void pendingFunctionsStateWhy_PF01_PF02_PF03_PF04_PF05()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        const QHash<QString, QString> why{
            {"renewClusterRelayCertificate", "renewal needs live rotation first"},
            {"replayClusterDesiredState", "the relay caches no desired state"},
            {"delegateRuntimeNetworkSigning", "the relay holds no signing key"},
            {"getClusterRelayServedNodes", "registerClusterRelay carries no roster"}};
        QCOMPARE(qsizetype(contract::method::pendingFunctionMethods.size()), why.size());
        for (const auto &name : contract::method::pendingFunctionMethods) {
            const QString method(name);
            // Request bodies are not read: any body gets the refusal.
            const auto real = dispatch(f, method, R"({"certificatePem":"x","nodes":[]})");
            QVERIFY2(real, qPrintable(method));
            const QJsonObject error = errorOf(*real);
            const QJsonObject data = error.value("data").toObject();
            QCOMPARE(data.value("name").toString(), QString(contract::refusal::relayFunctionPending));
            QVERIFY(!data.value("function").toString().isEmpty());
            const QString text = error.value("text").toString();
            QVERIFY2(text.startsWith(QStringLiteral("relay-function-pending: %1 is not built: ").arg(data.value("function").toString())),
                     qPrintable(text));
            QVERIFY2(text.contains(why.value(method)), qPrintable(text));
        }
    }

    // CS-83, OV-04: the removed methods are not registered: a missing handler, not a named retirement.
    void removedMethodsAreNotRegistered_CS83_OV04()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        for (const auto &name : contract::method::removedMethods) {
            const QString method(name);
            QVERIFY(!f.relay->cloudlyMethods().serves(method));
            const auto answer = dispatch(f, method, R"({"nodeId":"node-a"})");
            QVERIFY(answer);
            const contract::Refusal refusal = answer->errorRefusal();
            QCOMPARE(refusal.name, QString(contract::refusal::methodNotServed));
            QVERIFY2(refusal.reason.contains(method), qPrintable(refusal.text()));
        }
        // OV-04: the statistics path that replaced coreflowGetTrafficStats is served (refused by name here:
        // no ingress is bound), never method-not-served.
        const auto stats = dispatch(f, "getClusterTrafficStatistics", R"({"sinceMs":0,"cursor":null,"limit":10})");
        QCOMPARE(stats->errorRefusal().name, QString(contract::refusal::ingressNotBound));
    }

    // The named refusals answer Cloudly only: the listener lane does not serve them (CL-01), and they
    // are registered on a relay without a listener too (every dispatch answered by name).
    void cloudlyLaneOnlyAndWithoutListener_PF01_PF06()
    {
        {
            RelayFixture f;
            QVERIFY(f.startRelay());
            auto node = f.connectNode("node-a");
            std::optional<peers::PeerFrame> answer;
            node->call("getServices", QByteArray("{}"), [&](const peers::PeerFrame &x) { answer = x; });
            QTRY_VERIFY(answer);
            QCOMPARE(answer->errorRefusal().name, QString(contract::refusal::methodNotServed));
        }
        {
            RelayFixture f(false); // no relay block: no listener
            QVERIFY(f.startRelay());
            QCOMPARE(dispatch(f, "getSwarmNodes")->errorRefusal().name, QString(contract::refusal::retiredSwarmMethod));
            QCOMPARE(dispatch(f, "replayClusterDesiredState")->errorRefusal().name, QString(contract::refusal::relayFunctionPending));
            // D-01: without a listener the ingress' Cloudly methods are not registered at all.
            QCOMPARE(dispatch(f, "pushClusterRouteTable", R"({"routeTable":{}})")->errorRefusal().name,
                     QString(contract::refusal::methodNotServed));
            QCOMPARE(dispatch(f, "getClusterTrafficStatistics")->errorRefusal().name, QString(contract::refusal::methodNotServed));
        }
    }
};

COREFLOW_EPOLL_TEST_MAIN(TstNamedRefusals)
#include "tst_namedrefusals.moc"
