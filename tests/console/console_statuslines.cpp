// console_statuslines: StatusLineReader, the console's reader of the relay's status lines
// (docs/contract.md §18), on lines the fuzz target fuzz_status_lines found.
#include "console/statuslinereader.h"

#include <QTest>

using namespace coreflow;
using namespace coreflow::console;

class ConsoleStatusLines : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // fuzz_status_lines (issue 23): an event whose atMs was 17645472000547200000 was cast from double
    // to qint64 out of its range (undefined behaviour; UBSan stopped the target). §18: atMs is an
    // integer of Unix ms; a number that is not an integer within qint64 is a protocol error, nothing
    // is shown of the event.
    void eventTimeOutsideTheIntegerRangeIsAProtocolError_Contract18_data()
    {
        QTest::addColumn<QByteArray>("atMs");
        QTest::newRow("found by the fuzzer") << QByteArray("17645472000547200000");
        QTest::newRow("-1e19") << QByteArray("-1e19");
        QTest::newRow("2^63") << QByteArray("9223372036854775808");
        QTest::newRow("fractional") << QByteArray("1.5");
    }
    void eventTimeOutsideTheIntegerRangeIsAProtocolError_Contract18()
    {
        QFETCH(QByteArray, atMs);
        const StatusLine line = StatusLineReader::read(R"({"type":"event","version":1,"atMs":)" + atMs
                                                       + R"(,"kind":"node","line":"node-1 registered"})");
        QCOMPARE(line.kind, StatusLine::Kind::ProtocolError);
        QVERIFY(line.reason.startsWith(QLatin1String("protocol error: ")));
    }
    void eventTimesWithinTheRangeAreRead_Contract18()
    {
        const StatusLine line
            = StatusLineReader::read(R"({"type":"event","version":1,"atMs":1764547200054,"kind":"node","line":"node-1 registered"})");
        QCOMPARE(line.kind, StatusLine::Kind::Event);
        QCOMPARE(line.event.atMs, qint64(1764547200054));
        QCOMPARE(line.event.kind, QStringLiteral("node"));
        const StatusLine negative = StatusLineReader::read(R"({"type":"event","version":1,"atMs":-9007199254740992,"kind":"k","line":"l"})");
        QCOMPARE(negative.kind, StatusLine::Kind::Event);
        QCOMPARE(negative.event.atMs, qint64(-9007199254740992));
    }
};

QTEST_GUILESS_MAIN(ConsoleStatusLines)
#include "console_statuslines.moc"
