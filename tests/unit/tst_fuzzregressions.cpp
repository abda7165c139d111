// tst_fuzzregressions: every finding of the fuzz targets under fuzz/ (docs/architecture.md "Fuzzing"),
// kept as the bytes the fuzzer found, each failing before its fix.
#include "service/statussocket/statushelloreader.h"
#include "service/transport/httpresponseparser.h"
#include "service/transport/websocketframedecoder.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

using namespace coreflow;

namespace {
WebSocketFrameDecoder::Sink ignoring()
{
    WebSocketFrameDecoder::Sink sink;
    sink.message = [](WebSocketFrameDecoder::Opcode, QByteArray) {};
    sink.control = [](WebSocketFrameDecoder::Opcode, QByteArray) {};
    return sink;
}

struct Answer : HttpResponseParser::Events {
    int status = -1;
    bool completed = false;
    QByteArray body;
    bool bodyBeforeHead = false;
    void head(int s, const HttpHeaderPairs &) override { status = s; }
    void httpBody(const char *data, qsizetype size) override
    {
        bodyBeforeHead = bodyBeforeHead || status == -1;
        body.append(data, size);
    }
    void complete() override { completed = true; }
};

// An answer fed in pieces of `piece` bytes (0: at once), as HttpClientConnection feeds what each read
// brought, until it completes or fails; then the verdict.
struct Verdict {
    bool failed = false;
    HttpClientFailure failure = HttpClientFailure::Protocol;
    int status = -1;
    QByteArray body;
};
Verdict parseInPieces(const QByteArray &answer, qsizetype piece, qsizetype maxHeaderLines)
{
    Answer events;
    HttpResponseParser parser(events, maxHeaderLines);
    parser.reset(false);
    qsizetype at = 0;
    while (at < answer.size() && !parser.failed() && !parser.isComplete()) {
        const qsizetype n = piece == 0 ? answer.size() - at : qMin(piece, answer.size() - at);
        const qsizetype used = parser.feed(answer.constData() + at, n);
        at += used;
        if (used < n)
            break;
    }
    return {parser.failed(), parser.failure(), events.status, events.body};
}
} // namespace

class TstFuzzRegressions : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // fuzz_websocket_client: a fragmented text message, then a frame with RSV bits set (1002). The failed
    // decoder kept the message's fragments: memory the session no longer charges to the listener's
    // receive budget (it charges 0 once failed) held until the session is gone (docs/contract.md §3.0).
    void failedDecoderReleasesAFragmentedMessage()
    {
        const QByteArray stream = QByteArray::fromBase64("AgMBB2dywwAAYEAAAHUgvMOfIIkEcGluZ4AFIGRpY2g=").mid(2);
        WebSocketFrameDecoder decoder(4096, WebSocketFrameDecoder::Role::Client);
        for (qsizetype at = 0; at < stream.size(); at += 3)
            decoder.feed(QByteArrayView(stream).sliced(at, qMin<qsizetype>(3, stream.size() - at)), ignoring());
        QCOMPARE(decoder.failure(), WebSocketFrameDecoder::Failure::ProtocolError);
        QCOMPARE(decoder.bufferedBytes(), qsizetype(0));
    }

    // The same for a decoder stopped (after a Close) inside a fragmented message: what it held goes.
    void stoppedDecoderReleasesAFragmentedMessage()
    {
        const QByteArray first = QByteArray::fromHex("0105") + "hello"; // text, FIN clear, unmasked
        WebSocketFrameDecoder decoder(4096, WebSocketFrameDecoder::Role::Client);
        decoder.feed(first + QByteArray::fromHex("0003") + "ab", ignoring()); // and a partial continuation
        QVERIFY(decoder.bufferedBytes() > 0);
        decoder.stop();
        QCOMPARE(decoder.bufferedBytes(), qsizetype(0));
        WebSocketFrameDecoder::Sink closing = ignoring();
        WebSocketFrameDecoder inside(4096, WebSocketFrameDecoder::Role::Client);
        closing.control = [&](WebSocketFrameDecoder::Opcode, QByteArray) { inside.stop(); };
        inside.feed(first + QByteArray::fromHex("8800") + QByteArray::fromHex("0003") + "ab", closing);
        QCOMPARE(inside.bufferedBytes(), qsizetype(0));
    }

    // fuzz_http_response (then fuzz_upstream_response, on UpstreamResponseParser): "HTTP/1.1 0" was reported as an answer with status 0 (and would have
    // been relayed to the node as such). A status outside 100..599 is not HTTP (RFC 9110 §15): the
    // answer fails as Protocol (docs/contract.md §17: 502 registry-unreachable), nothing is reported.
    void upstreamStatusOutsideTheRangeIsProtocol_data()
    {
        QTest::addColumn<QByteArray>("answer");
        QTest::newRow("found by the fuzzer") << QByteArray::fromBase64("BEhUVFAvMS4xIDANCg0KMjAwIE9LMABIDVRUUC8xCg==").mid(1);
        QTest::newRow("99") << QByteArray("HTTP/1.1 99 Odd\r\nContent-Length: 0\r\n\r\n");
        QTest::newRow("600") << QByteArray("HTTP/1.1 600 Odd\r\nContent-Length: 0\r\n\r\n");
        QTest::newRow("999") << QByteArray("HTTP/1.1 999 Odd\r\nContent-Length: 0\r\n\r\n");
    }
    void upstreamStatusOutsideTheRangeIsProtocol()
    {
        QFETCH(QByteArray, answer);
        Answer events;
        HttpResponseParser parser(events, 128);
        parser.reset(false);
        parser.feed(answer.constData(), answer.size());
        QVERIFY(parser.failed());
        QCOMPARE(parser.failure(), HttpClientFailure::Protocol);
        QCOMPARE(events.status, -1);
        QVERIFY(!parser.headReported());
    }
    // fuzz_http_response: an interim "199" answer announcing Content-Length: 5 had its five bytes
    // handed to the body sink before any head (http_parser reads a 1xx/204/304 body when a length is
    // announced). RFC 9112 §6.3: such answers carry no content; the bytes after their header block are
    // the next answer's (docs/contract.md §17).
    void answersWithoutContentCarryNoBody_data()
    {
        QTest::addColumn<QByteArray>("answer");
        QTest::addColumn<int>("status");
        QTest::newRow("interim 199 with a length, as found")
            << QByteArray("HTTP/1.1 199 OK\r\nContent-Length: 5\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n") << 200;
        QTest::newRow("204") << QByteArray("HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n") << 204;
        QTest::newRow("304") << QByteArray("HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\n") << 304;
    }
    void answersWithoutContentCarryNoBody()
    {
        QFETCH(QByteArray, answer);
        QFETCH(int, status);
        Answer events;
        HttpResponseParser parser(events, 128);
        parser.reset(false);
        parser.feed(answer.constData(), answer.size());
        QVERIFY(!events.bodyBeforeHead);
        QCOMPARE(events.status, status);
        QVERIFY(events.completed);
        QCOMPARE(events.body, QByteArray());
    }

    void upstreamStatusesInTheRangeAreReported()
    {
        for (const char *answer : {"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 599 Odd\r\nContent-Length: 0\r\n\r\n",
                                   "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"}) {
            Answer events;
            HttpResponseParser parser(events, 128);
            parser.reset(false);
            parser.feed(answer, qsizetype(qstrlen(answer)));
            QVERIFY(!parser.failed());
            QVERIFY(events.completed);
        }
    }

    // fuzz_http_response: 100 header lines, then the name of a 101st cut by a NUL (not a token byte).
    // Fed at once, http_parser met the NUL before it handed over the name: Protocol. Fed in 2-byte
    // pieces, it handed over "din" at the end of a read first, the collector counted the 101st line
    // and the answer failed as HeadersTooLarge: the verdict depended on where the bytes split. Now a
    // bound is refused with the piece that ends the name or value crossing it (D-107, contract §17).
    void headerBoundVerdictIsTheSameForAnySplit_IP12()
    {
        const QByteArray found = QByteArray::fromBase64(
        "BEhUVFAvMS4xIDQwMSBVbmF1dGhvciAKZGluZzogCmQ6IHN0ZGluZzogCmRpbkNvZzowIHRob3JpemVkDQpXV1ctQXV0aGVuT3Bl"
        "Zzr4IApkdGluQ29nOl0KZGluZzpnVFAvMS4xIDQwMSBVbmF1dGhvciAKZGluZzogCmRpbkNvZzowIHRob3JpemVkDQpXV1ctQXV0"
        "aGVuT3BlZzr4IApkdGluQ29nOl0KZGluZzpnOiAgCmRpbkNvZzr4IApkaW5Db2c6IIpkaW5nOiAgCmRpbkNvZzogdGVudCAgCmQ6"
        "IHN0ZGluZzogCmRpbkNvZzowIHRob3JpemVkDQpXV1ctQXV0aGVuT3BlZzr4IApkdGluQ29nOl0KZGluZzpnOiAgCmRvZzogCmRp"
        "bmc6ZzogIApkaW5Db2c6ICAKZG9nOiAKZGluOiAKZGluZzpnOiAgCmRpbkNvZzr4IDogCmRpbkNvZzowIHRob3JpemVkDQpXV1ct"
        "QXV0aGVuT3BlZzr4IApkdGluQ29nOl0KZGluZzpnOiAgCmRpbkNvZzr4IApkaW5Db2c6IIpkaW5nOiAgCmRpbkNvZzogCmRpakNv"
        "Z2c6ZzogIApkaW5Db2c6+CAKZGlqQ29nOmc6IApkaW5nOmluQ29nOjAgdGhvcml6ZWQNCldXVy1BdXRoZW5PcGVnOvggCmR0aW5D"
        "b2c6XQpkaW5nOmc6ICAKZGluVy1BdXRoZW5PcGVnOvggCmR0aW5Db2c6XQpkaW5nOmc6ICAKZGluQ29nOvggCmRpbkNvZzogimRp"
        "bmc6ICAKZGluQ29nOiB0ZW50ICAKZDogc3RkaW5nOiAKZGluQ29nOjAgdGhvcml6ZWQNCldXVy1BdXRoZW5PcGVnOvggCmR0aW5D"
        "b2c6XQpkaW5nOmc6ICAKZG9nOiAKZGluZzpnOiAgCmRpbkNvZzogIApkb2c6IApkaW46IApkaW5nOmc6ICAKZGluQ29nOvggOiAK"
        "ZGluQ29nOjAgdGhvcml6ZWQNCldXVy1BdXRoZW5PcGVnOvggCmR0aW5Db2c6XQpkaW5nOmc6ICAKZGluQ29nOvggCmRpbkNvZzog"
        "imRpbmc6ICAKZGluQ29nOiAKZGlqQ29nZzpnOiAgCmRpbkNvZzr4IApkaWpDb2c6ZzogCmRpbmc6aW5Db2c6MCB0aG9yaXplZA0K"
        "V1dXLUF1dGhlbk9wZWc6+CAKZHRpbkNvZzpdCmRpbmc6ZzogIApkaW5Db2c6+D8KZGluQ29nOiCKZGluZzpdCmRpbmc6ZzogIApk"
        "aW5Db2c6+CAKZGluQ29nOiCKZGluZzogIApkaW5Db2c6IApkaWpDb2dnOmc6ICAKZGluQ29nOmc6ICAKZGluQ29nOiB0ZW50ICAK"
        "ZDogc3RkaW5nOiAKZGluQ29nOjUgdGhvcml6ZWQNCldXVy1BdXRoZW5PcGVnOvggCmR0aW5Db2c6XQpkaW5nOmdUUC8xLkNvZzr4"
        "PwpkaW5Db2c6IIpkaW5nOiAgCmRpbkNvZzogdGVudCAgCmQ6IHN0ZGluZzogCmRpbkNvZzo1IHRob3JpemVkDQpXV1ctQXV0aGVu"
        "T3BlZzr4IApkdGluQ29nOl0KZGluZzpnVFAvMS4xIDQwMSBVbmF1dGhvciAKZGluZzogCmRpbkNvZzowIHRob3JpemVkDQpXV1ct"
        "QXV0aGVuT3BlZzr4IApkdGluQ29nOl0KZGluZzpnOiAgCmRpbkNvZzr4IApkaW5Db2c6IIpkaW5nOiAgCmRpbgAAAAAAAAAAAAAA"
        "Q29nOiB0ZW50ICAKZDogc3RkaW5nOiAKZGluQ29nOjAgdGhvcml6ZWQNCldXVy1BdXRoZW5PcGVnOvggCmR0aW5Db2c6XQpkaW5n"
        "Omc6ICAKZG9nOiAKZGluZzpnOiAgCmRpbkNvZzogIApkb2c6IApkaW46IApkaW5nOmc6ICAKZGluQ29nOvggCmRpakNvZ2c6Zzog"
        "IApkaW5Db2c6+CAKZGlqQ29nOmc6IApkaW5nOmc6ICAKZGluQ29nOvggCmRpakNvZzogimRpbmc6ICAKZDogc3RwMCB0aG9yaXpl"
        "ZA0KZTogMg0KDWQK").mid(1);
        const Verdict whole = parseInPieces(found, 0, 100);
        QVERIFY(whole.failed);
        QCOMPARE(whole.failure, HttpClientFailure::Protocol);
        for (qsizetype piece = 1; piece <= 16; ++piece) {
            const Verdict pieces = parseInPieces(found, piece, 100);
            QVERIFY2(pieces.failed && pieces.failure == whole.failure, qPrintable(QStringLiteral("piece %1").arg(piece)));
        }
    }
    // The same rule on short answers, at every split: a name cut by a bad byte after the bound is
    // Protocol, a 3rd line whose name ends (':') past a 2-line bound is HeadersTooLarge, and a line
    // within the bound whose value ends the block reads the same head.
    void headerBoundVerdictIsTheSameForAnySplit_short_data()
    {
        QTest::addColumn<QByteArray>("answer");
        QTest::addColumn<bool>("tooLarge");
        QTest::newRow("bad byte in the 3rd name") << QByteArray("HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\nCcc\0\r\n\r\n", 37) << false;
        QTest::newRow("3rd name ended") << QByteArray("HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\nCcc: 3\r\n\r\n") << true;
        QTest::newRow("3rd name ended, bad value") << QByteArray("HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\nCcc: \0\r\n\r\n", 39) << true;
    }
    void headerBoundVerdictIsTheSameForAnySplit_short()
    {
        QFETCH(QByteArray, answer);
        QFETCH(bool, tooLarge);
        for (qsizetype piece = 0; piece <= answer.size(); ++piece) {
            const Verdict v = parseInPieces(answer, piece, 2);
            QVERIFY2(v.failed, qPrintable(QStringLiteral("piece %1").arg(piece)));
            QCOMPARE(v.failure, tooLarge ? HttpClientFailure::HeadersTooLarge : HttpClientFailure::Protocol);
        }
        const QByteArray fits = "HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\nContent-Length: 2\r\n\r\nok";
        for (qsizetype piece = 0; piece <= fits.size(); ++piece) {
            const Verdict v = parseInPieces(fits, piece, 3);
            QVERIFY(!v.failed);
            QCOMPARE(v.status, 200);
            QCOMPARE(v.body, QByteArray("ok"));
        }
    }

    // fuzz_status_lines: a refused line whose type is a plain name of 34 characters had it quoted,
    // which the target's check (at most 32) called a leak. The contract's bound is §1 "Quoting a
    // peer's names": a message type is repeated only when plain, 1 to 64 of A-Z a-z 0-9 _ - . — the
    // reader keeps to it; the target's check was wrong and now checks §1's bound (contract §18).
    void statusRefusalQuotesAPeersTypeOnlyWithinTheContractsBound_Contract18()
    {
        const QByteArray found = "{\"type\":\"snapeeeeeeeeeeeeeeeeeeeeeeeeeeshot\",\"version\":1,\"status\":\"status-access-denied\",\"reason\":\"uid 1001\"}";
        const StatusHelloOutcome refused = StatusHelloReader::read(found, false);
        QCOMPARE(refused.kind, StatusHelloOutcome::Kind::Refuse);
        QVERIFY(refused.reason.contains(QLatin1String("\"snapeeeeeeeeeeeeeeeeeeeeeeeeeeshot\"")));
        const auto reasonFor = [](const QString &type) {
            const QJsonObject msg{{QStringLiteral("type"), type}, {QStringLiteral("version"), 1}};
            return StatusHelloReader::read(QJsonDocument(msg).toJson(QJsonDocument::Compact), false).reason;
        };
        const QString longest(64, u'x');
        QVERIFY(reasonFor(longest).contains(longest));
        const QString tooLong(65, u'x');
        QVERIFY(!reasonFor(tooLong).contains(QLatin1Char('x')));
        for (const QString &unplain : {QStringLiteral("a b"), QStringLiteral("a\u001b[2Jb"), QStringLiteral("a\"b"), QStringLiteral("\u00e9t\u00e9")}) {
            const QString reason = reasonFor(unplain);
            QVERIFY2(!reason.contains(unplain) && !reason.contains(QLatin1Char('\x1b')), qPrintable(reason));
            QVERIFY(reason.contains(QLatin1String("an unknown message type")));
        }
    }
};

QTEST_GUILESS_MAIN(TstFuzzRegressions)
#include "tst_fuzzregressions.moc"
