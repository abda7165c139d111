// Registration outcomes and escrow custody, through the real wiring of the composition root
// (docs/contract.md §9.5 drop rules; §6.6.1 parking).
// Rules: ES-33, ES-34, ES-35, ES-36, RR-28, RR-29, RR-30, WD-11 (custody part).
#include "tests/support/epolltestmain.h"
#include "tests/integration/logcapture.h"
#include "tests/integration/relayfixture.h"

#include "service/cloudly/cloudlyconnector.h"
#include "shared/contract/refusalnames.h"
#include "tests/peers/dnsleaserenewalrunbuilder.h"
#include "service/registration/relayregistration.h"

#include <QTest>

using namespace coreflow;
using namespace coreflow::testing;
using coreflow::peers::Answer;
using Builder = coreflow::peers::DnsLeaseRenewalRunBuilder;

class TstRegistrationCustody : public QObject {
    Q_OBJECT
    LogCapture log;

    static peers::PeerFrame hold(RelayFixture &f, const peers::SimulatedPalletNode &node, qint64 generation = 1)
    {
        const auto b = *node.session();
        const auto p = Builder::projection("proj-1", generation);
        return f.dispatch("holdRuntimeNetworkDnsLeaseRenewals", Builder::holdRequest(b, p, Builder::grid(b, p, f.clock.nowMs(), 3)))
            .value_or(peers::PeerFrame{});
    }

    static void renewIdentity(RelayFixture &f)
    {
        const qint64 due = f.relay->cloudly()->identityRenewalDueMs();
        QVERIFY(due > 0);
        const int before = f.cloudly->callCount("registerClusterRelay");
        f.clock.advance(due - f.clock.nowMs());
        QTRY_COMPARE(f.cloudly->callCount("registerClusterRelay"), before + 1);
    }

private Q_SLOTS:
    void init()
    {
        log.install();
        log.clear();
    }

    // ES-33, ES-34: a refusal stating Cloudly does not dispatch to this relay drops every run; after a
    // later acceptance the relay holds runs again.
    void undispatchedRefusalsDropCustody_ES33_ES34_data()
    {
        QTest::addColumn<QString>("name");
        for (const char *n : {"relay-cluster-not-enabled", "relay-node-foreign", "relay-node-unknown", "relay-sequence-not-advancing"})
            QTest::newRow(n) << QString::fromLatin1(n);
    }
    void undispatchedRefusalsDropCustody_ES33_ES34()
    {
        QFETCH(QString, name);
        RelayFixture f;
        QVERIFY(f.startRelay());
        QTRY_VERIFY(f.relay->registration()->acceptedRecord().has_value());
        auto node = f.registeredNode("node-a");
        QVERIFY(!hold(f, *node).hasError());
        QCOMPARE(f.relay->statusSnapshot().escrow.size(), 1);
        f.cloudly->setAnswer("registerClusterRelay", Answer::refuse(QLatin1StringView(name.toLatin1()), "by the test"));
        renewIdentity(f);
        QTRY_COMPARE(f.relay->statusSnapshot().escrow.size(), 0);
        QVERIFY(!f.relay->readiness()->isParked());
        // ES-34: accepted again, custody again.
        f.cloudly->setAnswer("registerClusterRelay", Answer::useDefault());
        renewIdentity(f);
        QTRY_VERIFY(f.relay->checkReadiness().ready);
        QVERIFY(!hold(f, *node, 2).hasError());
        QCOMPARE(f.relay->statusSnapshot().escrow.size(), 1);
    }

    // ES-36: every other answer keeps custody — relay-identity-unverified, a generic refusal, a timeout.
    void otherAnswersKeepCustody_ES36_data()
    {
        QTest::addColumn<QString>("kind");
        QTest::newRow("relay-identity-unverified") << "unverified";
        QTest::newRow("generic refusal") << "generic";
        QTest::newRow("near-miss name") << "nearmiss";
        QTest::newRow("timeout") << "timeout";
    }
    void otherAnswersKeepCustody_ES36()
    {
        QFETCH(QString, kind);
        RelayFixture f;
        QVERIFY(f.startRelay());
        QTRY_VERIFY(f.relay->registration()->acceptedRecord().has_value());
        auto node = f.registeredNode("node-a");
        QVERIFY(!hold(f, *node).hasError());
        if (kind == "unverified")
            f.cloudly->setAnswer("registerClusterRelay", Answer::refuse(QLatin1StringView("relay-identity-unverified"), "records unreadable"));
        else if (kind == "generic")
            f.cloudly->setAnswer("registerClusterRelay", Answer::refuse(QLatin1StringView("INTERNAL_ERROR"), "oops"));
        else if (kind == "nearmiss")
            f.cloudly->setAnswer("registerClusterRelay", Answer::refuse(QLatin1StringView("relay-node-unknown-ish"), "not the name"));
        else
            f.cloudly->setAnswer("registerClusterRelay", Answer::silence());
        renewIdentity(f);
        if (kind == "timeout") {
            f.clock.advance(8000);
            QTRY_VERIFY(!f.relay->registration()->isInFlight());
        }
        QTRY_VERIFY(!f.relay->registration()->isInFlight());
        QVERIFY(f.settleCloudlyHop()); // the refusal was taken before this round trip's answer
        QCOMPARE(f.relay->statusSnapshot().escrow.size(), 1);
    }

    // RR-28, RR-29, RR-30, ES-35: the park drops every run first, and nothing is held again.
    void parkEndsCustodyForGood_RR30_ES35_data()
    {
        QTest::addColumn<QString>("carrier");
        QTest::newRow("stale refusal") << "refusal";
        QTest::newRow("rotated generation in an acceptance") << "acceptance";
    }
    void parkEndsCustodyForGood_RR30_ES35()
    {
        QFETCH(QString, carrier);
        RelayFixture f;
        QVERIFY(f.startRelay());
        QTRY_VERIFY(f.relay->registration()->acceptedRecord().has_value());
        auto node = f.registeredNode("node-a");
        QVERIFY(!hold(f, *node).hasError());
        if (carrier == "refusal")
            f.cloudly->setAnswer("registerClusterRelay", Answer::refuse(QLatin1StringView("relay-credential-generation-stale"), "rotated"));
        else
            f.cloudly->setRelayCredential("relay-credential-1", 2);
        renewIdentity(f);
        QTRY_VERIFY(f.relay->readiness()->isParked());
        QCOMPARE(f.relay->statusSnapshot().escrow.size(), 0);
        // RR-30: custody ended before the park line was stated (the line is the last thing said).
        const QStringList lines = log.lines();
        int dropped = -1, parkedLine = -1;
        for (int i = 0; i < lines.size(); ++i) {
            if (dropped < 0 && lines.at(i).contains("coreflow.escrow"))
                dropped = i;
            if (lines.at(i).contains("relay parked:"))
                parkedLine = i;
        }
        QVERIFY(dropped >= 0 && parkedLine > dropped);
        const peers::PeerFrame refused = hold(f, *node, 2);
        QCOMPARE(refused.errorRefusal().name, QString(contract::refusal::escrowRelayParked));
        QCOMPARE(f.relay->statusSnapshot().escrow.size(), 0);
    }
};

COREFLOW_EPOLL_TEST_MAIN(TstRegistrationCustody)
#include "tst_registrationcustody.moc"
