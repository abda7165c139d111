#pragma once
// BodyPump: writes an answer body into the node's connection with backpressure (rule IP-13). The
// body arrives from the registry connection (HttpClientConnection via RegistryExchange), which hands
// bytes over only while hasRoom() is true: the bytes the node's connection still holds to send (its
// TLS write queue, ListenerHttpResponder::pendingBytes) are under the watermark. When the connection
// has sent enough to be under it again (the owner calls sinkProgress() on
// ListenerHttpResponder::Observer::responderWritten), roomAvailable() is emitted and the owner resumes
// the upstream read. So a slow node slows the registry read instead of growing memory: at most the
// watermark plus one upstream read (HttpClientConnection::kReadChunkBytes, plus chunk framing) is held
// per exchange.
//
// Framing: Length writes the bytes as they are (the node reads them under the registry's
// Content-Length); Chunked frames each write as an HTTP/1.1 chunk and ends with the last chunk, for
// answers with no Content-Length (e.g. an encoded answer, IP-17).
//
// The watermark (bytes) may change while the pump runs (setWatermark): RegistryProxy shares one
// in-flight budget among its exchanges.
// The pump never finishes or aborts the answer; its owner decides. It does not own the sink.
#include "service/listener/listenerhttpresponder.h"

#include <QByteArray>
#include <QObject>

namespace coreflow {

class BodyPump : public QObject {
    Q_OBJECT
public:
    enum class Framing { Length, Chunked };
    static constexpr qint64 kDefaultWatermark = 512 * 1024; // bytes pending in the node's connection

    // sink must outlive the pump (the owner holds both).
    BodyPump(ListenerHttpResponder *sink, Framing framing, qint64 watermark = kDefaultWatermark,
             QObject *parent = nullptr);

    void setWatermark(qint64 bytes) { m_watermark = bytes; }
    qint64 watermark() const { return m_watermark; }
    // The sink is connected and holds less than the watermark.
    bool hasRoom() const;
    // Hands body bytes to the sink (framed); allowed when hasRoom() is false too (the caller's one read).
    void write(const char *data, qsizetype size);
    // The body is over: writes the last chunk (Chunked), then emits drained().
    void finish();
    // The sink sent queued bytes: emits roomAvailable() when it went under the watermark after
    // hasRoom() had said no.
    void sinkProgress();
    qint64 bytesRelayed() const { return m_relayed; }
    bool isDrained() const { return m_drained; }

Q_SIGNALS:
    // The sink went under the watermark after being over it.
    void roomAvailable();
    // Every body byte has been handed to the sink (after finish()); emitted once.
    void drained();

private:
    ListenerHttpResponder *m_sink;
    Framing m_framing;
    qint64 m_watermark;
    qint64 m_relayed = 0;
    mutable bool m_waitingForRoom = false; // hasRoom() said no: roomAvailable() is owed
    bool m_drained = false;
};

} // namespace coreflow
