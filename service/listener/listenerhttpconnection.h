#pragma once
// ListenerHttpConnection: the relay listener's own HTTP/1.1 server loop for one connection that is
// not a WebSocket session (docs/contract.md §17, D-49, D-53). It reads
// requests from the connection's TlsConnection with http_parser (Debian libhttp-parser; never by
// hand), hands each to the ListenerHttpHandler (the /v2/ pull endpoint) with a TlsHttpResponder that
// writes the answer straight into the TLS connection, and keeps answers in request order.
//
// Bounds and refusals (HTTP refusal shape, contract::httpRefusal, contract §17), all before a handler sees the
// request:
//  - a request's header block (request line, header lines, blank line; leading blank lines included)
//    over kMaxHeaderBlockBytes (65536 bytes): 431 request-invalid;
//  - a request announcing a body (Content-Length other than 0, or any Transfer-Encoding), refused the
//    moment its header block ends, before a body byte is read: 405 registry-method-refused (Allow:
//    GET, HEAD) for a method other than GET/HEAD, else 413 request-invalid;
//  - anything http_parser does not accept as an HTTP/1.1 request (a control character other than HTAB
//    in a header, a bare CR included; a malformed line): 400 request-invalid.
//  A refusal is answered with Connection: close, then the connection is shut down (aborted if that
//  has not completed within kCloseGraceMs, 2000 ms) - unless an earlier answer on the connection is
//  in progress or requests wait behind it: then the connection is aborted unanswered, since an
//  answer now would interleave with it. Refusal lines are logged (coreflow.listener) and counted in
//  ListenerHttpSide::refusedRequests.
//  These bounds hold while a request arrives (D-60): the handler's header line bound
//  (ListenerHttpHandler::headerLineBound; the registry: 32 lines, 431 registry-headers-too-large) is
//  applied to the piece that would begin the line past it, and the byte bound to every piece of the
//  URL, header names and values, so nothing past a bound is ever kept.
// Pipelining: requests keep being read while an answer is in progress; at most kMaxPipelinedRequests
// (16) wait (method, URL and headers copied). With that many waiting behind an answer, the first byte
// of one more request aborts the connection (nothing of it is collected). Held bytes: the URLs and
// header names and values of the waiting requests and of the one being read hold at most
// kMaxHeldRequestBytes (65536) together; the piece that would cross it is refused as the header
// block bound (aborted when answers are in progress). heldRequestBytes() is that figure now;
// ListenerHttpSide::peakHeldRequestBytes the most any connection held. The next waits until
// the current responder's finish(). The connection stops reading while kTlsWatermarkBytes (262144)
// of answers wait unsent in its TLS queue (a client that does not read its answers cannot make the
// relay queue them without bound).
// A WebSocket upgrade request (Upgrade: websocket) arriving here (a later request on a kept-alive
// connection) is never answered: once the answers before it are out the connection is shut down;
// sessions start on a new connection at "/". Without a handler every request is answered 404
// path-not-served. A request that does not ask for keep-alive (HTTP/1.0, Connection: close) is the
// connection's last: it is shut down after that answer.
// Idle bound: while no answer is in progress and no request waits, the next request must arrive whole
// (header block complete) within kIdleRequestTimeoutMs (10000 ms, the first request's bound in
// ListenerHandshake; real time); otherwise the connection is closed. A slow reader of a long answer
// is never cut by it (the bound does not run while an answer is in progress), a client that keeps a
// connection open without asking, or drips a header block, is.
// Connection bound: at most kMaxConnections (1024) plain HTTP connections are open at once, so pulls
// (or anyone holding connections) can never take the file descriptors nodes need; one more is
// answered 503 listener-busy (Retry-After: 1, Connection: close) and closed, its request unread.
// The client leaving (TLS closed) tells the responder of the answer in progress (responderGone) and
// drops the waiting requests.
// Writing: answer bytes go through TlsConnection::writeDeferred: pieces smaller than one full TLS
// record are gathered until a record's worth waits or the event-loop turn ends, so a body arriving
// from the registry in small reads does not become one small TLS record and one socket write per read.
#include "service/core/refusallogbound.h"
#include "service/listener/listenerhttphandler.h"
#include "service/transport/httpmessageparser.h"
#include "service/transport/tlsconnection.h"

#include <QBasicTimer>
#include <QObject>

#include <deque>
#include <memory>

namespace coreflow {

class TlsHttpResponder;

// What every HTTP connection of one listener shares (owned by RelayListener, which outlives its
// connections: they are its children).
struct ListenerHttpSide {
    ListenerHttpHandler *handler = nullptr;
    // The relay's bound on refusal log lines (docs/contract.md §3.1); nullptr: every line is logged.
    RefusalLogBound *refusalLog = nullptr;
    qint64 refusedRequests = 0; // requests refused by the bounds above (431, 413, 405, 400)
    // How long an idle connection (no answer in progress, none waiting) may take to deliver its next
    // whole request before it is closed (ms; ListenerHttpConnection::kIdleRequestTimeoutMs).
    int idleRequestTimeoutMs = 10000;
    qint64 idleClosed = 0; // connections closed by that bound
    // Plain HTTP connections open at once, and their bound (ListenerHttpConnection::kMaxConnections).
    int openConnections = 0;
    int maxConnections = 1024;
    qint64 busyRefused = 0; // connections refused 503 listener-busy at the bound
    // The most request bytes (URLs, header names and values: being read and waiting) one connection
    // held at once, bytes (at most ListenerHttpConnection::kMaxHeldRequestBytes).
    qsizetype peakHeldRequestBytes = 0;
};

class ListenerHttpConnection : public QObject, private TlsConnection::Receiver {
    Q_OBJECT
public:
    static constexpr qsizetype kMaxHeaderBlockBytes = 64 * 1024;
    static constexpr qsizetype kTlsWatermarkBytes = 256 * 1024;
    static constexpr qsizetype kReadChunkBytes = 16 * 1024;
    static constexpr int kMaxPipelinedRequests = 16;
    static constexpr qsizetype kMaxHeldRequestBytes = 64 * 1024;
    static constexpr int kCloseGraceMs = 2000;
    static constexpr int kIdleRequestTimeoutMs = 10000;
    static constexpr int kMaxConnections = 1024;

    // Takes ownership of tls; bytesSoFar were read from it already (the first request's beginning).
    ListenerHttpConnection(TlsConnection *tls, const QByteArray &bytesSoFar, ListenerHttpSide &side,
                           QObject *parent = nullptr);
    ~ListenerHttpConnection() override;

    // For the responder of the answer in progress (TlsHttpResponder).
    void writeAnswer(QByteArrayView bytes);
    qint64 pendingBytes() const { return m_tls->pendingBytes(); }
    // Bytes of URLs, header names and values this connection holds now (read and waiting).
    qsizetype heldRequestBytes() const { return m_parse->heldBytes() + m_waitingBytes; }
    void answerFinished(TlsHttpResponder *responder);
    void abortConnection();

protected:
    void timerEvent(QTimerEvent *event) override;

private:
    struct Waiting {
        ListenerHttpRequest request;
        bool last = false;           // shut the connection down after its answer
        bool closeUnanswered = false; // a WebSocket upgrade: shut down when its turn comes
        qsizetype heldBytes = 0;      // its URL, header names and values
    };
    void tlsReadable() override { readClient(); }
    void tlsWritten() override;
    void tlsClosed() override { end(); }
    void start(const QByteArray &bytesSoFar);
    void readClient();
    bool feed(const char *data, qsizetype size);
    void headersComplete(qsizetype headBytes);
    void messageComplete();
    void parseFailed(int error);
    void dispatch();
    void answerNotServed(std::unique_ptr<ListenerHttpResponder> responder);
    void refuse(int status, const QByteArray &reason, bool methodRefused);
    void refuse(int status, const QByteArray &reason, QLatin1StringView name, const HttpHeaderPairs &extraHeaders);
    void end();
    // The waiting requests are dropped and the answer in progress is told its connection is gone.
    void dropAnswers();
    // dropAnswers(), then the connection is closed at once, without an answer.
    void abortUnanswered();
    // Runs the idle bound exactly while the connection waits for a request with nothing to answer.
    void updateIdleBound();
    // The parser's bounds for the next piece: the handler's line bound, what the waiting requests
    // leave of kMaxHeldRequestBytes.
    void applyBounds();
    void takeWaiting(qsizetype heldBytes);

    // Whether one more refusal line of this connection is logged (RefusalLogBound, §3.1).
    bool admitRefusalLine() { return !m_side.refusalLog || m_side.refusalLog->admit(++m_refusalsHere); }

    TlsConnection *m_tls;
    ListenerHttpSide &m_side;
    qint64 m_refusalsHere = 0; // refusals logged or held back on this connection (RefusalLogBound)
    std::unique_ptr<HttpMessageParser> m_parse;
    std::deque<Waiting> m_waiting;
    qsizetype m_waitingBytes = 0; // Waiting::heldBytes summed
    TlsHttpResponder *m_current = nullptr; // the answer in progress (cleared by finish or the end)
    QBasicTimer m_closeGrace;
    QBasicTimer m_idleBound;
    bool m_lastAnswer = false;  // the answer in progress is the connection's last
    bool m_stopParsing = false; // no further request is read (refused, last, or an upgrade)
    bool m_closing = false;     // a refusal is being sent: what arrives is discarded
    bool m_dispatching = false;
    bool m_ended = false;
    bool m_counted = false; // holds one of ListenerHttpSide::openConnections
    bool m_webSocketUpgrade = false; // the request being read asks for Upgrade: websocket
};

} // namespace coreflow
