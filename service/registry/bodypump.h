#pragma once
// BodyPump: relays an answer body from the upstream reply into the node's socket with backpressure
// (rule IP-13). Writes only while the socket's pending bytes (plaintext + encrypted, for a QSslSocket)
// are under the watermark; resumes on the socket's bytesWritten/encryptedBytesWritten and on the
// source's readyRead. The source must be bounded (QNetworkReply::setReadBufferSize) so a slow node
// slows the upstream read instead of growing memory: at most watermark + one read chunk + the
// source's read buffer are held per exchange.
//
// Framing: Length writes the bytes as they are (the node reads them under the registry's
// Content-Length); Chunked frames each write as an HTTP/1.1 chunk and ends with the last chunk, for
// answers with no Content-Length (e.g. an encoded answer, IP-17).
//
// The pump never closes or aborts anything; its owner decides. It does not own source or sink.
#include <QByteArray>
#include <QObject>
#include <QPointer>

class QIODevice;
class QTcpSocket;

namespace coreflow {

class BodyPump : public QObject {
    Q_OBJECT
public:
    enum class Framing { Length, Chunked };
    static constexpr qint64 kDefaultWatermark = 512 * 1024; // bytes pending in the socket
    static constexpr qint64 kChunkBytes = 64 * 1024;         // one read from the source

    BodyPump(QIODevice *source, QTcpSocket *sink, Framing framing, qint64 watermark = kDefaultWatermark,
             QObject *parent = nullptr);

    void start();
    // The source will deliver no more data beyond what it holds now (its request finished cleanly).
    void sourceFinished();
    qint64 bytesRelayed() const { return m_relayed; }
    bool isDrained() const { return m_drained; }
    // Bytes the sink still holds to send (plaintext + encrypted); 0 when the sink is gone.
    static qint64 sinkPending(const QTcpSocket *sink);

Q_SIGNALS:
    // Every body byte has been handed to the sink (after sourceFinished()); emitted once.
    void drained();

private:
    void pump();

    QPointer<QIODevice> m_source;
    QPointer<QTcpSocket> m_sink;
    Framing m_framing;
    qint64 m_watermark;
    QByteArray m_buffer;
    qint64 m_relayed = 0;
    bool m_sourceFinished = false;
    bool m_drained = false;
    bool m_inPump = false;
};

} // namespace coreflow
