#include "websocketframeencoder.h"

namespace coreflow {

QByteArray WebSocketFrameEncoder::frame(quint8 opcode, QByteArrayView payload)
{
    const qsizetype size = payload.size();
    const qsizetype header = size < 126 ? 2 : size <= 0xFFFF ? 4 : 10;
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
    if (size)
        memcpy(p + header, payload.data(), size_t(size));
    return out;
}

QByteArray WebSocketFrameEncoder::close(quint16 code, QByteArrayView reason)
{
    if (code == 0)
        return frame(0x8, {});
    qsizetype cut = qMin<qsizetype>(reason.size(), 123);
    // Never split a UTF-8 sequence: step back over continuation bytes.
    while (cut > 0 && cut < reason.size() && (quint8(reason[cut]) & 0xC0) == 0x80)
        --cut;
    QByteArray body(2 + cut, Qt::Uninitialized);
    body[0] = char(code >> 8);
    body[1] = char(code & 0xFF);
    if (cut)
        memcpy(body.data() + 2, reason.data(), size_t(cut));
    return frame(0x8, body);
}

} // namespace coreflow
