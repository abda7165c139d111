#include "fuzz/referencewebsocketdecoder.h"

namespace coreflow::fuzz {

bool ReferenceWebSocketDecoder::isUtf8(const std::string &bytes)
{
    std::size_t i = 0;
    const std::size_t n = bytes.size();
    auto cont = [&](std::size_t at) { return at < n && (std::uint8_t(bytes[at]) & 0xC0) == 0x80; };
    while (i < n) {
        const std::uint8_t c = std::uint8_t(bytes[i]);
        if (c < 0x80) {
            ++i;
            continue;
        }
        std::uint32_t cp = 0;
        std::size_t len = 0;
        if (c >= 0xC2 && c <= 0xDF) {
            len = 2;
            cp = c & 0x1F;
        } else if (c >= 0xE0 && c <= 0xEF) {
            len = 3;
            cp = c & 0x0F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            len = 4;
            cp = c & 0x07;
        } else {
            return false; // 0x80..0xC1 (continuation or overlong lead) or 0xF5..0xFF
        }
        for (std::size_t k = 1; k < len; ++k) {
            if (!cont(i + k))
                return false;
            cp = (cp << 6) | (std::uint8_t(bytes[i + k]) & 0x3F);
        }
        if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return false;
        i += len;
    }
    return true;
}

ReferenceWebSocketVerdict ReferenceWebSocketDecoder::decode(const std::uint8_t *data, std::size_t size,
                                                            bool readsClientFrames, std::uint64_t maxMessageBytes)
{
    using End = ReferenceWebSocketVerdict::End;
    ReferenceWebSocketVerdict v;
    std::size_t at = 0;
    bool fragmented = false;         // inside a message whose first frame had FIN clear
    std::uint8_t fragmentedOpcode = 0;
    std::string fragments;
    auto open = [&](std::size_t frameStart) {
        v.end = End::Open;
        v.heldBytes = (size - frameStart) + fragments.size();
        return v;
    };
    for (;;) {
        const std::size_t frameStart = at;
        if (size - at < 2)
            return open(frameStart);
        const std::uint8_t first = data[at], second = data[at + 1];
        const bool fin = first >> 7;
        const std::uint8_t rsv = (first >> 4) & 0x7;
        const std::uint8_t opcode = first & 0xF;
        const bool hasMask = second >> 7;
        const bool control = opcode >= 0x8;
        const bool known = opcode == 0x0 || opcode == 0x1 || opcode == 0x2 || opcode == 0x8 || opcode == 0x9 || opcode == 0xA;
        // RFC 6455 §5.2 (RSV without an extension, unknown opcodes) and §5.1 (masking by role).
        if (rsv != 0 || !known || hasMask != readsClientFrames) {
            v.end = End::ProtocolError;
            return v;
        }
        at += 2;
        std::uint64_t length = second & 0x7F;
        std::size_t extended = length == 126 ? 2 : length == 127 ? 8 : 0;
        if (size - at < extended)
            return open(frameStart);
        if (extended) {
            length = 0;
            for (std::size_t k = 0; k < extended; ++k)
                length = length * 256 + data[at + k];
            at += extended;
            if (extended == 8 && length >= (std::uint64_t(1) << 63)) { // the most significant bit MUST be 0
                v.end = End::ProtocolError;
                return v;
            }
        }
        if (control) {
            if (!fin || length > 125) { // §5.5: control frames are short and never fragmented
                v.end = End::ProtocolError;
                return v;
            }
        } else if (opcode == 0x0) {
            if (!fragmented) {
                v.end = End::ProtocolError;
                return v;
            }
            if (fragments.size() + length > maxMessageBytes) {
                v.end = End::MessageTooBig;
                return v;
            }
        } else {
            if (fragmented) { // §5.4: no new data message inside a fragmented one
                v.end = End::ProtocolError;
                return v;
            }
            if (length > maxMessageBytes) {
                v.end = End::MessageTooBig;
                return v;
            }
        }
        std::uint8_t key[4] = {0, 0, 0, 0};
        if (hasMask) {
            if (size - at < 4)
                return open(frameStart);
            for (int k = 0; k < 4; ++k)
                key[k] = data[at + k];
            at += 4;
        }
        if (size - at < length)
            return open(frameStart);
        std::string payload(std::size_t(length), '\0');
        for (std::size_t k = 0; k < length; ++k)
            payload[k] = char(data[at + k] ^ key[k % 4]);
        at += std::size_t(length);

        if (control) {
            v.events.push_back({opcode, payload});
            if (opcode == 0x8) {
                v.end = End::Closed;
                return v;
            }
            continue;
        }
        std::uint8_t messageOpcode = opcode;
        std::string message;
        if (opcode == 0x0) {
            fragments += payload;
            if (!fin)
                continue;
            messageOpcode = fragmentedOpcode;
            message.swap(fragments);
            fragmented = false;
        } else if (!fin) {
            fragmented = true;
            fragmentedOpcode = opcode;
            fragments = payload;
            continue;
        } else {
            message.swap(payload);
        }
        if (messageOpcode == 0x1 && !isUtf8(message)) {
            v.end = End::InvalidUtf8;
            return v;
        }
        v.events.push_back({messageOpcode, message});
    }
}

} // namespace coreflow::fuzz
