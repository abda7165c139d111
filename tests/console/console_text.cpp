// console_text: --text and --json renderings of fixture snapshots against golden files
// (tests/console/golden/), directly and end to end through a live status socket.
// Regenerate goldens after an intended layout change: COREFLOW_UPDATE_GOLDEN=1 ./console_text (every
// rewritten comparison then fails, so review the diff and run again; refused when CI is set). The
// goldens pin the layout; fieldsOfTheReadyStatus, fieldsOfTheReadySectionsBeyondTheCore and
// fieldsOfTheRefusedParkedAndFiftyNodeStatus check the values they show on their own.
#include "tests/console/consolefixtures.h"
#include "console/consoleexitcodes.h"
#include "service/statussocket/statusserver.h"
#include "console/terminalrunner.h"
#include "console/terminalview.h"
#include "shared/util/manualclock.h"

#include <QBuffer>
#include <QDateTime>
#include <QJsonArray>
#include <QMultiMap>
#include <QRegularExpression>
#include <QJsonDocument>
#include <QJsonObject>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QSize>
#include <QTest>

#include <algorithm>

using namespace coreflow;
using namespace coreflow::console;
using namespace coreflow::consoletest;

namespace {

status::RelayStatus fixtureByName(const QString &name)
{
    if (name == QLatin1String("ready"))
        return readyStatus();
    if (name == QLatin1String("refused"))
        return refusedStatus();
    if (name == QLatin1String("parked"))
        return parkedStatus();
    return fiftyNodesStatus();
}

QByteArray golden(const QString &file, const QByteArray &actual)
{
    const QString path = QStringLiteral(COREFLOW_GOLDEN_DIR "/") + file;
    if (qEnvironmentVariableIsSet("COREFLOW_UPDATE_GOLDEN")) {
        // Never on CI, and never a pass: a rewrite is reported as a difference, to be reviewed (git
        // diff) before a run without the switch can pass.
        if (qEnvironmentVariableIsSet("CI") || qEnvironmentVariableIsSet("COREFLOW_REQUIRE_ALL"))
            return QByteArray("<COREFLOW_UPDATE_GOLDEN refused: CI is set>");
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly) || f.write(actual) != actual.size())
            return QByteArray("<could not rewrite golden ") + path.toUtf8() + ">";
        return QByteArray("<golden ") + path.toUtf8() + " rewritten: review the diff, then run without COREFLOW_UPDATE_GOLDEN>";
    }
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return QByteArray("<missing golden ") + path.toUtf8() + ">";
    return f.readAll();
}

// ISO-8601 UTC to the second, computed here with Qt (not with TerminalView::isoUtc).
QString iso(qint64 ms)
{
    return QDateTime::fromMSecsSinceEpoch(ms, Qt::UTC).toString(QStringLiteral("yyyy-MM-dd'T'HH:mm:ss'Z'"));
}

// The lines under one heading of --text, without their two-space indent.
QStringList sectionOf(const QString &text, const QString &heading)
{
    QStringList out;
    bool inside = false;
    for (const QString &line : text.split(QLatin1Char('\n'))) {
        if (!line.isEmpty() && !line.startsWith(QLatin1Char(' ')) && !line.startsWith(QLatin1Char('!'))) {
            inside = line == heading;
            continue;
        }
        if (inside && !line.isEmpty())
            out << line.mid(2);
    }
    return out;
}

// "label   value" lines of a section: label -> values (a label may repeat, e.g. refusals).
QMultiMap<QString, QString> fieldsOf(const QString &text, const QString &heading)
{
    QMultiMap<QString, QString> out;
    for (const QString &line : sectionOf(text, heading)) {
        const qsizetype gap = line.indexOf(QStringLiteral("  "));
        out.insert(line.left(gap), line.mid(gap).trimmed());
    }
    return out;
}

// The rows of a table section, cells split at runs of two or more spaces; the header row first.
QList<QStringList> rowsOf(const QString &text, const QString &heading)
{
    QList<QStringList> out;
    for (const QString &line : sectionOf(text, heading))
        out << line.split(QRegularExpression(QStringLiteral("\\s{2,}")), Qt::SkipEmptyParts);
    return out;
}

} // namespace

class ConsoleTextTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void goldens_data()
    {
        QTest::addColumn<QString>("fixture");
        for (const char *n : {"ready", "refused", "parked", "nodes50"})
            QTest::newRow(n) << QString::fromLatin1(n);
    }

    void goldens()
    {
        QFETCH(QString, fixture);
        const status::RelayStatus s = fixtureByName(fixture);
        const QByteArray text = TerminalView::renderText(s).toUtf8();
        const QByteArray json = TerminalView::renderJson(s);
        // Both goldens are read (or, under COREFLOW_UPDATE_GOLDEN, rewritten) before either comparison fails.
        const QByteArray goldenText = golden(fixture + QStringLiteral(".txt"), text);
        const QByteArray goldenJson = golden(fixture + QStringLiteral(".json"), json);
        QCOMPARE(text, goldenText);
        QCOMPARE(json, goldenJson);
        // The JSON is the status object and reads back to the same status.
        QCOMPARE(status::RelayStatus::fromJson(QJsonDocument::fromJson(json).object()), s);
    }

    // Issue 14 defect 9 (contract §18 "Console output"): a string in the status or an event line may
    // carry terminal escapes (ESC, BEL, CR, newline, bidi overrides); --text and --watch print none.
    void serverStringsLoseTheirControlCharacters()
    {
        status::RelayStatus s = readyStatus();
        const QString hostile = QStringLiteral("node-x\x1b]0;owned\x07\r\nREADINESS fake\u202Egnp.exe\x7f\u009b2J");
        s.nodeId = hostile;
        s.parked = true;
        s.parkedLine = hostile;
        QVERIFY(!s.nodes.isEmpty());
        s.nodes[0].nodeId = hostile;
        const QString text = TerminalView::renderText(s);
        const QString watch = TerminalView::renderWatch(QStringLiteral("/run/coreflow/status.sock"),
                                                        QStringLiteral("DISCONNECTED: ") + hostile, s,
                                                        {StatusEvent{1, hostile, hostile}});
        for (const QString &out : {text, watch}) {
            for (const QChar ch : out) {
                if (ch == QLatin1Char('\n'))
                    continue;
                QVERIFY2(ch.category() != QChar::Other_Control && ch.category() != QChar::Other_Format,
                         qPrintable(QStringLiteral("U+%1 printed").arg(ch.unicode(), 4, 16, QLatin1Char('0'))));
            }
            QVERIFY(!out.contains(QStringLiteral("\nREADINESS fake")));
            QVERIFY(out.contains(QStringLiteral("node-x\uFFFD]0;owned\uFFFD\uFFFD\uFFFDREADINESS fake\uFFFDgnp.exe\uFFFD\uFFFD2J")));
        }
    }

    // Each value the "ready" golden shows, checked on its own against the fixture's fields, so a golden
    // rewritten from a wrong rendering cannot carry the error through.
    void fieldsOfTheReadyStatus()
    {
        const status::RelayStatus s = readyStatus();
        const QString text = TerminalView::renderText(s);
        const auto relay = fieldsOf(text, "RELAY");
        QCOMPARE(relay.value("build"), s.build);
        QCOMPARE(relay.value("contract release"), s.contractRelease);
        QCOMPARE(relay.value("node"), s.nodeId);
        QCOMPARE(relay.value("started"), iso(s.startedAtMs));
        QCOMPARE(relay.value("generated"), iso(s.generatedAtMs));
        const auto readiness = fieldsOf(text, "READINESS");
        QCOMPARE(readiness.value("ready"), QStringLiteral("yes"));
        QCOMPARE(readiness.value("parked"), QStringLiteral("no"));
        const auto cloudly = fieldsOf(text, "CLOUDLY SESSION");
        QCOMPARE(cloudly.value("connected"), QStringLiteral("yes"));
        QCOMPARE(cloudly.value("dispatchable"), QStringLiteral("yes"));
        QCOMPARE(cloudly.value("carrier count"), QString::number(s.cloudly.carrierCount));
        QCOMPARE(cloudly.value("identity renewal"), iso(s.cloudly.identityRenewalDueMs));
        QCOMPARE(cloudly.value("credential"),
                 s.cloudly.credentialId + " (generation " + QString::number(s.cloudly.credentialGeneration) + ")");
        QCOMPARE(cloudly.value("url"), s.cloudly.url);
        const auto listener = fieldsOf(text, "LISTENER");
        QCOMPARE(listener.value("listening"), QStringLiteral("yes"));
        QCOMPARE(listener.value("address"), s.listener.address + ":" + QString::number(s.listener.port));
        QCOMPARE(listener.value("origin"), s.listener.origin);
        QCOMPARE(listener.value("note"), QStringLiteral("-"));
        QCOMPARE(listener.value("certificate"), s.listener.certificateSubject);
        QCOMPARE(listener.value("not after"), iso(s.listener.certificateNotAfterMs));
        QVERIFY(!listener.contains("warning")); // 60 days left
        QCOMPARE(cloudly.value("connected since"), iso(s.cloudly.connectedSinceMs));
        // D-87: the fixture's session is dispatchable again, so its last error reads as recovered.
        QCOMPARE(cloudly.value("last error"), s.cloudly.lastErrorClass + " (recovered at " + iso(s.cloudly.connectedSinceMs) + ")");
        QCOMPARE(cloudly.value("next retry"), QStringLiteral("-"));
        const auto registration = fieldsOf(text, "REGISTRATION");
        QCOMPARE(registration.value("last sequence"), QString::number(s.registration.lastSequence));
        QCOMPARE(registration.value("last outcome"), s.registration.lastOutcome);
        QCOMPARE(registration.value("when"), iso(s.registration.lastAtMs));
        const auto overview = fieldsOf(text, "OVERVIEW");
        QCOMPARE(overview.value("health"), QStringLiteral("HEALTHY"));
        QCOMPARE(overview.value("next action"), QStringLiteral("nothing to do"));
        QCOMPARE(overview.value("nodes"), QString::number(s.nodes.size()) + " carried");
        QCOMPARE(overview.value("escrow"), QString::number(s.escrow.size()) + " runs held");

        const auto nodes = rowsOf(text, "NODES (" + QString::number(s.nodes.size()) + ")");
        QCOMPARE(nodes.size(), s.nodes.size() + 1);
        QCOMPARE(nodes.first(), (QStringList{"NODE", "ADDRESS", "RELEASE", "CONNECTED", "REGISTERED", "LAST SEEN", "IN FLIGHT", "BYTES IN",
                                             "BYTES OUT", "CARRIER", "LAST METHOD", "LAST FORWARD", "KEEPALIVE"}));
        for (const status::CarriedNode &n : s.nodes) {
            const QStringList expected{n.nodeId, n.remoteAddress, n.offeredRelease, iso(n.connectedAtMs), iso(n.sinceMs),
                                       n.lastFrameAtMs ? iso(n.lastFrameAtMs) : "-", QString::number(n.forwardsInFlight),
                                       QString::number(n.bytesReceived), QString::number(n.bytesSent), QString::number(n.carrierCount),
                                       n.lastMethod.isEmpty() ? "-" : n.lastMethod,
                                       n.lastForwardAtMs ? iso(n.lastForwardAtMs) : "-", n.keepalive.isEmpty() ? "-" : n.keepalive};
            QVERIFY2(nodes.contains(expected), qPrintable(expected.join(" | ")));
        }
        const auto escrow = rowsOf(text, "ESCROW (" + QString::number(s.escrow.size()) + ")");
        QCOMPARE(escrow.size(), s.escrow.size() + 1);
        for (const status::EscrowRun &e : s.escrow) {
            const QStringList expected{e.nodeId, e.projectionId, QString::number(e.projectionGeneration),
                                       QString::number(e.renewalCount),
                                       e.currentWindowStartMs ? iso(e.currentWindowStartMs) + ".." + iso(e.currentWindowEndMs) : "-",
                                       iso(e.nextWindowStartMs), iso(e.authorityUntilMs),
                                       e.lastOfferResult.isEmpty() ? "-" : e.lastOfferResult};
            QVERIFY2(escrow.contains(expected), qPrintable(expected.join(" | ")));
        }
        const auto ingress = fieldsOf(text, "INGRESS");
        QCOMPARE(ingress.value("bound"), QStringLiteral("yes"));
        QCOMPARE(ingress.value("route table rev"), QString::number(*s.ingress.routeTableRevision));
        QCOMPARE(ingress.value("routes"), QString::number(s.ingress.routeCount));
        QCOMPARE(ingress.value("hostnames"), QString::number(s.ingress.hostnameCount));
        const auto bindings = rowsOf(text, "BINDINGS (" + QString::number(s.bindings.size()) + ")");
        QCOMPARE(bindings.size(), s.bindings.size() + 1);
        const status::PlatformBinding &b = s.bindings.first();
        QCOMPARE(bindings.at(1), (QStringList{b.name, b.serviceId, b.capability, b.nodeId, b.status, "-", "grant-op-1 (generation 2)", "1", "-"}));
        const auto vpn = fieldsOf(text, "VPN HUB");
        QCOMPARE(vpn.value("bound"), QStringLiteral("yes"));
        QCOMPARE(vpn.value("address"), s.vpn.address + ":" + QString::number(s.vpn.quicPort));
        QCOMPARE(vpn.value("network revision"), QString::number(*s.vpn.networkRevision));
        QCOMPARE(vpn.value("members"), QString::number(s.vpn.memberCount));
        const auto counters = fieldsOf(text, "COUNTERS");
        QCOMPARE(counters.value("forwards"), QString::number(s.counters.forwards));
        QCOMPARE(counters.value("pushes"), QString::number(s.counters.pushes));
        QCOMPARE(counters.value("reconnects"), QString::number(s.counters.reconnects));
        QStringList refusals = counters.values("refusals");
        refusals.sort();
        QStringList expectedRefusals;
        for (auto it = s.counters.refusalsByName.cbegin(); it != s.counters.refusalsByName.cend(); ++it)
            expectedRefusals << it.key() + " " + QString::number(it.value());
        expectedRefusals.sort();
        QCOMPARE(refusals, expectedRefusals);

        // --json: the members the golden shows, read one by one (contract §18's status object).
        const QJsonObject json = QJsonDocument::fromJson(TerminalView::renderJson(s)).object();
        QCOMPARE(json.value("nodeId").toString(), s.nodeId);
        QCOMPARE(json.value("ready").toBool(), true);
        QCOMPARE(json.value("cloudly").toObject().value("carrierCount").toInteger(), s.cloudly.carrierCount);
        QCOMPARE(json.value("nodes").toArray().size(), s.nodes.size());
        QCOMPARE(json.value("escrow").toArray().size(), s.escrow.size());
        QCOMPARE(json.value("counters").toObject().value("forwards").toInteger(), s.counters.forwards);
    }

    // Review of issue 16: the sections the ready golden shows that fieldsOfTheReadyStatus did not read,
    // each line kind checked on its own against the fixture's fields (contract §18.1: backups,
    // corestore, vpn, counters) and never against the console's output; swapping "closure bytes
    // sent/received" in console/terminalview.cpp turns this red, not only the goldens (tests/PROOFS.md).
    void fieldsOfTheReadySectionsBeyondTheCore()
    {
        const status::RelayStatus s = readyStatus();
        const QString text = TerminalView::renderText(s);
        const auto backups = fieldsOf(text, "BACKUPS");
        const status::BackupLaneStatus &b = s.backups;
        const auto ofKind = [&](const char *kind) {
            return QString::number(std::count_if(b.operations.cbegin(), b.operations.cend(),
                                                 [&](const status::BackupOperationStatus &o) { return o.kind == QLatin1String(kind); }));
        };
        QCOMPARE(backups.value("in flight"), ofKind("backup") + " backups, " + ofKind("restore") + " restores, "
                                                 + QString::number(b.transfers.size()) + " closure transfers");
        QCOMPARE(backups.value("closure bytes"),
                 "sent " + QString::number(b.closureBytesSent) + ", received " + QString::number(b.closureBytesReceived));
        QStringList ended;
        for (auto it = b.transfersByOutcome.cbegin(); it != b.transfersByOutcome.cend(); ++it)
            ended << it.key() + " " + QString::number(it.value());
        QCOMPARE(backups.value("transfers ended"), ended.join(", "));
        const QList<QStringList> backupRows = rowsOf(text, "BACKUPS");
        const status::BackupOperationStatus &op = b.operations.first();
        QVERIFY(backupRows.contains(QStringList{op.kind, op.nodeId, op.serviceId, op.backupId, op.step,
                                                QString::number(op.stepsDone) + " of " + QString::number(op.stepsTotal),
                                                iso(op.startedAtMs)}));
        const status::ClosureTransferStatus &t = b.transfers.first();
        const auto moving = std::find_if(backupRows.cbegin(), backupRows.cend(), [&](const QStringList &r) { return r.value(0) == t.streamId; });
        QVERIFY(moving != backupRows.cend());
        QCOMPARE(moving->mid(1, 6), (QStringList{t.direction, t.nodeId, t.serviceId, t.backupId, t.state,
                                                 QString::number(t.bytesMoved) + " of " + QString::number(*t.sizeBytes) + " B"}));
        QCOMPARE(moving->value(8), t.awaiting);
        QCOMPARE(moving->value(9), iso(t.startedAtMs));
        for (const status::ClosureOutcomeStatus &r : b.recent) {
            const auto row = std::find_if(backupRows.cbegin(), backupRows.cend(),
                                          [&](const QStringList &cells) { return cells.value(0) == r.streamId || cells.value(0) == "! " + r.streamId; });
            QVERIFY2(row != backupRows.cend(), qPrintable(r.streamId));
            QCOMPARE(row->mid(1), (QStringList{r.direction, r.nodeId, r.serviceId, r.backupId, r.outcome,
                                               QString::number(r.bytesMoved) + " of " + QString::number(*r.sizeBytes) + " B", iso(r.endedAtMs)}));
        }
        // A transfer that ended on a refusal is marked for the eye (the '!' column), a stored one is not.
        QVERIFY(text.contains("\n! " + b.recent.last().streamId));
        QVERIFY(!text.contains("\n! " + b.recent.first().streamId));

        const auto corestore = fieldsOf(text, "CORESTORE");
        QCOMPARE(corestore.value("credential"), s.corestore.credential);
        QCOMPARE(corestore.value("recipient"), QStringLiteral("-"));
        QCOMPARE(corestore.value("enrolled at"), QStringLiteral("-"));
        QVERIFY(sectionOf(text, "CORESTORE").contains("(no nodes)"));

        const auto vpn = fieldsOf(text, "VPN HUB");
        QCOMPARE(vpn.value("state"), s.vpn.state);
        QCOMPARE(vpn.value("public key"), s.vpn.publicKey);
        QCOMPARE(vpn.value("connected"), QString::number(s.vpn.membersConnected) + " of " + QString::number(s.vpn.memberCount));
        QCOMPARE(vpn.value("drops"), s.vpn.drops.firstKey() + " " + QString::number(s.vpn.drops.first()));

        const auto overview = fieldsOf(text, "OVERVIEW");
        QCOMPARE(overview.value("cloudly"), "ok (session since " + iso(s.cloudly.connectedSinceMs) + ")");
        QCOMPARE(overview.value("registration"), "ok (last: " + s.registration.lastOutcome + ", sequence "
                                                     + QString::number(s.registration.lastSequence) + ", " + iso(s.registration.lastAtMs) + ")");
        QCOMPARE(overview.value("listener"), "ok (" + s.listener.address + ":" + QString::number(s.listener.port) + ")");
        for (const char *lane : {"node lane", "ingress lane", "start"})
            QCOMPARE(overview.value(lane), QStringLiteral("ok"));
        QCOMPARE(overview.value("bindings"), "0 failed of " + QString::number(s.bindings.size()));
        qint64 refusalsSinceStart = 0;
        for (qint64 n : s.counters.refusalsByName)
            refusalsSinceStart += n;
        QCOMPARE(overview.value("refusals"), QString::number(s.counters.refusalsLastHour) + " in the last hour ("
                                                 + QString::number(refusalsSinceStart) + " since start)");

        const auto counters = fieldsOf(text, "COUNTERS");
        QCOMPARE(counters.value("re-registrations"), QString::number(s.counters.reregistrationWaves));
        QStringList offers = counters.values("escrow offers");
        offers.sort();
        QCOMPARE(offers, (QStringList{"delivered " + QString::number(s.counters.escrowOffersByOutcome.value("delivered")),
                                      "failed " + QString::number(s.counters.escrowOffersByOutcome.value("failed"))}));
        QCOMPARE(counters.value("registry requests"), QString::number(s.counters.registryRequests));
        QCOMPARE(counters.value("registry bytes"), QString::number(s.counters.registryBodyBytes));
        QCOMPARE(counters.value("status clients"), QString::number(s.counters.statusClients));
    }

    // Review of issue 16: the refused, parked and fifty-node goldens, their distinctive lines read on
    // their own against the fixtures (contract §18.1 refusals, parked, nodes).
    void fieldsOfTheRefusedParkedAndFiftyNodeStatus()
    {
        const status::RelayStatus refused = refusedStatus();
        const QString refusedText = TerminalView::renderText(refused);
        const auto overview = fieldsOf(refusedText, "OVERVIEW");
        QCOMPARE(overview.value("health"), QStringLiteral("NOT READY"));
        QVERIFY(refusedText.contains("\n! health"));
        QVERIFY(overview.value("cloudly").startsWith(refused.refusals.first().line));
        QVERIFY(overview.value("cloudly").contains("peer offer " + *refused.refusals.first().peerOffer));
        QVERIFY(overview.value("cloudly").contains("own offer " + *refused.refusals.first().ownOffer));
        QCOMPARE(overview.value("nodes"), QStringLiteral("0 carried"));
        QCOMPARE(fieldsOf(refusedText, "READINESS").value("ready"), QStringLiteral("no"));
        QCOMPARE(fieldsOf(refusedText, "CLOUDLY SESSION").value("dispatchable"), QStringLiteral("no"));
        QCOMPARE(fieldsOf(refusedText, "INGRESS").value("bound"), QStringLiteral("no"));
        const auto vpn = fieldsOf(refusedText, "VPN HUB");
        QCOMPARE(vpn.value("bound"), QStringLiteral("no"));
        QCOMPARE(vpn.value("address"), QStringLiteral("-"));
        QCOMPARE(vpn.value("members"), QStringLiteral("0"));
        QVERIFY(fieldsOf(refusedText, "COUNTERS").values("refusals").contains(
            "protocol-offer-refused " + QString::number(refused.counters.refusalsByName.value("protocol-offer-refused"))));

        const status::RelayStatus parked = parkedStatus();
        const QString parkedText = TerminalView::renderText(parked);
        const auto parkedOverview = fieldsOf(parkedText, "OVERVIEW");
        QCOMPARE(parkedOverview.value("health"), QStringLiteral("PARKED"));
        QVERIFY(parkedOverview.value("registration").startsWith(QStringLiteral("PARKED")));
        QCOMPARE(parkedOverview.value("cloudly"), "ok (session since " + iso(parked.cloudly.connectedSinceMs) + ")");
        const auto readiness = fieldsOf(parkedText, "READINESS");
        QCOMPARE(readiness.value("ready"), QStringLiteral("no"));
        QCOMPARE(readiness.value("parked"), "yes: " + parked.parkedLine);

        const status::RelayStatus fifty = fiftyNodesStatus();
        const QString fiftyText = TerminalView::renderText(fifty);
        QCOMPARE(fieldsOf(fiftyText, "OVERVIEW").value("nodes"), QStringLiteral("50 carried"));
        const auto rows = rowsOf(fiftyText, "NODES (50)");
        QCOMPARE(rows.size(), 51);
        for (const status::CarriedNode &n : fifty.nodes) {
            const auto row = std::find_if(rows.cbegin(), rows.cend(), [&](const QStringList &r) { return r.value(0) == n.nodeId; });
            QVERIFY2(row != rows.cend(), qPrintable(n.nodeId));
            QCOMPARE(row->value(1), n.remoteAddress);
            QCOMPARE(row->value(6), QString::number(n.forwardsInFlight));
            QCOMPARE(row->value(7), QString::number(n.bytesReceived));
            QCOMPARE(row->value(8), QString::number(n.bytesSent));
            QCOMPARE(row->value(9), QString::number(n.carrierCount));
            QCOMPARE(row->value(12), n.keepalive);
        }
    }

    void parkLineIsShownOnce()
    {
        // The parked relay's one registration refusal IS the park line: --text shows it once, as parked.
        const status::RelayStatus s = parkedStatus();
        QCOMPARE(s.refusals.size(), 1);
        QCOMPARE(s.refusals[0].line, s.parkedLine);
        const QString text = TerminalView::renderText(s);
        QCOMPARE(text.count(s.parkedLine), 1);
        QVERIFY(text.contains(QStringLiteral("  parked              yes: ") + s.parkedLine + QLatin1Char('\n')));
        QVERIFY(!text.contains(QStringLiteral("refusal             registration")));
        // A different registration refusal next to a park line is still shown.
        status::RelayStatus other = s;
        other.refusals.append({QStringLiteral("palletRuntime"), std::nullopt, std::nullopt, QStringLiteral("something else")});
        QVERIFY(TerminalView::renderText(other).contains(QStringLiteral("refusal             palletRuntime: something else")));
    }

    // --watch on a small terminal: the compact layout fits its height and width, keeps the overview at
    // the top and says how many nodes it left out; without a terminal the full view is shown.
    void watchFitsASmallTerminal()
    {
        const status::RelayStatus s = fiftyNodesStatus();
        QList<StatusEvent> events;
        for (int i = 0; i < 20; ++i)
            events.append({t0 + i * 1000, QStringLiteral("node"), QStringLiteral("node node-%1 joined").arg(i)});
        const QString compact = TerminalView::renderWatch(QStringLiteral("/run/coreflow/status.sock"), QStringLiteral("connected (live)"),
                                                          s, events, 10, QSize(100, 24));
        const QStringList lines = compact.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        QVERIFY2(compact.count(QLatin1Char('\n')) <= 24, qPrintable(compact));
        for (const QString &line : lines)
            QVERIFY2(line.size() <= 100, qPrintable(line));
        QVERIFY(lines.value(0).startsWith(QStringLiteral("coreflow-console --watch")));
        QCOMPARE(lines.value(1), QStringLiteral("OVERVIEW"));
        QVERIFY(compact.contains(QStringLiteral("health              HEALTHY")));
        QVERIFY(compact.contains(QStringLiteral("NODES (50)")));
        QRegularExpression more(QStringLiteral("\u2026 (\\d+) more: coreflow-console --text shows all"));
        const auto match = more.match(compact);
        QVERIFY2(match.hasMatch(), qPrintable(compact));
        QVERIFY(compact.contains(QStringLiteral("node node-19 joined"))); // the newest event
        QVERIFY(!compact.contains(QStringLiteral("COUNTERS")));           // the long tail is left out
        // The nodes shown plus the ones counted as left out are all 50.
        int shown = 0;
        for (const QString &line : lines)
            shown += line.startsWith(QStringLiteral("  node-")) ? 1 : 0;
        QCOMPARE(shown + match.captured(1).toInt(), 50);

        const QString full = TerminalView::renderWatch(QStringLiteral("/s"), QStringLiteral("connected (live)"), s, events, 10, QSize());
        QVERIFY(full.contains(QStringLiteral("COUNTERS")));
        QVERIFY(full.contains(QStringLiteral("node-49")));
        QVERIFY(!full.contains(QLatin1Char('\x1b')));
    }

    // --watch repaints with ESC[H ESC[2J and then writes the view: on a terminal of H rows, the H-th
    // line feed moves the cursor past the last row and the terminal scrolls by one (VT100 line feed at
    // the bottom margin), so the view's first line (the socket and connection state, e.g.
    // "DISCONNECTED ... (retrying)") is pushed off the screen. A view that fits an H-row terminal
    // therefore holds at most H - 1 line feeds, in the compact layout and when the full view is used
    // because it is exactly H lines long (issue 24: "keeps readiness and problems at the top").
    void watchNeverScrollsItsFirstLineOff_issue24()
    {
        const status::RelayStatus s = fiftyNodesStatus();
        QList<StatusEvent> events;
        for (int i = 0; i < 20; ++i)
            events.append({t0 + i * 1000, QStringLiteral("node"), QStringLiteral("node node-%1 joined").arg(i)});
        for (const int rows : {24, 30, 40}) {
            const QString compact = TerminalView::renderWatch(QStringLiteral("/run/coreflow/status.sock"),
                                                              QStringLiteral("DISCONNECTED: gone (retrying)"), s, events, 10,
                                                              QSize(100, rows));
            QVERIFY2(compact.count(QLatin1Char('\n')) <= rows - 1,
                     qPrintable(QStringLiteral("%1 line feeds on a %2-row terminal:\n%3").arg(compact.count(QLatin1Char('\n'))).arg(rows).arg(compact)));
        }
        // A status whose full view is exactly as tall as the terminal: the full view is chosen.
        status::RelayStatus small = s;
        small.nodes = small.nodes.mid(0, 2);
        const QString unbounded = TerminalView::renderWatch(QStringLiteral("/s"), QStringLiteral("connected (live)"), small, {}, 10, QSize());
        const int rows = int(unbounded.count(QLatin1Char('\n')));
        const QString exact = TerminalView::renderWatch(QStringLiteral("/s"), QStringLiteral("connected (live)"), small, {}, 10, QSize(200, rows));
        QVERIFY2(exact.count(QLatin1Char('\n')) <= rows - 1,
                 qPrintable(QStringLiteral("%1 line feeds on a %2-row terminal").arg(exact.count(QLatin1Char('\n'))).arg(rows)));
    }

    void textLayoutIsStable()
    {
        const QString text = TerminalView::renderText(fiftyNodesStatus());
        // Section order, as documented.
        QStringList headings;
        for (const QString &line : text.split(QLatin1Char('\n')))
            if (!line.isEmpty() && !line.startsWith(QLatin1Char(' ')) && !line.startsWith(QLatin1Char('!')))
                headings << line;
        QCOMPARE(headings, (QStringList{"OVERVIEW", "RELAY", "READINESS", "CLOUDLY SESSION", "REGISTRATION", "LISTENER", "NODES (50)",
                                        "ESCROW (0)", "INGRESS", "BINDINGS (0)", "VPN HUB", "CORESTORE", "BACKUPS", "COUNTERS"}));
        QVERIFY(!text.contains(QStringLiteral(" \n"))); // no trailing blanks
        QVERIFY(text.contains(QStringLiteral("2023-11-14T22:13:20Z")));
        // Rendering is a pure function of the status: node order in the input does not matter.
        status::RelayStatus shuffled = fiftyNodesStatus();
        std::reverse(shuffled.nodes.begin(), shuffled.nodes.end());
        QCOMPARE(TerminalView::renderText(shuffled), text);
        QCOMPARE(TerminalView::isoUtc(0), QStringLiteral("-"));
        QCOMPARE(TerminalView::isoUtc(t0 + 999), QStringLiteral("2023-11-14T22:13:20Z"));
    }

    void endToEndThroughTheSocket_data() { goldens_data(); }

    void endToEndThroughTheSocket()
    {
        QFETCH(QString, fixture);
        QTemporaryDir dir;
        ManualClock serverClock;
        const status::RelayStatus s = fixtureByName(fixture);
        StatusServer server({dir.filePath(QStringLiteral("status.sock")), {}}, [&] { return s; }, serverClock);
        QString error;
        QVERIFY2(server.start(&error), qPrintable(error));

        for (const auto mode : {TerminalRunner::Mode::Text, TerminalRunner::Mode::Json}) {
            SystemClock clock;
            QBuffer out;
            QBuffer err;
            out.open(QIODevice::WriteOnly);
            err.open(QIODevice::WriteOnly);
            TerminalRunner runner(mode, server.socketPath(), clock, &out, &err);
            QSignalSpy finished(&runner, &TerminalRunner::finished);
            runner.start();
            QVERIFY(finished.wait(5000));
            QCOMPARE(finished[0][0].toInt(), exitcode::ok);
            QCOMPARE(err.data(), QByteArray());
            const QString file = fixture + (mode == TerminalRunner::Mode::Text ? QStringLiteral(".txt") : QStringLiteral(".json"));
            QCOMPARE(out.data(), golden(file, out.data()));
        }
    }
};

QTEST_GUILESS_MAIN(ConsoleTextTest)
#include "console_text.moc"
