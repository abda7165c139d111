// console_secrets: the console never holds a secret because the status socket never carries one.
// Canary values are seeded in every secret the relay holds (Cloudly bearer, identity token, relay
// private key, route-table key material, VPN controls, corestore credential, registry credential); the
// status is built the way the service builds it, from those holdings; then the canaries are looked for
// in the raw socket bytes (snapshot and events), --text, --json (in-process and the real executable)
// and every text the rendered GUI shows.
#include "tests/console/consolefixtures.h"
#include "console/mainwindow.h"
#include "shared/secret.h"
#include "service/statussocket/statusserver.h"
#include "console/tablepane.h"

#include <QSortFilterProxyModel>
#include "console/terminalview.h"
#include "shared/util/manualclock.h"

#include <QJsonValue>
#include <QLocalSocket>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <type_traits>

using namespace coreflow;
using namespace coreflow::console;

// The model has no member that can take a Secret: nothing it is made of converts from one.
static_assert(!std::is_convertible_v<Secret, QString> && !std::is_constructible_v<QString, Secret>);
static_assert(!std::is_convertible_v<Secret, QByteArray> && !std::is_constructible_v<QByteArray, Secret>);
static_assert(!std::is_convertible_v<Secret, QJsonValue>);
static_assert(!std::is_convertible_v<Secret, qint64> && !std::is_convertible_v<Secret, bool>);
static_assert(!std::is_convertible_v<Secret, std::optional<QString>>);

namespace {

const QList<QByteArray> canaries{
    "CANARY-cloudly-bearer-5e1d9a", "CANARY-identity-token-77c0b2", "CANARY-relay-private-key-a4f00e",
    "CANARY-route-table-key-3b9e61", "CANARY-vpn-control-90d2c7",   "CANARY-corestore-credential-e21f55",
    "CANARY-registry-password-6a8c13",
};

// What the relay holds: public facts and secrets side by side.
struct RelayHoldings {
    Secret cloudlyBearer{canaries[0]};
    Secret identityToken{canaries[1]};
    Secret relayPrivateKey{canaries[2]};
    Secret routeTableKey{canaries[3]};
    Secret vpnControl{canaries[4]};
    Secret corestoreCredential{canaries[5]};
    Secret registryPassword{canaries[6]};
    status::RelayStatus publicFacts = consoletest::readyStatus();
};

// Built the way the service does it: the status is assembled from public facts; the only thing that
// may be said about a secret is Secret::describe() (that it exists, and its length).
status::RelayStatus composeStatus(const RelayHoldings &h)
{
    status::RelayStatus s = h.publicFacts;
    s.listener.note = QStringLiteral("bearer %1; private key %2").arg(h.cloudlyBearer.describe(), h.relayPrivateKey.describe());
    s.bindings.append({QStringLiteral("corestore"), QStringLiteral("corestore"), QStringLiteral("node-a"),
                       QStringLiteral("bound"), QStringLiteral("credential %1").arg(h.corestoreCredential.describe())});
    s.bindings.append({QStringLiteral("registry"), QStringLiteral("registry"), QStringLiteral("node-b"),
                       QStringLiteral("bound"), QStringLiteral("password %1").arg(h.registryPassword.describe())});
    return s;
}

QStringList leaks(const QByteArray &haystack)
{
    QStringList found;
    for (const QByteArray &c : canaries)
        if (haystack.contains(c) || haystack.contains(c.toBase64()) || haystack.contains(c.toHex()))
            found << QString::fromLatin1(c);
    return found;
}

} // namespace

class ConsoleSecretsTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void canariesNeverLeaveTheRelay()
    {
        RelayHoldings holdings;
        QVERIFY(!holdings.cloudlyBearer.isEmpty());
        QVERIFY(holdings.cloudlyBearer.reveal().toByteArray() == canaries[0]); // the canary really is there

        QTemporaryDir dir;
        ManualClock clock;
        StatusServer server({dir.filePath(QStringLiteral("status.sock")), {}}, [&] { return composeStatus(holdings); }, clock);
        QString error;
        QVERIFY2(server.start(&error), qPrintable(error));
        server.publishEvent(QStringLiteral("identity"),
                            QStringLiteral("identity renewed (token %1)").arg(holdings.identityToken.describe()));
        server.publishEvent(QStringLiteral("ingress"),
                            QStringLiteral("route table 17 applied (key %1)").arg(holdings.routeTableKey.describe()));
        server.publishEvent(QStringLiteral("vpn"), QStringLiteral("vpn controls %1").arg(holdings.vpnControl.describe()));

        // Raw socket bytes: the snapshot and the replayed events.
        QLocalSocket raw;
        QByteArray wire;
        connect(&raw, &QLocalSocket::readyRead, this, [&] { wire += raw.readAll(); });
        raw.connectToServer(server.socketPath());
        QVERIFY(raw.waitForConnected(5000));
        raw.write(R"({"type":"hello","version":1,"subscribe":true})" "\n");
        QTRY_COMPARE(wire.count('\n'), 4);
        QVERIFY(wire.contains("\"type\":\"snapshot\""));
        QVERIFY(wire.contains("identity renewed"));
        QCOMPARE(leaks(wire), QStringList());

        const status::RelayStatus s = composeStatus(holdings);
        QCOMPARE(leaks(TerminalView::renderText(s).toUtf8()), QStringList());
        QCOMPARE(leaks(TerminalView::renderJson(s)), QStringList());

        // The real executable, --text and --json.
        for (const char *mode : {"--text", "--json"}) {
            QProcess proc;
            QSignalSpy finished(&proc, &QProcess::finished);
            proc.start(QStringLiteral(COREFLOW_CONSOLE_BINARY), {QString::fromLatin1(mode), QStringLiteral("--socket"), server.socketPath()});
            QVERIFY(finished.wait(10000));
            QCOMPARE(proc.exitCode(), 0);
            const QByteArray out = proc.readAllStandardOutput() + proc.readAllStandardError();
            QVERIFY(out.contains("relay-fra-1"));
            QCOMPARE(leaks(out), QStringList());
        }

        // The GUI, fed through a live client: every label, tab and cell.
        StatusClient client({server.socketPath(), true, true, 250, 1000}, clock);
        MainWindow window(server.socketPath());
        window.attachClient(&client);
        window.show();
        client.start();
        QTRY_COMPARE(window.pane(QStringLiteral("events"))->proxy()->rowCount(), 3);
        QTRY_COMPARE(window.pane(QStringLiteral("bindings"))->proxy()->rowCount(), 3);
        const QByteArray guiText = window.allTexts().join(QLatin1Char('\n')).toUtf8();
        QVERIFY(guiText.contains("relay-fra-1"));
        QCOMPARE(leaks(guiText), QStringList());
        QVERIFY(!window.grab().isNull());
    }
};

QTEST_MAIN(ConsoleSecretsTest)
#include "console_secrets.moc"
