#pragma once
// The shared body of fuzz_websocket_server and fuzz_websocket_client: WebSocketFrameDecoder in one role
// over arbitrary bytes (docs/contract.md §3.0). Byte 0 picks the message bound, byte 1 the feeding
// (0: at once, n: chunks of n bytes); the rest is the stream. Checks what the decoder's header
// promises, on every input:
//  - the stream fed in chunks gives exactly what it gives fed at once (messages, controls, failure);
//  - a text message is UTF-8, a message is at most the bound, a control payload at most 125 bytes;
//  - once failed it stays failed, delivers nothing more and holds nothing;
//  - a Close payload gets an answer (WebSocketCloseFrame) the RFC allows: 0, 1002, 1007 or the echo.
#include "service/transport/websocketframedecoder.h"

#include <cstddef>
#include <cstdint>

namespace coreflow::fuzz {

int runWebSocketDecoder(const std::uint8_t *data, std::size_t size, WebSocketFrameDecoder::Role role);

} // namespace coreflow::fuzz
