// console_gui: the main window, rendered offscreen for fixture snapshots (ready, refused, parked,
// 50 nodes) to PNGs under ${CMAKE_BINARY_DIR}/artifacts/, with assertions on the widgets' contents;
// sorting and filtering; connection states; live updates through a real status socket.
#include "tests/console/consolefixtures.h"
#include "console/mainwindow.h"
#include "console/rowtablemodel.h"
#include "service/statussocket/statusserver.h"
#include "console/tablepane.h"
#include "shared/util/manualclock.h"

#include <QApplication>
#include <QDir>
#include <QLabel>
#include <QLineEdit>
#include <QSortFilterProxyModel>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

using namespace coreflow;
using namespace coreflow::console;
using namespace coreflow::consoletest;

namespace {

QString cell(TablePane *pane, int row, int column)
{
    return pane->proxy()->index(row, column).data().toString();
}

// Renders every tab of the window to <artifacts>/console-<name>-<tab>.png; returns the first file.
QString savePngs(MainWindow &window, const QString &name)
{
    QDir().mkpath(QStringLiteral(COREFLOW_ARTIFACTS_DIR));
    QString first;
    for (int i = 0; i < window.tabs()->count(); ++i) {
        window.tabs()->setCurrentIndex(i);
        QCoreApplication::processEvents();
        const QString tab = window.tabs()->widget(i)->objectName().chopped(4); // "<name>Pane"
        const QString file = QStringLiteral(COREFLOW_ARTIFACTS_DIR "/console-%1-%2.png").arg(name, tab);
        const QImage image = window.grab().toImage();
        if (image.isNull() || !image.save(file))
            return QString();
        if (first.isEmpty())
            first = file;
    }
    window.tabs()->setCurrentIndex(0);
    return first;
}

// A rendered banner's pixel colour (centre of the label), to check green/red/amber/grey.
QColor bannerColour(MainWindow &window)
{
    auto *banner = window.findChild<QLabel *>(QStringLiteral("readinessBanner"));
    const QImage image = banner->grab().toImage();
    return image.pixelColor(4, 4);
}

} // namespace

class ConsoleGuiTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void readyFixture()
    {
        MainWindow window(QStringLiteral("/run/coreflow/status.sock"));
        window.applySnapshot(readyStatus());
        window.setConnectionState(StatusClient::State::Connected, QString());
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(!savePngs(window, QStringLiteral("ready")).isEmpty());

        QCOMPARE(window.bannerText(), QStringLiteral("READY"));
        QCOMPARE(bannerColour(window), QColor(0x1e, 0x7e, 0x34));
        QCOMPARE(window.identityText(),
                 QStringLiteral("Relay relay-fra-1 · build 0.1.0 · contract 33.1.0 · origin https://relay-fra-1.example.net"));
        QCOMPARE(window.connectionText(), QStringLiteral("Connected to /run/coreflow/status.sock (live)"));
        QStringList tabs;
        for (int i = 0; i < window.tabs()->count(); ++i)
            tabs << window.tabs()->tabText(i);
        QCOMPARE(tabs, (QStringList{"Overview", "Relay", "Nodes (3)", "Escrow (2)", "Ingress", "Bindings (1)", "VPN", "Backups (2 · 1 refused)", "Events"}));

        TablePane *nodes = window.pane(QStringLiteral("nodes"));
        QCOMPARE(nodes->proxy()->rowCount(), 3);
        QCOMPARE(cell(nodes, 0, 0), QStringLiteral("node-a")); // sorted by node id
        QCOMPARE(cell(nodes, 0, 1), QStringLiteral("10.0.0.11:51234"));
        QCOMPARE(cell(nodes, 0, 2), QStringLiteral("33.1.0"));
        QCOMPARE(cell(nodes, 0, 7), QStringLiteral("9120"));
        QCOMPARE(cell(nodes, 0, 8), QStringLiteral("88004"));
        QCOMPARE(cell(nodes, 0, 10), QStringLiteral("getServiceConfig"));
        QCOMPARE(cell(nodes, 1, 11), QStringLiteral("2023-11-14T23:11:40Z"));
        QVERIFY(!nodes->proxy()->index(1, 0).data(Qt::BackgroundRole).isValid()); // awaiting-pong is no problem
        TablePane *escrow = window.pane(QStringLiteral("escrow"));
        QCOMPARE(cell(escrow, 0, 1), QStringLiteral("proj-a1"));
        QCOMPARE(cell(escrow, 0, 4), QStringLiteral("2023-11-14T23:03:20Z..2023-11-14T23:18:20Z"));
        QCOMPARE(cell(escrow, 0, 6), QStringLiteral("2023-11-14T23:28:20Z")); // DNS authority until
        QCOMPARE(cell(escrow, 0, 7), QStringLiteral("admitted"));
        // §18.1 backups: the restore, its transfer and the two that ended (the refused one a problem row).
        TablePane *backups = window.pane(QStringLiteral("backups"));
        QCOMPARE(backups->proxy()->rowCount(), 4);
        const QStringList backupCells = backups->model()->allText();
        for (const char *shown : {"restore", "closure receive", "52428800 of 209715200 B", "cloudly", "stored", "closure-transfer-stalled", "0 of 3"})
            QVERIFY2(backupCells.contains(QString::fromLatin1(shown)), shown);
        QCOMPARE(backups->model()->problemCount(), 1);
        TablePane *overview = window.pane(QStringLiteral("overview"));
        QCOMPARE(cell(overview, 0, 0), QStringLiteral("Health"));
        QCOMPARE(cell(overview, 0, 1), QStringLiteral("HEALTHY"));
        TablePane *ingress = window.pane(QStringLiteral("ingress"));
        QCOMPARE(cell(ingress, 1, 0), QStringLiteral("Route table revision"));
        QCOMPARE(cell(ingress, 1, 1), QStringLiteral("17"));
        TablePane *vpn = window.pane(QStringLiteral("vpn"));
        QCOMPARE(cell(vpn, 1, 1), QStringLiteral("10.70.0.1:4433"));
        TablePane *bindings = window.pane(QStringLiteral("bindings"));
        QCOMPARE(cell(bindings, 0, 0), QStringLiteral("corestore-main"));
        TablePane *relay = window.pane(QStringLiteral("relay"));
        QVERIFY(relay->model()->allText().contains(QStringLiteral("cred-8c1f (generation 3)")));
        QVERIFY(relay->model()->allText().contains(QStringLiteral("Refusals: node-not-connected")));
    }

    void refusedFixture()
    {
        MainWindow window(QStringLiteral("/tmp/s.sock"));
        window.applySnapshot(refusedStatus());
        window.setConnectionState(StatusClient::State::Connected, QString());
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(!savePngs(window, QStringLiteral("refused")).isEmpty());
        QCOMPARE(window.bannerText(),
                 QStringLiteral("NOT READY\n"
                                "• cloudly: Cloudly answered with cloudlyClient@34.0.0, which this relay (cloudlyClient@33.1.0) "
                                "cannot serve (offered again every 300000 ms) [peer offer cloudlyClient@34.0.0; own offer "
                                "cloudlyClient@33.1.0]"));
        // A peer's refused offer is a counter, not a readiness line (docs/contract.md §2.2, D-62).
        QVERIFY(window.pane(QStringLiteral("relay"))->model()->allText().contains(QStringLiteral("Refusals: protocol-offer-refused")));
        QCOMPARE(bannerColour(window), QColor(0xb0, 0x2a, 0x37));
        // The overview says what to do; its problem rows are coloured and counted in the tab title.
        TablePane *overview = window.pane(QStringLiteral("overview"));
        QCOMPARE(cell(overview, 0, 1), QStringLiteral("NOT READY"));
        QVERIFY(cell(overview, 1, 1).startsWith("Cloudly speaks cloudlyClient@34.0.0 and this relay cloudlyClient@33.1.0"));
        QCOMPARE(overview->proxy()->index(2, 0).data().toString(), QStringLiteral("Cloudly"));
        QCOMPARE(overview->proxy()->index(2, 0).data(Qt::BackgroundRole).value<QColor>(), RowTableModel::problemBackground());
        QCOMPARE(window.tabs()->tabText(0), QStringLiteral("Overview (1 problem)"));
        QCOMPARE(cell(window.pane(QStringLiteral("ingress")), 0, 1), QStringLiteral("no"));
        QCOMPARE(cell(window.pane(QStringLiteral("vpn")), 2, 1), QStringLiteral("-"));
    }

    void parkedFixture()
    {
        MainWindow window(QStringLiteral("/tmp/s.sock"));
        window.applySnapshot(parkedStatus());
        window.setConnectionState(StatusClient::State::Connected, QString());
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(!savePngs(window, QStringLiteral("parked")).isEmpty());
        // The park line is the registration hop's only refusal: shown once, as PARKED.
        const QString park = parkedStatus().parkedLine;
        QCOMPARE(window.bannerText(), QStringLiteral("NOT READY\nPARKED: ") + park);
        const QStringList relayCells = window.pane(QStringLiteral("relay"))->model()->allText();
        QVERIFY(relayCells.contains(QStringLiteral("yes: ") + park));
        QCOMPARE(relayCells.join(QLatin1Char('\n')).count(park), 1);
    }

    void fiftyNodesSortAndFilter()
    {
        MainWindow window(QStringLiteral("/tmp/s.sock"));
        window.applySnapshot(fiftyNodesStatus());
        window.setConnectionState(StatusClient::State::Connected, QString());
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        window.tabs()->setCurrentIndex(2);
        QVERIFY(!savePngs(window, QStringLiteral("nodes50")).isEmpty());

        TablePane *nodes = window.pane(QStringLiteral("nodes"));
        QCOMPARE(window.tabs()->tabText(2), QStringLiteral("Nodes (50)"));
        QCOMPARE(nodes->model()->rowCount(), 50);
        QCOMPARE(nodes->proxy()->rowCount(), 50);
        QCOMPARE(cell(nodes, 0, 0), QStringLiteral("node-00"));
        QCOMPARE(cell(nodes, 49, 0), QStringLiteral("node-49"));
        auto *count = window.findChild<QLabel *>(QStringLiteral("nodesCount"));
        QCOMPARE(count->text(), QStringLiteral("50 of 50"));

        // Numeric sort on Carrier, descending: (i*7)%11 peaks at 10 for i = 3, 14, 25, 36, 47.
        nodes->view()->sortByColumn(9, Qt::DescendingOrder);
        QCOMPARE(cell(nodes, 0, 9), QStringLiteral("10"));
        QCOMPARE(cell(nodes, 49, 9), QStringLiteral("0"));

        // Filter through the line edit, as an operator types it.
        auto *filter = window.findChild<QLineEdit *>(QStringLiteral("nodesFilter"));
        QVERIFY(filter);
        QTest::keyClicks(filter, QStringLiteral("NODE-4"));
        QCOMPARE(nodes->proxy()->rowCount(), 10);
        QCOMPARE(count->text(), QStringLiteral("10 of 50"));
        filter->clear();
        filter->setText(QStringLiteral("pushContainer"));
        QCOMPARE(nodes->proxy()->rowCount(), 25);
        QVERIFY(!savePngs(window, QStringLiteral("nodes50-filtered")).isEmpty());
    }

    void connectionStatesAreShown()
    {
        MainWindow window(QStringLiteral("/run/coreflow/status.sock"));
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(window.bannerText().startsWith(QStringLiteral("CONNECTING")));
        window.setConnectionState(StatusClient::State::Refused,
                                  QStringLiteral("uid 1234 is neither root, the service user nor in group ops"));
        QCOMPARE(window.bannerText(), QStringLiteral("ACCESS REFUSED — uid 1234 is neither root, the service user nor in group ops"));
        QCOMPARE(window.connectionText(), QStringLiteral("Access refused: uid 1234 is neither root, the service user nor in group ops"));
        QVERIFY(!savePngs(window, QStringLiteral("refused-access")).isEmpty());

        window.setConnectionState(StatusClient::State::Connected, QString());
        window.applySnapshot(readyStatus());
        window.setConnectionState(StatusClient::State::Disconnected, QStringLiteral("the relay closed the status connection"));
        QCOMPARE(window.bannerText(), QStringLiteral("DISCONNECTED — the relay closed the status connection (retrying)\n"
                                                     "Last snapshot (2023-11-14T23:13:20Z UTC) showed READY"));
        QCOMPARE(bannerColour(window), QColor(0x5c, 0x63, 0x6a));
        QVERIFY(!savePngs(window, QStringLiteral("disconnected")).isEmpty());
        // The last data stays visible while disconnected.
        QCOMPARE(window.pane(QStringLiteral("nodes"))->proxy()->rowCount(), 3);
    }

    void liveUpdatesThroughTheSocket()
    {
        QTemporaryDir dir;
        ManualClock clock;
        status::RelayStatus s = readyStatus();
        StatusServer server({dir.filePath(QStringLiteral("status.sock")), {}}, [&] { return s; }, clock);
        QString error;
        QVERIFY2(server.start(&error), qPrintable(error));
        server.publishEvent(QStringLiteral("carrier"), QStringLiteral("node node-a connected"));

        StatusClient client({server.socketPath(), true, true, 250, 1000}, clock);
        MainWindow window(server.socketPath());
        window.attachClient(&client);
        window.show();
        client.start();
        QTRY_COMPARE(window.pane(QStringLiteral("nodes"))->proxy()->rowCount(), 3);
        QTRY_COMPARE(window.pane(QStringLiteral("events"))->proxy()->rowCount(), 1); // replayed
        QCOMPARE(window.bannerText(), QStringLiteral("READY"));

        s.nodes.append({QStringLiteral("node-d"), t0, 1, QString(), 0, 0, t0, QStringLiteral("live"), QStringLiteral("10.0.0.14:40114"),
                        QStringLiteral("33.1.0"), t0, 0, 0});
        s.ready = false;
        s.refusals = {{QStringLiteral("cloudly"), std::nullopt, std::nullopt, QStringLiteral("cloudly-session-unavailable")}};
        server.statusChanged();
        server.publishEvent(QStringLiteral("carrier"), QStringLiteral("node node-d connected"));
        clock.advance(250);
        QTRY_COMPARE(window.pane(QStringLiteral("nodes"))->proxy()->rowCount(), 4);
        QTRY_COMPARE(window.pane(QStringLiteral("events"))->proxy()->rowCount(), 2);
        QCOMPARE(window.bannerText(), QStringLiteral("NOT READY\n• cloudly: cloudly-session-unavailable"));
        QVERIFY(!savePngs(window, QStringLiteral("live")).isEmpty());

        server.stop();
        QTRY_VERIFY(window.bannerText().startsWith(QStringLiteral("DISCONNECTED")));
        QVERIFY(window.connectionText().endsWith(QStringLiteral("retrying")));
    }
};

QTEST_MAIN(ConsoleGuiTest)
#include "console_gui.moc"
