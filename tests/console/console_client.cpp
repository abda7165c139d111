// console_client: StatusClient states, snapshots and events against the real StatusServer; reconnect
// with backoff (on a ManualClock) when the relay restarts; refused and protocol-error states.
#include "tests/console/consolefixtures.h"
#include "console/statusclient.h"
#include "service/statussocket/statusserver.h"
#include "shared/util/manualclock.h"

#include <QLocalServer>
#include <QLocalSocket>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace coreflow;
using namespace coreflow::console;
using namespace coreflow::consoletest;

class ConsoleClientTest : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;

private Q_SLOTS:
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
