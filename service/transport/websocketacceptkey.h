#pragma once
// The Sec-WebSocket-Accept value for a client's Sec-WebSocket-Key (RFC 6455 §4.2.2:
// base64(SHA-1(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))). Used by both handshake roles: the
// listener writes it into its 101 answer, the Cloudly session's client handshake checks it (contract §3).
#include <QByteArray>

namespace coreflow {

QByteArray webSocketAcceptKey(const QByteArray &clientKey);

} // namespace coreflow
