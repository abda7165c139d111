#pragma once
// ReferenceWebSocketDecoder: a second, deliberately small reading of RFC 6455 §5 for the differential
// fuzz target (fuzz_websocket_differential). Written from the RFC and docs/contract.md §3.0 (the
// relay's message bound), not from service/transport/websocketframedecoder.cpp: it uses no Qt, no
// simdjson and its own UTF-8 check (RFC 3629 §4), and reads the whole input in one pass.
//
// The verdict it gives for one byte stream: the messages and control frames in order (payloads
// unmasked, fragments joined), then how the stream ended: still open (possibly inside a frame or a
// fragmented message), or failed (protocol error, message above the bound, text not UTF-8). Like a
// session, it stops reading after the first Close frame.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace coreflow::fuzz {

struct ReferenceWebSocketEvent {
    std::uint8_t opcode = 0;   // 0x1 text, 0x2 binary (whole messages); 0x8, 0x9, 0xA control frames
    std::string payload;
    bool operator==(const ReferenceWebSocketEvent &) const = default;
};

struct ReferenceWebSocketVerdict {
    enum class End { Open, ProtocolError, MessageTooBig, InvalidUtf8, Closed };
    std::vector<ReferenceWebSocketEvent> events;
    End end = End::Open;
    // Bytes of an unfinished frame at the end plus bytes of an unfinished fragmented message's
    // payload (End::Open only).
    std::size_t heldBytes = 0;
};

class ReferenceWebSocketDecoder {
public:
    // readsClientFrames: the server's side (every frame must be masked); otherwise the client's
    // (no frame may be). maxMessageBytes bounds a message's payload, fragments together.
    static ReferenceWebSocketVerdict decode(const std::uint8_t *data, std::size_t size, bool readsClientFrames,
                                            std::uint64_t maxMessageBytes);
    // RFC 3629 well-formed UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF).
    static bool isUtf8(const std::string &bytes);
};

} // namespace coreflow::fuzz
