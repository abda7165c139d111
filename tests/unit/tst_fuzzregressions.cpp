// tst_fuzzregressions: every finding of the fuzz targets under fuzz/ (docs/architecture.md "Fuzzing"),
// kept as the bytes the fuzzer found, each failing before its fix.
#include "service/transport/httpresponseparser.h"
#include "service/transport/websocketframedecoder.h"

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
};

QTEST_GUILESS_MAIN(TstFuzzRegressions)
#include "tst_fuzzregressions.moc"
