#pragma once
// WebSocketFrameEncoder: RFC 6455 §5.2 frames, write side (FIN set, one frame per message). A server
// (the relay listener's node lane) sends them unmasked; a client (the relay's own Cloudly session)
// masks each with a fresh 4-byte key (mask != nullptr; WebSocketMaskKeys). Pure functions, no socket.
#include <QByteArray>
#include <QByteArrayView>

namespace coreflow {

class WebSocketFrameEncoder {
public:
    // One complete frame: header (2, 4 or 10 bytes; +4 for a mask key) followed by the payload, in a
    // single buffer so the transport encrypts it as one record where it fits.
    static QByteArray text(QByteArrayView utf8, const unsigned char *mask = nullptr) { return frame(0x1, utf8, mask); }
    static QByteArray pong(QByteArrayView payload, const unsigned char *mask = nullptr)
    {
        return frame(0xA, payload.first(qMin<qsizetype>(payload.size(), 125)), mask);
    }
    // A Close frame: 2-byte code and a reason cut to the 123 bytes a control frame allows (cut on a
    // UTF-8 boundary). code 0 sends an empty Close body.
    static QByteArray close(quint16 code, QByteArrayView reason, const unsigned char *mask = nullptr);
    // mask: 4 bytes, or nullptr for an unmasked (server) frame.
    static QByteArray frame(quint8 opcode, QByteArrayView payload, const unsigned char *mask = nullptr);
};

} // namespace coreflow
