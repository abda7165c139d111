#pragma once
// TlsConnection: one TCP socket with TLS, non-blocking OpenSSL on the descriptor, driven by
// level-triggered socket notifiers on the relay's event loop. Server side: an accepted listener
// socket over the shared TlsServerContext (docs/contract.md §3.0, D-53).
// Client side: an outbound socket from TcpDialer over a TlsClientContext (the Cloudly session, D-54),
// whose owner calls startHandshake() once it set its receiver; tlsOpen() reports the finished
// handshake. Plaintext (ssl == nullptr): the same interface over plain TCP, open from the start — for
// ws:// and http:// peers, which the configuration allows on loopback only.
//
// Events go to one Receiver (set by whoever holds the connection now: the handshake, then the
// WebSocket session or the HTTP loop), called directly rather than through signal connections,
// which would cost every idle node memory of their own.
// Reading: tlsReadable() means decrypted bytes may be available; the receiver calls read() until it
// returns 0 or until hasBufferedInput() is false (OpenSSL reads ahead and keeps bytes the socket
// notifier cannot see; bytes still in the kernel raise tlsReadable again), or stops reading with
// setReadEnabled(false) and calls read() itself after re-enabling.
// Writing: write() encrypts what the socket takes now and queues the rest in order (pendingBytes(),
// bytes); tlsWritten() each time queued bytes left.
// Closing: tlsClosed() once, when the peer closed, the transport failed, or the handshake failed;
// the receiver deletes the object later (never inside a call from it). shutdown() sends close_notify
// after the queue drains, then closes; abort() closes at once, after handing the socket what it takes
// now of the queue (never waiting).
//
// Memory while idle: the SSL object without record buffers, one read notifier (the write notifier
// exists only once a write had to wait), no queue allocation.
#include <QBasicTimer>
#include <QByteArray>
#include <QObject>
#include <QString>

class QSocketNotifier;
typedef struct ssl_st SSL;

namespace coreflow {

class TlsConnection : public QObject {
    Q_OBJECT
public:
    enum class State { Handshaking, Open, Closed };

    class Receiver {
    public:
        virtual ~Receiver() = default;
        virtual void tlsReadable() = 0;
        virtual void tlsClosed() = 0;
        virtual void tlsWritten() {}
        // The TLS handshake finished (state() is Open now); tlsReadable() follows at once.
        virtual void tlsOpen() {}
    };

    // Takes ownership of fd and ssl (ssl already bound to fd, in accept or connect state), or of fd
    // alone when ssl is nullptr (plaintext, Open from the start).
    TlsConnection(int fd, SSL *ssl, QObject *parent = nullptr);
    ~TlsConnection() override;

    void setReceiver(Receiver *receiver) { m_receiver = receiver; }
    State state() const { return m_state; }
    // Client side: sends the first handshake message (a server waits for the client's instead).
    void startHandshake();
    // Why the connection closed during the handshake, for a log line: the certificate verification
    // failure as OpenSSL names it, or a fixed text. Never peer data or key material. Empty otherwise.
    QByteArray handshakeFailure() const { return m_handshakeFailure; }
    bool isPlaintext() const { return m_plaintext; }
    // Decrypted bytes into data: > 0 bytes read, 0 nothing now, -1 closed (closed() follows).
    qsizetype read(char *data, qsizetype max);
    // Whether OpenSSL holds received bytes not yet returned by read() (the socket notifier cannot
    // see them): a reader that stops before read() returned 0 must come back while this is true.
    bool hasBufferedInput() const;
    // What a write carries, for the write queue's wiping (docs/contract.md §19.4). Secret: a
    // relay-held secret or an echo of one (a bearer, a token, a key). While Secret bytes are queued,
    // the queue is zeroed whenever its allocation is released or replaced; a queue that held only
    // Ordinary bytes since it was last empty is released without zeroing.
    enum class Content { Ordinary, Secret };
    void write(QByteArrayView bytes, Content content = Content::Ordinary);
    // Like write(), but small writes are gathered: the bytes wait until the current event-loop turn
    // has finished its other work (a zero timer), or until kDeferredFlushBytes (one full TLS record)
    // wait, so that many small writes leave as few, full TLS records in as few system calls as
    // possible. A piece of a full record or more with nothing waiting goes at once. For connections
    // that carry many small writes (the Cloudly session's frames; answer bodies arriving from the
    // registry in small reads). Order with write() is kept; tlsWritten() is never called from here.
    void writeDeferred(QByteArrayView bytes, Content content = Content::Ordinary);
    // Every later write counts as Secret (a connection where any write may carry a secret, e.g. the
    // bound cluster ingress once it pulled the route table with its keys; §19.4). Never undone.
    void treatWritesAsSecret() { m_writesSecret = true; }
    static constexpr qsizetype kDeferredFlushBytes = 16 * 1024;
    qsizetype pendingBytes() const { return m_out.size() - m_outOffset; }
    void setReadEnabled(bool enabled);
    bool readEnabled() const { return m_readEnabled; }
    void shutdown();
    void abort();
    int descriptor() const { return m_fd; }
    // Application bytes read (decrypted) and handed to TLS (before encryption) since construction.
    qint64 bytesRead() const { return m_bytesRead; }
    qint64 bytesWritten() const { return m_bytesWritten; }
    // The TCP peer as "ip:port" ("[ip6]:port"); "" once closed or when the kernel cannot say.
    QString peerAddress() const;

protected:
    void timerEvent(QTimerEvent *event) override;

private:
    void onReadable();
    void onWritable();
    void continueHandshake();
    void flush();
    // Hands queued bytes to TLS; notify: call tlsWritten() when some left (not from writeDeferred).
    void drain(bool notify);
    // Hands bytes to TLS (or the socket, plaintext): > 0 taken, 0 would block, -1 failed.
    qsizetype writeSome(const char *data, qsizetype size);
    // Appends to the queue; while it holds Secret bytes it is grown by hand (no realloc() that frees
    // an unwiped copy) and wiped whenever its allocation is released or replaced.
    void queue(QByteArrayView bytes, Content content);
    // Releases the queue's allocation, zeroed first when it held Secret bytes.
    void releaseQueue();
    void updateWriteNotifier();
    void finish();
    void setWriteNotification(bool enabled);
    void readable();

    int m_fd;
    SSL *m_ssl;
    QSocketNotifier *m_readNotifier = nullptr;
    QSocketNotifier *m_writeNotifier = nullptr; // made on first need
    Receiver *m_receiver = nullptr;
    QByteArray m_out;
    qsizetype m_outOffset = 0;
    bool m_outHoldsSecret = false; // Secret bytes were queued since the queue was last released
    bool m_writesSecret = false;   // treatWritesAsSecret()
    State m_state = State::Handshaking;
    bool m_readEnabled = true;
    bool m_readWantsWrite = false;  // an SSL_read needs the socket writable (TLS 1.3 key update)
    bool m_shutdownRequested = false;
    bool m_plaintext = false;
    QByteArray m_handshakeFailure;
    QBasicTimer m_deferredFlush;
    qint64 m_bytesRead = 0;
    qint64 m_bytesWritten = 0; // runs while writeDeferred() bytes wait for the end of the turn
};

} // namespace coreflow
