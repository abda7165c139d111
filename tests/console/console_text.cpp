// console_text: --text and --json renderings of fixture snapshots against golden files
// (tests/console/golden/), directly and end to end through a live status socket.
// Regenerate goldens after an intended layout change: COREFLOW_UPDATE_GOLDEN=1 ./console_text
#include "tests/console/consolefixtures.h"
#include "console/consoleexitcodes.h"
#include "service/statussocket/statusserver.h"
#include "console/terminalrunner.h"
#include "console/terminalview.h"
#include "shared/util/manualclock.h"

#include <QBuffer>
#include <QJsonDocument>
#include <QJsonObject>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

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
        QFile f(path);
        if (f.open(QIODevice::WriteOnly))
            f.write(actual);
        return actual;
    }
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return QByteArray("<missing golden ") + path.toUtf8() + ">";
    return f.readAll();
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
        QCOMPARE(text, golden(fixture + QStringLiteral(".txt"), text));
        QCOMPARE(json, golden(fixture + QStringLiteral(".json"), json));
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

    void textLayoutIsStable()
    {
        const QString text = TerminalView::renderText(fiftyNodesStatus());
        // Section order, as documented.
        QStringList headings;
        for (const QString &line : text.split(QLatin1Char('\n')))
            if (!line.isEmpty() && !line.startsWith(QLatin1Char(' ')))
                headings << line;
        QCOMPARE(headings, (QStringList{"RELAY", "READINESS", "CLOUDLY SESSION", "LISTENER", "NODES (50)", "ESCROW (0)",
                                        "INGRESS", "BINDINGS (0)", "VPN HUB", "COUNTERS"}));
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
