// console_check: `coreflow-console --check` against a REAL relay (the in-process composition root of
// tests/integration/relayfixture.h) in each state, run as a process: the exit code documented in
// docs/contract.md §18.2 and one line (stdout when ready, stderr otherwise). `--json` of the same
// relay exits 0 whatever its readiness (a successful read). Rules: §18.2 (CK-01 ready, CK-02 per-kind
// codes, CK-03 --json unaffected, CK-04 ready with clock skew suspected is 17, D-87, §9.6).
#include "tests/integration/relayfixture.h"
#include "service/core/readinessboard.h"
#include "tests/peers/answer.h"
#include "tests/peers/dnsleaserenewalrunbuilder.h"
#include "shared/contract/refusal.h"

#include <QJsonObject>

#include <QProcess>
#include <QSignalSpy>
#include <QTest>

using namespace coreflow;
using coreflow::testing::RelayFixture;
using peers::Answer;

namespace {

// The codes as docs/contract.md §18.2 lists them (written out, not taken from the console's header).
constexpr int ready = 0, cannotConnect = 3, cloudly = 10, parked = 11, registration = 12, listener = 13, starting = 15,
              clockSkew = 17;

struct Run {
    int exitCode = -1;
    QByteArray out, err;
};

Run runConsole(const QStringList &args)
{
    QProcess proc;
    QSignalSpy finished(&proc, &QProcess::finished);
    proc.start(QStringLiteral(COREFLOW_CONSOLE_BINARY), args);
    if (!finished.wait(20000))
        proc.kill();
    return {proc.exitStatus() == QProcess::NormalExit ? proc.exitCode() : -1, proc.readAllStandardOutput(),
            proc.readAllStandardError()};
}

Run check(const QString &socket) { return runConsole({QStringLiteral("--check"), QStringLiteral("--socket"), socket}); }

void verifyNotReady(const Run &r, int code, const QByteArray &hop)
{
    QCOMPARE(r.exitCode, code);
    QVERIFY(r.out.isEmpty());
    QVERIFY2(r.err.endsWith('\n') && r.err.count('\n') == 1, r.err.constData()); // exactly one line
    QVERIFY2(r.err.startsWith("coreflow-console: NOT READY (" + hop + "): "), r.err.constData());
}

} // namespace

class ConsoleCheckTest : public QObject {
    Q_OBJECT
private:
    static QString withSocket(RelayFixture &f, RelayConfiguration &config)
    {
        config = f.configuration();
        config.statusSocketPath = f.dir.filePath(QStringLiteral("status.sock"));
        return config.statusSocketPath;
    }

private Q_SLOTS:
    void readyExitsZero_CK01()
    {
        RelayFixture f;
        RelayConfiguration config;
        const QString socket = withSocket(f, config);
        f.makeRelay(config);
        QVERIFY(f.startRelay());
        auto a = f.registeredNode(QStringLiteral("node-a"));
        QVERIFY(a->session());
        const Run r = check(socket);
        QCOMPARE(r.exitCode, ready);
        QCOMPARE(r.out, QByteArray("ready: 1 nodes carried\n"));
        QCOMPARE(r.err, QByteArray());
        QVERIFY(f.stopRelay());
    }

    void noRelayIsCannotConnect_CK02()
    {
        RelayFixture f;
        const Run r = check(f.dir.filePath(QStringLiteral("absent.sock")));
        QCOMPARE(r.exitCode, cannotConnect);
        QVERIFY(r.out.isEmpty());
        QCOMPARE(r.err.count('\n'), 1);
    }

    void cloudlyAwayIsTen_CK02_CK03()
    {
        RelayFixture f;
        RelayConfiguration config;
        const QString socket = withSocket(f, config);
        f.makeRelay(config);
        QVERIFY(f.startRelay());
        QVERIFY(f.takeCloudlySessionDown());
        verifyNotReady(check(socket), cloudly, "cloudly");
        // --json is a successful read of a relay that is not ready: exit 0, and the object says so.
        const Run json = runConsole({QStringLiteral("--json"), QStringLiteral("--socket"), socket});
        QCOMPARE(json.exitCode, 0);
        QVERIFY(json.out.contains("\"ready\": false"));
        QVERIFY(f.bringCloudlySessionBack());
        QTRY_VERIFY(f.relay->checkReadiness().ready);
        QCOMPARE(check(socket).exitCode, ready);
        QVERIFY(f.stopRelay());
    }

    // §9.6 / D-87: Cloudly signs windows five minutes ahead of the relay's clock. The relay stays ready;
    // --check says 17 with the skew's source, node and size; a not-ready hop still comes first.
    void clockSkewIsSeventeen_CK04_D87()
    {
        using Builder = peers::DnsLeaseRenewalRunBuilder;
        RelayFixture f;
        RelayConfiguration config;
        const QString socket = withSocket(f, config);
        f.makeRelay(config);
        QVERIFY(f.startRelay());
        auto a = f.registeredNode(QStringLiteral("node-a"));
        QVERIFY(a->session());
        QCOMPARE(check(socket).exitCode, ready);
        const auto binding = *a->session();
        const auto projection = Builder::projection("proj-a", 1);
        bool held = false;
        f.cloudly->push(QStringLiteral("holdRuntimeNetworkDnsLeaseRenewals"),
                        Builder::holdRequest(binding, projection, Builder::grid(binding, projection, f.clock.nowMs() + 5 * 60000, 3)),
                        [&](const peers::PeerFrame &x) { held = !x.hasError(); });
        QTRY_VERIFY(held);
        QTRY_VERIFY(f.relay->statusSnapshot().clockSkew.suspected);
        QVERIFY(f.relay->checkReadiness().ready);
        const Run r = check(socket);
        QCOMPARE(r.exitCode, clockSkew);
        QVERIFY(r.out.isEmpty());
        QCOMPARE(r.err, QByteArray("coreflow-console: CLOCK SKEW SUSPECTED (run-signed-ahead): node node-a, 300000 ms: "
                                   "check NTP on this host\n"));
        // Not ready as well: the hop's code wins, the skew is not what to fix first.
        QVERIFY(f.takeCloudlySessionDown());
        verifyNotReady(check(socket), cloudly, "cloudly");
        QVERIFY(f.stopRelay());
    }

    void parkedIsEleven_CK02()
    {
        RelayFixture f;
        f.cloudly->setAnswer("registerClusterRelay", Answer::refuse(QLatin1StringView("relay-credential-generation-stale"), "rotated"));
        RelayConfiguration config;
        const QString socket = withSocket(f, config);
        f.makeRelay(config);
        QVERIFY(f.startRelay());
        QTRY_VERIFY(f.relay->readiness()->isParked());
        const Run r = check(socket);
        verifyNotReady(r, parked, "registration");
        QVERIFY2(r.err.contains("relay parked: "), r.err.constData());
        QVERIFY(f.stopRelay());
    }

    void registrationRefusedIsTwelve_CK02()
    {
        RelayFixture f;
        f.cloudly->setAnswer("registerClusterRelay", Answer::refuse(peers::PeerRefusal{
                                 QStringLiteral("protocol-offer-refused"), QStringLiteral("Cloudly serves 34.x only"),
                                 QJsonObject{{"peerOffer", QJsonObject{{"sessionKind", "cloudlyClient"}, {"release", "33.1.0"}}},
                                             {"ownOffer", QJsonObject{{"sessionKind", "cloudlyClient"}, {"release", "34.0.0"}}}}}));
        RelayConfiguration config;
        const QString socket = withSocket(f, config);
        f.makeRelay(config);
        QVERIFY(f.startRelay());
        QTRY_VERIFY(!f.relay->checkReadiness().ready);
        verifyNotReady(check(socket), registration, "registration");
        QVERIFY(f.stopRelay());
    }

    void listenerNotBoundIsThirteen_CK02()
    {
        // The start waits for the listener's certificate: the cluster config named the relay origin, no
        // listener is bound yet.
        RelayFixture f;
        f.cloudly->setAnswer("getClusterRelayCertificate", Answer::silence());
        RelayConfiguration config;
        const QString socket = withSocket(f, config);
        Coreflow &relay = f.makeRelay(config);
        relay.start();
        QTRY_VERIFY_WITH_TIMEOUT(f.cloudly->callCount("getClusterRelayCertificate") == 1, 10000);
        const Run r = check(socket);
        verifyNotReady(r, listener, "listener");
        QVERIFY2(r.err.contains("(+1 more)"), r.err.constData()); // the start has not completed either
        f.stopRelay(); // a stop during the start reports the start as not completed
    }

    void startingIsFifteen_CK02()
    {
        RelayFixture f;
        f.cloudly->setAnswer("getClusterConfig", Answer::silence());
        RelayConfiguration config;
        const QString socket = withSocket(f, config);
        Coreflow &relay = f.makeRelay(config);
        relay.start();
        QTRY_VERIFY_WITH_TIMEOUT(f.cloudly->callCount("getClusterConfig") == 1, 10000);
        verifyNotReady(check(socket), starting, "relay");
        f.stopRelay(); // a stop during the start reports the start as not completed
    }
};

// Stays on Qt's default event dispatcher although a relay runs in-process: QTEST_MAIN builds a
// QApplication here (the console library links Qt Widgets), whose platform plugin needs its own
// dispatcher (QUnixEventDispatcherQPA flushes the window-system events; the relay's epoll dispatcher,
// a daemon's, does not). The relay on its production dispatcher is tested in tests/integration/ and
// tests/registry/ (tests/PROOFS.md "Dispatcher").
QTEST_MAIN(ConsoleCheckTest)
#include "console_check.moc"
