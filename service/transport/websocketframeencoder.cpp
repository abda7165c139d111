#include "service/transport/websocketframeencoder.h"

#include "service/transport/websocketmask.h"

#include <cstring>

namespace coreflow {

QByteArray WebSocketFrameEncoder::frame(quint8 opcode, QByteArrayView payload, const unsigned char *mask)
{
    const qsizetype size = payload.size();
    const qsizetype lengthHeader = size < 126 ? 2 : size <= 0xFFFF ? 4 : 10;
    const qsizetype header = lengthHeader + (mask ? 4 : 0);
    QByteArray out(header + size, Qt::Uninitialized);
    auto *p = reinterpret_cast<unsigned char *>(out.data());
    p[0] = 0x80 | (opcode & 0x0F);
    if (size < 126) {
        p[1] = quint8(size);
    } else if (size <= 0xFFFF) {
        p[1] = 126;
        p[2] = quint8(size >> 8);
        p[3] = quint8(size);
    } else {
        p[1] = 127;
        for (int i = 0; i < 8; ++i)
            p[2 + i] = quint8(quint64(size) >> (8 * (7 - i)));
    }
    if (mask) {
        p[1] |= 0x80;
        std::memcpy(p + lengthHeader, mask, 4);
        WebSocketMask::apply(out.data() + header, payload.data(), size, mask);
        return out;
    }
    if (size)
        std::memcpy(p + header, payload.data(), size_t(size));
    return out;
}

QByteArray WebSocketFrameEncoder::close(quint16 code, QByteArrayView reason, const unsigned char *mask)
{
    if (code == 0)
        return frame(0x8, {}, mask);
    qsizetype cut = qMin<qsizetype>(reason.size(), 123);
    // Never split a UTF-8 sequence: step back over continuation bytes.
    while (cut > 0 && cut < reason.size() && (quint8(reason[cut]) & 0xC0) == 0x80)
        --cut;
    QByteArray body(2 + cut, Qt::Uninitialized);
    body[0] = char(code >> 8);
    body[1] = char(code & 0xFF);
    if (cut)
        memcpy(body.data() + 2, reason.data(), size_t(cut));
    return frame(0x8, body, mask);
}

} // namespace coreflow
