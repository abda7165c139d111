#include "upstreamconnection.h"

#include "registrylog.h"
#include "registryrefusal.h"
#include "upstreamresponsehandler.h"

#include <QSslSocket>

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

UpstreamConnection::UpstreamConnection(const QUrl &origin, const QSslConfiguration &tls, QObject *parent)
    : QObject(parent), m_origin(origin), m_tls(origin.scheme() != QLatin1String("http"))
{
    m_events = std::make_unique<ParserEvents>(*this);
    m_parser = std::make_unique<UpstreamResponseParser>(*m_events);
    m_socket = new QSslSocket(this);
    if (m_tls) {
        m_socket->setSslConfiguration(tls);
        connect(m_socket, &QSslSocket::encrypted, this, [this] {
            m_ready = true;
            writeRequest();
        });
    } else {
        connect(m_socket, &QAbstractSocket::connected, this, [this] {
            m_ready = true;
            writeRequest();
        });
    }
    connect(m_socket, &QIODevice::readyRead, this, &UpstreamConnection::process);
    connect(m_socket, &QAbstractSocket::disconnected, this, [this] {
        m_eof = true;
        process();
    });
    connect(m_socket, &QAbstractSocket::errorOccurred, this,
            [this](QAbstractSocket::SocketError error) { onSocketError(int(error)); });
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
    if (m_socket) {
        m_socket->disconnect(this);
        m_socket->abort();
    }
}

void UpstreamConnection::send(const UpstreamRequest &request, UpstreamResponseHandler *handler)
{
    m_idleTimer.stop();
    m_handler = handler;
    m_answerBytes = 0;
    m_leftover = false;
    m_parser->reset(request.method == "HEAD");
    m_socket->setReadBufferSize(request.readBufferBytes > 0 ? request.readBufferBytes : kDefaultReadBufferBytes);

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
        writeRequest();
        return;
    }
    if (m_socket->state() != QAbstractSocket::UnconnectedState)
        return; // connecting: written once up
    const quint16 port = quint16(m_origin.port(m_tls ? 443 : 80));
    if (m_tls)
        m_socket->connectToHostEncrypted(m_origin.host(), port);
    else
        m_socket->connectToHost(m_origin.host(), port);
    m_socket->setSocketOption(QAbstractSocket::LowDelayOption, 1);
}

void UpstreamConnection::writeRequest()
{
    if (m_pendingRequest.isEmpty() || !m_handler)
        return;
    m_socket->write(m_pendingRequest);
    m_pendingRequest.clear();
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
    if (m_processing || m_closed)
        return;
    if (!m_handler) {
        // Idle: the registry has nothing to say now. Anything it sends (or its close) ends the connection.
        if (m_eof || m_socket->bytesAvailable() > 0)
            closeForGood();
        return;
    }
    m_processing = true;
    char buffer[kReadChunkBytes];
    while (m_handler && !m_parser->isComplete() && !m_parser->failed()) {
        if (m_parser->headReported() && !m_handler->upstreamBodyRoom())
            break;
        const qint64 n = m_socket->read(buffer, sizeof buffer);
        if (n <= 0)
            break;
        m_answerBytes += n;
        const qsizetype used = m_parser->feed(buffer, n);
        if (m_parser->isComplete() && used < n)
            m_leftover = true;
    }
    bool cutShort = false;
    if (m_handler && m_eof && !m_parser->isComplete() && !m_parser->failed() && m_socket->bytesAvailable() == 0)
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
    if (!m_parser->isComplete())
        return;
    UpstreamResponseHandler *handler = m_handler;
    m_handler = nullptr;
    const bool reusable = m_parser->keepAlive() && !m_leftover && !m_eof && m_socket->bytesAvailable() == 0
        && m_socket->state() == QAbstractSocket::ConnectedState;
    if (reusable) {
        m_idleTimer.start();
        Q_EMIT idle(this);
    } else {
        closeForGood();
    }
    handler->upstreamComplete();
}

void UpstreamConnection::onSocketError(int error)
{
    const auto socketError = QAbstractSocket::SocketError(error);
    if (socketError == QAbstractSocket::RemoteHostClosedError) {
        m_eof = true; // what was received is still read out (a close-delimited body ends here)
        process();
        return;
    }
    if (!m_handler) {
        closeForGood();
        return;
    }
    failExchange(RegistryRefusal::failureClass(socketError));
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
    m_socket->disconnect(this);
    m_socket->abort();
    Q_EMIT closed(this);
}

} // namespace coreflow
