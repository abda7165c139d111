// tst_websocketframes: the listener's RFC 6455 framing (WebSocketFrameDecoder / WebSocketFrameEncoder),
// which carries every node lane (CL-02: the one TLS WebSocket at "/"; CL-06: bodies untouched, so
// text arrives as the exact UTF-8 bytes sent). docs/contract.md D-53.
#include "service/transport/websocketacceptkey.h"
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

// UTF-8 as RFC 3629 §4's syntax defines it, written for this test so the decoder's own validator is
// never its oracle. One row per alternative of the ABNF: the lead byte's range, the range its second
// byte must lie in, and how many further tail bytes (80..BF) follow. The narrowed second-byte ranges
// are what exclude overlong forms (E0, F0), the surrogates U+D800..U+DFFF (ED) and everything above
// U+10FFFF (F4); C0, C1 and F5..FF start no row at all.
struct Rfc3629Row {
    quint8 leadLow, leadHigh, secondLow, secondHigh;
    int furtherTails;
};
constexpr Rfc3629Row kRfc3629Rows[] = {
    {0xC2, 0xDF, 0x80, 0xBF, 0}, // UTF8-2
    {0xE0, 0xE0, 0xA0, 0xBF, 1}, // UTF8-3 = %xE0 %xA0-BF UTF8-tail
    {0xE1, 0xEC, 0x80, 0xBF, 1}, //         / %xE1-EC 2( UTF8-tail )
    {0xED, 0xED, 0x80, 0x9F, 1}, //         / %xED %x80-9F UTF8-tail
    {0xEE, 0xEF, 0x80, 0xBF, 1}, //         / %xEE-EF 2( UTF8-tail )
    {0xF0, 0xF0, 0x90, 0xBF, 2}, // UTF8-4 = %xF0 %x90-BF 2( UTF8-tail )
    {0xF1, 0xF3, 0x80, 0xBF, 2}, //         / %xF1-F3 3( UTF8-tail )
    {0xF4, 0xF4, 0x80, 0x8F, 2}, //         / %xF4 %x80-8F 2( UTF8-tail )
};

bool isUtf8PerRfc3629(QByteArrayView bytes)
{
    qsizetype i = 0;
    while (i < bytes.size()) {
        const quint8 lead = quint8(bytes[i]);
        if (lead <= 0x7F) { // UTF8-1
            ++i;
            continue;
        }
        const Rfc3629Row *row = nullptr;
        for (const Rfc3629Row &r : kRfc3629Rows)
            if (lead >= r.leadLow && lead <= r.leadHigh)
                row = &r;
        if (!row || bytes.size() - i < 2 + row->furtherTails)
            return false;
        const quint8 second = quint8(bytes[i + 1]);
        if (second < row->secondLow || second > row->secondHigh)
            return false;
        for (int t = 0; t < row->furtherTails; ++t) {
            const quint8 tail = quint8(bytes[i + 2 + t]);
            if (tail < 0x80 || tail > 0xBF)
                return false;
        }
        i += 2 + row->furtherTails;
    }
    return true;
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

    // Random corruptions of one frame, fed in random pieces. Each round must end failed (with one of
    // the named close codes) or clean (nothing held: every byte went into a delivered frame), or be
    // waiting for the rest of a frame or message; delivered text is valid UTF-8 (isUtf8PerRfc3629, the test's own reading). Feeding the same bytes at once must give the same outcome (cut points
    // never matter), and an uncorrupted round must deliver the payload sent.
    void randomBytesNeverCrashAndAlwaysEndFailedOrClean()
    {
        QRandomGenerator rng(52);
        int failed = 0, delivered = 0, waiting = 0;
        for (int round = 0; round < 3000; ++round) {
            QByteArray payload(int(rng.bounded(300)), Qt::Uninitialized);
            for (char &c : payload)
                c = char('a' + rng.bounded(26));
            QByteArray wire = clientFrame(0x1, payload);
            const int flips = int(rng.bounded(6));
            for (int f = flips; f > 0; --f)
                wire[int(rng.bounded(wire.size()))] = char(rng.bounded(256));
            WebSocketFrameDecoder pieces(4096);
            Collected got;
            qsizetype at = 0;
            while (at < wire.size()) {
                const qsizetype n = qMin<qsizetype>(wire.size() - at, 1 + rng.bounded(40));
                pieces.feed(QByteArrayView(wire).sliced(at, n), got.sink());
                at += n;
            }
            WebSocketFrameDecoder whole(4096);
            Collected once;
            whole.feed(wire, once.sink());
            QCOMPARE(pieces.failure(), whole.failure());
            QCOMPARE(got.messages, once.messages);
            QCOMPARE(got.controls, once.controls);
            QCOMPARE(pieces.bufferedBytes(), whole.bufferedBytes());

            for (const auto &[opcode, body] : got.messages)
                if (opcode == Opcode::Text)
                    QVERIFY2(isUtf8PerRfc3629(body), body.toHex().constData()); // the test's own RFC 3629 reading
            if (pieces.failure() != Failure::None) {
                ++failed;
                QVERIFY(QList<quint16>({1002, 1007, 1009}).contains(pieces.failureCloseCode()));
            } else if (pieces.bufferedBytes() == 0) {
                ++delivered; // clean: every byte went into a delivered frame
                QVERIFY(got.messages.size() + got.controls.size() >= 1);
            } else {
                ++waiting; // an incomplete frame or an unfinished fragmented message, held as sent
                QVERIFY(pieces.bufferedBytes() <= wire.size());
            }
            if (flips == 0) {
                QCOMPARE(pieces.failure(), Failure::None);
                QCOMPARE(got.messages.size(), 1);
                QCOMPARE(got.messages.first(), qMakePair(Opcode::Text, payload));
            }
        }
        QVERIFY(failed > 0 && delivered > 0 && waiting > 0); // the corpus reaches every outcome
    }

    // The test's RFC 3629 reading (isUtf8PerRfc3629) against the RFC's own examples (§7) and the edges
    // of each ABNF row, so a slip in the oracle cannot let a wrong decoder pass the cases below (issue 16).
    void rfc3629ReadingMatchesTheRfcsExamplesAndEdges_data()
    {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<bool>("valid");
        const auto row = [](const char *name, const char *bytes, int size, bool valid) {
            QTest::newRow(name) << QByteArray(bytes, size) << valid;
        };
        row("RFC 3629 7: A<NOT IDENTICAL TO><ALPHA>.", "\x41\xE2\x89\xA2\xCE\x91\x2E", 7, true);
        row("RFC 3629 7: Korean", "\xED\x95\x9C\xEA\xB5\xAD\xEC\x96\xB4", 9, true);
        row("RFC 3629 7: Japanese", "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E", 9, true);
        row("RFC 3629 7: BOM and U+233B4", "\xEF\xBB\xBF\xF0\xA3\x8E\xB4", 7, true);
        row("empty", "", 0, true);
        row("U+0000", "\x00", 1, true);
        row("U+007F", "\x7F", 1, true);
        row("U+0080", "\xC2\x80", 2, true);
        row("U+07FF", "\xDF\xBF", 2, true);
        row("U+0800", "\xE0\xA0\x80", 3, true);
        row("U+D7FF", "\xED\x9F\xBF", 3, true);
        row("U+E000", "\xEE\x80\x80", 3, true);
        row("U+FFFF", "\xEF\xBF\xBF", 3, true);
        row("U+10000", "\xF0\x90\x80\x80", 4, true);
        row("U+10FFFF", "\xF4\x8F\xBF\xBF", 4, true);
        row("overlong U+0000 (C0 80)", "\xC0\x80", 2, false);
        row("overlong U+007F (C1 BF)", "\xC1\xBF", 2, false);
        row("overlong U+07FF (E0 9F BF)", "\xE0\x9F\xBF", 3, false);
        row("overlong U+FFFF (F0 8F BF BF)", "\xF0\x8F\xBF\xBF", 4, false);
        row("surrogate U+D800", "\xED\xA0\x80", 3, false);
        row("surrogate U+DFFF", "\xED\xBF\xBF", 3, false);
        row("U+110000", "\xF4\x90\x80\x80", 4, false);
        row("F5 lead", "\xF5\x80\x80\x80", 4, false);
        row("FF", "\xFF", 1, false);
        row("lone tail", "\x80", 1, false);
        row("cut after the lead", "\xE2\x82", 2, false);
        row("tail that is not a tail", "\xE2\x28\xA1", 3, false);
    }
    void rfc3629ReadingMatchesTheRfcsExamplesAndEdges()
    {
        QFETCH(QByteArray, bytes);
        QFETCH(bool, valid);
        QCOMPARE(isUtf8PerRfc3629(bytes), valid);
    }

    // Text judged byte for byte as RFC 3629 says (RFC 6455 §8.1: invalid UTF-8 fails the connection,
    // 1007): random messages made of valid characters at the edges of each row and of near misses
    // (overlongs, surrogates, above U+10FFFF, stray bytes), sent whole or cut into two fragments at a
    // random byte, are delivered exactly when the test's RFC 3629 reading says they are UTF-8, and
    // otherwise fail 1007 with nothing delivered (CL-06: delivered text is the bytes sent; issue 16: an
    // oracle that is not the product's).
    void randomTextIsDeliveredExactlyWhenItIsUtf8_CL06()
    {
        const QList<QByteArray> pieces{
            "A", "{\"k\":", QByteArray("\x00", 1), "\x7F", "\xC2\x80", "\xDF\xBF", "\xE0\xA0\x80", "\xE2\x82\xAC",
            "\xED\x9F\xBF", "\xEE\x80\x80", "\xEF\xBF\xBF", "\xF0\x90\x80\x80", "\xF4\x8F\xBF\xBF",
            "\xC0\x80", "\xC1\xBF", "\xE0\x9F\xBF", "\xED\xA0\x80", "\xED\xBF\xBF", "\xF0\x8F\xBF\xBF",
            "\xF4\x90\x80\x80", "\xF5\x80\x80\x80", "\x80", "\xBF", "\xFF", "\xE2\x82", "\xF0\x90"};
        QRandomGenerator rng(3629);
        int valid = 0, invalid = 0;
        for (int round = 0; round < 4000; ++round) {
            QByteArray text;
            for (int n = 1 + int(rng.bounded(4)); n > 0; --n)
                text += pieces.at(int(rng.bounded(pieces.size())));
            const bool expected = isUtf8PerRfc3629(text);
            (expected ? valid : invalid) += 1;
            QCOMPARE(WebSocketFrameDecoder::isValidUtf8(text), expected);
            const qsizetype cut = rng.bounded(2) ? 1 + rng.bounded(text.size()) : text.size();
            QByteArray wire = cut < text.size()
                                  ? clientFrame(0x1, QByteArrayView(text).first(cut), false)
                                        + clientFrame(0x0, QByteArrayView(text).sliced(cut))
                                  : clientFrame(0x1, text);
            WebSocketFrameDecoder decoder(1024);
            Collected got;
            decoder.feed(wire, got.sink());
            if (expected) {
                QVERIFY2(decoder.failure() == Failure::None, text.toHex().constData());
                QCOMPARE(got.messages.size(), 1);
                QCOMPARE(got.messages.first(), qMakePair(Opcode::Text, text));
            } else {
                QVERIFY2(decoder.failure() == Failure::InvalidUtf8, text.toHex().constData());
                QCOMPARE(decoder.failureCloseCode(), quint16(1007));
                QVERIFY(got.messages.isEmpty());
            }
        }
        QVERIFY(valid > 100 && invalid > 100); // the corpus reaches both outcomes often
    }

    // RFC 6455 §5.2 asks a sender for the shortest length form; the decoder reads a longer form for what
    // it says (a 16- or 64-bit length holding a small value) and delivers the exact payload.
    void nonMinimalLengthEncodingsAreReadForTheirValue()
    {
        const QByteArray key("\x01\x02\x03\x04", 4);
        auto masked = [&](const QByteArray &payload) {
            QByteArray out;
            for (qsizetype i = 0; i < payload.size(); ++i)
                out.append(char(payload[i] ^ key[i % 4]));
            return out;
        };
        const QByteArray sixteen = QByteArray("\x81\xfe\x00\x05", 4) + key + masked("hello");
        const QByteArray sixtyFour = QByteArray("\x81\xff\x00\x00\x00\x00\x00\x00\x00\x03", 10) + key + masked("abc");
        WebSocketFrameDecoder decoder(1024);
        Collected got;
        decoder.feed(sixteen + sixtyFour, got.sink());
        QCOMPARE(decoder.failure(), Failure::None);
        QCOMPARE(got.messages.size(), 2);
        QCOMPARE(got.messages.at(0).second, QByteArray("hello"));
        QCOMPARE(got.messages.at(1).second, QByteArray("abc"));
        QCOMPARE(decoder.bufferedBytes(), 0);
    }

    // A 64-bit length with its most significant bit set is not a length (RFC 6455 §5.2): 1002 at once,
    // from the header alone, and nothing buffered.
    void sixtyFourBitLengthWithTheTopBitSetFails1002()
    {
        WebSocketFrameDecoder decoder(16 * 1024 * 1024);
        Collected got;
        decoder.feed(QByteArray("\x81\xff\x80\x00\x00\x00\x00\x00\x00\x05\x01\x02\x03\x04", 14), got.sink());
        QCOMPARE(decoder.failure(), Failure::ProtocolError);
        QCOMPARE(decoder.failureCloseCode(), quint16(1002));
        QCOMPARE(decoder.bufferedBytes(), 0);
        QVERIFY(got.messages.isEmpty());
    }

    // UTF-8 is judged on the whole message: a character cut between fragments is valid; a message that
    // ends inside a character is not (1007).
    void utf8SplitAcrossFragmentsIsJudgedOnTheWholeMessage()
    {
        WebSocketFrameDecoder decoder(1024);
        Collected got;
        decoder.feed(clientFrame(0x1, "price \xe2", false) + clientFrame(0x0, "\x82", false) + clientFrame(0x0, "\xac!"),
                     got.sink());
        QCOMPARE(decoder.failure(), Failure::None);
        QCOMPARE(got.messages.size(), 1);
        QCOMPARE(got.messages.first().second, QByteArray("price \xe2\x82\xac!"));

        WebSocketFrameDecoder cut(1024);
        Collected none;
        cut.feed(clientFrame(0x1, "price \xe2", false) + clientFrame(0x0, "\x82"), none.sink());
        QCOMPARE(cut.failure(), Failure::InvalidUtf8);
        QCOMPARE(cut.failureCloseCode(), quint16(1007));
        QVERIFY(none.messages.isEmpty());
    }

    // The decoder hands a Close payload over as it came, 1 byte included; judging it (1002 for a 1-byte
    // payload or an invalid code) is the session's, checked end to end in tst_listenertransport.
    void closePayloadIsHandedOverAsItCame()
    {
        WebSocketFrameDecoder decoder(1024);
        Collected got;
        decoder.feed(clientFrame(0x8, "\x03") + clientFrame(0x8, QByteArray("\x03\xe7", 2)), got.sink());
        QCOMPARE(decoder.failure(), Failure::None);
        QCOMPARE(got.controls.size(), 2);
        QCOMPARE(got.controls.at(0), qMakePair(Opcode::Close, QByteArray("\x03")));
        QCOMPARE(got.controls.at(1), qMakePair(Opcode::Close, QByteArray("\x03\xe7", 2)));
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

    // D-137 (issue 19, contract §13.4): the relay's Cloudly session (client role) receives closure chunks,
    // 262168-byte binary messages, without a fresh allocation per message: once it retains buffers the
    // partial frame grows to its whole size once and a payload's buffer carries the next payload when
    // the receiver kept no copy. A receiver that keeps its copy never sees it written over, and a
    // listener-role decoder still holds nothing between messages (D-53).
    void cloudlySessionReusesItsReceiveBuffersForChunks_D137()
    {
        const auto chunk = [](char fill, qsizetype size = 262168) {
            QByteArray bytes(size, fill);
            bytes[0] = char(fill + 1);
            return bytes;
        };
        const QList<QByteArray> sent{chunk('a'), chunk('b'), chunk('c', 1000), chunk('d')};
        QByteArray wire;
        for (const QByteArray &payload : sent)
            wire += WebSocketFrameEncoder::frame(0x2, payload);
        WebSocketFrameDecoder client(16 * 1024 * 1024, WebSocketFrameDecoder::Role::Client);
        client.setRetainBuffers(true);
        QList<quintptr> buffers; // the payloads' addresses
        QList<QByteArray> kept;
        bool keep = false;
        int received = 0;
        int equal = 0;
        WebSocketFrameDecoder::Sink sink;
        sink.message = [&](Opcode opcode, QByteArray payload) {
            QCOMPARE(opcode, Opcode::Binary);
            buffers.append(quintptr(payload.constData()));
            equal += payload == sent.at(received++ % sent.size()) ? 1 : 0;
            if (keep)
                kept.append(payload);
        };
        const auto feedInPieces = [&](WebSocketFrameDecoder &decoder, const QByteArray &bytes, qsizetype piece) {
            for (qsizetype i = 0; i < bytes.size(); i += piece) // as TLS records cut them
                decoder.feed(QByteArrayView(bytes).sliced(i, qMin(piece, bytes.size() - i)), sink);
        };
        feedInPieces(client, wire, 16384);
        QCOMPARE(client.failure(), Failure::None);
        QCOMPARE(received, 4);
        QCOMPARE(equal, 4);
        QCOMPARE(buffers.at(1), buffers.at(0)); // the first payload's buffer carried the others
        QCOMPARE(buffers.at(2), buffers.at(0));
        QCOMPARE(buffers.at(3), buffers.at(0));
        QVERIFY2(client.allocatedBytes() >= 2 * 262168, qPrintable(QString::number(client.allocatedBytes())));
        QVERIFY(client.allocatedBytes() <= 2 * WebSocketFrameDecoder::kRetainedBufferBytes);
        QCOMPARE(client.bufferedBytes(), 0);

        keep = true; // a receiver that keeps its messages: each in a buffer of its own
        feedInPieces(client, wire, 7777);
        QCOMPARE(received, 8);
        QCOMPARE(equal, 8);
        QCOMPARE(kept, sent);
        QVERIFY(buffers.at(5) != buffers.at(4));
        kept.clear();
        keep = false;
        client.stop();
        QCOMPARE(client.allocatedBytes(), 0); // stopping gives everything back

        // The listener's side (not retaining): nothing held between messages.
        QByteArray masked;
        for (const QByteArray &payload : sent)
            masked += clientFrame(0x2, payload);
        WebSocketFrameDecoder server(16 * 1024 * 1024, WebSocketFrameDecoder::Role::Server);
        received = 0;
        equal = 0;
        feedInPieces(server, masked, 16384);
        QCOMPARE(received, 4);
        QCOMPARE(equal, 4);
        QCOMPARE(server.allocatedBytes(), 0);
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

    // Sec-WebSocket-Accept (RFC 6455 §1.3/§4.2.2) against the RFC's own published example.
    void acceptKeyMatchesRfc6455sExample()
    {
        QCOMPARE(webSocketAcceptKey("dGhlIHNhbXBsZSBub25jZQ=="), QByteArray("s3pPLMBiTxaQ9kYGzzhZRbK+xOo="));
    }
};

QTEST_GUILESS_MAIN(TstWebSocketFrames)
#include "tst_websocketframes.moc"
