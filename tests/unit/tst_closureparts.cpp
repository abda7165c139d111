// The closure lane's pure parts (docs/contract.md §13.4): the binary chunk frame (CS-65), the
// SHA-256 computed in transit (CS-65, CS-66), the progress bound on the injected clock (CS-70) and the
// descriptor's exact reader.
#include "service/closures/closurechunkframe.h"
#include "service/closures/closuredescriptor.h"
#include "service/closures/closureprogresswatch.h"
#include "service/closures/streamingsha256.h"
#include "service/transport/httprequesthead.h"
#include "shared/util/manualclock.h"

#include <QCryptographicHash>
#include <QJsonObject>
#include <QTest>
#include <QtEndian>

using namespace coreflow;

class TstClosureParts : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // CS-65: bytes 0-15 the stream id, 16-23 the offset big-endian, then the payload (written out here
    // by hand from the contract, not by the composer under test).
    void chunkFrameLayoutIsTheContracts()
    {
        const QUuid id = QUuid::fromString(QStringLiteral("6f1c2d3e-4a5b-4c6d-8e7f-0123456789ab"));
        const QByteArray payload("closure bytes");
        QByteArray expected = QByteArray::fromHex("6f1c2d3e4a5b4c6d8e7f0123456789ab");
        expected += QByteArray::fromHex("0000000102030405");
        expected += payload;
        QCOMPARE(ClosureChunkFrame::compose(id, 0x0102030405ull, payload), expected);
        const ClosureChunkFrame::Chunk chunk = ClosureChunkFrame::read(expected);
        QCOMPARE(chunk.problem, ClosureChunkFrame::Problem::None);
        QCOMPARE(chunk.streamId, id);
        QCOMPARE(chunk.offset, 0x0102030405ull);
        QCOMPARE(chunk.payload.toByteArray(), payload);
        // D-138: the send path fills its frame in place and writes only the header: the same 24 bytes.
        QByteArray inPlace(24, '\xee');
        inPlace += payload;
        ClosureChunkFrame::writeHeader(inPlace.data(), id, 0x0102030405ull);
        QCOMPARE(inPlace, expected);
    }
    void chunkFrameBoundsAreNamed_data()
    {
        QTest::addColumn<int>("payloadBytes");
        QTest::addColumn<quint64>("offset");
        QTest::addColumn<int>("problem");
        QTest::newRow("empty") << 0 << quint64(0) << int(ClosureChunkFrame::Problem::EmptyPayload);
        QTest::newRow("one") << 1 << quint64(0) << int(ClosureChunkFrame::Problem::None);
        QTest::newRow("max") << 262144 << quint64(7) << int(ClosureChunkFrame::Problem::None);
        QTest::newRow("over") << 262145 << quint64(0) << int(ClosureChunkFrame::Problem::PayloadTooLarge);
        QTest::newRow("offset 2^53") << 1 << (quint64(1) << 53) << int(ClosureChunkFrame::Problem::None);
        QTest::newRow("offset over 2^53") << 1 << ((quint64(1) << 53) + 1) << int(ClosureChunkFrame::Problem::OffsetTooLarge);
    }
    void chunkFrameBoundsAreNamed()
    {
        QFETCH(int, payloadBytes);
        QFETCH(quint64, offset);
        QFETCH(int, problem);
        QByteArray frame(16, '\x11');
        char be[8];
        qToBigEndian<quint64>(offset, be);
        frame.append(be, 8);
        frame.append(QByteArray(payloadBytes, 'p'));
        const ClosureChunkFrame::Chunk chunk = ClosureChunkFrame::read(frame);
        QCOMPARE(int(chunk.problem), problem);
        QCOMPARE(chunk.payload.size(), problem == int(ClosureChunkFrame::Problem::None) ? payloadBytes : 0);
    }
    void shortFramesNameNoStream()
    {
        for (int n : {0, 1, 15, 16, 23}) {
            const ClosureChunkFrame::Chunk chunk = ClosureChunkFrame::read(QByteArray(n, '\x22'));
            QCOMPARE(chunk.problem, ClosureChunkFrame::Problem::ShorterThanHeader);
            QVERIFY(chunk.streamId.isNull());
        }
    }

    // CS-65/CS-66: the digest over pieces equals the digest of the whole (a well-known vector too).
    void digestInPiecesEqualsTheWhole()
    {
        StreamingSha256 empty;
        QCOMPARE(empty.hexDigest(), QByteArray("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
        QByteArray whole;
        for (int i = 0; i < 300000; ++i)
            whole.append(char(i * 31 + 7));
        StreamingSha256 pieces;
        for (qsizetype at = 0; at < whole.size(); at += 65537)
            pieces.update(QByteArrayView(whole).sliced(at, qMin<qsizetype>(65537, whole.size() - at)));
        QCOMPARE(pieces.hexDigest(), QCryptographicHash::hash(whole, QCryptographicHash::Sha256).toHex());
        QVERIFY(StreamingSha256::isHexDigest(pieces.hexDigest()));
        QVERIFY(!StreamingSha256::isHexDigest(pieces.hexDigest().toUpper()));
        QVERIFY(!StreamingSha256::isHexDigest("abc"));
    }

    // CS-70: progress, not duration: a watch fed every 29999 ms for ten minutes never fires; one left
    // alone fires at exactly 30000 ms, once.
    void progressNotDurationBoundsATransfer()
    {
        ManualClock clock;
        int quiet = 0;
        ClosureProgressWatch watch(clock, [&] { ++quiet; });
        watch.start();
        for (int i = 0; i < 20; ++i) {
            clock.advance(29999);
            watch.moved();
        }
        QCOMPARE(quiet, 0);
        clock.advance(29999);
        QCOMPARE(quiet, 0);
        clock.advance(1);
        QCOMPARE(quiet, 1);
        clock.advance(120000);
        QCOMPARE(quiet, 1);
        watch.stop();
        QVERIFY(!watch.isRunning());
    }
    void aStoppedWatchNeverFires()
    {
        ManualClock clock;
        int quiet = 0;
        ClosureProgressWatch watch(clock, [&] { ++quiet; });
        watch.start();
        clock.advance(10000);
        watch.stop();
        clock.advance(60000);
        QCOMPARE(quiet, 0);
    }

    // CS-68: a streamed body's head states exactly its length, once, and no Transfer-Encoding.
    void streamedBodyHeadStatesItsLengthOnce_CS68()
    {
        struct NoBytes : HttpRequestBodyStream {
            qsizetype requestBodyRead(char *, qsizetype) override { return 0; }
        } stream;
        HttpClientRequest request;
        request.method = "POST";
        request.target = "/corestore/control/database-closures/restore?serviceId=s&backupId=b";
        request.headers.append({"X-Corestore-Closure-Sha256", QByteArray(64, 'a')});
        request.bodyStream = &stream;
        request.bodyStreamBytes = 6 * 1024 * 1024 + 777;
        const QByteArray head = httpRequestHead(request, "127.0.0.1:7443", "keep-alive");
        QCOMPARE(head.count("Content-Length:"), 1);
        QVERIFY(head.contains("\r\nContent-Length: 6292233\r\n"));
        QVERIFY(!head.contains("Transfer-Encoding"));
        QVERIFY(!head.contains("Content-Encoding"));
        QVERIFY(head.endsWith("\r\n\r\n")); // nothing of the body in the head
    }

    // §13.4 ClosureDescriptor, read exactly.
    void descriptorIsReadExactly()
    {
        const QJsonObject good{{"streamId", "6f1c2d3e-4a5b-4c6d-8e7f-0123456789ab"}, {"serviceId", "s1"}, {"backupId", "b1"},
                               {"nodeId", "n1"}, {"sizeBytes", 5}, {"sha256", QString(64, QLatin1Char('a'))},
                               {"corestoreReceipt", "receipt:s1:b1:5"}};
        auto read = ClosureDescriptor::read(good, QStringLiteral("response.descriptor"));
        QVERIFY(read.ok());
        QCOMPARE(read->sizeBytes, 5);
        QCOMPARE(ClosureDescriptor::read(read->toJson(), QStringLiteral("d"))->toJson(), read->toJson());
        const auto refused = [&](const QString &key, const QJsonValue &value) {
            QJsonObject bad = good;
            if (value.isUndefined())
                bad.remove(key);
            else
                bad.insert(key, value);
            auto r = ClosureDescriptor::read(bad, QStringLiteral("response.descriptor"));
            return !r.ok() && r.refusal().name == QLatin1String("request-invalid");
        };
        QVERIFY(refused("streamId", "not-a-uuid"));
        QVERIFY(refused("sizeBytes", -1));
        QVERIFY(refused("sizeBytes", 1.5));
        QVERIFY(refused("sha256", QString(64, QLatin1Char('A'))));
        QVERIFY(refused("corestoreReceipt", "line\r\nInjected: header"));
        QVERIFY(refused("corestoreReceipt", ""));
        QVERIFY(refused("nodeId", QJsonValue::Undefined));
        QVERIFY(refused("extra", 1));
    }
};

QTEST_GUILESS_MAIN(TstClosureParts)
#include "tst_closureparts.moc"
