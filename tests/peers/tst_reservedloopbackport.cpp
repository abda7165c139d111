// The test helper reservedLoopbackPort() (tests/peers/reservedloopbackport.h): tests started side by side
// by `ctest -j` must never be handed the same port, nor one process the same port twice; a collision
// shows as a relay or peer that cannot bind (listener-bind-failed) in an unrelated test.
#include "tests/peers/reservedloopbackport.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QProcess>
#include <QSet>
#include <QTest>

#include <cstdio>

namespace {

constexpr int kChildReservations = 400;

class TestReservedLoopbackPort : public QObject {
    Q_OBJECT
private slots:
    void neverHandsOneProcessTheSamePortTwice()
    {
        QSet<quint16> seen;
        for (int i = 0; i < 800; ++i) {
            const quint16 port = coreflow::test::reservedLoopbackPort();
            QVERIFY(port != 0);
            QVERIFY2(!seen.contains(port), qPrintable(QStringLiteral("port %1 handed out twice").arg(port)));
            seen.insert(port);
        }
    }

    void twoProcessesAtOnceGetDisjointPorts()
    {
        QList<QProcess *> children;
        for (int i = 0; i < 2; ++i) {
            auto *child = new QProcess(this);
            QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
            environment.insert(QStringLiteral("COREFLOW_TEST_RESERVE_PORTS"), QString::number(kChildReservations));
            child->setProcessEnvironment(environment);
            children.append(child);
        }
        for (QProcess *child : children)
            child->start(QCoreApplication::applicationFilePath(), {});
        for (QProcess *child : children)
            QVERIFY(child->waitForStarted(30000));
        // Each child holds its ports until told to end (its stdin closed): a port of a process that
        // has ended is free again by design, so both must live until both have all of theirs.
        QList<QSet<quint16>> handedOut;
        for (QProcess *child : children) {
            QByteArray output;
            QDeadlineTimer deadline(60000);
            while (output.count('\n') < kChildReservations && !deadline.hasExpired()
                   && child->state() == QProcess::Running) {
                child->waitForReadyRead(1000);
                output += child->readAllStandardOutput();
            }
            QSet<quint16> ports;
            for (const QByteArray &line : output.split('\n')) {
                if (!line.isEmpty())
                    ports.insert(quint16(line.toUInt()));
            }
            QCOMPARE(ports.size(), kChildReservations);
            handedOut.append(ports);
        }
        for (QProcess *child : children) {
            child->closeWriteChannel();
            QVERIFY(child->waitForFinished(60000));
            QCOMPARE(child->exitCode(), 0);
        }
        const QSet<quint16> both = handedOut[0] & handedOut[1];
        QVERIFY2(both.isEmpty(), qPrintable(QStringLiteral("%1 ports handed to both processes").arg(both.size())));
    }
};

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const int reservations = qEnvironmentVariableIntValue("COREFLOW_TEST_RESERVE_PORTS");
    if (reservations > 0) {
        // Child mode: reserve and print, one port per line, hold them until stdin ends, then end.
        for (int i = 0; i < reservations; ++i)
            std::printf("%u\n", unsigned(coreflow::test::reservedLoopbackPort()));
        std::fflush(stdout);
        char rest[64];
        while (std::fread(rest, 1, sizeof rest, stdin) > 0) {
        }
        return 0;
    }
    TestReservedLoopbackPort test;
    return QTest::qExec(&test, argc, argv);
}

#include "tst_reservedloopbackport.moc"
