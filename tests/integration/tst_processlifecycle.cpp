// The `coreflow` executable as an operator runs it: --help/--version, configuration refusals, boot,
// SIGTERM/SIGINT exit codes, the second signal, a failed start. The Cloudly peer runs in this process.
// Rules: ST-06, ST-07, UC-13, UC-14, CF-02, CF-04, CF-08, UC-09, OV-08, OV-02, OV-03.
#include "tests/support/epolltestmain.h"
#include "tests/integration/relayfixture.h"
#include "tests/support/processwait.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QSet>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <csignal>

using namespace coreflow;
using namespace coreflow::testing;
using coreflow::peers::Answer;

class TstProcessLifecycle : public QObject {
    Q_OBJECT

    QString binary() const { return qEnvironmentVariable("COREFLOW_BINARY"); }

    // Starts the relay as a child with the bearer in a systemd-style credentials directory.
    std::unique_ptr<QProcess> launch(RelayFixture &f, QTemporaryDir &dir, const QByteArray &bearer)
    {
        QDir().mkpath(dir.filePath("creds"));
        QFile cred(dir.filePath("creds/SERVEZONE_CLUSTER_RELAY_AUTHORIZATION"));
        cred.open(QIODevice::WriteOnly);
        cred.write(bearer);
        cred.close();
        f.ca.writeCaPem(dir.filePath("ca.pem"));
        auto p = std::make_unique<QProcess>();
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.remove("SERVEZONE_CLUSTER_RELAY_AUTHORIZATION");
        env.insert("CLOUDLY_URL", f.cloudly->url().toString());
        env.insert("CREDENTIALS_DIRECTORY", dir.filePath("creds"));
        env.insert("COREFLOW_NODE_ID", "node-relay");
        env.insert("COREFLOW_RELAY_BIND_HOSTNAME", "127.0.0.1");
        env.insert("COREFLOW_RELAY_BIND_PORT", QString::number(f.relayPort));
        p->setProcessEnvironment(env);
        p->setProcessChannelMode(QProcess::SeparateChannels);
        p->start(binary(), {"--ca-file", dir.filePath("ca.pem")});
        return p;
    }

    // The local TCP ports a process listens on: its socket fds (/proc/<pid>/fd) matched by inode against
    // the kernel's LISTEN entries (/proc/net/tcp, tcp6; state 0A).
    static QList<int> listeningTcpPorts(qint64 pid)
    {
        QSet<QByteArray> inodes;
        const QDir fds(QStringLiteral("/proc/%1/fd").arg(pid));
        for (const QString &name : fds.entryList(QDir::NoDotAndDotDot | QDir::AllEntries | QDir::System)) {
            const QString target = QFile::symLinkTarget(fds.filePath(name));
            if (target.contains(QLatin1String("socket:[")))
                inodes.insert(target.section(QLatin1Char('['), 1).chopped(1).toLatin1());
        }
        QList<int> ports;
        for (const char *table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
            QFile f(QString::fromLatin1(table));
            if (!f.open(QIODevice::ReadOnly))
                continue;
            f.readLine(); // header
            while (!f.atEnd()) {
                const QList<QByteArray> cols = f.readLine().simplified().split(' ');
                if (cols.size() > 9 && cols.at(3) == "0A" && inodes.contains(cols.at(9)))
                    ports << cols.at(1).split(':').last().toInt(nullptr, 16);
            }
        }
        return ports;
    }

private Q_SLOTS:
    void initTestCase() { QVERIFY2(QFile::exists(binary()), "COREFLOW_BINARY is not set to the built coreflow"); }

    void helpAndVersion()
    {
        QProcess p;
        p.start(binary(), {"--version"});
        QVERIFY(p.waitForFinished(10000));
        QCOMPARE(p.exitCode(), 0);
        QCOMPARE(p.readAllStandardOutput(), QByteArray("coreflow 0.1.0 (contract release 33.1.0)\n"));
        p.start(binary(), {"--help"});
        QVERIFY(p.waitForFinished(10000));
        QCOMPARE(p.exitCode(), 0);
        const QByteArray help = p.readAllStandardOutput();
        QVERIFY(help.contains("CLOUDLY_URL"));
        QVERIFY(help.contains("Exit codes"));
        p.start(binary(), {"--no-such-option"});
        QVERIFY(p.waitForFinished(10000));
        QCOMPARE(p.exitCode(), 2);
    }

    // OV-02: the relay's one TLS listener is its only TCP listener (nodes and the ingress share it; the
    // status socket is a Unix socket). OV-03: nothing listens on the retired Coretraffic port 3000.
    void theListenerIsTheOnlyTcpListener_OV02_OV03()
    {
        RelayFixture f;
        QTemporaryDir dir;
        auto p = launch(f, dir, f.bearer);
        QByteArray err;
        QVERIFY2(waitForStderr(*p, "the relay is open for Cloudly dispatch", err), err.constData());
        QTRY_VERIFY_WITH_TIMEOUT(listeningTcpPorts(p->processId()).contains(int(f.relayPort)), 10000);
        const QList<int> ports = listeningTcpPorts(p->processId());
        QCOMPARE(ports, QList<int>{int(f.relayPort)});
        QVERIFY(!ports.contains(3000));
        ::kill(pid_t(p->processId()), SIGTERM);
        QCOMPARE(waitExit(*p, err), 0);
    }

    // CF-04, CF-08, UC-14: both missing variables named at once, exit 1, before anything starts.
    void missingConfigurationExits1_CF04()
    {
        QProcess p;
        QProcessEnvironment env;
        env.insert("PATH", qEnvironmentVariable("PATH"));
        p.setProcessEnvironment(env);
        p.start(binary(), {});
        QVERIFY(p.waitForFinished(10000));
        QCOMPARE(p.exitCode(), 1);
        const QByteArray err = p.readAllStandardError();
        QVERIFY(err.contains("CLOUDLY_URL"));
        QVERIFY(err.contains("SERVEZONE_CLUSTER_RELAY_AUTHORIZATION"));
    }

    // ST-06, UC-09, UC-13, CF-02: boots from a credentials directory; SIGTERM and SIGINT exit 0.
    void signalStopsWithExit0_ST06_data()
    {
        QTest::addColumn<int>("signal");
        QTest::newRow("SIGTERM") << int(SIGTERM);
        QTest::newRow("SIGINT") << int(SIGINT);
    }
    void signalStopsWithExit0_ST06()
    {
        QFETCH(int, signal);
        RelayFixture f;
        QTemporaryDir dir;
        auto p = launch(f, dir, f.bearer);
        QByteArray err;
        QVERIFY2(waitForStderr(*p, "the relay is open for Cloudly dispatch", err), err.constData());
        QTRY_COMPARE(f.cloudly->connectionCount(), 1);
        ::kill(pid_t(p->processId()), signal);
        QCOMPARE(waitExit(*p, err), 0);
        QVERIFY(err.contains("stopped"));
        QVERIFY(!err.contains(f.bearer)); // OV-08
        QTRY_COMPARE(f.cloudly->connectionCount(), 0);
    }

    // UC-13: a signal during the start (Cloudly unreachable, the relay retrying) still exits 0.
    void signalDuringStartExits0_UC13()
    {
        RelayFixture f;
        f.cloudly->refuseConnections(true);
        QTemporaryDir dir;
        auto p = launch(f, dir, f.bearer);
        QByteArray err;
        QVERIFY2(waitForStderr(*p, "reconnecting to Cloudly", err), err.constData());
        ::kill(pid_t(p->processId()), SIGTERM);
        QCOMPARE(waitExit(*p, err), 0);
    }

    // ST-07: the stop waits for a Cloudly call in flight; a second signal ends the process at once, 1.
    void secondSignalExits1_ST07()
    {
        RelayFixture f;
        f.cloudly->setAnswer("getClusterConfig", Answer::silence()); // a call stays in flight (8000 ms)
        QTemporaryDir dir;
        auto p = launch(f, dir, f.bearer);
        QTRY_COMPARE_WITH_TIMEOUT(f.cloudly->callCount("getClusterConfig"), 1, 15000);
        ::kill(pid_t(p->processId()), SIGTERM);
        QByteArray err;
        QVERIFY2(waitForStderr(*p, "waiting for 1 Cloudly call(s) in flight", err), err.constData());
        ::kill(pid_t(p->processId()), SIGTERM);
        // Exit 1, not the drain's end: the silent call is still in flight (Cloudly never answers it), so
        // only the second signal can have ended the process. (How fast is a benchmark figure, not a test's.)
        QCOMPARE(waitExit(*p, err), 1);
        QVERIFY(!err.contains("stop did not complete in time"));
    }

    // UC-14: a bearer Cloudly refuses fails the start: exit 1, the cause on stderr, never the bearer.
    void refusedBearerExits1_UC14()
    {
        RelayFixture f;
        QTemporaryDir dir;
        const QByteArray wrong = "wrong-bearer-canary-41d9";
        auto p = launch(f, dir, wrong);
        QByteArray err;
        QCOMPARE(waitExit(*p, err), 1);
        QVERIFY2(err.contains("start failed") && err.contains("relay-identity-unverified"), err.constData());
        QVERIFY(!err.contains(wrong));
    }
};

COREFLOW_EPOLL_TEST_MAIN(TstProcessLifecycle)
#include "tst_processlifecycle.moc"
