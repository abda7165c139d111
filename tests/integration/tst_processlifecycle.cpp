// The `coreflow` executable as an operator runs it: --help/--version, configuration refusals, boot,
// SIGTERM/SIGINT exit codes, the second signal, a failed start. The Cloudly peer runs in this process.
// Rules: ST-06, ST-07, UC-13, UC-14, CF-02, CF-04, CF-08, UC-09, OV-08, OV-02, OV-03; issue 14 defect 9.
#include "tests/support/epolltestmain.h"
#include "tests/integration/relayfixture.h"
#include "tests/support/processwait.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QSet>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QRegularExpression>
#include <QTest>
#include <csignal>
#include <functional>
#include <cstring>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

using namespace coreflow;
using namespace coreflow::testing;
using coreflow::peers::Answer;

class TstProcessLifecycle : public QObject {
    Q_OBJECT

    QString binary() const { return qEnvironmentVariable("COREFLOW_BINARY"); }

    // Starts the relay as a child with the bearer in a systemd-style credentials directory.
    std::unique_ptr<QProcess> launch(RelayFixture &f, QTemporaryDir &dir, const QByteArray &bearer, const QStringList &extraArgs = {},
                                     const std::function<void(QProcessEnvironment &)> &adjust = {}, const QString &stderrFile = {})
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
        if (adjust)
            adjust(env);
        p->setProcessEnvironment(env);
        p->setProcessChannelMode(QProcess::SeparateChannels);
        if (!stderrFile.isEmpty())
            p->setStandardErrorFile(stderrFile);
        p->start(binary(), QStringList{"--ca-file", dir.filePath("ca.pem")} + extraArgs);
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
        // --help and --help-all print and exit 0 (the relay does not start: no configuration here), naming
        // every variable of §19.1 and every source.
        for (const char *option : {"--help", "--help-all"}) {
            QProcess h;
            QProcessEnvironment empty;
            empty.insert("PATH", qEnvironmentVariable("PATH"));
            h.setProcessEnvironment(empty);
            h.start(binary(), {QString::fromLatin1(option)});
            QVERIFY(h.waitForFinished(10000));
            QCOMPARE(h.exitCode(), 0);
            const QByteArray help = h.readAllStandardOutput();
            for (const char *needle : {"CLOUDLY_URL", "SERVEZONE_CLUSTER_RELAY_AUTHORIZATION", "COREFLOW_NODE_ID",
                                       "COREFLOW_RELAY_BIND_HOSTNAME", "COREFLOW_RELAY_BIND_PORT", "COREFLOW_VPN_BIND_HOSTNAME",
                                       "COREFLOW_VPN_QUIC_PORT", "$CREDENTIALS_DIRECTORY/<NAME>", "/run/secrets/<NAME>",
                                       ".nogit/env.yml", "qenv.yml", "Exit codes", "--status-socket", "--ca-file", "--operator-group",
                                       // §19.1 CLOUDLY_URL: plain http/ws is taken for a loopback host (issue 24)
                                       "http:// or", "ws:// only to a loopback host"})
                QVERIFY2(help.contains(needle), needle);
            QVERIFY2(!h.readAllStandardError().contains("start"), option);
        }
    }

    // §19.2/§19.3: every usage error is exit 2 with `coreflow: <what>`, before anything starts.
    void usageErrorsExit2_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::newRow("unknown option") << QStringList{"--no-such-option"};
        QTest::newRow("option without its value") << QStringList{"--ca-file"};
        QTest::newRow("positional argument") << QStringList{"extra"};
    }
    void usageErrorsExit2()
    {
        QFETCH(QStringList, args);
        QProcess p;
        p.start(binary(), args);
        QVERIFY(p.waitForFinished(10000));
        QCOMPARE(p.exitCode(), 2);
        const QByteArray err = p.readAllStandardError();
        QVERIFY2(err.startsWith("coreflow: ") && !err.contains("start failed"), err.constData());
    }

    // ST-12, D-27, §19.2: a path option that is not absolute and normalized ends the start with exit 1
    // naming the option (found by an independent peer: it used to start the relay).
    void pathOptionsMustBeNormalized_ST12_D27_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QByteArray>("named");
        QTest::newRow("relative --status-socket") << QStringList{"--status-socket", "status.sock"} << QByteArray("--status-socket status.sock");
        QTest::newRow("--status-socket with ..") << QStringList{"--status-socket", "/run/../tmp/s.sock"} << QByteArray("--status-socket /run/../tmp/s.sock");
        QTest::newRow("--ca-file with .") << QStringList{"--ca-file", "/etc/./ssl/ca.pem"} << QByteArray("--ca-file /etc/./ssl/ca.pem");
        QTest::newRow("--ca-file with //") << QStringList{"--ca-file", "/etc//ca.pem"} << QByteArray("--ca-file /etc//ca.pem");
        QTest::newRow("--ca-file trailing /") << QStringList{"--ca-file", "/etc/ssl/"} << QByteArray("--ca-file /etc/ssl/");
    }
    void pathOptionsMustBeNormalized_ST12_D27()
    {
        QFETCH(QStringList, args);
        QFETCH(QByteArray, named);
        QTemporaryDir dir;
        QProcess p;
        QProcessEnvironment env;
        env.insert("CLOUDLY_URL", "https://cloudly.example.com");
        env.insert("SERVEZONE_CLUSTER_RELAY_AUTHORIZATION", "bearer-canary-path");
        env.insert("RUNTIME_DIRECTORY", dir.path());
        p.setProcessEnvironment(env);
        p.setWorkingDirectory(dir.path());
        p.start(binary(), args);
        QVERIFY(p.waitForFinished(10000));
        const QByteArray err = p.readAllStandardError();
        QCOMPARE(p.exitCode(), 1);
        QVERIFY2(err.contains("coreflow: start failed: configuration-invalid: " + named + " is not an absolute, normalized path"), err.constData());
        QVERIFY(!err.contains("bearer-canary-path"));
        QVERIFY(!QFile::exists(dir.filePath("status.sock")));
    }

    // UC-06 (issue 24): a credential file ending in a newline is refused at start, by name and reason.
    void bearerFileWithNewlineExits1_UC06()
    {
        RelayFixture f;
        QTemporaryDir dir;
        auto p = launch(f, dir, f.bearer + "\n");
        QByteArray err;
        QCOMPARE(waitExit(*p, err), 1);
        QVERIFY2(err.contains("start failed: configuration-invalid: SERVEZONE_CLUSTER_RELAY_AUTHORIZATION in ")
                     && err.contains("ends in a newline"), err.constData());
        QVERIFY(!err.contains(f.bearer));
        QCOMPARE(f.cloudly->connectionCount(), 0);
    }

    // Issue 24: an unreadable $CREDENTIALS_DIRECTORY is named with its path and errno.
    void unreadableCredentialsDirectoryExits1()
    {
        RelayFixture f;
        QTemporaryDir dir;
        auto p = launch(f, dir, f.bearer, {}, [](QProcessEnvironment &env) { env.insert("CREDENTIALS_DIRECTORY", "/nonexistent-credentials"); });
        QByteArray err;
        QCOMPARE(waitExit(*p, err), 1);
        QVERIFY2(err.contains("CREDENTIALS_DIRECTORY /nonexistent-credentials cannot be read") && err.contains("errno 2"), err.constData());
    }

    // CF-14: a relay-block boot with only one of the VPN pair exits 1 naming the missing one.
    void halfVpnPairExits1_CF14()
    {
        RelayFixture f;
        QTemporaryDir dir;
        auto p = launch(f, dir, f.bearer, {}, [](QProcessEnvironment &env) { env.insert("COREFLOW_VPN_BIND_HOSTNAME", "198.51.100.4"); });
        QByteArray err;
        QCOMPARE(waitExit(*p, err), 1);
        QVERIFY2(err.contains("start failed: configuration-invalid: COREFLOW_VPN_QUIC_PORT is missing"), err.constData());
    }

    // CF-04, CF-06, D-32, §19.1: a release directory (coreflow with qenv.yml beside it, no build-tree
    // marker) requires what its qenv.yml lists, naming every missing one at once, and reads nothing from
    // its working directory; beside the marker (a build tree) the working directory's .nogit overlay
    // is read, at the lowest precedence, and a .env never.
    void releaseLayoutAndOverlay_CF04_CF06_D32()
    {
        QTemporaryDir dir;
        QVERIFY(QDir(dir.path()).mkpath("release"));
        QVERIFY(QDir(dir.path()).mkpath("work/.nogit"));
        const QString exe = dir.filePath("release/coreflow");
        QVERIFY(QFile::copy(binary(), exe));
        QFile::setPermissions(exe, QFile::permissions(binary()));
        QFile qenv(dir.filePath("release/qenv.yml"));
        QVERIFY(qenv.open(QIODevice::WriteOnly));
        qenv.write("required:\n  - CLOUDLY_URL\n  - SERVEZONE_CLUSTER_RELAY_AUTHORIZATION\n  - COREFLOW_NODE_ID\n");
        qenv.close();
        QFile overlay(dir.filePath("work/.nogit/env.yml"));
        QVERIFY(overlay.open(QIODevice::WriteOnly));
        overlay.write("CLOUDLY_URL: https://overlay.example\nSERVEZONE_CLUSTER_RELAY_AUTHORIZATION: overlay-bearer-canary\n");
        overlay.close();
        QFile dotenv(dir.filePath("work/.nogit/.env"));
        QVERIFY(dotenv.open(QIODevice::WriteOnly));
        dotenv.write("COREFLOW_NODE_ID=from-dotenv\n");
        dotenv.close();
        QFile cwdQenv(dir.filePath("work/qenv.yml")); // the working directory's qenv.yml is not the executable's
        QVERIFY(cwdQenv.open(QIODevice::WriteOnly));
        cwdQenv.write("required:\n  - JUMPCODE\n");
        cwdQenv.close();
        auto run = [&] {
            QProcess p;
            QProcessEnvironment env;
            env.insert("PATH", qEnvironmentVariable("PATH"));
            p.setProcessEnvironment(env);
            p.setWorkingDirectory(dir.filePath("work"));
            p.start(exe, {});
            p.waitForFinished(10000);
            return std::make_pair(p.exitCode(), p.readAllStandardError());
        };
        auto [code, err] = run();
        QCOMPARE(code, 1);
        QVERIFY2(err.contains("missing required variables CLOUDLY_URL, SERVEZONE_CLUSTER_RELAY_AUTHORIZATION, COREFLOW_NODE_ID"), err.constData());
        QVERIFY(!err.contains("JUMPCODE"));
        QFile marker(dir.filePath("release/coreflow-build-tree"));
        QVERIFY(marker.open(QIODevice::WriteOnly));
        marker.close();
        std::tie(code, err) = run();
        QCOMPARE(code, 1);
        QVERIFY2(err.contains("missing required variable COREFLOW_NODE_ID") && !err.contains("CLOUDLY_URL,"), err.constData());
        QVERIFY(!err.contains("overlay-bearer-canary"));
    }

    // §19.3 Logs, D-67: with JOURNAL_STREAM naming stderr's device and inode, every line carries its
    // syslog priority and no timestamp; with a JOURNAL_STREAM that is not stderr's, lines are unchanged.
    void journalPriorityPrefixes_D65()
    {
        for (const bool matching : {true, false}) {
            RelayFixture f;
            QTemporaryDir dir;
            const QString errFile = dir.filePath("stderr.log");
            QFile touch(errFile);
            QVERIFY(touch.open(QIODevice::WriteOnly));
            touch.close();
            struct stat st {};
            QVERIFY(::stat(QFile::encodeName(errFile).constData(), &st) == 0);
            const QString stream = matching ? QStringLiteral("%1:%2").arg(qulonglong(st.st_dev)).arg(qulonglong(st.st_ino))
                                            : QStringLiteral("%1:%2").arg(qulonglong(st.st_dev)).arg(qulonglong(st.st_ino) + 1);
            auto p = launch(f, dir, f.bearer, {}, [&](QProcessEnvironment &env) { env.insert("JOURNAL_STREAM", stream); }, errFile);
            auto readErr = [&] {
                QFile r(errFile);
                return r.open(QIODevice::ReadOnly) ? r.readAll() : QByteArray();
            };
            QTRY_VERIFY_WITH_TIMEOUT(readErr().contains("the relay is open for Cloudly dispatch"), 15000);
            ::kill(pid_t(p->processId()), SIGTERM);
            QVERIFY(p->waitForFinished(15000));
            QCOMPARE(p->exitCode(), 0);
            const QList<QByteArray> lines = readErr().trimmed().split('\n');
            QVERIFY(lines.size() > 3);
            const QRegularExpression journal(QStringLiteral("^<[2-7]>(debug|info|warn|error|fatal) \\S+: "));
            const QRegularExpression plain(QStringLiteral("^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z (debug|info|warn|error|fatal) "));
            for (const QByteArray &line : lines)
                QVERIFY2((matching ? journal : plain).match(QString::fromUtf8(line)).hasMatch(), line.constData());
            if (matching) {
                QVERIFY(lines.contains("<6>info coreflow.app: the relay is open for Cloudly dispatch"));
                QVERIFY(lines.contains("<6>info coreflow.app: stopped"));
            }
        }
    }

    // UC-13, §19.3: SIGTERM during each start step exits 0, and the status socket file is gone after.
    void signalDuringEachStartStepExits0_UC13_data()
    {
        QTest::addColumn<QString>("step");
        QTest::newRow("Cloudly session: authorization exchange") << "exchangeClusterRelayAuthorization";
        QTest::newRow("Cloudly session: client session") << "registerCloudlyClientSession";
        QTest::newRow("cluster config") << "getClusterConfig";
        QTest::newRow("listener certificate") << "getClusterRelayCertificate";
        QTest::newRow("open (registering)") << "registerClusterRelay";
    }
    void signalDuringEachStartStepExits0_UC13()
    {
        QFETCH(QString, step);
        RelayFixture f;
        f.cloudly->setAnswer(step, Answer::silence()); // the start stays in that step
        QTemporaryDir dir;
        const QString socket = dir.filePath("status.sock");
        auto p = launch(f, dir, f.bearer, {"--status-socket", socket});
        QTRY_COMPARE_WITH_TIMEOUT(f.cloudly->callCount(step), 1, 15000);
        QVERIFY(QFile::exists(socket));
        ::kill(pid_t(p->processId()), SIGTERM);
        QByteArray err;
        QCOMPARE(waitExit(*p, err, 20000), 0);
        QVERIFY2(err.contains("stopped"), err.constData());
        QVERIFY(!QFile::exists(socket));
        QTRY_COMPARE(f.cloudly->connectionCount(), 0);
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

    // §19.3 ("log the start line `coreflow <version> starting (contract release <r>, pid <pid>)`") and
    // the one-line-per-event rule: a start logs its start line once. Seen in ./run demo (issue 24
    // review): a second, older "coreflow 0.1.0 starting; contract release 33.1.0" follows it.
    void startLineIsLoggedOnce_issue24()
    {
        RelayFixture f;
        QTemporaryDir dir;
        auto p = launch(f, dir, f.bearer);
        QByteArray err;
        QVERIFY2(waitForStderr(*p, "the relay is open for Cloudly dispatch", err), err.constData());
        ::kill(pid_t(p->processId()), SIGTERM);
        QCOMPARE(waitExit(*p, err), 0);
        QVERIFY2(err.contains(QByteArray("starting (contract release ")), err.constData());
        QVERIFY2(err.count(QByteArray(" starting")) == 1, err.constData());
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

    // Issue 14 defect 9 (contract §18 "Socket place"): in a shared sticky directory (like /tmp) another
    // uid created the status socket's path first. The running relay refuses to take it over
    // (status-socket-unsafe in its log, the stranger's socket left as it was) and serves the cluster
    // without a status socket.
    void squattedStatusSocketIsRefused()
    {
        QVERIFY2(::geteuid() == 0, "the test chowns a socket to another uid");
        RelayFixture f;
        QTemporaryDir dir;
        const QString sticky = dir.filePath("shared");
        QVERIFY(QDir().mkpath(sticky));
        QCOMPARE(::chmod(QFile::encodeName(sticky).constData(), 01777), 0);
        const QString squatted = sticky + QStringLiteral("/coreflow-status-0.sock");
        const QByteArray encoded = QFile::encodeName(squatted);
        const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
        QVERIFY(fd >= 0);
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        std::memcpy(addr.sun_path, encoded.constData(), size_t(encoded.size()));
        QCOMPARE(::bind(fd, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)), 0);
        ::close(fd);
        QCOMPARE(::lchown(encoded.constData(), 4242, gid_t(-1)), 0);
        struct stat before {};
        QCOMPARE(::lstat(encoded.constData(), &before), 0);

        auto p = launch(f, dir, f.bearer, {"--status-socket", squatted});
        QByteArray err;
        QVERIFY2(waitForStderr(*p, "the relay is open for Cloudly dispatch", err), err.constData());
        QVERIFY2(err.contains("status-socket-unsafe: " + encoded + " already exists and belongs to uid 4242"), err.constData());
        QVERIFY(!err.contains("status socket at"));
        struct stat after {};
        QCOMPARE(::lstat(encoded.constData(), &after), 0);
        QCOMPARE(after.st_ino, before.st_ino); // not unlinked and bound anew
        QCOMPARE(after.st_uid, uid_t(4242));
        ::kill(pid_t(p->processId()), SIGTERM);
        QCOMPARE(waitExit(*p, err, 20000), 0);
        QCOMPARE(::lstat(encoded.constData(), &after), 0); // the stop does not remove what is not its own
        QCOMPARE(after.st_ino, before.st_ino);
    }
};

COREFLOW_EPOLL_TEST_MAIN(TstProcessLifecycle)
#include "tst_processlifecycle.moc"
