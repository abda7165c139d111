#include "service/registry/bodypump.h"

namespace coreflow {

BodyPump::BodyPump(ListenerHttpResponder *sink, Framing framing, qint64 watermark, QObject *parent)
    : QObject(parent), m_sink(sink), m_framing(framing), m_watermark(watermark)
{
}

bool BodyPump::hasRoom() const
{
    if (!m_sink->isConnected() || m_drained)
        return false;
    const bool room = m_sink->pendingBytes() < m_watermark;
    if (!room)
        m_waitingForRoom = true;
    return room;
}

void BodyPump::write(const char *data, qsizetype size)
{
    if (!m_sink->isConnected() || m_drained || size <= 0)
        return;
    if (m_framing == Framing::Chunked) {
        // One write per chunk (one TLS record run instead of three).
        QByteArray chunk = QByteArray::number(size, 16) + "\r\n";
        chunk.reserve(chunk.size() + size + 2);
        chunk.append(data, size);
        chunk.append("\r\n", 2);
        m_sink->writeBody(chunk);
    } else {
        m_sink->writeBody(QByteArrayView(data, size));
    }
    m_relayed += size;
}

void BodyPump::finish()
{
    if (m_drained)
        return;
    if (m_framing == Framing::Chunked)
        m_sink->writeBody("0\r\n\r\n");
    m_drained = true;
    Q_EMIT drained();
}

void BodyPump::sinkProgress()
{
    if (!m_waitingForRoom || m_drained || !m_sink->isConnected())
        return;
    if (m_sink->pendingBytes() >= m_watermark)
        return;
    m_waitingForRoom = false;
    Q_EMIT roomAvailable();
}

} // namespace coreflow
