#include "service/transport/websocketframedecoder.h"

#include "service/transport/websocketmask.h"

#include <simdjson.h>

#include <cstring>
#include <limits>
#include <utility>

namespace coreflow {

namespace {
constexpr qsizetype kMaxControlPayload = 125;

bool isControl(quint8 opcode) { return opcode & 0x8; }
bool isKnown(quint8 opcode) { return opcode <= 0x2 || (opcode >= 0x8 && opcode <= 0xA); }
} // namespace

quint16 WebSocketFrameDecoder::failureCloseCode() const
{
    switch (m_failure) {
    case Failure::None: return 0;
    case Failure::ProtocolError: return 1002;
    case Failure::MessageTooBig: return 1009;
    case Failure::InvalidUtf8: return 1007;
    }
    return 1002;
}

bool WebSocketFrameDecoder::isValidReceivedCloseCode(quint16 code)
{
    if (code >= 3000 && code <= 4999)
        return true;
    switch (code) {
    case 1000: case 1001: case 1002: case 1003: case 1007: case 1008: case 1009: case 1010: case 1011:
        return true;
    default:
        return false;
    }
}

bool WebSocketFrameDecoder::isValidUtf8(QByteArrayView bytes)
{
    return simdjson::validate_utf8(bytes.data(), size_t(bytes.size()));
}

void WebSocketFrameDecoder::stop()
{
    m_stopped = true;
    if (!m_feeding)
        release();
}

void WebSocketFrameDecoder::setRetainBuffers(bool retain)
{
    m_retain = retain;
    if (!retain)
        m_spare = QByteArray();
}

void WebSocketFrameDecoder::release()
{
    m_partial = QByteArray();
    m_message = QByteArray();
    m_spare = QByteArray();
    m_inMessage = false;
}

void WebSocketFrameDecoder::feed(QByteArrayView bytes, const Sink &sink)
{
    if (m_failure != Failure::None || m_stopped || bytes.isEmpty())
        return;
    m_feeding = true;
    if (m_retain && !m_partial.isEmpty())
        bytes = completeRetainedFrame(bytes, sink);
    if (m_failure != Failure::None || m_stopped) {
        // ended inside the frame completed above
    } else if (!m_partial.isEmpty()) {
        // Complete the partial frame first, taking only as much as it can use per round.
        m_partial.append(bytes.data(), bytes.size());
        qsizetype offset = 0;
        while (m_failure == Failure::None && !m_stopped) {
            const qsizetype used = decodeOne(m_partial.constData() + offset, m_partial.size() - offset, sink);
            if (used == 0)
                break;
            offset += used;
        }
        if (m_failure == Failure::None && !m_stopped) {
            m_partial.remove(0, offset);
            if (m_partial.isEmpty() && (!m_retain || m_partial.capacity() > kRetainedBufferBytes))
                m_partial = QByteArray(); // give the allocation back between frames
        }
    } else {
        qsizetype offset = 0;
        while (offset < bytes.size() && m_failure == Failure::None && !m_stopped) {
            const qsizetype used = decodeOne(bytes.data() + offset, bytes.size() - offset, sink);
            if (used == 0)
                break;
            offset += used;
        }
        if (m_failure == Failure::None && !m_stopped && offset < bytes.size()) {
            if (m_retain)
                m_partial.append(bytes.data() + offset, bytes.size() - offset); // into the retained buffer
            else
                m_partial = QByteArray(bytes.data() + offset, bytes.size() - offset);
        }
    }
    m_feeding = false;
    if (m_failure != Failure::None || m_stopped)
        release();
}

QByteArrayView WebSocketFrameDecoder::completeRetainedFrame(QByteArrayView bytes, const Sink &sink)
{
    // The header first, a byte at a time (at most 10), so nothing of the next frame is taken.
    while (frameBytes(m_partial.constData(), m_partial.size()) < 0 && !bytes.isEmpty()) {
        m_partial.append(bytes[0]);
        bytes = bytes.sliced(1);
    }
    const qsizetype whole = frameBytes(m_partial.constData(), m_partial.size());
    if (whole < 0 || whole > kRetainedBufferBytes)
        return bytes; // header still incomplete, or a frame larger than what is retained: feed() goes on as always
    if (m_partial.capacity() < whole)
        m_partial.reserve(whole); // one allocation of exactly the frame's size
    const qsizetype take = qMin(whole - m_partial.size(), bytes.size());
    m_partial.append(bytes.data(), take);
    bytes = bytes.sliced(take);
    if (m_partial.size() < whole)
        return bytes;
    decodeOne(m_partial.constData(), m_partial.size(), sink); // all of it, or a failure
    if (m_failure == Failure::None && !m_stopped)
        m_partial.resize(0); // the allocation stays for the next frame
    return bytes;
}

qsizetype WebSocketFrameDecoder::frameBytes(const char *data, qsizetype size)
{
    if (size < 2)
        return -1;
    const auto b1 = quint8(data[1]);
    const qsizetype maskBytes = (b1 & 0x80) ? 4 : 0;
    const quint64 length = b1 & 0x7F;
    if (length < 126)
        return 2 + maskBytes + qsizetype(length);
    if (length == 126)
        return size < 4 ? -1 : 4 + maskBytes + ((qsizetype(quint8(data[2])) << 8) | quint8(data[3]));
    if (size < 10)
        return -1;
    quint64 wide = 0;
    for (int i = 0; i < 8; ++i)
        wide = (wide << 8) | quint8(data[2 + i]);
    // Only whether it could be retained matters above that; decodeOne() judges the frame itself.
    return wide > quint64(kRetainedBufferBytes) ? std::numeric_limits<qsizetype>::max() : qsizetype(10 + maskBytes + qsizetype(wide));
}

qsizetype WebSocketFrameDecoder::decodeOne(const char *data, qsizetype size, const Sink &sink)
{
    if (size < 2)
        return 0;
    const auto b0 = quint8(data[0]);
    const auto b1 = quint8(data[1]);
    const bool fin = b0 & 0x80;
    const quint8 opcode = b0 & 0x0F;
    // A client masks every frame, a server none (RFC 6455 §5.1): the other kind fails the connection.
    const bool masked = b1 & 0x80;
    if ((b0 & 0x70) != 0 || !isKnown(opcode) || masked != (m_role == Role::Server)) {
        fail(Failure::ProtocolError);
        return 0;
    }
    quint64 length = b1 & 0x7F;
    qsizetype header = 2;
    if (length == 126) {
        if (size < 4)
            return 0;
        length = (quint64(quint8(data[2])) << 8) | quint8(data[3]);
        header = 4;
    } else if (length == 127) {
        if (size < 10)
            return 0;
        length = 0;
        for (int i = 0; i < 8; ++i)
            length = (length << 8) | quint8(data[2 + i]);
        if (length >> 63) {
            fail(Failure::ProtocolError);
            return 0;
        }
        header = 10;
    }
    if (isControl(opcode)) {
        if (!fin || length > quint64(kMaxControlPayload)) {
            fail(Failure::ProtocolError);
            return 0;
        }
    } else if (opcode == quint8(Opcode::Continuation)) {
        if (!m_inMessage) {
            fail(Failure::ProtocolError);
            return 0;
        }
        if (length > quint64(m_maxMessageBytes - m_message.size())) {
            fail(Failure::MessageTooBig);
            return 0;
        }
    } else {
        if (m_inMessage) {
            fail(Failure::ProtocolError);
            return 0;
        }
        if (length > quint64(m_maxMessageBytes)) {
            fail(Failure::MessageTooBig);
            return 0;
        }
    }
    const qsizetype maskBytes = masked ? 4 : 0;
    const qsizetype total = header + maskBytes + qsizetype(length);
    if (size < total)
        return 0;
    unsigned char maskKey[4] = {};
    if (masked)
        std::memcpy(maskKey, data + header, 4);
    const unsigned char *key = masked ? maskKey : nullptr;
    const char *payload = data + header + maskBytes;
    const auto payloadSize = qsizetype(length);

    if (isControl(opcode)) {
        QByteArray body(payloadSize, Qt::Uninitialized);
        WebSocketMask::apply(body.data(), payload, payloadSize, key);
        if (sink.control)
            sink.control(Opcode(opcode), std::move(body));
        return total;
    }

    auto deliver = [&](Opcode messageOpcode, QByteArray body) {
        if (messageOpcode == Opcode::Text && !simdjson::validate_utf8(body.constData(), size_t(body.size()))) {
            fail(Failure::InvalidUtf8);
            return;
        }
        if (sink.message)
            sink.message(messageOpcode, std::move(body));
    };

    if (opcode != quint8(Opcode::Continuation)) {
        if (fin && m_retain && opcode == quint8(Opcode::Binary) && payloadSize <= kRetainedBufferBytes) {
            // The retained buffer (D-137): the receiver's copies share it while it runs; once it
            // returned, a buffer no one else holds is kept for the next binary message.
            QByteArray body = std::exchange(m_spare, QByteArray());
            if (body.capacity() < payloadSize) {
                body = QByteArray();
                body.reserve(payloadSize); // exactly: a growing allocation would round up past the bound
            }
            body.resize(payloadSize);
            WebSocketMask::apply(body.data(), payload, payloadSize, key);
            deliver(Opcode::Binary, body);
            if (!m_stopped && m_failure == Failure::None && body.isDetached() && body.capacity() <= kRetainedBufferBytes)
                m_spare = std::move(body);
            return total;
        }
        if (fin) {
            QByteArray body(payloadSize, Qt::Uninitialized);
            WebSocketMask::apply(body.data(), payload, payloadSize, key);
            deliver(Opcode(opcode), std::move(body));
            return total;
        }
        m_inMessage = true;
        m_messageOpcode = Opcode(opcode);
    }
    const qsizetype at = m_message.size();
    m_message.resize(at + payloadSize);
    WebSocketMask::apply(m_message.data() + at, payload, payloadSize, key);
    if (fin) {
        m_inMessage = false;
        QByteArray body = std::move(m_message);
        m_message = QByteArray();
        deliver(m_messageOpcode, std::move(body));
    }
    return total;
}

} // namespace coreflow
