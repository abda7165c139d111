#include "bodypump.h"

#include <QSslSocket>
#include <QTcpSocket>

namespace coreflow {

BodyPump::BodyPump(QIODevice *source, QTcpSocket *sink, Framing framing, qint64 watermark, QObject *parent)
    : QObject(parent), m_source(source), m_sink(sink), m_framing(framing), m_watermark(watermark)
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
    if (!m_source || !m_sink)
        return;
    connect(m_source, &QIODevice::readyRead, this, &BodyPump::pump);
    connect(m_sink, &QIODevice::bytesWritten, this, &BodyPump::pump);
    if (auto *ssl = qobject_cast<QSslSocket *>(m_sink.data()))
        connect(ssl, &QSslSocket::encryptedBytesWritten, this, &BodyPump::pump);
    pump();
}

void BodyPump::sourceFinished()
{
    m_sourceFinished = true;
    pump();
}

void BodyPump::pump()
{
    if (m_inPump || m_drained || !m_source || !m_sink)
        return;
    m_inPump = true;
    while (sinkPending(m_sink) < m_watermark && m_source->bytesAvailable() > 0) {
        m_buffer.resize(kChunkBytes);
        const qint64 n = m_source->read(m_buffer.data(), kChunkBytes);
        if (n <= 0)
            break;
        if (m_framing == Framing::Chunked) {
            m_sink->write(QByteArray::number(n, 16) + "\r\n");
            m_sink->write(m_buffer.constData(), n);
            m_sink->write("\r\n", 2);
        } else {
            m_sink->write(m_buffer.constData(), n);
        }
        m_relayed += n;
        if (!m_sink)
            break;
    }
    m_inPump = false;
    if (m_sourceFinished && m_source && m_source->bytesAvailable() == 0 && m_sink) {
        if (m_framing == Framing::Chunked)
            m_sink->write("0\r\n\r\n", 5);
        m_drained = true;
        Q_EMIT drained();
    }
}

} // namespace coreflow
