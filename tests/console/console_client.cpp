// console_client: StatusClient states, snapshots and events against the real StatusServer; reconnect
// with backoff (on a ManualClock) when the relay restarts; refused and protocol-error states.
#include "tests/console/consolefixtures.h"
#include "console/statusclient.h"
#include "service/statussocket/statusserver.h"
#include "shared/util/manualclock.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLocalServer>
#include <QLocalSocket>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>
#include <cstring>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace coreflow;
using namespace coreflow::console;
using namespace coreflow::consoletest;

class ConsoleClientTest : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;

private Q_SLOTS:
    // Issue 14 defect 9 (contract §18 "Socket place"): the console reads nothing from a server whose
    // SO_PEERCRED uid is neither root, this user nor the owner of the socket's private directory. The
    // impostor binds its socket as root (so the file looks right) and then listens as uid 4242.
    void serverOfAnUntrustedUidIsRefused()
    {
        QVERIFY2(::geteuid() == 0, "the impostor needs root to change its uid");
        const QString path = m_dir.filePath(QStringLiteral("impostor.sock"));
        const QByteArray encoded = QFile::encodeName(path);
        const QByteArray snapshot = QJsonDocument(QJsonObject{{QStringLiteral("type"), QStringLiteral("snapshot")},
                                                              {QStringLiteral("version"), 1},
                                                              {QStringLiteral("status"), readyStatus().toJson()}})
                                        .toJson(QJsonDocument::Compact)
                                    + '\n';
        int ready[2];
        QCOMPARE(::pipe(ready), 0);
        const pid_t child = ::fork();
        QVERIFY(child >= 0);
        if (child == 0) {
            const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
            sockaddr_un addr{};
            addr.sun_family = AF_UNIX;
            std::memcpy(addr.sun_path, encoded.constData(), size_t(encoded.size()));
            if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) != 0 || ::setgid(4242) != 0
                || ::setuid(4242) != 0 || ::listen(fd, 4) != 0)
                ::_exit(2);
            (void)!::write(ready[1], "r", 1);
            for (;;) {
                const int c = ::accept(fd, nullptr, nullptr);
                if (c < 0)
                    ::_exit(3);
                (void)!::write(c, snapshot.constData(), size_t(snapshot.size()));
            }
        }
        // The impostor goes whatever this test finds (it holds the test's stdout).
        const auto impostorGone = qScopeGuard([child] {
            ::kill(child, SIGKILL);
            ::waitpid(child, nullptr, 0);
        });
        ::close(ready[1]);
        char byte = 0;
        QCOMPARE(::read(ready[0], &byte, 1), ssize_t(1));
        ::close(ready[0]);

        ManualClock clock;
        StatusClient client({path, false, false, 250, 2000}, clock);
        QSignalSpy snapshots(&client, &StatusClient::snapshotReceived);
        client.start();
        QTRY_COMPARE(client.state(), StatusClient::State::Refused);
        QVERIFY2(client.stateReason().startsWith(QStringLiteral("status-server-untrusted: ")), qPrintable(client.stateReason()));
        QVERIFY2(client.stateReason().contains(QStringLiteral("uid 4242")), qPrintable(client.stateReason()));
        QCOMPARE(snapshots.size(), 0);
        QVERIFY(!client.lastSnapshot().has_value());
    }

    void connectsSubscribesAndReconnects()
    {
        const QString path = m_dir.filePath(QStringLiteral("relay.sock"));
        ManualClock clock;
        status::RelayStatus s = readyStatus();
        auto server = std::make_unique<StatusServer>(StatusServerOptions{path, {}}, [&] { return s; }, clock);
        QString error;
        QVERIFY2(server->start(&error), qPrintable(error));

        StatusClient client({path, true, true, 250, 2000}, clock);
        QSignalSpy snapshots(&client, &StatusClient::snapshotReceived);
        QSignalSpy events(&client, &StatusClient::eventReceived);
        QCOMPARE(client.state(), StatusClient::State::Connecting);
        client.start();
        QTRY_COMPARE(client.state(), StatusClient::State::Connected);
        QTRY_COMPARE(snapshots.size(), 1);
        QCOMPARE(*client.lastSnapshot(), s);

        server->publishEvent(QStringLiteral("forward"), QStringLiteral("forwarded getServiceConfig for node-a"));
        QTRY_COMPARE(events.size(), 1);
        QCOMPARE(events[0][0].value<StatusEvent>().line, QStringLiteral("forwarded getServiceConfig for node-a"));

        s.counters.forwards = 5000;
        server->statusChanged();
        clock.advance(250);
        QTRY_COMPARE(snapshots.size(), 2);
        QCOMPARE(client.lastSnapshot()->counters.forwards, qint64(5000));

        // The relay restarts: the client says so, retries with backoff, and comes back by itself.
        server.reset();
        QTRY_COMPARE(client.state(), StatusClient::State::Disconnected);
        QVERIFY(client.stateReason().contains(QStringLiteral("closed")));
        clock.advance(250); // first retry: nobody there yet
        QTRY_VERIFY(client.stateReason().contains(QStringLiteral("no relay listening")));
        QCOMPARE(client.state(), StatusClient::State::Disconnected);
        server = std::make_unique<StatusServer>(StatusServerOptions{path, {}}, [&] { return s; }, clock);
        QVERIFY2(server->start(&error), qPrintable(error));
        clock.advance(499);
        // A negative 1 ms before the doubled backoff: turns for a wrongly early reconnect.
        QTest::qWait(50);
        QCOMPARE(client.state(), StatusClient::State::Disconnected); // backoff doubled to 500 ms
        clock.advance(1);
        QTRY_COMPARE(client.state(), StatusClient::State::Connected);
        QTRY_COMPARE(snapshots.size(), 3);
        QVERIFY(!client.protocolFailure());
    }

    void refusedAndProtocolErrorStates()
    {
        ManualClock clock;
        const QString path = m_dir.filePath(QStringLiteral("fake.sock"));
        QLocalServer fake;
        QVERIFY(fake.listen(path));
        QByteArray answer = R"({"type":"refusal","name":"status-access-denied","reason":"uid 1234 is neither root, the service user nor in group ops"})" "\n";
        connect(&fake, &QLocalServer::newConnection, this, [&] {
            while (QLocalSocket *s = fake.nextPendingConnection()) {
                connect(s, &QLocalSocket::disconnected, s, &QObject::deleteLater);
                s->write(answer);
                s->disconnectFromServer();
            }
        });
        StatusClient client({path, true, true, 100, 100}, clock);
        QSignalSpy states(&client, &StatusClient::stateChanged);
        client.start();
        QTRY_COMPARE(client.state(), StatusClient::State::Refused);
        QCOMPARE(client.stateReason(), QStringLiteral("uid 1234 is neither root, the service user nor in group ops"));
        // Retries stay "refused" (no flicker through connected).
        const qsizetype changes = states.size();
        clock.advance(100);
        // A negative after a retry: turns for a state flicker through connected to show.
        QTest::qWait(100);
        QCOMPARE(client.state(), StatusClient::State::Refused);
        QCOMPARE(states.size(), changes);

        answer = "garbage\n";
        clock.advance(100);
        QTRY_COMPARE(client.state(), StatusClient::State::Disconnected);
        QVERIFY(client.protocolFailure());
        QVERIFY(client.stateReason().startsWith(QStringLiteral("protocol error")));
        client.stop();
    }
};

QTEST_GUILESS_MAIN(ConsoleClientTest)
#include "console_client.moc"
