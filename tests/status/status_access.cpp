// status_access: who may read the status socket. The policy itself (pure), SO_PEERCRED on a real socket,
// and — when the test runs as root and setpriv exists — a real client running as uid 65534.
#include "service/statussocket/statusaccesspolicy.h"
#include "service/statussocket/statusserver.h"
#include "shared/util/manualclock.h"
#include "tests/support/epolltestmain.h"
#include "tests/support/skiporfail.h"

#include <QAbstractEventDispatcher>
#include <QCoreApplication>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <grp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace coreflow;

class StatusAccessTest : public QObject {
    Q_OBJECT
private:
    struct ProbeResult {
        int exitCode = -1;
        QList<QJsonObject> lines;
        QString stderrText;
    };

    // Runs status_probe_client under setpriv with the given setpriv arguments (server keeps running).
    ProbeResult runProbeAs(const QStringList &setprivArgs, const QString &socketPath)
    {
        QProcess proc;
        QStringList args = setprivArgs;
        args << QStringLiteral(STATUS_PROBE_CLIENT) << socketPath;
        QSignalSpy finished(&proc, &QProcess::finished);
        proc.start(QStringLiteral("setpriv"), args);
        if (!finished.wait(15000))
            proc.kill();
        ProbeResult r;
        r.exitCode = proc.exitCode();
        r.stderrText = QString::fromLocal8Bit(proc.readAllStandardError());
        for (const QByteArray &line : proc.readAllStandardOutput().split('\n'))
            if (!line.trimmed().isEmpty())
                r.lines.append(QJsonDocument::fromJson(line).object());
        return r;
    }

    // Why this host cannot run a client as uid 65534 (empty: it can). Callers pass it to
    // COREFLOW_SKIP_OR_FAIL, which leaves the test function itself.
    static QString missingRootOrSetpriv()
    {
        if (::geteuid() != 0)
            return QStringLiteral("access-control integration needs root to drop to uid 65534 with setpriv; run the suite as root to cover it");
        if (QStandardPaths::findExecutable(QStringLiteral("setpriv")).isEmpty())
            return QStringLiteral("setpriv (util-linux) not found; cannot run a client as an unprivileged uid");
        return {};
    }

    // A group that exists and that uid 65534 is not in by default ("users" on Debian).
    static std::optional<std::pair<QString, gid_t>> testGroup()
    {
        for (const char *name : {"users", "staff", "adm"})
            if (const struct group *g = ::getgrnam(name); g && g->gr_gid != 65534)
                return std::make_pair(QString::fromLatin1(name), g->gr_gid);
        return std::nullopt;
    }

    static status::RelayStatus fixture()
    {
        status::RelayStatus s;
        s.build = QStringLiteral("0.1.0");
        s.nodeId = QStringLiteral("relay-a");
        s.ready = true;
        return s;
    }

private Q_SLOTS:
    // Issue 16: the StatusServer cases below run on the dispatcher production installs
    // (COREFLOW_EPOLL_TEST_MAIN; check_test_conventions.py keeps tests/status/ on it).
    void runsOnTheProductionDispatcher_issue16()
    {
        const QAbstractEventDispatcher *dispatcher = QCoreApplication::eventDispatcher();
        QVERIFY(dispatcher);
        QCOMPARE(QByteArray(dispatcher->metaObject()->className()), QByteArray("coreflow::EpollEventDispatcher"));
    }

    void decideAdmitsRootServiceUserAndGroupMembers()
    {
        const StatusAccessPolicy policy(1000, QStringLiteral("coreflow-operators"), gid_t(4242));
        QVERIFY(policy.decide({0, 0, 1, {}}).admitted);
        QVERIFY(policy.decide({1000, 1000, 1, {}}).admitted);
        QVERIFY(policy.decide({2000, 4242, 1, {}}).admitted);          // primary group
        QVERIFY(policy.decide({2000, 2000, 1, {27, 4242}}).admitted);  // supplementary group
        const AccessDecision refused = policy.decide({1234, 1234, 1, {27, 100}});
        QVERIFY(!refused.admitted);
        QCOMPARE(refused.reason, QStringLiteral("uid 1234 is neither root, the service user nor in group coreflow-operators"));
    }

    void decideWithoutOrWithUnknownGroup()
    {
        const StatusAccessPolicy none(1000, QString(), std::nullopt);
        QVERIFY(!none.decide({1234, 4242, 1, {4242}}).admitted);
        QCOMPARE(none.decide({1234, 1234, 1, {}}).reason,
                 QStringLiteral("uid 1234 is neither root nor the service user (no operator group configured)"));
        const StatusAccessPolicy unknown = StatusAccessPolicy::forCurrentProcess(QStringLiteral("coreflow-no-such-group-xyz"));
        QVERIFY(!unknown.operatorGid().has_value());
        QVERIFY(!unknown.decide({54321, 54321, 1, {}}).admitted);
        QVERIFY(unknown.decide({54321, 54321, 1, {}}).reason.contains(QStringLiteral("does not exist on this host")));
        QCOMPARE(unknown.serviceUid(), ::getuid());
    }

    void parsesProcStatusGroups()
    {
        const QByteArray text = "Name:\tx\nUid:\t1\t1\t1\t1\nGroups:\t4 24 27 100 \nNgid:\t0\n";
        QCOMPARE(StatusAccessPolicy::parseProcStatusGroups(text), (QList<gid_t>{4, 24, 27, 100}));
        QCOMPARE(StatusAccessPolicy::parseProcStatusGroups("Groups:\t\n"), QList<gid_t>{});
        QCOMPARE(StatusAccessPolicy::parseProcStatusGroups("Name:\tx\n"), QList<gid_t>{});
    }

    void readsPeerCredentialsFromSocket()
    {
        int fds[2];
        QCOMPARE(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
        QString error;
        const auto peer = StatusAccessPolicy::readPeerCredentials(fds[0], &error);
        ::close(fds[0]);
        ::close(fds[1]);
        QVERIFY2(peer.has_value(), qPrintable(error));
        QCOMPARE(peer->uid, ::getuid());
        QCOMPARE(peer->gid, ::getgid());
        QCOMPARE(peer->pid, ::getpid());
        QString notSocket;
        QVERIFY(!StatusAccessPolicy::readPeerCredentials(-1, &notSocket).has_value());
        QVERIFY(notSocket.contains(QStringLiteral("SO_PEERCRED")));
    }

    void defaultSocketModeIs0660()
    {
        QTemporaryDir dir;
        ManualClock clock;
        StatusServer server({dir.filePath(QStringLiteral("status.sock")), {}}, fixture, clock);
        QString error;
        QVERIFY2(server.start(&error), qPrintable(error));
        struct stat st{};
        QCOMPARE(::stat(QFile::encodeName(server.socketPath()).constData(), &st), 0);
        QVERIFY(S_ISSOCK(st.st_mode));
        QCOMPARE(int(st.st_mode & 07777), 0660);
    }

    void unprivilegedUidIsRefusedBySocketMode()
    {
        COREFLOW_SKIP_OR_FAIL(missingRootOrSetpriv());
        QTemporaryDir dir;
        QVERIFY(QFile::setPermissions(dir.path(), QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner
                                                      | QFileDevice::ReadGroup | QFileDevice::ExeGroup
                                                      | QFileDevice::ReadOther | QFileDevice::ExeOther));
        ManualClock clock;
        StatusServer server({dir.filePath(QStringLiteral("status.sock")), {}}, fixture, clock); // default 0660
        QString error;
        QVERIFY2(server.start(&error), qPrintable(error));
        const ProbeResult r = runProbeAs({QStringLiteral("--reuid=65534"), QStringLiteral("--regid=65534"),
                                          QStringLiteral("--clear-groups")},
                                         server.socketPath());
        QCOMPARE(r.exitCode, 3); // connect(2) fails with EACCES: the file mode is the first gate
        QVERIFY(r.lines.isEmpty());
        QCOMPARE(server.clientCount(), 0);
    }

    void operatorGroupMembersConnectWithDefaultMode()
    {
        // The deployment case: the default 0660 socket, chowned by start() to the operator group, in a
        // directory the group can traverse. Members reach SO_PEERCRED; everyone else stops at connect(2).
        COREFLOW_SKIP_OR_FAIL(missingRootOrSetpriv());
        const auto group = testGroup();
        COREFLOW_SKIP_OR_FAIL(group ? QString() : QStringLiteral("no suitable existing group (users/staff/adm) on this host"));
        QTemporaryDir dir;
        QVERIFY(QFile::setPermissions(dir.path(), QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner
                                                      | QFileDevice::ReadGroup | QFileDevice::ExeGroup
                                                      | QFileDevice::ReadOther | QFileDevice::ExeOther));
        ManualClock clock;
        StatusServer server({dir.filePath(QStringLiteral("status.sock")), group->first}, fixture, clock); // default 0660
        QSignalSpy refused(&server, &StatusServer::clientRefused);
        QSignalSpy admitted(&server, &StatusServer::clientAdmitted);
        QString error;
        QVERIFY2(server.start(&error), qPrintable(error));
        struct stat st{};
        QCOMPARE(::stat(QFile::encodeName(server.socketPath()).constData(), &st), 0);
        QCOMPARE(int(st.st_mode & 07777), 0660);
        QCOMPARE(st.st_gid, group->second);
        QCOMPARE(st.st_uid, ::getuid());

        // In the group as a supplementary group: admitted.
        ProbeResult r = runProbeAs({QStringLiteral("--reuid=65534"), QStringLiteral("--regid=65534"),
                                    QStringLiteral("--groups=%1").arg(group->second)},
                                   server.socketPath());
        QVERIFY2(!r.lines.isEmpty(), qPrintable(r.stderrText));
        QCOMPARE(r.lines[0].value(QStringLiteral("type")).toString(), QStringLiteral("snapshot"));

        // ... and as the primary group.
        r = runProbeAs({QStringLiteral("--reuid=65534"), QStringLiteral("--regid=%1").arg(group->second),
                        QStringLiteral("--clear-groups")},
                       server.socketPath());
        QVERIFY2(!r.lines.isEmpty(), qPrintable(r.stderrText));
        QCOMPARE(r.lines[0].value(QStringLiteral("type")).toString(), QStringLiteral("snapshot"));
        QCOMPARE(admitted.size(), 2);

        // Not in the group: connect(2) fails with EACCES before any line.
        r = runProbeAs({QStringLiteral("--reuid=65534"), QStringLiteral("--regid=65534"), QStringLiteral("--clear-groups")},
                       server.socketPath());
        QCOMPARE(r.exitCode, 3);
        QVERIFY(r.lines.isEmpty());
        QCOMPARE(refused.size(), 0);
        QCOMPARE(server.clientCount(), 0);
    }

    void unprivilegedUidIsRefusedByPeerCredentials()
    {
        // The second gate: should the file mode ever let a stranger through (here a deliberately widened
        // 0666), SO_PEERCRED still refuses it.
        COREFLOW_SKIP_OR_FAIL(missingRootOrSetpriv());
        const auto group = testGroup();
        COREFLOW_SKIP_OR_FAIL(group ? QString() : QStringLiteral("no suitable existing group (users/staff/adm) on this host"));
        QTemporaryDir dir;
        QVERIFY(QFile::setPermissions(dir.path(), QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner
                                                      | QFileDevice::ReadGroup | QFileDevice::ExeGroup
                                                      | QFileDevice::ReadOther | QFileDevice::ExeOther));
        ManualClock clock;
        StatusServerOptions options{dir.filePath(QStringLiteral("status.sock")), group->first};
        options.socketMode = 0666; // let connect(2) through so SO_PEERCRED is what decides
        StatusServer server(options, fixture, clock);
        QSignalSpy refused(&server, &StatusServer::clientRefused);
        QString error;
        QVERIFY2(server.start(&error), qPrintable(error));

        // Not root, not the service user, not in the group: one refusal line, then closed.
        const ProbeResult r = runProbeAs({QStringLiteral("--reuid=65534"), QStringLiteral("--regid=65534"),
                                          QStringLiteral("--clear-groups")},
                                         server.socketPath());
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(r.lines.size(), 1);
        QCOMPARE(r.lines[0].value(QStringLiteral("type")).toString(), QStringLiteral("refusal"));
        QCOMPARE(r.lines[0].value(QStringLiteral("name")).toString(), QStringLiteral("status-access-denied"));
        QCOMPARE(r.lines[0].value(QStringLiteral("reason")).toString(),
                 QStringLiteral("uid 65534 is neither root, the service user nor in group %1").arg(group->first));
        QCOMPARE(refused.size(), 1);
        QCOMPARE(refused[0][0].toUInt(), 65534u);
        QCOMPARE(server.clientCount(), 0);
        QTRY_COMPARE(server.closingSocketCount(), 0);
    }

    void rootIsAdmitted()
    {
        QTemporaryDir dir;
        ManualClock clock;
        StatusServer server({dir.filePath(QStringLiteral("status.sock")), {}}, fixture, clock);
        QSignalSpy admitted(&server, &StatusServer::clientAdmitted);
        QString error;
        QVERIFY2(server.start(&error), qPrintable(error));
        QProcess proc;
        QSignalSpy finished(&proc, &QProcess::finished);
        proc.start(QStringLiteral(STATUS_PROBE_CLIENT), {server.socketPath()});
        QVERIFY(finished.wait(15000));
        const QByteArray out = proc.readAllStandardOutput();
        QVERIFY2(out.contains(R"("type":"snapshot")"), out.constData());
        QCOMPARE(admitted.size(), 1);
        QCOMPARE(admitted[0][0].toUInt(), quint32(::getuid())); // this process's uid: root or the service user
    }
};

COREFLOW_EPOLL_TEST_MAIN(StatusAccessTest)
#include "status_access.moc"
