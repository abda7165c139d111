// console_secrets: the console never shows a secret, checked against a REAL relay (the in-process
// composition root of tests/integration/relayfixture.h): the relay holds canaries in the secrets it
// carries (its Cloudly bearer, the identity tokens Cloudly issued, the listener private key Cloudly
// served, the nodes' bearers, a route table's private key, the Corestore control token Cloudly sealed
// to it, CS-09) and its own statusSnapshot(), read over its
// own status socket (docs/contract.md §18), is what the console renders: --text and --json of the real
// executable, and every text the GUI shows. A product leak into the status reaches every check here.
#include "tests/console/consolefixtures.h"
#include "tests/integration/relayfixture.h"
#include "tests/support/canaryrelay.h"
#ifdef COREFLOW_CORESTORE_PEER
#include "tests/peers/loopbackcorestore.h"
#endif
#include "console/mainwindow.h"
#include "console/statusclient.h"
#include "console/tablepane.h"
#include "console/terminalview.h"
#include "shared/secret.h"
#include "shared/util/clock.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonValue>
#include <QLocalSocket>
#include <QProcess>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTest>

#include <type_traits>

using namespace coreflow;
using namespace coreflow::console;
using coreflow::testing::CanaryRelay;
using coreflow::testing::RelayFixture;

// The model has no member that can take a Secret: nothing it is made of converts from one.
static_assert(!std::is_convertible_v<Secret, QString> && !std::is_constructible_v<QString, Secret>);
static_assert(!std::is_convertible_v<Secret, QByteArray> && !std::is_constructible_v<QByteArray, Secret>);
static_assert(!std::is_convertible_v<Secret, QJsonValue>);
static_assert(!std::is_convertible_v<Secret, qint64> && !std::is_convertible_v<Secret, bool>);
static_assert(!std::is_convertible_v<Secret, std::optional<QString>>);

namespace {

QJsonObject routeTable(const QString &privateKeyPem)
{
    const QJsonObject target{{"nodeId", "node-a"}, {"address", "10.0.0.5"}, {"port", 30080}};
    return QJsonObject{
        {"clusterId", "cluster-1"},
        {"revision", 3},
        {"computedAt", 1700000000003LL},
        {"routes", QJsonArray{QJsonObject{{"hostname", "a.example.com"}, {"certificateId", "cert-a"}, {"targets", QJsonArray{target}}}}},
        {"certificates", QJsonArray{QJsonObject{{"id", "cert-a"},
                                                {"hostnames", QJsonArray{"a.example.com"}},
                                                {"certificatePem", "-----BEGIN CERTIFICATE-----\nBBBB\n-----END CERTIFICATE-----\n"},
                                                {"privateKeyPem", privateKeyPem}}}}};
}

// Every spelling of a canary found in haystack.
QStringList leaks(const QList<QByteArray> &canaries, const QByteArray &haystack)
{
    QStringList found;
    for (const QByteArray &c : canaries)
        for (const QByteArray &spelling : {c, c.toBase64(), c.toHex(), c.toHex().toUpper()})
            if (haystack.contains(spelling))
                found << QString::fromLatin1(c.left(24));
    return found;
}

} // namespace

class ConsoleSecretsTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void canariesNeverLeaveTheRelay()
    {
        RelayFixture f;
#ifdef COREFLOW_CORESTORE_PEER
        // The Corestore control token (docs/contract.md §12.1): enrolled and used once below.
        const QByteArray corestoreTokenCanary = "CANARY-corestore-control-token-5d2a";
        peers::LoopbackCorestore corestore(f.ca);
        QVERIFY(corestore.listen());
        corestore.setAcceptedToken(corestoreTokenCanary);
        f.cloudly->corestoreRecipients().setToken(corestoreTokenCanary);
        f.cloudly->options().clusterNodes = QJsonArray{QJsonObject{{"id", "node-a"},
                                                                   {"corestore", QJsonObject{{"endpoint", corestore.endpoint().toString()}}},
                                                                   {"corestoreDatabase", QJsonValue::Null}}};
#else
        const QByteArray corestoreTokenCanary = "CANARY-corestore-control-token-5d2a"; // never enrolled here
#endif
        CanaryRelay relay(f);
        QVERIFY(relay.start());
        const QByteArray routeKeyCanary = "CANARY-route-table-key-3b9e61c07d";
        const QString routeKeyPem = "-----BEGIN PRIVATE KEY-----\n" + QString::fromLatin1(routeKeyCanary) + "\n-----END PRIVATE KEY-----\n";
        f.cloudly->setClusterRouteTable(routeTable(routeKeyPem));
        bool pushed = false;
        f.cloudly->push(QStringLiteral("pushClusterRouteTable"), peers::PeerEnvelope::compact({{"routeTable", routeTable(routeKeyPem)}}),
                        [&](const peers::PeerFrame &x) { pushed = !x.hasError(); });
        QTRY_VERIFY(pushed);

#ifdef COREFLOW_CORESTORE_PEER
        bool inventoried = false;
        f.cloudly->push(QStringLiteral("getClusterCorestoreInventory"), QByteArray(R"({"nodeId":"node-a"})"), [&](const peers::PeerFrame &x) {
            inventoried = !x.hasError() && x.response.toByteArray().contains("\"reachable\":true");
        });
        QTRY_VERIFY_WITH_TIMEOUT(inventoried, 10000);
        QCOMPARE(corestore.lastRequest(peers::LoopbackCorestore::inventoryRoute)->header("authorization"),
                 QByteArrayLiteral("Bearer ") + corestoreTokenCanary);
#endif

        QList<QByteArray> canaries{f.bearer, routeKeyCanary, "node-bearer-node-a", "node-bearer-node-b", corestoreTokenCanary};
        for (const QJsonObject &identity : f.cloudly->issuedIdentities())
            canaries << identity.value(QStringLiteral("token")).toString().toUtf8();
        canaries << relay.listenerKeyCanaries();
        QVERIFY(canaries.size() >= 8);
        for (const QByteArray &c : std::as_const(canaries))
            QVERIFY(c.size() >= 16);

        // The relay's own snapshot, as the status server hands it out.
        const status::RelayStatus snapshot = f.relay->statusSnapshot();
        QVERIFY(!snapshot.nodes.isEmpty());
        QCOMPARE(leaks(canaries, QJsonDocument(snapshot.toJson()).toJson()), QStringList());
        QCOMPARE(leaks(canaries, TerminalView::renderText(snapshot).toUtf8()), QStringList());

        // The real executable on the relay's socket, --text and --json.
        for (const char *mode : {"--text", "--json"}) {
            QProcess proc;
            QSignalSpy finished(&proc, &QProcess::finished);
            proc.start(QStringLiteral(COREFLOW_CONSOLE_BINARY), {QString::fromLatin1(mode), QStringLiteral("--socket"), relay.statusSocketPath()});
            QVERIFY(finished.wait(10000));
            QCOMPARE(proc.exitCode(), 0);
            const QByteArray out = proc.readAllStandardOutput() + proc.readAllStandardError();
            QVERIFY2(out.contains("node-a") && out.contains("node-b"), out.constData());
            QVERIFY2(out.contains(mode == QByteArrayView("--text") ? "CORESTORE" : "\"corestore\""), out.constData());
#ifdef COREFLOW_CORESTORE_PEER
            QVERIFY2(out.contains("relay-corestore-control:"), out.constData()); // the key id, value-free
#endif
            QCOMPARE(leaks(canaries, out), QStringList());
        }

        // The GUI, fed through a live client on the relay's socket: every label, tab and cell.
        SystemClock clock;
        StatusClient client({relay.statusSocketPath(), true, true, 250, 1000}, clock);
        MainWindow window(relay.statusSocketPath());
        window.attachClient(&client);
        window.show();
        client.start();
        QTRY_COMPARE(window.pane(QStringLiteral("nodes"))->proxy()->rowCount(), 2);
        const QByteArray guiText = window.allTexts().join(QLatin1Char('\n')).toUtf8();
        QVERIFY(guiText.contains("node-a"));
        QCOMPARE(leaks(canaries, guiText), QStringList());
        QVERIFY(!window.grab().isNull());
        client.stop();
        QVERIFY(f.stopRelay());
    }
};

// Stays on Qt's default event dispatcher although a relay runs in-process: QTEST_MAIN builds a
// QApplication here (the console library links Qt Widgets), whose platform plugin needs its own
// dispatcher (QUnixEventDispatcherQPA flushes the window-system events; the relay's epoll dispatcher,
// a daemon's, does not). The relay on its production dispatcher is tested in tests/integration/ and
// tests/registry/ (tests/PROOFS.md "Dispatcher").
QTEST_MAIN(ConsoleSecretsTest)
#include "console_secrets.moc"
