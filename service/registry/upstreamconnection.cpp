#include "service/registry/upstreamconnection.h"

#include "service/core/logging.h"
#include "shared/contract/httprefusalbody.h"
#include "service/registry/upstreamresponsehandler.h"

#include "service/transport/tcpdialer.h"
#include "service/transport/tlsclientcontext.h"

#include <unistd.h>
#include <utility>

namespace coreflow {

// Forwards the parser's events to the current handler (head and body at once, for streaming); the
// answer's end is acted on by the connection after the parser returns (see process()).
class UpstreamConnection::ParserEvents : public UpstreamResponseParser::Events {
public:
    explicit ParserEvents(UpstreamConnection &c) : m_c(c) {}
    void head(int status, const HeaderPairs &headers) override
    {
        if (m_c.m_handler)
            m_c.m_handler->upstreamHead(status, headers);
    }
    void body(const char *data, qsizetype size) override
    {
        if (m_c.m_handler)
            m_c.m_handler->upstreamBody(data, size);
    }
    void complete() override {}

private:
    UpstreamConnection &m_c;
};

UpstreamConnection::UpstreamConnection(const QUrl &origin, std::shared_ptr<const TlsClientContext> tls, QObject *parent)
    : QObject(parent), m_origin(origin), m_tls(origin.scheme() != QLatin1String("http")), m_context(std::move(tls))
{
    m_events = std::make_unique<ParserEvents>(*this);
    m_parser = std::make_unique<UpstreamResponseParser>(*m_events);
    m_idleTimer.setSingleShot(true);
    m_idleTimer.setInterval(kIdleTimeoutMs);
    connect(&m_idleTimer, &QTimer::timeout, this, [this] {
        if (!m_handler)
            closeForGood();
    });
}

UpstreamConnection::~UpstreamConnection()
{
    m_handler = nullptr;
    if (m_connection)
        m_connection->setReceiver(nullptr); // closed with this object (its child)
}

void UpstreamConnection::send(const UpstreamRequest &request, UpstreamResponseHandler *handler)
{
    m_idleTimer.stop();
    m_handler = handler;
    m_answerBytes = 0;
    m_leftover = false;
    m_parser->reset(request.method == "HEAD");

    QByteArray head;
    head.reserve(256 + request.target.size());
    head += request.method + ' ' + request.target + " HTTP/1.1\r\nHost: ";
    head += m_origin.authority(QUrl::FullyEncoded | QUrl::RemoveUserInfo).toLatin1();
    head += "\r\n";
    for (const auto &[name, value] : request.headers)
        head += name + ": " + value + "\r\n";
    head += "Connection: keep-alive\r\n\r\n";
    m_pendingRequest = head;
    ++m_requestsSent;

    if (m_ready) {
        if (m_connection && !m_connection->readEnabled())
            m_connection->setReadEnabled(true);
        writeRequest();
        return;
    }
    if (m_dialer || m_connection)
        return; // connecting: written once up
    m_dialer = new TcpDialer(this);
    connect(m_dialer, &TcpDialer::connected, this, &UpstreamConnection::onDialed);
    connect(m_dialer, &TcpDialer::failed, this, &UpstreamConnection::onDialFailed);
    m_dialer->dial(m_origin.host(), quint16(m_origin.port(m_tls ? 443 : 80)));
}

void UpstreamConnection::onDialed(int fd)
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
            failExchange(QByteArrayLiteral("TlsHandshake"));
            return;
        }
    }
    m_connection = new TlsConnection(fd, ssl, this);
    m_connection->setReceiver(this);
    if (!m_tls) {
        m_ready = true;
        writeRequest();
        return;
    }
    m_connection->startHandshake(); // tlsOpen() or tlsClosed() follows
}

void UpstreamConnection::onDialFailed()
{
    const TcpDialer::Failure failure = m_dialer->failure();
    m_dialer->deleteLater();
    m_dialer = nullptr;
    if (!m_handler) {
        closeForGood();
        return;
    }
    switch (failure) {
    case TcpDialer::Failure::HostNotFound:
        failExchange(QByteArrayLiteral("HostNotFound"));
        return;
    case TcpDialer::Failure::ConnectionRefused:
        failExchange(QByteArrayLiteral("ConnectionRefused"));
        return;
    default:
        failExchange(QByteArrayLiteral("Network"));
    }
}

void UpstreamConnection::tlsOpen()
{
    m_ready = true;
    writeRequest();
}

void UpstreamConnection::tlsClosed()
{
    if (!m_ready) {
        // The TLS handshake failed (the registry's certificate not trusted or not naming the host,
        // or the connection dropped meanwhile).
        if (m_handler)
            failExchange(QByteArrayLiteral("TlsHandshake"));
        else
            closeForGood();
        return;
    }
    m_eof = true; // what was received has been read out (a close-delimited body ends here)
    process();
}

void UpstreamConnection::writeRequest()
{
    if (m_pendingRequest.isEmpty() || !m_handler || !m_connection)
        return;
    const QByteArray request = std::exchange(m_pendingRequest, QByteArray());
    m_connection->write(request);
}

void UpstreamConnection::resume()
{
    process();
}

void UpstreamConnection::abort()
{
    m_handler = nullptr;
    closeForGood();
}

void UpstreamConnection::process()
{
    if (m_processing || m_closed || !m_connection)
        return;
    if (!m_handler) {
        // Idle: the registry has nothing to say now. Anything it sends (or its close) ends the connection.
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
    char buffer[kReadChunkBytes];
    while (m_handler && !m_parser->isComplete() && !m_parser->failed() && !m_eof) {
        if (m_parser->headReported() && !m_handler->upstreamBodyRoom()) {
            noRoom = true;
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
        const qsizetype used = m_parser->feed(buffer, n);
        if (m_parser->isComplete() && used < n)
            m_leftover = true;
    }
    bool cutShort = false;
    if (m_handler && m_eof && !m_parser->isComplete() && !m_parser->failed())
        cutShort = !m_parser->feedEof();
    m_processing = false;

    if (!m_handler)
        return; // aborted from inside a handler call
    if (m_parser->failed()) {
        failExchange(m_parser->failureClass());
        return;
    }
    if (cutShort) {
        failExchange(QByteArrayLiteral("RemoteClosed"));
        return;
    }
    if (!m_parser->isComplete()) {
        // No room: the socket is not read until resume(), so the kernel's window holds the registry.
        if (m_connection->readEnabled() == noRoom && m_connection->state() == TlsConnection::State::Open)
            m_connection->setReadEnabled(!noRoom);
        return;
    }
    UpstreamResponseHandler *handler = m_handler;
    m_handler = nullptr;
    const bool reusable = m_parser->keepAlive() && !m_leftover && !m_eof && !m_connection->hasBufferedInput()
        && m_connection->state() == TlsConnection::State::Open;
    if (reusable) {
        if (!m_connection->readEnabled())
            m_connection->setReadEnabled(true); // a close or stray bytes while idle are noticed
        m_idleTimer.start();
        Q_EMIT idle(this);
    } else {
        closeForGood();
    }
    handler->upstreamComplete();
}

void UpstreamConnection::failExchange(const QByteArray &failureClass)
{
    UpstreamResponseHandler *handler = m_handler;
    m_handler = nullptr;
    const bool retryable = m_requestsSent > 1 && m_answerBytes == 0;
    if (handler)
        Q_EMIT failed(this, handler, failureClass, retryable);
    closeForGood();
}

void UpstreamConnection::closeForGood()
{
    if (m_closed)
        return;
    m_closed = true;
    m_idleTimer.stop();
    if (m_dialer)
        m_dialer->abort();
    if (m_connection) {
        m_connection->setReceiver(nullptr);
        m_connection->abort();
    }
    Q_EMIT closed(this);
}

} // namespace coreflow
