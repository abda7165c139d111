// tst_websocketframes: the listener's RFC 6455 framing (WebSocketFrameDecoder / WebSocketFrameEncoder),
// which carries every node lane (CL-02: the one TLS WebSocket at "/"; CL-06: bodies untouched, so
// text arrives as the exact UTF-8 bytes sent). docs/contract.md D-53.
#include "service/transport/websocketframedecoder.h"
#include "service/transport/websocketframeencoder.h"
#include "service/transport/websocketmask.h"

#include <QRandomGenerator>
#include <QSet>
#include <QTest>

using namespace coreflow;
using Opcode = WebSocketFrameDecoder::Opcode;
using Failure = WebSocketFrameDecoder::Failure;

namespace {
// A client frame (masked), as a node's WebSocket library sends it.
QByteArray clientFrame(quint8 opcode, QByteArrayView payload, bool fin = true, quint32 maskSeed = 0x1234abcd, quint8 rsv = 0)
{
    QByteArray out;
    out.append(char((fin ? 0x80 : 0) | rsv | opcode));
    const qsizetype n = payload.size();
    if (n < 126) {
        out.append(char(0x80 | n));
    } else if (n <= 0xFFFF) {
        out.append(char(0x80 | 126));
        out.append(char(n >> 8));
        out.append(char(n & 0xFF));
    } else {
        out.append(char(0x80 | 127));
        for (int i = 7; i >= 0; --i)
            out.append(char((quint64(n) >> (8 * i)) & 0xFF));
    }
    const char key[4] = {char(maskSeed >> 24), char(maskSeed >> 16), char(maskSeed >> 8), char(maskSeed)};
    out.append(key, 4);
    for (qsizetype i = 0; i < n; ++i)
        out.append(char(payload[i] ^ key[i % 4]));
    return out;
}

struct Collected {
    QList<QPair<Opcode, QByteArray>> messages;
    QList<QPair<Opcode, QByteArray>> controls;
    WebSocketFrameDecoder::Sink sink()
    {
        WebSocketFrameDecoder::Sink s;
        s.message = [this](Opcode o, QByteArray p) { messages.append({o, p}); };
        s.control = [this](Opcode o, QByteArray p) { controls.append({o, p}); };
        return s;
    }
};
} // namespace

class TstWebSocketFrames : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // CL-06: a text message arrives as the exact bytes sent, whatever the length encoding.
    void textRoundTripsEveryLengthForm_CL06_data()
    {
        QTest::addColumn<int>("size");
        for (int size : {0, 1, 125, 126, 127, 65535, 65536, 300000})
            QTest::addRow("%d bytes", size) << size;
    }
    void textRoundTripsEveryLengthForm_CL06()
    {
        QFETCH(int, size);
        QByteArray body(size, 'x');
        for (int i = 0; i < size; ++i)
            body[i] = char('a' + i % 26);
        WebSocketFrameDecoder decoder(16 * 1024 * 1024);
        Collected got;
        decoder.feed(clientFrame(0x1, body), got.sink());
        QCOMPARE(decoder.failure(), Failure::None);
        QCOMPARE(got.messages.size(), 1);
        QCOMPARE(got.messages.first().first, Opcode::Text);
        QCOMPARE(got.messages.first().second, body);
        QCOMPARE(decoder.bufferedBytes(), 0);
    }

    // Frames split at every byte boundary still decode (TLS records cut frames anywhere).
    void frameSplitAtEveryByte_CL06()
    {
        const QByteArray body = QByteArray("{\"method\":\"registerPalletRuntimeSession\",\"x\":\"\xc3\xa9\xe2\x82\xac\"}");
        const QByteArray wire = clientFrame(0x1, body) + clientFrame(0x9, "hb") + clientFrame(0x1, body);
        for (qsizetype cut = 1; cut < wire.size(); ++cut) {
            WebSocketFrameDecoder decoder(1024);
            Collected got;
            decoder.feed(QByteArrayView(wire).first(cut), got.sink());
            decoder.feed(QByteArrayView(wire).sliced(cut), got.sink());
            QCOMPARE(decoder.failure(), Failure::None);
            QCOMPARE(got.messages.size(), 2);
            QCOMPARE(got.messages.at(1).second, body);
            QCOMPARE(got.controls.size(), 1);
            QCOMPARE(got.controls.first().second, QByteArray("hb"));
        }
        // One byte at a time.
        WebSocketFrameDecoder decoder(1024);
        Collected got;
        for (char c : wire)
            decoder.feed(QByteArrayView(&c, 1), got.sink());
        QCOMPARE(got.messages.size(), 2);
        QCOMPARE(decoder.bufferedBytes(), 0);
    }

    void fragmentedMessageIsJoinedWithControlFramesBetween()
    {
        WebSocketFrameDecoder decoder(1024);
        Collected got;
        decoder.feed(clientFrame(0x1, "hello ", false) + clientFrame(0x9, "p") + clientFrame(0x0, "wor", false, 7)
                         + clientFrame(0x0, "ld", true, 99),
                     got.sink());
        QCOMPARE(decoder.failure(), Failure::None);
        QCOMPARE(got.messages.size(), 1);
        QCOMPARE(got.messages.first().second, QByteArray("hello world"));
        QCOMPARE(got.controls.size(), 1);
    }

    void protocolViolationsAreRefusedWith1002_data()
    {
        QTest::addColumn<QByteArray>("wire");
        QByteArray unmasked = clientFrame(0x1, "abc");
        unmasked[1] = char(quint8(unmasked[1]) & 0x7F);
        QTest::addRow("unmasked client frame") << unmasked;
        QTest::addRow("RSV1 set without an extension") << clientFrame(0x1, "abc", true, 1, 0x40);
        QTest::addRow("unknown opcode 0x3") << clientFrame(0x3, "abc");
        QTest::addRow("unknown control opcode 0xB") << clientFrame(0xB, "abc");
        QTest::addRow("continuation without a message") << clientFrame(0x0, "abc");
        QTest::addRow("new message inside a fragmented one") << clientFrame(0x1, "a", false) + clientFrame(0x1, "b");
        QTest::addRow("fragmented control frame") << clientFrame(0x9, "a", false);
        QTest::addRow("control payload over 125") << clientFrame(0x9, QByteArray(126, 'p'));
    }
    void protocolViolationsAreRefusedWith1002()
    {
        QFETCH(QByteArray, wire);
        WebSocketFrameDecoder decoder(1024);
        Collected got;
        decoder.feed(wire, got.sink());
        QCOMPARE(decoder.failure(), Failure::ProtocolError);
        QCOMPARE(decoder.failureCloseCode(), quint16(1002));
        QVERIFY(got.messages.isEmpty());
        // Failed stays failed: nothing more is consumed.
        decoder.feed(clientFrame(0x1, "later"), got.sink());
        QVERIFY(got.messages.isEmpty());
    }

    // The envelope bound (16 MiB) is enforced from the header, before the payload is buffered.
    void oversizeMessageIsRefusedFromItsHeader_1009()
    {
        WebSocketFrameDecoder decoder(1000);
        Collected got;
        const QByteArray wire = clientFrame(0x1, QByteArray(1001, 'a'));
        decoder.feed(QByteArrayView(wire).first(8), got.sink()); // header + mask only
        QCOMPARE(decoder.failure(), Failure::MessageTooBig);
        QCOMPARE(decoder.failureCloseCode(), quint16(1009));
        QCOMPARE(decoder.bufferedBytes(), 0);

        WebSocketFrameDecoder fragments(1000);
        fragments.feed(clientFrame(0x1, QByteArray(600, 'a'), false) + clientFrame(0x0, QByteArray(401, 'b')), got.sink());
        QCOMPARE(fragments.failure(), Failure::MessageTooBig);

        WebSocketFrameDecoder exact(1000);
        exact.feed(clientFrame(0x1, QByteArray(1000, 'a')), got.sink());
        QCOMPARE(exact.failure(), Failure::None);
        QCOMPARE(got.messages.size(), 1);
    }

    void textThatIsNotUtf8IsRefusedWith1007()
    {
        WebSocketFrameDecoder decoder(1024);
        Collected got;
        decoder.feed(clientFrame(0x1, "{\"a\":\"\xc3\x28\"}"), got.sink());
        QCOMPARE(decoder.failure(), Failure::InvalidUtf8);
        QCOMPARE(decoder.failureCloseCode(), quint16(1007));
        QVERIFY(got.messages.isEmpty());
        // Binary payloads are not text: no UTF-8 rule (the session closes them 1003 instead).
        WebSocketFrameDecoder binary(1024);
        binary.feed(clientFrame(0x2, "\xc3\x28"), got.sink());
        QCOMPARE(binary.failure(), Failure::None);
        QCOMPARE(got.messages.first().first, Opcode::Binary);
    }

    void randomBytesNeverCrashAndAlwaysEndFailedOrClean()
    {
        QRandomGenerator rng(52);
        for (int round = 0; round < 3000; ++round) {
            QByteArray wire = clientFrame(0x1, QByteArray(int(rng.bounded(300)), 'q'));
            for (int flips = int(rng.bounded(6)); flips > 0; --flips)
                wire[int(rng.bounded(wire.size()))] = char(rng.bounded(256));
            WebSocketFrameDecoder decoder(4096);
            Collected got;
            qsizetype at = 0;
            while (at < wire.size()) {
                const qsizetype n = qMin<qsizetype>(wire.size() - at, 1 + rng.bounded(40));
                decoder.feed(QByteArrayView(wire).sliced(at, n), got.sink());
                at += n;
            }
            QVERIFY(decoder.bufferedBytes() <= wire.size());
            QVERIFY(got.messages.size() <= 1);
        }
    }

    void serverFramesAreUnmaskedWithTheShortestLength()
    {
        QCOMPARE(WebSocketFrameEncoder::text("hi"), QByteArray("\x81\x02hi", 4));
        const QByteArray medium = WebSocketFrameEncoder::text(QByteArray(200, 'm'));
        QCOMPARE(medium.left(4), QByteArray("\x81\x7e\x00\xc8", 4));
        QCOMPARE(medium.size(), 204);
        const QByteArray large = WebSocketFrameEncoder::text(QByteArray(70000, 'l'));
        QCOMPARE(large.left(10), QByteArray("\x81\x7f\x00\x00\x00\x00\x00\x01\x11\x70", 10));
        QCOMPARE(large.size(), 70010);
    }

    // D-54: the relay's own Cloudly session is a client; every frame it sends is masked with a key of
    // its own (RFC 6455 §5.3), and the server side decodes exactly the bytes sent (CL-06 both ways).
    void clientFramesAreMaskedWithAFreshKeyAndDecodeOnTheServerSide_D54()
    {
        WebSocketMask mask;
        QSet<QByteArray> keys;
        for (int size : {0, 1, 3, 7, 8, 9, 125, 126, 65535, 65536, 70001}) {
            QByteArray body(size, Qt::Uninitialized);
            for (int i = 0; i < size; ++i)
                body[i] = char('A' + (i * 7) % 50);
            const unsigned char *key = mask.nextKey();
            const QByteArray keyBytes(reinterpret_cast<const char *>(key), 4);
            keys.insert(keyBytes);
            const QByteArray wire = WebSocketFrameEncoder::text(body, key);
            QVERIFY(quint8(wire[1]) & 0x80); // mask bit
            const qsizetype header = size < 126 ? 2 : size <= 0xFFFF ? 4 : 10;
            QCOMPARE(wire.size(), header + 4 + size);
            QCOMPARE(wire.mid(header, 4), keyBytes);
            if (size >= 8 && keyBytes != QByteArray(4, '\0'))
                QVERIFY(wire.mid(header + 4) != body); // the payload travels masked
            WebSocketFrameDecoder server(16 * 1024 * 1024, WebSocketFrameDecoder::Role::Server);
            Collected got;
            server.feed(wire, got.sink());
            QCOMPARE(server.failure(), Failure::None);
            QCOMPARE(got.messages.size(), 1);
            QCOMPARE(got.messages.first().second, body);
        }
        QVERIFY(keys.size() >= 10); // a fresh key per frame (11 frames; a repeat is 1 in 2^32)
        const QByteArray close = WebSocketFrameEncoder::close(1001, "relay stopping", mask.nextKey());
        WebSocketFrameDecoder server(1024, WebSocketFrameDecoder::Role::Server);
        Collected got;
        server.feed(close, got.sink());
        QCOMPARE(got.controls.size(), 1);
        QCOMPARE(got.controls.first().second, QByteArray("\x03\xe9relay stopping", 16));
    }

    // D-54: the client side reads unmasked server frames and fails a masked one with 1002
    // (RFC 6455 §5.1), as the server side fails an unmasked client frame.
    void clientRoleReadsUnmaskedFramesAndRefusesMaskedOnes_D54()
    {
        WebSocketFrameDecoder client(16 * 1024 * 1024, WebSocketFrameDecoder::Role::Client);
        Collected got;
        const QByteArray body(70000, 'z');
        QByteArray wire = WebSocketFrameEncoder::text("{\"a\":1}") + WebSocketFrameEncoder::text(body)
                          + WebSocketFrameEncoder::frame(0x9, "ping");
        for (qsizetype i = 0; i < wire.size(); i += 1000) // in pieces, as TLS records cut them
            client.feed(QByteArrayView(wire).sliced(i, qMin<qsizetype>(1000, wire.size() - i)), got.sink());
        QCOMPARE(client.failure(), Failure::None);
        QCOMPARE(got.messages.size(), 2);
        QCOMPARE(got.messages.at(0).second, QByteArray("{\"a\":1}"));
        QCOMPARE(got.messages.at(1).second, body);
        QCOMPARE(got.controls.size(), 1);
        QCOMPARE(got.controls.first().second, QByteArray("ping"));

        WebSocketFrameDecoder strict(1024, WebSocketFrameDecoder::Role::Client);
        Collected none;
        strict.feed(clientFrame(0x1, "masked"), none.sink());
        QCOMPARE(strict.failure(), Failure::ProtocolError);
        QCOMPARE(strict.failureCloseCode(), quint16(1002));
        QVERIFY(none.messages.isEmpty());
    }

    void maskingIsItsOwnInverseAtEveryLength()
    {
        const unsigned char key[4] = {0x01, 0x80, 0xfe, 0x37};
        for (int size = 0; size < 40; ++size) {
            QByteArray body(size, Qt::Uninitialized);
            for (int i = 0; i < size; ++i)
                body[i] = char(i * 13);
            QByteArray masked(size, Qt::Uninitialized);
            WebSocketMask::apply(masked.data(), body.constData(), size, key);
            for (int i = 0; i < size; ++i)
                QCOMPARE(quint8(masked[i]), quint8(quint8(body[i]) ^ key[i % 4]));
            WebSocketMask::apply(masked.data(), masked.constData(), size, key); // in place
            QCOMPARE(masked, body);
        }
    }

    // The re-registration wave's 4000 and the lane's 1002/1003/1009 closes carry code and reason;
    // a reason is cut to 123 bytes on a UTF-8 boundary (control frames hold 125).
    void closeFramesCarryCodeAndCutReason_OC()
    {
        const QByteArray wave = WebSocketFrameEncoder::close(4000, "cloudly session changed; register again");
        QCOMPARE(quint8(wave[0]), quint8(0x88));
        QCOMPARE(quint8(wave[2]), quint8(4000 >> 8));
        QCOMPARE(quint8(wave[3]), quint8(4000 & 0xFF));
        QCOMPARE(wave.mid(4), QByteArray("cloudly session changed; register again"));
        QByteArray longReason = QByteArray(122, 'r') + "\xe2\x82\xac"; // euro sign straddles byte 123
        const QByteArray cut = WebSocketFrameEncoder::close(1008, longReason);
        QCOMPARE(cut.size(), 2 + 2 + 122);
        QCOMPARE(WebSocketFrameEncoder::close(0, "ignored"), QByteArray("\x88\x00", 2));
        QVERIFY(WebSocketFrameDecoder::isValidReceivedCloseCode(4000));
        QVERIFY(!WebSocketFrameDecoder::isValidReceivedCloseCode(1005));
        QVERIFY(!WebSocketFrameDecoder::isValidReceivedCloseCode(1006));
        QVERIFY(!WebSocketFrameDecoder::isValidReceivedCloseCode(999));
    }
};

QTEST_GUILESS_MAIN(TstWebSocketFrames)
#include "tst_websocketframes.moc"
