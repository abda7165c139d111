// A Cloudly endpoint that accepts the TCP connection and hangs up inside the TLS handshake must cost the
// relay one failed attempt, never the process: writes to a socket the peer has reset give EPIPE, not a
// SIGPIPE that kills a relay started from a shell (docs/contract.md §19.3: the process ignores SIGPIPE
// from its first step, before any socket exists). Rules: OV-08 (the session is redialled after a failure).
#include "tests/support/epolltestmain.h"

#include <QFile>
#include <QProcess>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>
#include <csignal>

class TstCloudlyHangup : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void handshakeHangupCostsOneAttemptNotTheProcess_OV08_data()
    {
        QTest::addColumn<int>("how");
        QTest::newRow("reset after the ClientHello") << 0;
        QTest::newRow("FIN after the ClientHello") << 1;
        QTest::newRow("FIN at accept") << 2;
        QTest::newRow("garbage answer, then FIN") << 3;
    }

    void handshakeHangupCostsOneAttemptNotTheProcess_OV08()
    {
        QFETCH(int, how);
        const QString binary = qEnvironmentVariable("COREFLOW_BINARY");
        QVERIFY2(QFile::exists(binary), "COREFLOW_BINARY is not set to the built coreflow");

        // The hanging-up Cloudly: reads the ClientHello, then resets the connection (RST, so the
        // relay's next write meets EPIPE at once).
        QTcpServer server;
        QVERIFY(server.listen(QHostAddress::LocalHost, 0));
        int connections = 0;
        connect(&server, &QTcpServer::newConnection, this, [&] {
            while (QTcpSocket *socket = server.nextPendingConnection()) {
                ++connections;
                socket->setSocketOption(QAbstractSocket::LowDelayOption, 1);
                if (how == 2) {
                    socket->close();
                    socket->deleteLater();
                    continue;
                }
                connect(socket, &QTcpSocket::readyRead, socket, [socket, how] {
                    socket->readAll();
                    if (how == 3)
                        socket->write(QByteArray(64, 'x'));
                    if (how == 0)
                        socket->abort();
                    else
                        socket->disconnectFromHost();
                    socket->deleteLater();
                });
            }
        });

        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QFile cred(dir.filePath("SERVEZONE_CLUSTER_RELAY_AUTHORIZATION"));
        QVERIFY(cred.open(QIODevice::WriteOnly));
        cred.write("hangup-test-bearer");
        cred.close();

        QProcess relay;
        QProcessEnvironment env;
        env.insert("PATH", qEnvironmentVariable("PATH"));
        env.insert("CLOUDLY_URL", QStringLiteral("https://127.0.0.1:%1").arg(server.serverPort()));
        env.insert("CREDENTIALS_DIRECTORY", dir.path());
        env.insert("COREFLOW_NODE_ID", "node-relay");
        env.insert("COREFLOW_RELAY_BIND_HOSTNAME", "127.0.0.1");
        env.insert("COREFLOW_RELAY_BIND_PORT", "1");
        relay.setProcessEnvironment(env);
        relay.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        // A shell or a service manager may start the relay with SIGPIPE at its default disposition
        // (ignored dispositions survive exec, so this test process's own must not leak into the child).
        relay.setChildProcessModifier([] { std::signal(SIGPIPE, SIG_DFL); });
        relay.start(binary, {});
        QVERIFY(relay.waitForStarted());

        // The second dial proves the first hang-up was survived (the relay redials after its backoff).
        QTRY_VERIFY_WITH_TIMEOUT(connections >= 2 || relay.state() == QProcess::NotRunning, 60000);
        QCOMPARE(relay.state(), QProcess::Running);
        QVERIFY(connections >= 2);
        // And not by luck of timing: the disposition is "ignored" before the listener ever started
        // (this relay never got a cluster config, so no listener exists).
        QFile status(QStringLiteral("/proc/%1/status").arg(relay.processId()));
        QVERIFY(status.open(QIODevice::ReadOnly));
        quint64 ignored = 0;
        for (const QByteArray &line : status.readAll().split('\n'))
            if (line.startsWith("SigIgn:"))
                ignored = line.mid(7).trimmed().toULongLong(nullptr, 16);
        QVERIFY2(ignored & (quint64(1) << (SIGPIPE - 1)), "SIGPIPE is not ignored by the running relay");

        relay.terminate();
        QVERIFY(relay.waitForFinished(15000));
        QCOMPARE(relay.exitStatus(), QProcess::NormalExit);
        QCOMPARE(relay.exitCode(), 0);
    }
};

COREFLOW_EPOLL_TEST_MAIN(TstCloudlyHangup)
#include "tst_cloudlyhangup.moc"
