// fuzz_websocket_differential: WebSocketFrameDecoder (service/transport) against an independent reading
// of RFC 6455 (fuzz/referencewebsocketdecoder.h) on the same bytes. Both must agree on every message
// and control frame (opcode and unmasked payload, in order) and on how the stream ends: open with the
// same number of held bytes, closed by a Close frame, or failed for the same reason
// (docs/contract.md §3.0: 1002 protocol error, 1007 text not UTF-8, 1009 above the message bound).
//
// Input: byte 0 selects the role (bit 0: server reads masked client frames) and the message bound
// (bits 1..3), byte 1 how the relay's decoder is fed (0: all at once, n: chunks of n bytes); the
// rest is the stream.
#include "fuzz/referencewebsocketdecoder.h"
#include "service/transport/websocketframedecoder.h"

#include <cstdio>
#include <cstdlib>

using namespace coreflow;
using coreflow::fuzz::ReferenceWebSocketDecoder;
using coreflow::fuzz::ReferenceWebSocketEvent;
using End = coreflow::fuzz::ReferenceWebSocketVerdict::End;

namespace {
constexpr qsizetype kBounds[8] = {0, 1, 16, 125, 126, 1024, 65535, 65536};

[[noreturn]] void disagree(const char *what)
{
    std::fprintf(stderr, "fuzz_websocket_differential: the decoders disagree: %s\n", what);
    std::abort();
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    const bool server = data[0] & 1;
    const qsizetype bound = kBounds[(data[0] >> 1) & 7];
    const size_t chunk = data[1];
    data += 2;
    size -= 2;

    const auto expected = ReferenceWebSocketDecoder::decode(data, size, server, quint64(bound));

    WebSocketFrameDecoder decoder(bound, server ? WebSocketFrameDecoder::Role::Server : WebSocketFrameDecoder::Role::Client);
    std::vector<ReferenceWebSocketEvent> seen;
    bool closed = false;
    WebSocketFrameDecoder::Sink sink;
    sink.message = [&](WebSocketFrameDecoder::Opcode o, QByteArray p) {
        seen.push_back({quint8(o), p.toStdString()});
    };
    sink.control = [&](WebSocketFrameDecoder::Opcode o, QByteArray p) {
        seen.push_back({quint8(o), p.toStdString()});
        if (o == WebSocketFrameDecoder::Opcode::Close) {
            closed = true;
            decoder.stop(); // as the session does on a Close
        }
    };
    const auto *bytes = reinterpret_cast<const char *>(data);
    if (chunk == 0) {
        decoder.feed(QByteArrayView(bytes, qsizetype(size)), sink);
    } else {
        for (size_t at = 0; at < size; at += chunk)
            decoder.feed(QByteArrayView(bytes + at, qsizetype(std::min(chunk, size - at))), sink);
    }

    if (seen != expected.events)
        disagree("messages or control frames");
    End end = End::Open;
    switch (decoder.failure()) {
    case WebSocketFrameDecoder::Failure::None: end = closed ? End::Closed : End::Open; break;
    case WebSocketFrameDecoder::Failure::ProtocolError: end = End::ProtocolError; break;
    case WebSocketFrameDecoder::Failure::MessageTooBig: end = End::MessageTooBig; break;
    case WebSocketFrameDecoder::Failure::InvalidUtf8: end = End::InvalidUtf8; break;
    }
    if (end != expected.end)
        disagree("how the stream ended");
    if (size_t(decoder.bufferedBytes()) != (end == End::Open ? expected.heldBytes : 0))
        disagree("bytes held for an unfinished frame or message (none once closed or failed)");
    const quint16 code = decoder.failureCloseCode();
    const quint16 wanted = end == End::ProtocolError ? 1002 : end == End::InvalidUtf8 ? 1007 : end == End::MessageTooBig ? 1009 : 0;
    if (code != wanted)
        disagree("close code");
    return 0;
}
