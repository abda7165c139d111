// console_cli: the coreflow-console executable's terminal modes and documented exit codes
// (0 ok, 2 usage, 3 cannot connect, 4 access refused, 5 protocol error), run as a real process.
#include "tests/console/consolefixtures.h"
#include "service/statussocket/statusserver.h"
#include "shared/util/clock.h"
#include "tests/support/skiporfail.h"

#include <QFile>
#include <QLocalServer>
#include <QLocalSocket>
#include <QProcess>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <unistd.h>

using namespace coreflow;
using namespace coreflow::consoletest;
// The exit codes as docs/contract.md §18.2 states them, written out here (issue 16: never the
// product's own constants as the oracle).
namespace exitcode {
constexpr int ok = 0;
constexpr int usage = 2;
constexpr int cannotConnect = 3;
constexpr int accessRefused = 4;
constexpr int protocolError = 5;
} // namespace exitcode

namespace {

struct Run {
    int exitCode = -1;
    QByteArray out;
    QByteArray err;
};

// Runs the console (optionally through a wrapper such as setpriv) without any display.
Run runConsole(const QStringList &args, const QStringList &wrapper = {})
{
    QProcess proc;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove(QStringLiteral("DISPLAY"));
    env.remove(QStringLiteral("WAYLAND_DISPLAY"));
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("no-such-platform")); // QApplication would abort
    proc.setProcessEnvironment(env);
    QSignalSpy finished(&proc, &QProcess::finished);
    if (wrapper.isEmpty())
        proc.start(QStringLiteral(COREFLOW_CONSOLE_BINARY), args);
    else
        proc.start(wrapper.first(), wrapper.mid(1) + QStringList{QStringLiteral(COREFLOW_CONSOLE_BINARY)} + args);
    if (!finished.wait(15000))
        proc.kill();
    return {proc.exitStatus() == QProcess::NormalExit ? proc.exitCode() : -1, proc.readAllStandardOutput(),
            proc.readAllStandardError()};
}

QByteArray goldenFile(const QString &name)
{
    QFile f(QStringLiteral(COREFLOW_GOLDEN_DIR "/") + name);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// A fake relay that answers every connection with fixed bytes, then closes.
class FakeServer : public QObject {
public:
    FakeServer(const QString &path, QByteArray answer) : m_answer(std::move(answer))
    {
        QLocalServer::removeServer(path);
        m_server.listen(path);
        connect(&m_server, &QLocalServer::newConnection, this, [this] {
            while (QLocalSocket *s = m_server.nextPendingConnection()) {
                connect(s, &QLocalSocket::disconnected, s, &QObject::deleteLater);
                // The answer is written and the connection left open: the console ends it on the protocol
                // error. (Closing here raced the console's peer check under load: "went away first".)
                s->write(m_answer);
            }
        });
    }
    QLocalServer m_server;
    QByteArray m_answer;
};

} // namespace

class ConsoleCliTest : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    int m_n = 0;
    QString nextPath() { return m_dir.filePath(QStringLiteral("c%1.sock").arg(++m_n)); }

private Q_SLOTS:
    void helpAndVersion()
    {
        Run r = runConsole({QStringLiteral("--help")});
        QCOMPARE(r.exitCode, exitcode::ok);
        for (const char *line : {"--text", "--json", "--watch", "--socket PATH", "Exit codes:", "0  ok", "2  usage error",
                                 "3  cannot connect", "4  access refused", "5  protocol error", "--screenshot FILE"})
            QVERIFY2(r.out.contains(line), line);
        r = runConsole({QStringLiteral("--version")});
        QCOMPARE(r.exitCode, exitcode::ok);
        QVERIFY(r.out.startsWith("coreflow-console "));
    }

    void usageErrors()
    {
        for (const QStringList &args : {QStringList{QStringLiteral("--bogus")},
                                        QStringList{QStringLiteral("--text"), QStringLiteral("--json")},
                                        QStringList{QStringLiteral("--watch"), QStringLiteral("--text")},
                                        QStringList{QStringLiteral("--text"), QStringLiteral("--socket")},
                                        QStringList{QStringLiteral("--screenshot")},
                                        QStringList{QStringLiteral("--text"), QStringLiteral("--screenshot"), QStringLiteral("x.png")}}) {
            const Run r = runConsole(args);
            QCOMPARE(r.exitCode, exitcode::usage);
            QVERIFY(r.err.contains("coreflow-console: "));
            QVERIFY(r.out.isEmpty());
        }
    }

    void cannotConnect()
    {
        const Run r = runConsole({QStringLiteral("--text"), QStringLiteral("--socket"), m_dir.filePath(QStringLiteral("absent.sock"))});
        QCOMPARE(r.exitCode, exitcode::cannotConnect);
        QVERIFY(r.err.contains("no relay listening at"));
        QVERIFY(r.out.isEmpty());
    }

    void textAndJsonWithoutADisplay()
    {
        SystemClock clock;
        const status::RelayStatus s = readyStatus();
        StatusServer server({nextPath(), {}}, [&] { return s; }, clock);
        QString error;
        QVERIFY2(server.start(&error), qPrintable(error));
        Run r = runConsole({QStringLiteral("--text"), QStringLiteral("--socket"), server.socketPath()});
        QCOMPARE(r.exitCode, exitcode::ok);
        QCOMPARE(r.out, goldenFile(QStringLiteral("ready.txt")));
        QCOMPARE(r.err, QByteArray());
        r = runConsole({QStringLiteral("--json"), QStringLiteral("--socket=") + server.socketPath()});
        QCOMPARE(r.exitCode, exitcode::ok);
        QCOMPARE(r.out, goldenFile(QStringLiteral("ready.json")));
    }

    // §18.2 --screenshot FILE (D-106): the window's overview as a PNG once the first snapshot is shown,
    // then exit 0, on the offscreen platform (no display); without a platform plugin exit 6 and no file
    // (never the terminal fallback); no relay at the socket exit 3.
    void screenshotWritesTheWindowAsPng_D106()
    {
        SystemClock clock;
        const status::RelayStatus s = readyStatus();
        StatusServer server({nextPath(), {}}, [&] { return s; }, clock);
        QString error;
        QVERIFY2(server.start(&error), qPrintable(error));
        const QString png = m_dir.filePath(QStringLiteral("overview.png"));
        QProcess proc;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.remove(QStringLiteral("DISPLAY"));
        env.remove(QStringLiteral("WAYLAND_DISPLAY"));
        env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
        proc.setProcessEnvironment(env);
        QSignalSpy finished(&proc, &QProcess::finished);
        proc.start(QStringLiteral(COREFLOW_CONSOLE_BINARY), {QStringLiteral("--screenshot"), png, QStringLiteral("--socket"), server.socketPath()});
        QVERIFY(finished.wait(20000));
        QCOMPARE(proc.exitStatus(), QProcess::NormalExit);
        QVERIFY2(proc.exitCode() == exitcode::ok, proc.readAllStandardError().constData());
        QFile f(png);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QVERIFY(f.readAll().startsWith("\x89PNG\r\n\x1a\n"));

        const QString none = m_dir.filePath(QStringLiteral("none.png"));
        Run r = runConsole({QStringLiteral("--screenshot"), none, QStringLiteral("--socket"), server.socketPath()});
        QCOMPARE(r.exitCode, 6);
        QVERIFY2(r.err.contains("--screenshot: "), r.err.constData());
        QVERIFY(!QFile::exists(none));
        QVERIFY(r.out.isEmpty());
    }

    // docs/contract.md §18.2: a plain coreflow-console without a display falls back to the terminal view
    // (--text when stdout is not a terminal) with one hint line, instead of Qt's abort (exit 134).
    void noDisplayFallsBackToTheTerminalView_CK04()
    {
        SystemClock clock;
        const status::RelayStatus s = readyStatus();
        StatusServer server({nextPath(), {}}, [&] { return s; }, clock);
        QString error;
        QVERIFY2(server.start(&error), qPrintable(error));
        struct Case {
            QProcessEnvironment env;
            QByteArray reason;
        };
        QProcessEnvironment empty; // nothing at all: no DISPLAY, no WAYLAND_DISPLAY, no QT_QPA_PLATFORM
        QProcessEnvironment deadDisplay;
        deadDisplay.insert(QStringLiteral("DISPLAY"), QStringLiteral(":97")); // no X server: xcb cannot start
        deadDisplay.insert(QStringLiteral("XDG_RUNTIME_DIR"), m_dir.path());
        for (const Case &c : {Case{empty, "no display"}, Case{deadDisplay, "the Qt platform plugin could not start"}}) {
            QProcess proc;
            proc.setProcessEnvironment(c.env);
            QSignalSpy finished(&proc, &QProcess::finished);
            proc.start(QStringLiteral(COREFLOW_CONSOLE_BINARY), {QStringLiteral("--socket"), server.socketPath()});
            QVERIFY(finished.wait(20000));
            QCOMPARE(proc.exitStatus(), QProcess::NormalExit);
            QCOMPARE(proc.exitCode(), exitcode::ok);
            const QByteArray out = proc.readAllStandardOutput();
            const QByteArray err = proc.readAllStandardError();
            QVERIFY2(err.count('\n') == 1 && err.contains(c.reason) && err.contains("terminal view (--text)"), err.constData());
            QVERIFY(out.contains("READINESS"));
            QVERIFY(out.contains("NODES (3)"));
        }
    }

    void accessRefusedByTheRelay()
    {
        FakeServer fake(nextPath(),
                        R"({"type":"refusal","name":"status-access-denied","reason":"uid 1234 is neither root, the service user nor in group ops"})"
                        "\n");
        const Run r = runConsole({QStringLiteral("--json"), QStringLiteral("--socket"), fake.m_server.fullServerName()});
        QCOMPARE(r.exitCode, exitcode::accessRefused);
        QVERIFY(r.err.contains("access refused: uid 1234 is neither root, the service user nor in group ops"));
        QVERIFY(r.out.isEmpty());
    }

    void accessRefusedAsUnprivilegedUid()
    {
        COREFLOW_SKIP_OR_FAIL(::geteuid() != 0 ? QStringLiteral("needs root to run the console as uid 65534 via setpriv")
                              : QStandardPaths::findExecutable(QStringLiteral("setpriv")).isEmpty()
                                  ? QStringLiteral("setpriv (util-linux) not found")
                                  : QString());
        QTemporaryDir dir;
        QVERIFY(QFile::setPermissions(dir.path(), QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner
                                                      | QFileDevice::ReadGroup | QFileDevice::ExeGroup
                                                      | QFileDevice::ReadOther | QFileDevice::ExeOther));
        SystemClock clock;
        const QStringList setpriv{QStringLiteral("setpriv"), QStringLiteral("--reuid=65534"), QStringLiteral("--regid=65534"),
                                  QStringLiteral("--clear-groups")};
        // Default mode 0660: the kernel refuses the connect.
        StatusServer strict({dir.filePath(QStringLiteral("strict.sock")), {}}, readyStatus, clock);
        QString error;
        QVERIFY2(strict.start(&error), qPrintable(error));
        Run r = runConsole({QStringLiteral("--text"), QStringLiteral("--socket"), strict.socketPath()}, setpriv);
        QCOMPARE(r.exitCode, exitcode::accessRefused);
        QVERIFY2(r.err.contains("permission denied"), r.err.constData());
        // Mode 0666: the relay's SO_PEERCRED check refuses it.
        StatusServerOptions open{dir.filePath(QStringLiteral("open.sock")), QStringLiteral("coreflow-no-such-group")};
        open.socketMode = 0666;
        StatusServer lax(open, readyStatus, clock);
        QVERIFY2(lax.start(&error), qPrintable(error));
        r = runConsole({QStringLiteral("--json"), QStringLiteral("--socket"), lax.socketPath()}, setpriv);
        QCOMPARE(r.exitCode, exitcode::accessRefused);
        QVERIFY2(r.err.contains("uid 65534 is neither root, the service user nor in group coreflow-no-such-group"), r.err.constData());
        QVERIFY(r.out.isEmpty());
    }

    void protocolErrors()
    {
        for (const QByteArray &answer : {QByteArray("this is not the status protocol\n"),
                                         QByteArray(R"({"type":"snapshot","version":2,"status":{}})" "\n"),
                                         QByteArray(R"({"type":"greeting"})" "\n")}) {
            FakeServer fake(nextPath(), answer);
            const Run r = runConsole({QStringLiteral("--text"), QStringLiteral("--socket"), fake.m_server.fullServerName()});
            QCOMPARE(r.exitCode, exitcode::protocolError);
            QVERIFY(r.err.contains("protocol error"));
        }
    }

    void watchRefreshesAndSurvivesARestart()
    {
        SystemClock clock;
        status::RelayStatus s = readyStatus();
        const QString path = nextPath();
        auto server = std::make_unique<StatusServer>(StatusServerOptions{path, {}}, [&] { return s; }, clock);
        QString error;
        QVERIFY2(server->start(&error), qPrintable(error));

        QProcess proc;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("no-such-platform"));
        proc.setProcessEnvironment(env);
        QByteArray out;
        connect(&proc, &QProcess::readyReadStandardOutput, this, [&] { out += proc.readAllStandardOutput(); });
        proc.start(QStringLiteral(COREFLOW_CONSOLE_BINARY), {QStringLiteral("--watch"), QStringLiteral("--socket"), path});
        QTRY_VERIFY_WITH_TIMEOUT(out.contains("connected (live)") && out.contains("NODES (3)"), 10000);
        QVERIFY(!out.contains("\x1b[")); // stdout is a pipe, not a terminal: no clear-screen codes
        QVERIFY(out.contains("OVERVIEW"));

        server->publishEvent(QStringLiteral("carrier"), QStringLiteral("node node-d connected"));
        QTRY_VERIFY_WITH_TIMEOUT(out.contains("node node-d connected"), 10000);
        s.counters.forwards = 99999;
        server->statusChanged();
        QTRY_VERIFY_WITH_TIMEOUT(out.contains("99999"), 10000);

        out.clear();
        server.reset(); // the relay stops
        QTRY_VERIFY_WITH_TIMEOUT(out.contains("DISCONNECTED"), 10000);
        out.clear();
        server = std::make_unique<StatusServer>(StatusServerOptions{path, {}}, [&] { return s; }, clock);
        QVERIFY2(server->start(&error), qPrintable(error));
        QTRY_VERIFY_WITH_TIMEOUT(out.contains("connected (live)"), 15000);
        QCOMPARE(proc.state(), QProcess::Running);
        proc.kill();
        proc.waitForFinished(5000);
    }
};

QTEST_GUILESS_MAIN(ConsoleCliTest)
#include "console_cli.moc"
