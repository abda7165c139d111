#pragma once
// BodyPump: writes an answer body into the node's socket with backpressure (rule IP-13). The body
// arrives from the registry connection (UpstreamConnection via RegistryExchange), which hands bytes
// over only while hasRoom() is true: the socket's pending bytes (plaintext + encrypted, for a
// QSslSocket) are under the watermark. When the socket has sent enough to be under it again
// (bytesWritten/encryptedBytesWritten), roomAvailable() is emitted and the owner resumes the upstream
// read. So a slow node slows the registry read instead of growing memory: at most the watermark plus
// one upstream read (UpstreamConnection::kReadChunkBytes, plus chunk framing) is held per exchange.
//
// Framing: Length writes the bytes as they are (the node reads them under the registry's
// Content-Length); Chunked frames each write as an HTTP/1.1 chunk and ends with the last chunk, for
// answers with no Content-Length (e.g. an encoded answer, IP-17).
//
// The watermark (bytes) may change while the pump runs (setWatermark): RegistryProxy shares one
// in-flight budget among its exchanges.
// The pump never closes or aborts anything; its owner decides. It does not own the sink.
#include <QByteArray>
#include <QObject>
#include <QPointer>

class QTcpSocket;

namespace coreflow {

class BodyPump : public QObject {
    Q_OBJECT
public:
    enum class Framing { Length, Chunked };
    static constexpr qint64 kDefaultWatermark = 512 * 1024; // bytes pending in the socket

    BodyPump(QTcpSocket *sink, Framing framing, qint64 watermark = kDefaultWatermark, QObject *parent = nullptr);

    // Starts watching the sink's progress.
    void start();
    void setWatermark(qint64 bytes) { m_watermark = bytes; }
    qint64 watermark() const { return m_watermark; }
    // The sink is there and holds less than the watermark.
    bool hasRoom() const;
    // Hands body bytes to the sink (framed); allowed when hasRoom() is false too (the caller's one read).
    void write(const char *data, qsizetype size);
    // The body is over: writes the last chunk (Chunked), then emits drained().
    void finish();
    qint64 bytesRelayed() const { return m_relayed; }
    bool isDrained() const { return m_drained; }
    // Bytes the sink still holds to send (plaintext + encrypted); 0 when the sink is gone.
    static qint64 sinkPending(const QTcpSocket *sink);

Q_SIGNALS:
    // The sink went under the watermark after being over it.
    void roomAvailable();
    // Every body byte has been handed to the sink (after finish()); emitted once.
    void drained();

private:
    void onSinkProgress();

    QPointer<QTcpSocket> m_sink;
    Framing m_framing;
    qint64 m_watermark;
    qint64 m_relayed = 0;
    mutable bool m_waitingForRoom = false; // hasRoom() said no: roomAvailable() is owed
    bool m_drained = false;
};

} // namespace coreflow
