#pragma once
// UpstreamConnection: one HTTP/1.1 connection of the relay's own to the registry (CLOUDLY_URL's
// origin, IP-01, IP-20), on the relay's own transport in the thread that owns it (the relay's main
// thread): TcpDialer, then a client-role TlsConnection over the pool's TlsClientContext (OpenSSL on
// the descriptor: no memory BIOs, no socket buffer of Qt's). Owned and handed out by UpstreamPool;
// one request at a time, kept alive between requests.
//
// Request: "<method> <target> HTTP/1.1", then Host (the origin's host[:port]), the given headers in
// order, "Connection: keep-alive", and nothing else (no body). Header values were checked by
// RegistryHeaders (no control characters), so the lines cannot be split.
// TLS for an https origin (the pool's TlsClientContext: system CAs plus the configured extra CAs,
// peer verified against the origin's host or IP, SNI for a name, ALPN http/1.1); a plaintext
// TlsConnection for an http origin (loopback test peers only; the configuration refuses plain http
// elsewhere).
// Answer: parsed by UpstreamResponseParser (http_parser) and handed to the UpstreamResponseHandler.
//
// Backpressure (IP-13): bytes are read (decrypted straight out of the socket) only while the handler
// has room (UpstreamResponseHandler::upstreamBodyRoom), at most kReadChunkBytes per read; without
// room the socket is not read at all (its notifier is off), so the kernel's receive window slows the
// registry; resume() continues when the handler has room again. Nothing is buffered here beyond
// OpenSSL's one record of read-ahead.
// Failure classes: HostNotFound and ConnectionRefused from the dial (TcpDialer::failure), Network for
// any other dial failure, TlsHandshake when the TLS handshake fails (an untrusted or misnamed
// certificate included), RemoteClosed when the registry closes before its answer ended, Protocol /
// HeadersTooLarge from the parser.
//
// Ends of an exchange:
//  - answer complete: the handler is detached first, then the connection goes idle() (keep-alive,
//    nothing unasked-for read) or closed(), then the handler's upstreamComplete() is called;
//  - failure (socket error, TLS failure, parse error, the registry closing before the answer ended):
//    failed() names the class, then the connection is closed(); retryable is true when the connection
//    had served an earlier request and nothing of this answer arrived (an idle keep-alive connection
//    the registry had closed meanwhile); the pool decides about the retry and tells the handler;
//  - abort() (the node left, the exchange gave up): closed at once, the handler hears nothing more.
// An idle connection closes itself after kIdleTimeoutMs, or when the registry closes it.
#include "service/registry/registryheaders.h"
#include "service/registry/upstreamresponseparser.h"

#include "service/transport/tlsconnection.h"

#include <QByteArray>
#include <QObject>
#include <QTimer>
#include <QUrl>
#include <memory>

namespace coreflow {

class TcpDialer;
class TlsClientContext;
class UpstreamResponseHandler;

struct UpstreamRequest {
    QByteArray method;        // "GET" or "HEAD"
    QByteArray target;        // path and query, percent-encoded as the node sent them
    HeaderPairs headers;      // every header to send except Host and Connection
};

class UpstreamConnection : public QObject, private TlsConnection::Receiver {
    Q_OBJECT
public:
    static constexpr qint64 kReadChunkBytes = 64 * 1024;          // bytes per read from the socket
    static constexpr int kIdleTimeoutMs = 30'000;                 // idle connection closed after

    // origin: scheme (https or http), host, port of the registry. tls: used for https (nullptr: an
    // https request fails as TlsHandshake).
    UpstreamConnection(const QUrl &origin, std::shared_ptr<const TlsClientContext> tls, QObject *parent = nullptr);
    ~UpstreamConnection() override;

    // Sends `request` (connecting first when not connected) and delivers its answer to `handler`.
    // Only on a new or idle connection.
    void send(const UpstreamRequest &request, UpstreamResponseHandler *handler);
    // The handler has room again: continue reading.
    void resume();
    // Drops the exchange in flight (if any) and closes the connection; emits closed().
    void abort();

    bool isBusy() const { return m_handler != nullptr; }
    int requestsSent() const { return m_requestsSent; }

Q_SIGNALS:
    void idle(UpstreamConnection *connection);
    void closed(UpstreamConnection *connection);
    void failed(UpstreamConnection *connection, UpstreamResponseHandler *handler, const QByteArray &failureClass,
                bool retryable);

private:
    class ParserEvents;
    // TlsConnection::Receiver
    void tlsReadable() override { process(); }
    void tlsClosed() override;
    void tlsOpen() override;

    void onDialed(int fd);
    void onDialFailed();
    void writeRequest();
    void process();
    void failExchange(const QByteArray &failureClass);
    void closeForGood();

    QUrl m_origin;
    bool m_tls = true;
    std::shared_ptr<const TlsClientContext> m_context;
    TcpDialer *m_dialer = nullptr;           // while connecting
    TlsConnection *m_connection = nullptr;   // once connected
    std::unique_ptr<ParserEvents> m_events;
    std::unique_ptr<UpstreamResponseParser> m_parser;
    UpstreamResponseHandler *m_handler = nullptr;
    QByteArray m_pendingRequest; // written once the connection (and TLS) is up
    QTimer m_idleTimer;
    qint64 m_answerBytes = 0;    // bytes of the current answer read so far
    int m_requestsSent = 0;
    bool m_ready = false;        // connected (and encrypted for https)
    bool m_eof = false;          // the registry closed its side
    bool m_leftover = false;     // bytes after the answer's end
    bool m_processing = false;
    bool m_closed = false;
};

} // namespace coreflow
