#include "fuzz/websocketfuzzdriver.h"

#include "service/transport/websocketcloseframe.h"

#include <QByteArray>
#include <QList>
#include <QPair>

#include <cstdio>
#include <cstdlib>

namespace coreflow::fuzz {

namespace {
using Opcode = WebSocketFrameDecoder::Opcode;
constexpr qsizetype kBounds[4] = {0, 125, 4096, 65536};

[[noreturn]] void broken(const char *what)
{
    std::fprintf(stderr, "websocket decoder: %s\n", what);
    std::abort();
}

struct Run {
    QList<QPair<Opcode, QByteArray>> events;
    WebSocketFrameDecoder::Failure failure = WebSocketFrameDecoder::Failure::None;
    qsizetype buffered = 0;
};

Run decode(QByteArrayView stream, size_t chunk, qsizetype bound, WebSocketFrameDecoder::Role role)
{
    Run run;
    WebSocketFrameDecoder decoder(bound, role);
    WebSocketFrameDecoder::Sink sink;
    sink.message = [&](Opcode o, QByteArray p) {
        if (o != Opcode::Text && o != Opcode::Binary)
            broken("a message with a control or continuation opcode");
        if (p.size() > bound)
            broken("a message above the bound");
        if (o == Opcode::Text && !QByteArrayView(p).isValidUtf8())
            broken("a text message that is not UTF-8");
        run.events.append({o, p});
    };
    sink.control = [&](Opcode o, QByteArray p) {
        if (o != Opcode::Close && o != Opcode::Ping && o != Opcode::Pong)
            broken("a control frame with a data opcode");
        if (p.size() > 125)
            broken("a control payload above 125 bytes");
        run.events.append({o, p});
        if (o == Opcode::Close) {
            const WebSocketCloseVerdict v = WebSocketCloseFrame::read(p);
            if (v.answerCode != 0 && v.answerCode != 1002 && v.answerCode != 1007 && v.answerCode != v.receivedCode)
                broken("a Close answered with a code that is neither an echo nor 1002/1007");
            if (v.answerCode == v.receivedCode && !WebSocketFrameDecoder::isValidReceivedCloseCode(v.answerCode))
                broken("a Close echoed with a code a peer may not send");
            decoder.stop();
        }
    };
    if (chunk == 0) {
        decoder.feed(stream, sink);
    } else {
        for (qsizetype at = 0; at < stream.size(); at += qsizetype(chunk))
            decoder.feed(stream.sliced(at, std::min<qsizetype>(qsizetype(chunk), stream.size() - at)), sink);
    }
    run.failure = decoder.failure();
    run.buffered = decoder.bufferedBytes();
    if (run.failure != WebSocketFrameDecoder::Failure::None) {
        if (run.buffered != 0)
            broken("a failed decoder still holds bytes");
        const qsizetype before = run.events.size();
        decoder.feed(QByteArrayView("\x81\x80\0\0\0\0\x82\0", 8), sink);
        if (run.events.size() != before || decoder.failure() != run.failure)
            broken("a failed decoder read more");
    }
    return run;
}
} // namespace

int runWebSocketDecoder(const std::uint8_t *data, std::size_t size, WebSocketFrameDecoder::Role role)
{
    if (size < 2)
        return 0;
    const qsizetype bound = kBounds[data[0] & 3];
    const size_t chunk = data[1];
    const QByteArrayView stream(reinterpret_cast<const char *>(data + 2), qsizetype(size - 2));
    const Run whole = decode(stream, 0, bound, role);
    if (chunk != 0) {
        const Run pieces = decode(stream, chunk, bound, role);
        if (pieces.events != whole.events || pieces.failure != whole.failure || pieces.buffered != whole.buffered)
            broken("fed in chunks it decodes differently from fed at once");
    }
    return 0;
}

} // namespace coreflow::fuzz
