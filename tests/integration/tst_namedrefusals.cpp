// Every method Cloudly may dispatch that the relay does not serve is answered by name (docs/contract.md §16).
// Rules: PF-01 (pending functions: prompt named refusal), PF-02..PF-05 (why each is pending), PF-06 (retired
// Swarm methods name capability and new owner), CS-83 and OV-04 (removed methods are not registered at all).
#include "tests/support/epolltestmain.h"
#include "tests/integration/logcapture.h"
#include "tests/integration/relayfixture.h"
#include "tests/support/loggedrelaytest.h"

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
    return f.dispatch(method, body);
}
} // namespace

class TstNamedRefusals : public LoggedRelayTest {
    Q_OBJECT

private Q_SLOTS:

    // PF-06: every retired Swarm method answers retired-swarm-method naming the capability and the owner.
    // The expected methods, capabilities and owners are written out from docs/contract.md §16.1, not
    // taken from the relay's own lists.
    void retiredSwarmMethodsNameCapabilityAndOwner_PF06_data()
    {
        QTest::addColumn<QString>("capability");
        QTest::addColumn<QString>("owner");
        QTest::newRow("getServices") << "listing the cluster's Swarm services"
                                     << "Cloudly (from Pallet's `reportRuntimeAssignmentObservation`)";
        QTest::newRow("updateServices") << "reconciling Swarm services to the desired set"
                                        << "Pallet (`applyRuntimeAssignment`, decided by Cloudly)";
        QTest::newRow("deleteService") << "removing a Swarm service" << "Pallet (an assignment Cloudly withdraws)";
        QTest::newRow("restartService") << "restarting a Swarm service's tasks"
                                        << "Pallet (a new assignment generation from Cloudly)";
        QTest::newRow("getServiceLogs") << "reading a Swarm service's task logs" << "Pallet on the node running the workload";
        QTest::newRow("getSwarmNodes") << "listing Swarm nodes and their state" << "Cloudly (node records, enrolled by Spark)";
        QTest::newRow("updateSwarmNetworks") << "creating overlay networks"
                                             << "Cloudly's network compiler and Pallet's runtime network";
        QTest::newRow("updateTrafficRoutes") << "pushing routes to Coretraffic"
                                             << "the cluster ingress (`getClusterIngressRouteTable`)";
    }
    void retiredSwarmMethodsNameCapabilityAndOwner_PF06()
    {
        QFETCH(QString, capability);
        QFETCH(QString, owner);
        // The contract's table marks code spans with backticks; the wire text carries none.
        capability.remove(QLatin1Char('`'));
        owner.remove(QLatin1Char('`'));
        const QString method = QString::fromLatin1(QTest::currentDataTag());
        RelayFixture f;
        QVERIFY(f.startRelay());
        const qint64 before = f.clock.nowMs();
        const auto answer = dispatch(f, method, R"({"anything":[1,2,{"x":null}]})");
        QVERIFY2(answer, qPrintable(method));
        QVERIFY(answer->hasError());
        QVERIFY(answer->response.isEmpty());
        const QJsonObject error = errorOf(*answer);
        QCOMPARE(error.value("text").toString(),
                 "retired-swarm-method: " + method + " belonged to the retired Swarm reconciler (" + capability + "); "
                     + owner + " owns it now");
        QCOMPARE(error.value("data").toObject(), (QJsonObject{{"name", "retired-swarm-method"}, {"method", method},
                                                              {"capability", capability}, {"owner", owner}}));
        QCOMPARE(f.clock.nowMs(), before); // answered at once: no timer was needed
        QCOMPARE(log.count(QStringLiteral("answered %1 from Cloudly with retired-swarm-method").arg(method)), 1);
        QCOMPARE(f.relay->statusSnapshot().counters.refusalsByName.value("retired-swarm-method"), 1);
    }

    // PF-01..PF-05: each pending function answers relay-function-pending stating why, at once. Function
    // names and reasons written out from docs/contract.md §16.3.
    void pendingFunctionsStateWhy_PF01_PF02_PF03_PF04_PF05_data()
    {
        QTest::addColumn<QString>("function");
        QTest::addColumn<QString>("reason");
        QTest::newRow("renewClusterRelayCertificate")
            << "relay certificate renewal"
            << "the listener's TLS material is fixed at start and a restart would drop every node socket; renewal needs "
               "live rotation first";
        QTest::newRow("replayClusterDesiredState") << "desired-state cache and idempotent replay on reconnect"
                                                   << "the relay caches no desired state; Cloudly and the nodes own idempotency";
        QTest::newRow("delegateRuntimeNetworkSigning")
            << "signing new network state during a Cloudly outage"
            << "the relay holds no signing key; DNS continuity comes from renewals Cloudly signs ahead "
               "(holdRuntimeNetworkDnsLeaseRenewals)";
        QTest::newRow("getClusterRelayServedNodes") << "served-node roster and readiness publication"
                                                    << "registerClusterRelay carries no roster and no contract has a place for one";
    }
    void pendingFunctionsStateWhy_PF01_PF02_PF03_PF04_PF05()
    {
        QFETCH(QString, function);
        QFETCH(QString, reason);
        const QString method = QString::fromLatin1(QTest::currentDataTag());
        RelayFixture f;
        QVERIFY(f.startRelay());
        const qint64 before = f.clock.nowMs();
        // Request bodies are not read: any body gets the refusal.
        const auto answer = dispatch(f, method, R"({"certificatePem":"x","nodes":[]})");
        QVERIFY2(answer, qPrintable(method));
        QVERIFY(answer->response.isEmpty());
        const QJsonObject error = errorOf(*answer);
        QCOMPARE(error.value("text").toString(), "relay-function-pending: " + function + " is not built: " + reason);
        QCOMPARE(error.value("data").toObject(), (QJsonObject{{"name", "relay-function-pending"}, {"function", function}}));
        QCOMPARE(f.clock.nowMs(), before);
    }

    // CS-83, OV-04: the removed methods are not registered: a missing handler, not a named retirement.
    void removedMethodsAreNotRegistered_CS83_OV04()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        // docs/contract.md §16.2, written out. The text is §3's "Unknown method" wording (lane "the Cloudly
        // session"); §16.2 abbreviates the lane as "cloudly".
        for (const QString method : {"coreflowGetTrafficStats", "executeServiceBackup", "executeServiceRestore",
                                     "coreflowPruneNodeArchive", "coreflowGetCorestoreInventory"}) {
            QVERIFY(!f.relay->cloudlyMethods().serves(method));
            const auto answer = dispatch(f, method, R"({"nodeId":"node-a"})");
            QVERIFY(answer);
            QCOMPARE(errorOf(*answer).value("text").toString(), "method-not-served: the Cloudly session serves no method " + method);
            QCOMPARE(errorOf(*answer).value("data").toObject().value("name").toString(), QStringLiteral("method-not-served"));
        }
        // OV-04: the statistics path that replaced coreflowGetTrafficStats is served (refused by name here:
        // no ingress is bound), never method-not-served. Name and text from docs/contract.md §22 and
        // §10.6 (its refusals).
        const auto stats = dispatch(f, "getClusterTrafficStatistics", R"({"sinceMs":0,"cursor":null,"limit":10})");
        QVERIFY(stats);
        QCOMPARE(stats->errorRefusal().name, QStringLiteral("ingress-not-bound"));
        QCOMPARE(errorOf(*stats).value("text").toString(), QStringLiteral("ingress-not-bound: no cluster ingress is bound to this relay"));
    }

    // The named refusals answer Cloudly only: the listener lane does not serve them (CL-01), and they
    // are registered on a relay without a listener too (every dispatch answered by name). Every
    // expected name and text is written out from docs/contract.md (§22's index, §3.0's "Unknown method"
    // wording for the lanes "the relay listener" and "the Cloudly session"), not taken from the relay.
    void cloudlyLaneOnlyAndWithoutListener_PF01_PF06()
    {
        {
            RelayFixture f;
            QVERIFY(f.startRelay());
            auto node = f.connectNode("node-a");
            std::optional<peers::PeerFrame> answer;
            node->call("getServices", QByteArray("{}"), [&](const peers::PeerFrame &x) { answer = x; });
            QTRY_VERIFY(answer);
            QCOMPARE(answer->errorRefusal().name, QStringLiteral("method-not-served"));
            QCOMPARE(errorOf(*answer).value("text").toString(),
                     QStringLiteral("method-not-served: the relay listener serves no method getServices"));
        }
        {
            RelayFixture f(false); // no relay block: no listener
            QVERIFY(f.startRelay());
            const auto retired = dispatch(f, "getSwarmNodes");
            QVERIFY(retired);
            QCOMPARE(retired->errorRefusal().name, QStringLiteral("retired-swarm-method"));
            QCOMPARE(errorOf(*retired).value("text").toString(),
                     QStringLiteral("retired-swarm-method: getSwarmNodes belonged to the retired Swarm reconciler (listing "
                                    "Swarm nodes and their state); Cloudly (node records, enrolled by Spark) owns it now"));
            const auto pending = dispatch(f, "replayClusterDesiredState");
            QVERIFY(pending);
            QCOMPARE(pending->errorRefusal().name, QStringLiteral("relay-function-pending"));
            QCOMPARE(errorOf(*pending).value("text").toString(),
                     QStringLiteral("relay-function-pending: desired-state cache and idempotent replay on reconnect is not "
                                    "built: the relay caches no desired state; Cloudly and the nodes own idempotency"));
            // D-01: without a listener the ingress' Cloudly methods are not registered at all.
            for (const QString method : {"pushClusterRouteTable", "getClusterTrafficStatistics"}) {
                const auto unserved = dispatch(f, method, R"({"routeTable":{}})");
                QVERIFY(unserved);
                QCOMPARE(unserved->errorRefusal().name, QStringLiteral("method-not-served"));
                QCOMPARE(errorOf(*unserved).value("text").toString(),
                         "method-not-served: the Cloudly session serves no method " + method);
            }
        }
    }
};

COREFLOW_EPOLL_TEST_MAIN(TstNamedRefusals)
#include "tst_namedrefusals.moc"
