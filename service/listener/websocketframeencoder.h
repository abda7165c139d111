#pragma once
// WebSocketFrameEncoder: server-to-client frames (RFC 6455 §5.2: unmasked, FIN set, one frame per
// message) for the relay listener's node lane. Pure functions, no socket.
#include <QByteArray>
#include <QByteArrayView>

namespace coreflow {

class WebSocketFrameEncoder {
public:
    // One complete frame: header (2, 4 or 10 bytes) followed by payload, in a single buffer so the
    // transport encrypts it as one record where it fits.
    static QByteArray text(QByteArrayView utf8) { return frame(0x1, utf8); }
    static QByteArray pong(QByteArrayView payload) { return frame(0xA, payload.first(qMin<qsizetype>(payload.size(), 125))); }
    // A Close frame: 2-byte code and a reason cut to the 123 bytes a control frame allows (cut on a
    // UTF-8 boundary). code 0 sends an empty Close body.
    static QByteArray close(quint16 code, QByteArrayView reason);
    static QByteArray frame(quint8 opcode, QByteArrayView payload);
};

} // namespace coreflow
