#include "service/transport/httpclientconnection.h"

#include "service/transport/httprequesthead.h"
#include "service/transport/httpresponsereceiver.h"
#include "service/transport/tcpdialer.h"
#include "service/transport/tlsclientcontext.h"
#include "shared/util/clock.h"

#include <QTimer>

#include <unistd.h>
#include <utility>

namespace coreflow {

// Forwards the parser's events to the current receiver (head and body at once, for streaming); the
// answer's end is acted on by the connection after the parser returns (see process()).
class HttpClientConnection::ParserEvents : public HttpResponseParser::Events {
public:
    explicit ParserEvents(HttpClientConnection &c) : m_c(c) {}
    void head(int status, const HttpHeaderPairs &headers) override
    {
        if (m_c.m_receiver)
            m_c.m_receiver->responseHead(status, headers);
    }
    void httpBody(const char *data, qsizetype size) override
    {
        if (m_c.m_receiver)
            m_c.m_receiver->responseBody(data, size);
    }
    void complete() override {}

private:
    HttpClientConnection &m_c;
};

HttpClientConnection::HttpClientConnection(const QUrl &origin, std::shared_ptr<const TlsClientContext> tls,
                                           const HttpClientLimits &limits, Clock &clock, QObject *parent)
    : QObject(parent), m_origin(origin), m_tls(origin.scheme() != QLatin1String("http")), m_context(std::move(tls)),
      m_idleTimer(clock.createTimer(this)), m_idleTimeoutMs(limits.idleTimeoutMs)
{
    m_events = std::make_unique<ParserEvents>(*this);
    m_parser = std::make_unique<HttpResponseParser>(*m_events, limits.maxHeaderLines);
    connect(m_idleTimer.get(), &ClockTimer::timeout, this, [this] {
        if (!m_receiver)
            closeForGood();
    });
}

HttpClientConnection::~HttpClientConnection()
{
    m_receiver = nullptr;
    if (m_connection)
        m_connection->setReceiver(nullptr); // closed with this object (its child)
}

void HttpClientConnection::connectFor(HttpResponseReceiver *receiver)
{
    m_idleTimer->stop();
    m_receiver = receiver;
    m_awaitingRequest = true;
    m_answerBytes = 0;
    m_leftover = false;
    m_bodyStream = nullptr;
    m_bodyBytesPulled = 0;
    m_parser->reset(false);
    if (m_ready || m_dialer || m_connection)
        return; // connectFor() is only for a new connection
    dial();
}

void HttpClientConnection::send(const HttpClientRequest &request, HttpResponseReceiver *receiver)
{
    m_idleTimer->stop();
    m_awaitingRequest = false;
    m_receiver = receiver;
    m_answerBytes = 0;
    m_leftover = false;
    m_bodyStream = request.bodyStream;
    m_bodyBytesPulled = 0;
    m_parser->reset(request.method == "HEAD");

    const QByteArray host = m_origin.authority(QUrl::FullyEncoded | QUrl::RemoveUserInfo).toLatin1();
    m_pendingRequest.clear();
    m_pendingGuarded = Secret();
    if (request.bearer.isEmpty())
        m_pendingRequest = httpRequestHead(request, host, "keep-alive");
    else
        m_pendingGuarded = httpRequestHeadWithBearer(request, host, "keep-alive");
    ++m_requestsSent;

    if (m_ready) {
        if (m_connection && !m_connection->readEnabled())
            m_connection->setReadEnabled(true);
        writeRequest();
        return;
    }
    if (m_dialer || m_connection)
        return; // connecting: written once up
    dial();
}

void HttpClientConnection::dial()
{
    m_dialer = new TcpDialer(this);
    connect(m_dialer, &TcpDialer::connected, this, &HttpClientConnection::onDialed);
    connect(m_dialer, &TcpDialer::failed, this, &HttpClientConnection::onDialFailed);
    m_dialer->dial(m_origin.host(), quint16(m_origin.port(m_tls ? 443 : 80)));
}

void HttpClientConnection::onDialed(int fd)
{
    m_dialer->deleteLater();
    m_dialer = nullptr;
    if (m_closed) {
        ::close(fd);
        return;
    }
    SSL *ssl = nullptr;
    if (m_tls) {
        ssl = m_context ? m_context->newConnection(fd, m_origin.host()) : nullptr;
        if (!ssl) {
            ::close(fd);
            failExchange(HttpClientFailure::TlsHandshake);
            return;
        }
    }
    m_connection = new TlsConnection(fd, ssl, this);
    // A request's head may carry a bearer (a Corestore token) and its body a grant: the queue is wiped
    // whatever it held (contract §19.4).
    m_connection->treatWritesAsSecret();
    m_connection->setReceiver(this);
    if (!m_tls) {
        onReady();
        return;
    }
    m_connection->startHandshake(); // tlsOpen() or tlsClosed() follows
}

void HttpClientConnection::onReady()
{
    m_ready = true;
    if (m_awaitingRequest) {
        if (m_receiver)
            Q_EMIT established(this, m_receiver);
        return;
    }
    writeRequest();
}

void HttpClientConnection::onDialFailed()
{
    const TcpDialer::Failure failure = m_dialer->failure();
    m_dialer->deleteLater();
    m_dialer = nullptr;
    if (!m_receiver) {
        closeForGood();
        return;
    }
    switch (failure) {
    case TcpDialer::Failure::HostNotFound:
        failExchange(HttpClientFailure::HostNotFound);
        return;
    case TcpDialer::Failure::ConnectionRefused:
        failExchange(HttpClientFailure::ConnectionRefused);
        return;
    default:
        failExchange(HttpClientFailure::Network);
    }
}

void HttpClientConnection::tlsOpen()
{
    onReady();
}

void HttpClientConnection::tlsClosed()
{
    if (!m_ready) {
        // The TLS handshake failed (the peer's certificate not trusted or not naming the host,
        // or the connection dropped meanwhile).
        if (m_receiver)
            failExchange(HttpClientFailure::TlsHandshake);
        else
            closeForGood();
        return;
    }
    m_eof = true; // what was received has been read out (a close-delimited body ends here)
    process();
}

void HttpClientConnection::writeRequest()
{
    if ((m_pendingRequest.isEmpty() && m_pendingGuarded.isEmpty()) || !m_receiver || !m_connection)
        return;
    if (!m_pendingGuarded.isEmpty()) {
        const Secret request = std::exchange(m_pendingGuarded, Secret());
        m_connection->write(request.reveal()); // TLS wipes what it has to queue (§19.4)
    } else {
        const QByteArray request = std::exchange(m_pendingRequest, QByteArray());
        m_connection->write(request);
    }
    pumpBody();
}

void HttpClientConnection::pumpBody()
{
    if (!m_bodyStream || !m_receiver || !m_connection || !m_ready || m_closed || !m_pendingRequest.isEmpty()
        || !m_pendingGuarded.isEmpty())
        return;
    char buffer[kBodyPullBytes];
    bool drained = m_connection->pendingBytes() < kBodyQueueBytes;
    while (m_bodyStream && m_connection && m_connection->pendingBytes() < kBodyQueueBytes) {
        const qsizetype n = m_bodyStream->requestBodyRead(buffer, kBodyPullBytes);
        if (n <= 0)
            break;
        m_bodyBytesPulled += n;
        m_connection->write(QByteArrayView(buffer, n));
    }
    if (drained && m_bodyStream && m_bodyBytesPulled > 0)
        m_bodyStream->requestBodyDrained();
}

void HttpClientConnection::resume()
{
    process();
}

void HttpClientConnection::abort()
{
    m_receiver = nullptr;
    m_awaitingRequest = false;
    m_bodyStream = nullptr;
    closeForGood();
}

void HttpClientConnection::process()
{
    if (m_processing || m_closed || !m_connection)
        return;
    if (m_receiver && m_awaitingRequest) {
        // Up for a request not yet sent: the peer has nothing to say, and its close ends the exchange.
        if (m_eof)
            return failExchange(HttpClientFailure::RemoteClosed);
        char probe[256];
        const qsizetype n = m_connection->read(probe, qsizetype(sizeof probe));
        if (n > 0)
            failExchange(HttpClientFailure::Protocol); // bytes that follow nothing asked
        else if (n < 0)
            failExchange(HttpClientFailure::RemoteClosed);
        return; // 0: nothing, or a TLS 1.3 ticket
    }
    if (!m_receiver) {
        // Idle: the peer has nothing to say now. Anything it sends (or its close) ends the connection.
        if (m_eof) {
            closeForGood();
            return;
        }
        char probe[256];
        const qsizetype n = m_connection->read(probe, qsizetype(sizeof probe));
        if (n != 0) // unasked-for bytes, or the close (TLS 1.3 tickets read as 0)
            closeForGood();
        return;
    }
    m_processing = true;
    bool noRoom = false;
    bool turnSpent = false;
    qint64 turnBytes = 0;
    char buffer[kReadChunkBytes];
    while (m_receiver && !m_parser->isComplete() && !m_parser->failed() && !m_eof) {
        if (m_parser->headReported() && !m_receiver->responseBodyRoom()) {
            noRoom = true;
            break;
        }
        if (turnBytes >= kReadTurnBytes) {
            turnSpent = true; // back to the event loop: other sockets are read before the next bytes
            break;
        }
        const qsizetype n = m_connection->read(buffer, kReadChunkBytes);
        if (n == 0)
            break;
        if (n < 0) {
            m_eof = true;
            break;
        }
        m_answerBytes += n;
        turnBytes += n;
        const qsizetype used = m_parser->feed(buffer, n);
        if (m_parser->isComplete() && used < n)
            m_leftover = true;
    }
    bool cutShort = false;
    if (m_receiver && m_eof && !m_parser->isComplete() && !m_parser->failed())
        cutShort = !m_parser->feedEof();
    m_processing = false;

    if (!m_receiver)
        return; // aborted from inside a receiver call
    if (m_parser->failed()) {
        failExchange(m_parser->failure());
        return;
    }
    if (cutShort) {
        failExchange(HttpClientFailure::RemoteClosed);
        return;
    }
    if (!m_parser->isComplete()) {
        // No room: the socket is not read until resume(), so the kernel's window holds the peer.
        if (m_connection->readEnabled() == noRoom && m_connection->state() == TlsConnection::State::Open)
            m_connection->setReadEnabled(!noRoom);
        // The turn's bytes were read: the next ones one event-loop turn later, from a posted call
        // alone (the socket's notifier is off meanwhile, so a turn reads once; OpenSSL may also hold a
        // decrypted record the notifier would not report).
        if (turnSpent) {
            if (m_connection->readEnabled())
                m_connection->setReadEnabled(false);
            if (!m_continuationPosted) {
                m_continuationPosted = true;
                QTimer::singleShot(0, this, [this] {
                    m_continuationPosted = false;
                    process();
                });
            }
        }
        return;
    }
    HttpResponseReceiver *receiver = m_receiver;
    m_receiver = nullptr;
    // A connection that carried a streamed body is not kept: the answer may have come before the
    // body's end.
    const bool streamed = std::exchange(m_bodyStream, nullptr) != nullptr;
    const bool reusable = !streamed && m_parser->keepAlive() && !m_leftover && !m_eof && !m_connection->hasBufferedInput()
        && m_connection->state() == TlsConnection::State::Open;
    if (reusable) {
        if (!m_connection->readEnabled())
            m_connection->setReadEnabled(true); // a close or stray bytes while idle are noticed
        m_idleTimer->start(m_idleTimeoutMs);
        Q_EMIT idle(this);
    } else {
        closeForGood();
    }
    receiver->responseComplete();
}

void HttpClientConnection::failExchange(HttpClientFailure failure)
{
    HttpResponseReceiver *receiver = m_receiver;
    m_receiver = nullptr;
    m_awaitingRequest = false;
    // A streamed body already pulled cannot be sent again.
    const bool retryable = m_requestsSent > 1 && m_answerBytes == 0 && m_bodyBytesPulled == 0;
    m_bodyStream = nullptr;
    if (receiver)
        Q_EMIT failed(this, receiver, failure, retryable);
    closeForGood();
}

void HttpClientConnection::closeForGood()
{
    if (m_closed)
        return;
    m_closed = true;
    m_idleTimer->stop();
    if (m_dialer)
        m_dialer->abort();
    if (m_connection) {
        m_connection->setReceiver(nullptr);
        m_connection->abort();
    }
    Q_EMIT closed(this);
}

} // namespace coreflow
