// console_views: the console's views of a REAL relay (tests/integration/relayfixture.h) in each state —
// healthy, not ready (Cloudly away, with the escrow holding renewals), parked — read over the relay's
// own status socket: `coreflow-console --text` as a process, compared field by field with what the test
// set up (never with a golden of the console's own output), and the window (MainWindow on a live
// StatusClient) with a screenshot of every tab written to build/artifacts/ (QWidget::grab(),
// QT_QPA_PLATFORM=offscreen). Rules: §18.2 overview (CV-01 healthy, CV-02 Cloudly away + escrow,
// CV-03 parked, CV-04 problem rows coloured and counted in tab titles, CV-06 clock skew, §9.6 D-74,
// CV-07 a recovered Cloudly error reads "(recovered at ...)", D-87; CV-08 failed bindings: counted and
// highlighted in the overview, with the next action in words, §12.2; CV-09 events of each kind: node
// joined/left, Cloudly lost/back, registration accepted/refused, escrow offers).
#include "tests/integration/relayfixture.h"
#include "service/core/readinessboard.h"
#include "tests/peers/dnsleaserenewalrunbuilder.h"
#include "console/mainwindow.h"
#include "console/rowtablemodel.h"
#include "console/statusclient.h"
#include "console/tablepane.h"

#include <QDateTime>
#include <QJsonArray>
#include <QDir>
#include <QMultiMap>
#include <QProcess>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTabWidget>
#include <QTableView>
#include <QTest>

using namespace coreflow;
using namespace coreflow::console;
using coreflow::testing::RelayFixture;
using Builder = coreflow::peers::DnsLeaseRenewalRunBuilder;
using peers::Answer;

namespace {

constexpr qint64 minute = 60000;

QString iso(qint64 ms) { return QDateTime::fromMSecsSinceEpoch(ms, Qt::UTC).toString(QStringLiteral("yyyy-MM-dd'T'HH:mm:ss'Z'")); }

QString consoleText(const QString &socket)
{
    QProcess proc;
    QSignalSpy finished(&proc, &QProcess::finished);
    proc.start(QStringLiteral(COREFLOW_CONSOLE_BINARY), {QStringLiteral("--text"), QStringLiteral("--socket"), socket});
    if (!finished.wait(20000))
        proc.kill();
    if (proc.exitCode() != 0)
        qWarning("console --text: exit %d: %s", proc.exitCode(), proc.readAllStandardError().constData());
    return QString::fromUtf8(proc.readAllStandardOutput());
}

// One line of a section: its text without the two-column margin, and whether the margin was "! ".
struct Line {
    QString text;
    bool problem = false;
};

QList<Line> section(const QString &text, const QString &heading)
{
    QList<Line> out;
    bool inside = false;
    for (const QString &line : text.split(QLatin1Char('\n'))) {
        if (line.isEmpty())
            continue;
        if (line.at(0) != QLatin1Char(' ') && line.at(0) != QLatin1Char('!')) {
            inside = line == heading || line.startsWith(heading + QStringLiteral(" ("));
            continue;
        }
        if (inside)
            out << Line{line.mid(2), line.at(0) == QLatin1Char('!')};
    }
    return out;
}

// key -> (value, problem) of a key/value section (the key is what precedes the first two blanks).
QMap<QString, Line> fields(const QString &text, const QString &heading)
{
    QMap<QString, Line> out;
    for (const Line &l : section(text, heading)) {
        const qsizetype gap = l.text.indexOf(QStringLiteral("  "));
        if (gap > 0 && !out.contains(l.text.left(gap)))
            out.insert(l.text.left(gap), Line{l.text.mid(gap).trimmed(), l.problem});
    }
    return out;
}

// A table section as rows of column name -> cell (cells split at two or more blanks; no empty cells,
// the console prints "-").
QList<QMap<QString, QString>> table(const QString &text, const QString &heading, QList<bool> *problems = nullptr)
{
    const QList<Line> lines = section(text, heading);
    QList<QMap<QString, QString>> rows;
    if (lines.isEmpty())
        return rows;
    const QRegularExpression split(QStringLiteral("\\s{2,}"));
    const QStringList header = lines.first().text.split(split, Qt::SkipEmptyParts);
    for (qsizetype i = 1; i < lines.size(); ++i) {
        const QStringList cells = lines[i].text.split(split, Qt::SkipEmptyParts);
        QMap<QString, QString> row;
        for (qsizetype c = 0; c < header.size() && c < cells.size(); ++c)
            row.insert(header[c], cells[c]);
        rows << row;
        if (problems)
            *problems << lines[i].problem;
    }
    return rows;
}

void screenshots(MainWindow &window, const QString &state)
{
    QDir().mkpath(QStringLiteral(COREFLOW_ARTIFACTS_DIR));
    for (int i = 0; i < window.tabs()->count(); ++i) {
        window.tabs()->setCurrentIndex(i);
        QCoreApplication::processEvents();
        const QString tab = window.tabs()->widget(i)->objectName().chopped(4);
        const QString file = QStringLiteral(COREFLOW_ARTIFACTS_DIR "/relay-%1-%2.png").arg(state, tab);
        QVERIFY2(window.grab().save(file), qPrintable(file));
    }
    window.tabs()->setCurrentIndex(0);
}

struct LiveWindow {
    explicit LiveWindow(const QString &socket)
        : clock(), client({socket, true, true, 250, 1000}, clock), window(socket)
    {
        window.attachClient(&client);
        window.show();
        client.start();
    }
    ~LiveWindow() { client.stop(); }
    SystemClock clock;
    StatusClient client;
    MainWindow window;
};

QString overviewValue(MainWindow &w, const QString &key)
{
    const auto *model = w.pane(QStringLiteral("overview"))->model();
    for (const auto &row : model->rows())
        if (row.display.value(0) == key)
            return row.display.value(1);
    return QStringLiteral("<no %1>").arg(key);
}

// Whether the events tab holds an event of `kind` whose line contains `part`.
bool eventShown(MainWindow &w, const QString &kind, const QString &part)
{
    for (const auto &row : w.pane(QStringLiteral("events"))->model()->rows())
        if (row.display.value(1) == kind && row.display.value(2).contains(part))
            return true;
    return false;
}

QString eventsText(MainWindow &w)
{
    QStringList lines;
    for (const auto &row : w.pane(QStringLiteral("events"))->model()->rows())
        lines << row.display.value(1) + ": " + row.display.value(2);
    return lines.join(QLatin1Char('\n'));
}

bool overviewProblem(MainWindow &w, const QString &key)
{
    for (const auto &row : w.pane(QStringLiteral("overview"))->model()->rows())
        if (row.display.value(0) == key)
            return row.problem;
    return false;
}

} // namespace

class ConsoleViewsTest : public QObject {
    Q_OBJECT
private:
    struct Relay {
        RelayFixture f;
        peers::IssuedCertificate cert;
        QString socket;
        std::unique_ptr<peers::SimulatedPalletNode> a, b;
        qint64 gridStart = 0;
    };

    // A started relay with node-a and node-b registered; the listener certificate is one the test issued.
    static void startRelay(Relay &r, qint64 certificateLifetimeMs = 60LL * 86'400'000)
    {
        r.cert = r.f.ca.issueForHost(QStringLiteral("localhost"), certificateLifetimeMs);
        r.f.cloudly->setRelayCertificate(r.cert);
        RelayConfiguration config = r.f.configuration();
        config.statusSocketPath = r.f.dir.filePath(QStringLiteral("status.sock"));
        r.socket = config.statusSocketPath;
        r.f.makeRelay(config);
        QVERIFY(r.f.startRelay());
        r.a = r.f.registeredNode(QStringLiteral("node-a"));
        r.b = r.f.registeredNode(QStringLiteral("node-b"));
        QVERIFY(r.a->session() && r.b->session());
    }

private Q_SLOTS:
    void healthy_CV01()
    {
        Relay r;
        startRelay(r);
        const QString text = consoleText(r.socket);
        const auto overview = fields(text, QStringLiteral("OVERVIEW"));
        QCOMPARE(overview.value("health").text, QStringLiteral("HEALTHY"));
        QVERIFY(!overview.value("health").problem);
        QCOMPARE(overview.value("next action").text, QStringLiteral("nothing to do"));
        for (const char *key : {"cloudly", "registration", "listener", "node lane", "ingress lane", "start", "nodes", "escrow", "bindings"})
            QVERIFY2(!overview.value(key).problem, key);
        QVERIFY2(overview.value("cloudly").text.startsWith("ok"), qPrintable(overview.value("cloudly").text));
        QCOMPARE(overview.value("listener").text, QStringLiteral("ok (127.0.0.1:%1)").arg(r.f.relayPort));
        QCOMPARE(overview.value("nodes").text, QStringLiteral("2 carried"));
        QCOMPARE(overview.value("escrow").text, QStringLiteral("0 runs held"));
        QVERIFY(!text.contains(QStringLiteral("\n!"))); // no problem line anywhere

        const auto listener = fields(text, QStringLiteral("LISTENER"));
        QCOMPARE(listener.value("certificate").text, QStringLiteral("localhost"));
        QCOMPARE(listener.value("not after").text, iso(r.cert.cert.expiryDate().toMSecsSinceEpoch()));
        QVERIFY(!listener.contains("warning"));

        const auto registration = fields(text, QStringLiteral("REGISTRATION"));
        QCOMPARE(registration.value("last outcome").text, QStringLiteral("accepted"));
        QCOMPARE(registration.value("last sequence").text, QStringLiteral("0"));

        const auto cloudly = fields(text, QStringLiteral("CLOUDLY SESSION"));
        QCOMPARE(cloudly.value("connected since").text, iso(r.f.clock.nowMs()));
        QCOMPARE(cloudly.value("last error").text, QStringLiteral("-"));
        QCOMPARE(cloudly.value("next retry").text, QStringLiteral("-"));

        const auto nodes = table(text, QStringLiteral("NODES"));
        QCOMPARE(nodes.size(), 2);
        QCOMPARE(nodes[0].value("NODE"), QStringLiteral("node-a"));
        for (const auto &n : nodes) {
            QVERIFY2(n.value("ADDRESS").startsWith("127.0.0.1:"), qPrintable(n.value("ADDRESS")));
            QCOMPARE(n.value("RELEASE"), QStringLiteral("33.1.0")); // the simulated node offers 33.1.0
            QCOMPARE(n.value("CONNECTED"), iso(r.f.clock.nowMs()));
            QVERIFY(n.value("BYTES IN").toLongLong() > 100);  // at least its registration request
            QVERIFY(n.value("BYTES OUT").toLongLong() > 50);  // at least its registration answer
        }

        LiveWindow live(r.socket);
        QTRY_COMPARE(live.window.pane(QStringLiteral("nodes"))->proxy()->rowCount(), 2);
        QCOMPARE(live.window.tabs()->tabText(0), QStringLiteral("Overview"));
        QCOMPARE(live.window.tabs()->tabText(2), QStringLiteral("Nodes (2)"));
        QCOMPARE(overviewValue(live.window, "Health"), QStringLiteral("HEALTHY"));
        screenshots(live.window, QStringLiteral("healthy"));
        QVERIFY(r.f.stopRelay());
    }

    // A listener certificate inside the 14 days before its notAfter: ready, with a warning that says a
    // restart is the operator's job.
    void certificateWarning_CV05()
    {
        Relay r;
        startRelay(r, 24 * 3600 * 1000);
        const QString text = consoleText(r.socket);
        const auto overview = fields(text, QStringLiteral("OVERVIEW"));
        QCOMPARE(overview.value("health").text, QStringLiteral("READY, WITH WARNINGS"));
        QVERIFY(overview.value("listener").problem);
        const QString notAfter = iso(r.cert.cert.expiryDate().toMSecsSinceEpoch());
        QVERIFY2(overview.value("listener").text.startsWith(QStringLiteral("certificate expires %1 (in ").arg(notAfter)),
                 qPrintable(overview.value("listener").text));
        QVERIFY2(overview.value("next action").text.contains("restart the relay"), qPrintable(overview.value("next action").text));
        const auto listener = fields(text, QStringLiteral("LISTENER"));
        QVERIFY(listener.value("warning").problem);
        QVERIFY(listener.value("warning").text.contains("operator's job"));
        LiveWindow live(r.socket);
        QTRY_COMPARE(live.window.tabs()->tabText(0), QStringLiteral("Overview (1 problem)"));
        QVERIFY(overviewProblem(live.window, "Certificate"));
        QVERIFY(r.f.stopRelay());
    }

    void cloudlyAwayWithEscrowHeld_CV02_CV04_CV07()
    {
        Relay r;
        startRelay(r);
        // node-a takes renewals whose window is current by its clock; node-b refuses them.
        r.a->setPushHandler(QStringLiteral("applyRuntimeNetworkDnsLeaseRenewal"), [&r](const peers::PeerFrame &, const QJsonObject &request) {
            return Builder::acknowledge(request, r.f.clock.nowMs());
        });
        r.b->setPushAnswer(QStringLiteral("applyRuntimeNetworkDnsLeaseRenewal"),
                           Answer::refuse(QLatin1StringView("dns-lease-clock-unqualified"), QStringLiteral("no NTS sample")));
        r.gridStart = r.f.clock.nowMs() - 12 * minute;
        for (auto *node : {r.a.get(), r.b.get()}) {
            const auto binding = *node->session();
            const auto projection = Builder::projection("proj-" + binding.nodeId, 1);
            bool held = false;
            r.f.cloudly->push(QStringLiteral("holdRuntimeNetworkDnsLeaseRenewals"),
                              Builder::holdRequest(binding, projection, Builder::grid(binding, projection, r.gridStart, 5)),
                              [&](const peers::PeerFrame &x) { held = !x.hasError(); });
            QTRY_VERIFY(held);
        }
        QVERIFY(r.f.takeCloudlySessionDown());
        QTRY_COMPARE(r.a->pushCount(QStringLiteral("applyRuntimeNetworkDnsLeaseRenewal")), 1);
        QTRY_COMPARE(r.b->pushCount(QStringLiteral("applyRuntimeNetworkDnsLeaseRenewal")), 1);
        QTRY_COMPARE(r.f.relay->statusSnapshot().counters.escrowOffersByOutcome.value(QStringLiteral("failed")), 1);

        const QString text = consoleText(r.socket);
        const auto overview = fields(text, QStringLiteral("OVERVIEW"));
        QCOMPARE(overview.value("health").text, QStringLiteral("NOT READY"));
        QVERIFY(overview.value("health").problem);
        QVERIFY(overview.value("cloudly").problem);
        QVERIFY2(overview.value("cloudly").text.contains("no Cloudly session"), qPrintable(overview.value("cloudly").text));
        QVERIFY2(overview.value("cloudly").text.contains("last error: session-lost"), qPrintable(overview.value("cloudly").text));
        // Five renewals from gridStart on Cloudly's grid: the last window ends at gridStart + 4*10 + 15 min.
        const QString authority = iso(r.gridStart + 4 * 10 * minute + 15 * minute);
        const QString action = overview.value("next action").text;
        QVERIFY2(action.startsWith("Check that Cloudly (") && action.contains("reconnects by itself")
                     && action.contains("the escrow holds DNS authority for 2 nodes until " + authority),
                 qPrintable(action));
        QCOMPARE(overview.value("escrow").text, QStringLiteral("2 runs held, 1 with a failed offer"));
        QVERIFY(overview.value("escrow").problem);

        const auto cloudly = fields(text, QStringLiteral("CLOUDLY SESSION"));
        QCOMPARE(cloudly.value("connected").text, QStringLiteral("no"));
        QCOMPARE(cloudly.value("connected since").text, QStringLiteral("-"));
        QCOMPARE(cloudly.value("last error").text, QStringLiteral("session-lost"));
        QVERIFY(cloudly.value("next retry").text != QStringLiteral("-"));

        QList<bool> problems;
        const auto escrow = table(text, QStringLiteral("ESCROW"), &problems);
        QCOMPARE(escrow.size(), 2);
        QCOMPARE(escrow[0].value("NODE"), QStringLiteral("node-a"));
        QCOMPARE(escrow[0].value("LAST OFFER"), QStringLiteral("admitted"));
        QCOMPARE(escrow[0].value("DNS AUTHORITY UNTIL"), authority);
        QCOMPARE(escrow[0].value("RENEWALS"), QStringLiteral("5"));
        QCOMPARE(escrow[1].value("NODE"), QStringLiteral("node-b"));
        QCOMPARE(escrow[1].value("LAST OFFER"), QStringLiteral("refused dns-lease-clock-unqualified"));
        QCOMPARE(problems, (QList<bool>{false, true})); // the failed offer's row is marked

        const auto readiness = fields(text, QStringLiteral("READINESS"));
        QCOMPARE(readiness.value("ready").text, QStringLiteral("no"));

        LiveWindow live(r.socket);
        QTRY_COMPARE(live.window.pane(QStringLiteral("escrow"))->proxy()->rowCount(), 2);
        QCOMPARE(overviewValue(live.window, "Health"), QStringLiteral("NOT READY"));
        QVERIFY(overviewProblem(live.window, "Cloudly"));
        QCOMPARE(live.window.tabs()->tabText(3), QStringLiteral("Escrow (2 · 1 failed)"));
        // The failed row is coloured, the admitted one is not.
        auto *escrowModel = live.window.pane(QStringLiteral("escrow"))->model();
        for (int row = 0; row < escrowModel->rowCount(); ++row) {
            const QModelIndex index = escrowModel->index(row, 0);
            const bool failed = escrowModel->index(row, 0).data().toString() == QLatin1String("node-b");
            QCOMPARE(index.data(Qt::BackgroundRole).value<QColor>() == RowTableModel::problemBackground(), failed);
        }
        // Events with full timestamps: no column of the events table is cut (issue 24).
        TablePane *events = live.window.pane(QStringLiteral("events"));
        QTRY_VERIFY(events->proxy()->rowCount() >= 2);
        live.window.tabs()->setCurrentIndex(7);
        QCoreApplication::processEvents();
        for (int column = 0; column < 2; ++column)
            for (int row = 0; row < events->proxy()->rowCount(); ++row) {
                const QString cellText = events->proxy()->index(row, column).data().toString();
                QVERIFY2(events->view()->columnWidth(column) >= events->view()->fontMetrics().horizontalAdvance(cellText),
                         qPrintable(cellText));
            }
        QVERIFY(QRegularExpression(QStringLiteral("^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}Z$"))
                    .match(events->proxy()->index(0, 0).data().toString())
                    .hasMatch());
        screenshots(live.window, QStringLiteral("cloudly-away"));

        // CV-07, D-87: Cloudly comes back; the last error stays visible, marked as recovered when the new
        // session became dispatchable (the injected clock has not moved).
        QVERIFY(r.f.bringCloudlySessionBack());
        QTRY_VERIFY(r.f.relay->checkReadiness().ready);
        const QString back = consoleText(r.socket);
        const auto cloudlyBack = fields(back, QStringLiteral("CLOUDLY SESSION"));
        QCOMPARE(cloudlyBack.value("connected since").text, iso(r.f.clock.nowMs()));
        QCOMPARE(cloudlyBack.value("last error").text, QStringLiteral("session-lost (recovered at %1)").arg(iso(r.f.clock.nowMs())));
        QVERIFY(!cloudlyBack.value("last error").problem);
        QVERIFY2(!fields(back, QStringLiteral("OVERVIEW")).value("cloudly").text.contains("last error"),
                 qPrintable(fields(back, QStringLiteral("OVERVIEW")).value("cloudly").text));

        // CV-09 (issue 24): the events of each kind an operator follows: node joined and left, Cloudly
        // lost and back, registration accepted, the escrow's offers.
        r.b->close(1000, QStringLiteral("node leaving"));
        QTRY_VERIFY2(eventShown(live.window, "node", "node node-b left"), qPrintable(eventsText(live.window)));
        QVERIFY2(eventShown(live.window, "node", "node node-a joined"), qPrintable(eventsText(live.window)));
        QVERIFY2(eventShown(live.window, "cloudly", "Cloudly session lost"), qPrintable(eventsText(live.window)));
        QVERIFY2(eventShown(live.window, "cloudly", "Cloudly session back"), qPrintable(eventsText(live.window)));
        QVERIFY2(eventShown(live.window, "registration", "registerClusterRelay accepted"), qPrintable(eventsText(live.window)));
        QVERIFY2(eventShown(live.window, "escrow", "node-b"), qPrintable(eventsText(live.window)));
        QVERIFY(r.f.stopRelay());
    }

    // §9.6, §18.1 clockSkew (D-74): a run signed for windows ahead of the relay's clock by more than the
    // admission margin, then a node refusing an offer as not yet valid, are a problem line in the
    // overview naming the next action; the refusal count reads "in the last hour (... since start)".
    void clockSkew_CV06_D74()
    {
        Relay r;
        startRelay(r);
        {
            const QString text = consoleText(r.socket);
            const auto overview = fields(text, QStringLiteral("OVERVIEW"));
            QVERIFY2(!overview.contains("clock"), qPrintable(text));
            QCOMPARE(overview.value("health").text, QStringLiteral("HEALTHY"));
        }
        const qint64 now = r.f.clock.nowMs();
        {
            const auto binding = *r.a->session();
            const auto projection = Builder::projection("proj-a", 1);
            bool held = false;
            r.f.cloudly->push(QStringLiteral("holdRuntimeNetworkDnsLeaseRenewals"),
                              Builder::holdRequest(binding, projection, Builder::grid(binding, projection, now + 5 * minute, 3)),
                              [&](const peers::PeerFrame &x) { held = !x.hasError(); });
            QTRY_VERIFY(held);
        }
        QTRY_VERIFY(r.f.relay->statusSnapshot().clockSkew.suspected);
        {
            const QString text = consoleText(r.socket);
            const auto overview = fields(text, QStringLiteral("OVERVIEW"));
            QCOMPARE(overview.value("health").text, QStringLiteral("READY, WITH WARNINGS"));
            QVERIFY(overview.value("clock").problem);
            QCOMPARE(overview.value("clock").text,
                     QStringLiteral("SKEW SUSPECTED (%1 ms, run-signed-ahead, at %2)").arg(5 * minute).arg(iso(now)));
            const QString action = overview.value("next action").text;
            QVERIFY2(action.startsWith("Clock skew suspected: Cloudly signed DNS lease renewal windows for node node-a opening 300000 ms ahead")
                         && action.contains("check NTP on this host"),
                     qPrintable(action));
            const auto s = r.f.relay->statusSnapshot();
            qint64 since = 0;
            for (const qint64 n : s.counters.refusalsByName)
                since += n;
            QCOMPARE(overview.value("refusals").text,
                     QStringLiteral("%1 in the last hour (%2 since start)").arg(s.counters.refusalsLastHour).arg(since));
        }
        // node-b's clock is ten minutes behind the relay's: it refuses a window the relay holds open.
        r.b->setPushHandler(QStringLiteral("applyRuntimeNetworkDnsLeaseRenewal"), [&r](const peers::PeerFrame &, const QJsonObject &request) {
            return Builder::acknowledge(request, r.f.clock.nowMs() - 10 * minute);
        });
        {
            const auto binding = *r.b->session();
            const auto projection = Builder::projection("proj-b", 1);
            bool held = false;
            r.f.cloudly->push(QStringLiteral("holdRuntimeNetworkDnsLeaseRenewals"),
                              Builder::holdRequest(binding, projection, Builder::grid(binding, projection, now - 2 * minute, 3)),
                              [&](const peers::PeerFrame &x) { held = !x.hasError(); });
            QTRY_VERIFY(held);
        }
        QVERIFY(r.f.takeCloudlySessionDown());
        QTRY_COMPARE(r.b->pushCount(QStringLiteral("applyRuntimeNetworkDnsLeaseRenewal")), 1);
        QTRY_COMPARE(r.f.relay->statusSnapshot().clockSkew.source, QStringLiteral("node-not-yet-valid"));
        {
            const QString text = consoleText(r.socket);
            const auto overview = fields(text, QStringLiteral("OVERVIEW"));
            QVERIFY(overview.value("clock").problem);
            QVERIFY2(overview.value("clock").text.startsWith(QStringLiteral("SKEW SUSPECTED (%1 ms, node-not-yet-valid, at ").arg(2 * minute)),
                     qPrintable(overview.value("clock").text));
            // Cloudly is away, so its action comes first; the skew's is among the actions of the window.
            LiveWindow live(r.socket);
            QTRY_VERIFY(overviewProblem(live.window, "Clock"));
            QVERIFY2(overviewValue(live.window, "Clock").startsWith("SKEW SUSPECTED"), qPrintable(overviewValue(live.window, "Clock")));
            screenshots(live.window, QStringLiteral("clockskew"));
        }
        QVERIFY(r.f.stopRelay());
    }

    // CV-08 (§12.2, §12.3, §18.1 bindings): Cloudly's desired state holds a granted binding it placed on
    // no node (the relay fails it binding-not-placed before any Corestore call) and an ungranted one
    // (left alone: not a problem). The overview counts the failed one, highlights the count and names
    // the action; everything else stays ok.
    void failedBindings_CV08()
    {
        Relay r;
        const QJsonObject grant{{"operation", "op-orphan"}, {"generation", 1}, {"serviceId", "svc-1"}, {"capability", "database"},
                                {"bindingName", "orphan-db"}, {"requestDigest", QString(64, QLatin1Char('0'))},
                                {"expiresAt", 1900000000000LL}, {"authority", "authority-canary-views"}};
        const auto binding = [](const QString &name, const QString &capability) {
            return QJsonObject{{"name", name}, {"capability", capability}, {"serviceId", "svc-1"}, {"organizationId", "org-1"},
                               {"clusterId", "cluster-1"}, {"retention", QJsonValue::Null}};
        };
        const QJsonObject desired{{"bindings", QJsonArray{QJsonObject{{"nodeId", QJsonValue::Null}, {"binding", binding("orphan-db", "database")}, {"grant", grant}},
                                                          QJsonObject{{"nodeId", "node-a"}, {"binding", binding("files", "objectstorage")}, {"grant", QJsonValue::Null}}}}};
        r.f.cloudly->setAnswer(QStringLiteral("getClusterPlatformDesiredState"), Answer::respond(QJsonObject{{"desiredState", desired}}));
        r.f.cloudly->setAnswer(QStringLiteral("reportClusterPlatformBindingStatus"), Answer::respond(QJsonObject{{"accepted", true}}));
        startRelay(r);
        QTRY_VERIFY_WITH_TIMEOUT(r.f.relay->statusSnapshot().bindings.size() == 2, 15000);
        QTRY_VERIFY_WITH_TIMEOUT(
            [&] {
                for (const auto &b : r.f.relay->statusSnapshot().bindings)
                    if (b.name == QLatin1String("orphan-db"))
                        return b.status == QLatin1String("failed");
                return false;
            }(),
            15000);

        const QString text = consoleText(r.socket);
        const auto overview = fields(text, QStringLiteral("OVERVIEW"));
        QCOMPARE(overview.value("health").text, QStringLiteral("READY, WITH WARNINGS"));
        QCOMPARE(overview.value("bindings").text, QStringLiteral("1 failed of 2"));
        QVERIFY(overview.value("bindings").problem);
        QCOMPARE(overview.value("next action").text,
                 QStringLiteral("Binding svc-1/orphan-db failed: Cloudly placed it on no node (binding-not-placed): place service svc-1 "
                                "on a node in Cloudly; the relay reconciles it once a config names the node."));
        for (const char *key : {"cloudly", "registration", "listener", "node lane", "ingress lane", "start", "nodes", "escrow"})
            QVERIFY2(!overview.value(key).problem, key);
        QVERIFY(!text.contains(QStringLiteral("authority-canary-views")));

        LiveWindow live(r.socket);
        QTRY_COMPARE(overviewValue(live.window, "Bindings"), QStringLiteral("1 failed of 2"));
        QVERIFY(overviewProblem(live.window, "Bindings"));
        QCOMPARE(overviewValue(live.window, "Health"), QStringLiteral("READY, WITH WARNINGS"));
        QVERIFY(overviewProblem(live.window, "Health"));
        QVERIFY2(overviewValue(live.window, "Next action").startsWith("Binding svc-1/orphan-db failed: "),
                 qPrintable(overviewValue(live.window, "Next action")));
        QCOMPARE(live.window.tabs()->tabText(0), QStringLiteral("Overview (1 problem)"));
        // The relay's one warning about the binding is the events tab's one failure, in the singular.
        // The tab is found by its pane, not by its position (a new tab must not move what this checks).
        const int eventsTab = live.window.tabs()->indexOf(live.window.pane(QStringLiteral("events")));
        QVERIFY(eventsTab >= 0);
        QTRY_VERIFY2(QRegularExpression(QStringLiteral("^Events \\(\\d+ · 1 failure\\)$")).match(live.window.tabs()->tabText(eventsTab)).hasMatch(),
                     qPrintable(live.window.tabs()->tabText(eventsTab)));
        // The highlighted count is coloured in the overview table; the hops that are fine are not.
        auto *model = live.window.pane(QStringLiteral("overview"))->model();
        for (int row = 0; row < model->rowCount(); ++row) {
            const QString key = model->index(row, 0).data().toString();
            const bool coloured = model->index(row, 0).data(Qt::BackgroundRole).value<QColor>() == RowTableModel::problemBackground();
            QVERIFY2(coloured == (key == QLatin1String("Bindings") || key == QLatin1String("Health") || key == QLatin1String("Next action")),
                     qPrintable(key));
        }
        screenshots(live.window, QStringLiteral("failed-bindings"));
        QVERIFY(r.f.stopRelay());
    }

    void parked_CV03()
    {
        Relay r;
        r.f.cloudly->setAnswer("registerClusterRelay", Answer::refuse(QLatin1StringView("relay-credential-generation-stale"), "rotated"));
        startRelay(r);
        QTRY_VERIFY(r.f.relay->readiness()->isParked());
        const QString text = consoleText(r.socket);
        const auto overview = fields(text, QStringLiteral("OVERVIEW"));
        QCOMPARE(overview.value("health").text, QStringLiteral("PARKED"));
        QVERIFY(overview.value("registration").problem);
        QVERIFY2(overview.value("registration").text.startsWith("PARKED: "), qPrintable(overview.value("registration").text));
        QCOMPARE(text.count(r.f.relay->readiness()->parkedLine()), 1); // the park line once, under READINESS
        QVERIFY2(overview.value("next action").text.contains("restart the unit"), qPrintable(overview.value("next action").text));
        const auto registration = fields(text, QStringLiteral("REGISTRATION"));
        QCOMPARE(registration.value("last outcome").text, QStringLiteral("relay-credential-generation-stale"));
        QCOMPARE(registration.value("when").text, iso(r.f.clock.nowMs()));

        LiveWindow live(r.socket);
        QTRY_COMPARE(overviewValue(live.window, "Health"), QStringLiteral("PARKED"));
        QVERIFY(overviewProblem(live.window, "Registration"));
        QVERIFY(live.window.tabs()->tabText(0).startsWith("Overview ("));
        // CV-09: the refusal is an event of kind registration.
        QTRY_VERIFY2(eventShown(live.window, "registration", "registerClusterRelay refused: relay-credential-generation-stale"),
                     qPrintable(eventsText(live.window)));
        screenshots(live.window, QStringLiteral("parked"));
        QVERIFY(r.f.stopRelay());
    }
};

// Stays on Qt's default event dispatcher although a relay runs in-process: QTEST_MAIN builds a
// QApplication here (the console library links Qt Widgets), whose platform plugin needs its own
// dispatcher (QUnixEventDispatcherQPA flushes the window-system events; the relay's epoll dispatcher,
// a daemon's, does not). The relay on its production dispatcher is tested in tests/integration/ and
// tests/registry/ (tests/PROOFS.md "Dispatcher").
QTEST_MAIN(ConsoleViewsTest)
#include "console_views.moc"
