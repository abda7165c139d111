#pragma once
// CorestoreExchange: one answer of a LoopbackCorestore being written (docs/contract.md §15), made with
// the lowest-level parts Qt 6.4's HTTP server offers. The QHttpServerResponder is moved in and the answer
// is written later with writeStatusLine / writeHeader / writeBody, in pieces:
//   - Respond: after delayMs, the status line and headers (Content-Length = declaredLength), then body
//     bytes from `source` — paced at no more than bytesPerSecond (QTimer ticks every 20 ms; a late tick
//     catches up by at most two ticks' worth) or, unpaced, as fast as
//     the socket drains (at most 256 KiB queued, continued on bytesWritten). With sendBytes <
//     declaredLength it stops there and, with closeAfterPartial, closes the connection once the partial
//     body is flushed (truncation) or stays silent with the connection open (stall).
//   - Hang: holds the responder and writes nothing.
//   - Drop: aborts the connection (after delayMs) without a byte of answer.
// The socket (QHttpServerResponder::socket()) is watched through a QPointer: once the client has gone,
// nothing more is written and finished() is emitted. The owner deletes the exchange after finished().
#include <QByteArray>
#include <QElapsedTimer>
#include <QList>
#include <QObject>
#include <QPair>
#include <QPointer>
#include <QTimer>
#include <functional>
#include <memory>

class QHttpServerResponder;
class QTcpSocket;

namespace coreflow::peers {

class CorestoreExchange : public QObject {
    Q_OBJECT
public:
    enum class Mode { Respond, Hang, Drop };
    // Writes `length` body bytes from body offset `offset` into `out`.
    using BodySource = std::function<void(qint64 offset, char *out, qint64 length)>;

    struct Plan {
        Mode mode = Mode::Respond;
        int status = 200;
        QList<QPair<QByteArray, QByteArray>> headers;   // without Content-Length (added here)
        qint64 declaredLength = 0;                      // Content-Length, bytes
        BodySource source;                              // may be empty when declaredLength is 0
        qint64 sendBytes = -1;                          // body bytes actually written; -1: declaredLength
        bool closeAfterPartial = true;
        qint64 bytesPerSecond = 0;                      // 0: unpaced
        qint64 delayMs = 0;
    };

    CorestoreExchange(QHttpServerResponder &&responder, Plan plan, QObject *parent = nullptr);
    ~CorestoreExchange() override;

    void start();
    qint64 bodyBytesWritten() const { return m_sent; }

Q_SIGNALS:
    // completely: the whole declared answer was queued on the socket.
    void finished(bool completely);

private:
    void begin();
    void pump();
    void finish(bool completely);
    void closeWhenFlushed();
    bool socketUsable() const;
    qint64 queuedBytes() const;   // plain + encrypted bytes not yet handed to the kernel

    std::unique_ptr<QHttpServerResponder> m_responder;
    QPointer<QTcpSocket> m_socket;
    Plan m_plan;
    qint64 m_sent = 0;
    qint64 m_target = 0;
    bool m_begun = false;
    bool m_done = false;
    QTimer m_paceTimer;
    QElapsedTimer m_paceClock;
};

} // namespace coreflow::peers
