// console_bindings: platform binding rows (docs/contract.md §18.1 bindings[], §12.2-§12.5) from a REAL
// relay (tests/integration/relayfixture.h, in-process, on a ManualClock) that reconciled them against
// the loopback Cloudly and two LoopbackCorestores, read over the relay's own status socket by the
// built `coreflow-console` (--text, --json, --watch) and by the window (MainWindow on a live
// StatusClient). The rows' states come from what the peers did, never from a hand-made snapshot:
//   main-db  node-a, granted, Corestore answers, the material is sealed to the loopback Cloudly: ready
//   assets   node-a, object storage, granted, likewise: ready (its material carries secretAccessKey)
//   media    node-b, granted, node-b's Corestore refuses every reconcile (404): failed
//   cache    no placement (nodeId null): failed binding-not-placed
//   later    no grant: ungranted
// Checked: the overview's bindings count and highlight, problem rows marked in --text and coloured in
// the window's table, the tab's failed count (issue 24; CV-08), the Bindings tab's state filter driven
// through its widgets (issue 18 "filterable by state"; CV-09), and that no canary (the grants'
// authority, the material's password, the Corestore control token, the sealed envelope's bytes) reaches
// any output (CS-09, CS-49; CV-10).
#include "tests/integration/relayfixture.h"
#include "tests/peers/loopbackcorestore.h"
#include "service/bindings/bindingreconciler.h"
#include "console/mainwindow.h"
#include "console/rowtablemodel.h"
#include "console/statusclient.h"
#include "console/tablepane.h"

#include <QComboBox>
#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QProcess>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTabWidget>
#include <QTableView>
#include <QTest>
#include <QUuid>

using namespace coreflow;
using namespace coreflow::console;
using coreflow::peers::Answer;
using coreflow::peers::LoopbackCorestore;
using coreflow::testing::RelayFixture;

namespace {

// sha256 of the canonical BindingRequest (`jq -S -c . | sha256sum`, as tests/integration/tst_bindings.cpp):
// {"bindingName":"main-db","capability":"database","endpoint":{"host":"10.0.0.5","port":27017},"serviceId":"svc-1"}
const char *const kMainDbDigest = "f39f600eecc8e6d211f2180a424e219491b5cb76515fd3afed0f4d05f16be3f0";
// {"bindingName":"media","capability":"objectstorage","retention":null,"serviceId":"svc-1"}
const char *const kMediaDigest = "78884c1912911a15d3f60b4bb282109b224d9a43633ad4e30271d13c1407d76e";
// {"bindingName":"assets","capability":"objectstorage","retention":null,"serviceId":"svc-1"}
const char *const kAssetsDigest = "4bbb78adf8852b0aa684157982b500a628299326f2bac602b97b1201989a204c";

QByteArray canary(const char *what)
{
    return QByteArrayLiteral("CANARY-") + what + '-' + QUuid::createUuid().toByteArray(QUuid::WithoutBraces);
}

QStringList leaks(const QList<QByteArray> &canaries, const QByteArray &haystack)
{
    QStringList found;
    for (const QByteArray &c : canaries)
        for (const QByteArray &spelling : {c, c.toBase64(), c.toHex(), c.toHex().toUpper()})
            if (haystack.contains(spelling))
                found << QString::fromLatin1(c.left(28));
    return found;
}

QByteArray runConsole(const QStringList &args, int *exitCode = nullptr)
{
    QProcess proc;
    QSignalSpy finished(&proc, &QProcess::finished);
    proc.start(QStringLiteral(COREFLOW_CONSOLE_BINARY), args);
    if (!finished.wait(20000))
        proc.kill();
    if (exitCode)
        *exitCode = proc.exitCode();
    return proc.readAllStandardOutput() + proc.readAllStandardError();
}

// The rows of a --text table section: cells split at two or more blanks, and whether the row's margin
// was "! " (a problem row).
struct TextRow {
    QStringList cells;
    bool problem = false;
};
QList<TextRow> textTable(const QString &text, const QString &heading)
{
    QList<TextRow> rows;
    bool inside = false, header = false;
    const QRegularExpression split(QStringLiteral("\\s{2,}"));
    for (const QString &line : text.split(QLatin1Char('\n'))) {
        if (line.isEmpty())
            continue;
        if (line.at(0) != QLatin1Char(' ') && line.at(0) != QLatin1Char('!')) {
            inside = line.startsWith(heading + QStringLiteral(" ("));
            header = inside;
            continue;
        }
        if (!inside)
            continue;
        if (header) { // the column names
            header = false;
            continue;
        }
        rows << TextRow{line.mid(2).split(split, Qt::SkipEmptyParts), line.at(0) == QLatin1Char('!')};
    }
    return rows;
}

// "key  value" of the OVERVIEW section, with its problem mark.
std::pair<QString, bool> overviewLine(const QString &text, const QString &key)
{
    bool inside = false;
    for (const QString &line : text.split(QLatin1Char('\n'))) {
        if (line.isEmpty())
            continue;
        if (line.at(0) != QLatin1Char(' ') && line.at(0) != QLatin1Char('!')) {
            inside = line == QLatin1String("OVERVIEW");
            continue;
        }
        if (inside && line.mid(2).startsWith(key + QStringLiteral("  ")))
            return {line.mid(2 + key.size()).trimmed(), line.at(0) == QLatin1Char('!')};
    }
    return {QStringLiteral("<no %1>").arg(key), false};
}

QStringList shownNames(TablePane *pane)
{
    QStringList names;
    for (int row = 0; row < pane->proxy()->rowCount(); ++row)
        names << pane->proxy()->index(row, 0).data().toString();
    names.sort();
    return names;
}

} // namespace

class ConsoleBindingsTest : public QObject {
    Q_OBJECT

    struct Relay {
        RelayFixture f;
        QByteArray token = canary("corestore-control-token");
        QByteArray authority = canary("grant-authority");
        QByteArray password = canary("material-password");
        LoopbackCorestore a{f.ca, [this] {
                                LoopbackCorestore::Options o;
                                o.materialSecret = password;
                                return o;
                            }()};
        LoopbackCorestore b{f.ca, [this] {
                                LoopbackCorestore::Options o;
                                o.materialSecret = password;
                                return o;
                            }()};
        QString socket;
        QList<QJsonObject> reports;
    };

    static QJsonObject bindingOf(const QString &name, const QString &capability)
    {
        return {{"name", name},         {"capability", capability}, {"serviceId", "svc-1"},
                {"organizationId", "org-1"}, {"clusterId", "cluster-1"}, {"retention", QJsonValue::Null}};
    }
    static QJsonObject grantOf(const QString &name, const QString &capability, const QString &digest, const QByteArray &authority)
    {
        return {{"operation", "op-" + name}, {"generation", 3},          {"serviceId", "svc-1"}, {"capability", capability},
                {"bindingName", name},       {"requestDigest", digest}, {"expiresAt", 1900000000000LL},
                {"authority", QString::fromLatin1(authority)}};
    }

    // Starts the relay and waits until the five rows stand: main-db and assets ready (reported), media
    // failed (reported), cache failed (reported), later ungranted.
    static void start(Relay &r)
    {
        QVERIFY(r.a.listen() && r.b.listen());
        r.a.setAcceptedToken(r.token);
        r.b.setAcceptedToken(r.token);
        r.b.setStanding(QString::fromLatin1(LoopbackCorestore::reconcileRoute),
                        LoopbackCorestore::Behaviour::answer(404, R"({"error":{"code":"binding-unknown"}})"));
        r.f.cloudly->corestoreRecipients().setToken(r.token);
        r.f.cloudly->secretIngress().setOrganization(QStringLiteral("svc-1"), QStringLiteral("org-1"));
        r.f.cloudly->options().clusterNodes =
            QJsonArray{QJsonObject{{"id", "node-a"},
                                   {"corestore", QJsonObject{{"endpoint", r.a.endpoint().toString()}}},
                                   {"corestoreDatabase", QJsonObject{{"host", "10.0.0.5"}, {"port", 27017}}}},
                       QJsonObject{{"id", "node-b"}, {"corestore", QJsonObject{{"endpoint", r.b.endpoint().toString()}}}, {"corestoreDatabase", QJsonValue::Null}}};
        const QJsonObject state{
            {"bindings",
             QJsonArray{QJsonObject{{"nodeId", "node-a"}, {"binding", bindingOf("main-db", "database")},
                                    {"grant", grantOf("main-db", "database", kMainDbDigest, r.authority)}},
                        QJsonObject{{"nodeId", "node-a"}, {"binding", bindingOf("assets", "objectstorage")},
                                    {"grant", grantOf("assets", "objectstorage", kAssetsDigest, r.authority)}},
                        QJsonObject{{"nodeId", "node-b"}, {"binding", bindingOf("media", "objectstorage")},
                                    {"grant", grantOf("media", "objectstorage", kMediaDigest, r.authority)}},
                        QJsonObject{{"nodeId", QJsonValue::Null}, {"binding", bindingOf("cache", "database")},
                                    {"grant", grantOf("cache", "database", QString(64, QLatin1Char('0')), r.authority)}},
                        QJsonObject{{"nodeId", "node-a"}, {"binding", bindingOf("later", "database")}, {"grant", QJsonValue::Null}}}}};
        r.f.cloudly->setHandler("getClusterPlatformDesiredState",
                                [state](const peers::PeerFrame &, const QJsonObject &) { return Answer::respond(QJsonObject{{"desiredState", state}}); });
        r.f.cloudly->setHandler("reportClusterPlatformBindingStatus", [&r](const peers::PeerFrame &, const QJsonObject &request) {
            r.reports.append(request);
            return Answer::respond(QJsonObject{{"accepted", true}});
        });
        // A listener certificate far from its notAfter: the overview's first action is then the bindings'.
        r.f.cloudly->setRelayCertificate(r.f.ca.issueForHost(QStringLiteral("localhost"), 60LL * 86'400'000));
        RelayConfiguration config = r.f.configuration();
        config.statusSocketPath = r.f.dir.filePath(QStringLiteral("status.sock"));
        r.socket = config.statusSocketPath;
        r.f.makeRelay(config);
        QVERIFY(r.f.startRelay());
        QTRY_COMPARE_WITH_TIMEOUT(r.reports.size(), 4, 20000);
        QTRY_VERIFY(r.f.relay->bindings()->attemptsInFlight() == 0);
    }

    // The status server spaces a client's snapshots by snapshotCoalesceMs (250 ms) on the relay's clock:
    // moving it past that sends the one still due.
    static void flushSnapshots(Relay &r) { r.f.clock.advance(300); }

    static QString statusOf(const Relay &r, const QString &name)
    {
        for (const auto &b : r.f.relay->statusSnapshot().bindings)
            if (b.name == name)
                return b.status + QLatin1Char('/') + b.reason;
        return QStringLiteral("<none>");
    }

    struct LiveWindow {
        explicit LiveWindow(const QString &socket) : client({socket, true, true, 250, 1000}, clock), window(socket)
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

private Q_SLOTS:
    // The states come from the peers: the relay's own status says so before any console reads it.
    void rowsStandAsThePeersMadeThem()
    {
        Relay r;
        start(r);
        QCOMPARE(statusOf(r, "main-db"), QStringLiteral("ready/"));
        QCOMPARE(statusOf(r, "assets"), QStringLiteral("ready/"));
        QVERIFY2(statusOf(r, "media").startsWith("failed/"), qPrintable(statusOf(r, "media")));
        QCOMPARE(statusOf(r, "cache"), QStringLiteral("failed/binding-not-placed"));
        QCOMPARE(statusOf(r, "later"), QStringLiteral("ungranted/"));
        QCOMPARE(r.f.cloudly->secretIngress().opened().size(), 2); // main-db's and assets' material, sealed and opened
        QVERIFY(r.f.stopRelay());
    }

    // CV-08 (issue 24): the overview counts and highlights the failed bindings, --text marks their rows,
    // the window colours them and counts them on the Bindings tab.
    void failedBindingsCountedAndColoured_CV08()
    {
        Relay r;
        start(r);
        const QString text = QString::fromUtf8(runConsole({QStringLiteral("--text"), QStringLiteral("--socket"), r.socket}));
        const auto [count, countProblem] = overviewLine(text, QStringLiteral("bindings"));
        QCOMPARE(count, QStringLiteral("2 failed of 5"));
        QVERIFY(countProblem);
        QCOMPARE(overviewLine(text, QStringLiteral("health")).first, QStringLiteral("READY, WITH WARNINGS"));
        const QString action = overviewLine(text, QStringLiteral("next action")).first;
        QVERIFY2(action.startsWith(QStringLiteral("Binding media is failed: ")) || action.startsWith(QStringLiteral("Binding cache is failed: ")),
                 qPrintable(action));
        QMap<QString, bool> marked;
        QMap<QString, QStringList> cells;
        for (const TextRow &row : textTable(text, QStringLiteral("BINDINGS"))) {
            marked.insert(row.cells.value(0), row.problem);
            cells.insert(row.cells.value(0), row.cells);
        }
        // Every column of a failed row: node, service, capability, status, reason, grant, attempts and the
        // retry 5000 ms after the failure on the relay's clock, which has not moved (CS-22).
        const QString retryAt = QDateTime::fromMSecsSinceEpoch(r.f.clock.nowMs() + 5000, Qt::UTC).toString(QStringLiteral("yyyy-MM-dd'T'HH:mm:ss'Z'"));
        QCOMPARE(cells.value("media"), (QStringList{"media", "svc-1", "objectstorage", "node-b", "failed", "corestore-refused", "op-media (generation 3)", "1", retryAt}));
        QCOMPARE(cells.value("cache"), (QStringList{"cache", "svc-1", "database", "-", "failed", "binding-not-placed", "op-cache (generation 3)", "0", "-"}));
        QCOMPARE(marked, (QMap<QString, bool>{{"assets", false}, {"cache", true}, {"later", false}, {"main-db", false}, {"media", true}}));

        LiveWindow live(r.socket);
        TablePane *pane = live.window.pane(QStringLiteral("bindings"));
        QTRY_COMPARE(pane->model()->rowCount(), 5);
        QCOMPARE(live.window.tabs()->tabText(5), QStringLiteral("Bindings (5 · 2 failed)"));
        QCOMPARE(pane->model()->problemCount(), 2);
        for (int row = 0; row < pane->model()->rowCount(); ++row) {
            const QString name = pane->model()->index(row, 0).data().toString();
            const bool failed = name == QLatin1String("media") || name == QLatin1String("cache");
            for (int column = 0; column < pane->model()->columnCount(); ++column) {
                const QModelIndex cell = pane->model()->index(row, column);
                QCOMPARE(cell.data(Qt::BackgroundRole).value<QColor>() == RowTableModel::problemBackground(), failed);
                QCOMPARE(cell.data(Qt::ForegroundRole).value<QColor>() == RowTableModel::problemForeground(), failed);
            }
        }
        bool overviewRowMarked = false;
        for (const auto &row : live.window.pane(QStringLiteral("overview"))->model()->rows())
            if (row.display.value(0) == QLatin1String("Bindings")) {
                QCOMPARE(row.display.value(1), QStringLiteral("2 failed of 5"));
                overviewRowMarked = row.problem;
            }
        QVERIFY(overviewRowMarked);
        QVERIFY(live.window.tabs()->tabText(0).startsWith(QStringLiteral("Overview (")));
        QVERIFY(r.f.stopRelay());
    }

    // CV-09 (issue 18 "filterable by state"): the Bindings tab's state choice, driven as an operator
    // would (the combo box's items, then the text filter beside it), shows exactly the rows in that state.
    void stateFilterShowsThoseRows_CV09()
    {
        Relay r;
        start(r);
        LiveWindow live(r.socket);
        TablePane *pane = live.window.pane(QStringLiteral("bindings"));
        QTRY_COMPARE(pane->model()->rowCount(), 5);
        QComboBox *choice = live.window.findChild<QComboBox *>(QStringLiteral("bindingsChoice"));
        QVERIFY(choice);
        QCOMPARE(choice, pane->choice());
        auto choose = [&](const QString &label) {
            const int index = choice->findText(label);
            QVERIFY2(index >= 0, qPrintable(label));
            choice->setCurrentIndex(index);
            QCoreApplication::processEvents();
        };
        auto countText = [&] { return live.window.findChild<QLabel *>(QStringLiteral("bindingsCount"))->text(); };
        QCOMPARE(shownNames(pane), (QStringList{"assets", "cache", "later", "main-db", "media"}));
        // Sortable (issue 18): media's retry on the relay's clock makes it the one row with 2 attempts.
        r.f.clock.advance(5000);
        QTRY_VERIFY(r.b.requestCount(LoopbackCorestore::reconcileRoute) >= 2);
        auto attemptsOf = [&](const QString &name) {
            for (int row = 0; row < pane->model()->rowCount(); ++row)
                if (pane->model()->index(row, 0).data().toString() == name)
                    return pane->model()->index(row, 7).data().toString();
            return QString();
        };
        QTRY_COMPARE(attemptsOf(QStringLiteral("media")), QStringLiteral("2"));
        QVERIFY(attemptsOf(QStringLiteral("main-db")) == QLatin1String("1"));
        pane->view()->sortByColumn(7, Qt::DescendingOrder); // Attempts
        QCOMPARE(pane->proxy()->index(0, 0).data().toString(), QStringLiteral("media"));
        pane->view()->sortByColumn(0, Qt::AscendingOrder);  // Name
        QCOMPARE(pane->proxy()->index(0, 0).data().toString(), QStringLiteral("assets"));
        QTRY_VERIFY(r.f.relay->bindings()->attemptsInFlight() == 0); // media failed again
        flushSnapshots(r);
        choose(QStringLiteral("failed"));
        QTRY_COMPARE(shownNames(pane), (QStringList{"cache", "media"}));
        QCOMPARE(countText(), QStringLiteral("2 of 5"));
        choose(QStringLiteral("ready"));
        QCOMPARE(shownNames(pane), (QStringList{"assets", "main-db"}));
        QCOMPARE(countText(), QStringLiteral("2 of 5"));
        choose(QStringLiteral("ungranted"));
        QCOMPARE(shownNames(pane), QStringList{"later"});
        choose(QStringLiteral("provisioning"));
        QCOMPARE(shownNames(pane), QStringList{});
        QCOMPARE(countText(), QStringLiteral("0 of 5"));
        // The state choice and the text filter together: failed rows whose text mentions "not-placed".
        choose(QStringLiteral("failed"));
        QTest::keyClicks(pane->filterEdit(), QStringLiteral("not-placed"));
        QCoreApplication::processEvents();
        QCOMPARE(shownNames(pane), QStringList{"cache"});
        pane->filterEdit()->clear();
        // A live update keeps the choice: still only failed rows.
        Q_EMIT r.f.relay->bindings()->statusChanged();
        QCoreApplication::processEvents();
        QCOMPARE(shownNames(pane), (QStringList{"cache", "media"}));
        choose(QStringLiteral("all states"));
        QCOMPARE(shownNames(pane), (QStringList{"assets", "cache", "later", "main-db", "media"}));
        QCOMPARE(countText(), QStringLiteral("5 of 5"));
        QVERIFY(r.f.stopRelay());
    }

    // CV-10 (CS-09, CS-49): the grants carry an authority canary, the material a password canary, the
    // Corestore token is a canary: none reaches the status, --text, --json, --watch or the window.
    void noCanaryInAnyBindingOutput_CV10()
    {
        Relay r;
        start(r);
        // The canaries were really carried (else the check below proves nothing).
        const auto reconcile = r.a.lastRequest(LoopbackCorestore::reconcileRoute);
        QVERIFY(reconcile && reconcile->body.contains(r.authority));
        QCOMPARE(r.a.lastRequest(LoopbackCorestore::reconcileRoute)->header("authorization"), QByteArrayLiteral("Bearer ") + r.token);
        // password, uri and secretAccessKey all carry the material canary (LoopbackCorestore's materialSecret).
        QMap<QString, QJsonObject> materials;
        for (const auto &opened : r.f.cloudly->secretIngress().opened())
            materials.insert(opened.material.value("capability").toString(), opened.material);
        QCOMPARE(materials.value("database").value("password").toString(), QString::fromLatin1(r.password));
        QVERIFY(materials.value("database").value("uri").toString().contains(QString::fromLatin1(r.password)));
        QCOMPARE(materials.value("objectstorage").value("secretAccessKey").toString(), QString::fromLatin1(r.password));
        // The sealed bytes (§12.4) are not shown either: a stretch of the envelope's base64 is a canary too.
        const auto published = r.f.cloudly->requests(QStringLiteral("publishCorestoreCredentialMaterial"));
        QCOMPARE(published.size(), 2);
        const QByteArray sealed = QJsonDocument::fromJson(published[0].rawRequest).object().value("envelope").toObject().value("sealed").toString().toLatin1();
        QVERIFY(sealed.size() > 64);
        const QList<QByteArray> canaries{r.authority, r.password, r.token, sealed.mid(16, 32)};

        QCOMPARE(leaks(canaries, QJsonDocument(r.f.relay->statusSnapshot().toJson()).toJson()), QStringList());
        for (const auto &report : r.reports)
            QCOMPARE(leaks(canaries, QJsonDocument(report).toJson()), QStringList());
        for (const char *mode : {"--text", "--json"}) {
            int exitCode = -1;
            const QByteArray out = runConsole({QString::fromLatin1(mode), QStringLiteral("--socket"), r.socket}, &exitCode);
            QCOMPARE(exitCode, 0);
            QVERIFY2(out.contains("main-db") && out.contains("op-main-db") && out.contains("binding-not-placed"), out.constData());
            QCOMPARE(leaks(canaries, out), QStringList());
        }
        {
            QProcess watch;
            QByteArray out;
            connect(&watch, &QProcess::readyReadStandardOutput, this, [&] { out += watch.readAllStandardOutput(); });
            watch.start(QStringLiteral(COREFLOW_CONSOLE_BINARY), {QStringLiteral("--watch"), QStringLiteral("--socket"), r.socket});
            QTRY_VERIFY_WITH_TIMEOUT(out.contains("BINDINGS (5)") && out.contains("op-media"), 15000);
            // A live change goes out too: media's retry (5 s on the relay's clock) is shown again.
            out.clear();
            r.f.clock.advance(5000);
            QTRY_VERIFY(r.b.requestCount(LoopbackCorestore::reconcileRoute) >= 2);
            QTRY_VERIFY(r.f.relay->bindings()->attemptsInFlight() == 0);
            flushSnapshots(r);
            QTRY_VERIFY_WITH_TIMEOUT(out.contains("BINDINGS (5)") && out.contains("op-media (generation 3)"), 15000);
            watch.kill();
            watch.waitForFinished(5000);
            out += watch.readAllStandardOutput() + watch.readAllStandardError();
            QCOMPARE(leaks(canaries, out), QStringList());
        }
        LiveWindow live(r.socket);
        QTRY_COMPARE(live.window.pane(QStringLiteral("bindings"))->model()->rowCount(), 5);
        const QByteArray gui = live.window.allTexts().join(QLatin1Char('\n')).toUtf8();
        QVERIFY(gui.contains("op-main-db (generation 3)"));
        QCOMPARE(leaks(canaries, gui), QStringList());
        QVERIFY(r.f.stopRelay());
    }
};

QTEST_MAIN(ConsoleBindingsTest)
#include "console_bindings.moc"
