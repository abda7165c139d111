#pragma once
// HttpClientConnection: one HTTP/1.1 client connection of the relay's own to an origin, on the
// relay's own transport in the thread that owns it: TcpDialer, then a client-role TlsConnection over
// the pool's TlsClientContext (OpenSSL on the descriptor: no memory BIOs, no socket buffer of Qt's).
// Owned and handed out by HttpClientPool; one request at a time, kept alive between requests.
// docs/contract.md §17 (the relay's own HTTP client).
//
// Request: httpRequestHead(): "<method> <target> HTTP/1.1", Host (the origin's host[:port]), the
// request's headers in order, "Connection: keep-alive", and nothing else (no body); with a bearer
// httpRequestHeadWithBearer(), the head in guarded memory, released (wiped) once handed to TLS. Header values
// must hold no CR or LF (the lane checks what it forwards), so the lines cannot be split.
// TLS for an https origin (the pool's TlsClientContext: system CAs plus the lane's extra CAs, peer
// verified against the origin's host or IP, SNI for a name, ALPN http/1.1); a plaintext
// TlsConnection for an http origin (loopback test peers only; the configuration refuses plain http
// elsewhere).
// Answer: parsed by HttpResponseParser (http_parser, at most limits.maxHeaderLines header lines) and
// handed to the HttpResponseReceiver.
//
// Backpressure: bytes are read (decrypted straight out of the socket) only while the receiver has
// room (HttpResponseReceiver::responseBodyRoom), at most kReadChunkBytes per read; without room the
// socket is not read at all (its notifier is off), so the kernel's receive window slows the peer;
// resume() continues when the receiver has room again. Nothing is buffered here beyond OpenSSL's one
// record of read-ahead; body bytes reach the receiver straight out of the read buffer. Turns: one
// process() reads at most kReadTurnBytes (plus one read), then the notifier is off and the next read
// is a posted call, so a fast streamed answer never holds the event loop (D-129).
// Failures (HttpClientFailure): HostNotFound and ConnectionRefused from the dial
// (TcpDialer::failure), Network for any other dial failure, TlsHandshake when the TLS handshake
// fails (an untrusted or misnamed certificate included), RemoteClosed when the peer closes before
// its answer ended, Protocol / HeadersTooLarge from the parser.
//
// Ends of an exchange:
//  - answer complete: the receiver is detached first, then the connection goes idle() (keep-alive,
//    nothing unasked-for read) or closed(), then the receiver's responseComplete() is called;
//  - failure (socket error, TLS failure, parse error, the peer closing before the answer ended):
//    failed() names it, then the connection is closed(); retryable is true when the connection had
//    served an earlier request and nothing of this answer arrived (an idle keep-alive connection the
//    peer had closed meanwhile); the pool decides about the retry and tells the receiver;
//  - abort() (the lane gave up): closed at once, the receiver hears nothing more.
// connectFor(receiver) dials (and for https completes TLS) before there is a request: established()
// says the connection is up; send() then writes the request on it. Until send(), any byte from the
// peer fails the exchange (Protocol: nothing was asked) and so does its close (RemoteClosed); a dial
// or handshake failure is failed() as for a request (never retryable).
// An idle connection closes itself after limits.idleTimeoutMs (on the injected Clock), or when the
// peer closes it.
#include "service/transport/httpclientfailure.h"
#include "service/transport/httpclientlimits.h"
#include "service/transport/httpclientrequest.h"
#include "service/transport/httpresponseparser.h"
#include "service/transport/tlsconnection.h"

#include <QByteArray>
#include <QObject>
#include <QUrl>
#include <memory>

namespace coreflow {

class Clock;
class ClockTimer;
class TcpDialer;
class TlsClientContext;
class HttpResponseReceiver;

class HttpClientConnection : public QObject, private TlsConnection::Receiver {
    Q_OBJECT
public:
    static constexpr qint64 kReadChunkBytes = 64 * 1024; // bytes per read from the socket
    // An answer's bytes read in one event-loop turn, at most (plus one read): a streamed body (a
    // database closure's export) never holds the loop while node sockets wait (D-129).
    static constexpr qint64 kReadTurnBytes = 256 * 1024;
    // A streamed request body (HttpRequestBodyStream): pulled while less than this waits in the TLS
    // queue, kBodyPullBytes per pull.
    static constexpr qsizetype kBodyQueueBytes = 256 * 1024;
    static constexpr qsizetype kBodyPullBytes = 64 * 1024;

    // origin: scheme (https or http), host, port. tls: used for https (nullptr: an https request
    // fails as TlsHandshake). limits: the owning pool's. clock: runs the idle bound.
    HttpClientConnection(const QUrl &origin, std::shared_ptr<const TlsClientContext> tls, const HttpClientLimits &limits,
                         Clock &clock, QObject *parent = nullptr);
    ~HttpClientConnection() override;

    // Sends `request` (connecting first when not connected) and delivers its answer to `receiver`.
    // Only on a new or idle connection.
    void send(const HttpClientRequest &request, HttpResponseReceiver *receiver);
    // Connects for `receiver`'s coming request (see above). Only on a new connection.
    void connectFor(HttpResponseReceiver *receiver);
    // The receiver has room again: continue reading.
    void resume();
    // The request's body stream has bytes again: continue writing.
    void resumeBody() { pumpBody(); }
    // Drops the exchange in flight (if any) and closes the connection; emits closed().
    void abort();

    bool isBusy() const { return m_receiver != nullptr; }
    int requestsSent() const { return m_requestsSent; }

Q_SIGNALS:
    void idle(coreflow::HttpClientConnection *connection);
    void established(coreflow::HttpClientConnection *connection, coreflow::HttpResponseReceiver *receiver);
    void closed(coreflow::HttpClientConnection *connection);
    void failed(coreflow::HttpClientConnection *connection, coreflow::HttpResponseReceiver *receiver,
                coreflow::HttpClientFailure failure, bool retryable);

private:
    class ParserEvents;
    // TlsConnection::Receiver
    void tlsReadable() override { process(); }
    void tlsClosed() override;
    void tlsOpen() override;
    void tlsWritten() override { pumpBody(); }
    void pumpBody();

    void dial();
    void onReady();
    void onDialed(int fd);
    void onDialFailed();
    void writeRequest();
    void process();
    void failExchange(HttpClientFailure failure);
    void closeForGood();

    QUrl m_origin;
    bool m_tls = true;
    std::shared_ptr<const TlsClientContext> m_context;
    TcpDialer *m_dialer = nullptr;           // while connecting
    TlsConnection *m_connection = nullptr;   // once connected
    std::unique_ptr<ParserEvents> m_events;
    std::unique_ptr<HttpResponseParser> m_parser;
    HttpResponseReceiver *m_receiver = nullptr;
    QByteArray m_pendingRequest; // written once the connection (and TLS) is up
    Secret m_pendingGuarded;     // the same for a head that carries a bearer (guarded memory, §19.4)
    std::unique_ptr<ClockTimer> m_idleTimer;
    int m_idleTimeoutMs;
    qint64 m_answerBytes = 0;    // bytes of the current answer read so far
    int m_requestsSent = 0;
    HttpRequestBodyStream *m_bodyStream = nullptr; // the current request's streamed body, if any
    qint64 m_bodyBytesPulled = 0;
    bool m_ready = false;        // connected (and encrypted for https)
    bool m_eof = false;          // the peer closed its side
    bool m_leftover = false;     // bytes after the answer's end
    bool m_processing = false;
    bool m_continuationPosted = false; // a process() after a spent read turn is queued
    bool m_closed = false;
    bool m_awaitingRequest = false; // connectFor(): up (or connecting) for a request not yet given
};

} // namespace coreflow
