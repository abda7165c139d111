#include "bodypump.h"

#include <QSslSocket>
#include <QTcpSocket>

namespace coreflow {

BodyPump::BodyPump(QTcpSocket *sink, Framing framing, qint64 watermark, QObject *parent)
    : QObject(parent), m_sink(sink), m_framing(framing), m_watermark(watermark)
{
}

qint64 BodyPump::sinkPending(const QTcpSocket *sink)
{
    if (!sink)
        return 0;
    qint64 pending = sink->bytesToWrite();
    if (const auto *ssl = qobject_cast<const QSslSocket *>(sink))
        pending += ssl->encryptedBytesToWrite();
    return pending;
}

void BodyPump::start()
{
    if (!m_sink)
        return;
    connect(m_sink, &QIODevice::bytesWritten, this, &BodyPump::onSinkProgress);
    if (auto *ssl = qobject_cast<QSslSocket *>(m_sink.data()))
        connect(ssl, &QSslSocket::encryptedBytesWritten, this, &BodyPump::onSinkProgress);
}

bool BodyPump::hasRoom() const
{
    if (!m_sink || m_drained)
        return false;
    const bool room = sinkPending(m_sink) < m_watermark;
    if (!room)
        m_waitingForRoom = true;
    return room;
}

void BodyPump::write(const char *data, qsizetype size)
{
    if (!m_sink || m_drained || size <= 0)
        return;
    if (m_framing == Framing::Chunked) {
        m_sink->write(QByteArray::number(size, 16) + "\r\n");
        m_sink->write(data, size);
        m_sink->write("\r\n", 2);
    } else {
        m_sink->write(data, size);
    }
    m_relayed += size;
}

void BodyPump::finish()
{
    if (m_drained)
        return;
    if (m_sink && m_framing == Framing::Chunked)
        m_sink->write("0\r\n\r\n", 5);
    m_drained = true;
    Q_EMIT drained();
}

void BodyPump::onSinkProgress()
{
    if (!m_waitingForRoom || m_drained || !m_sink)
        return;
    if (sinkPending(m_sink) >= m_watermark)
        return;
    m_waitingForRoom = false;
    Q_EMIT roomAvailable();
}

} // namespace coreflow
