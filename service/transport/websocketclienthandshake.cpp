#include "service/transport/websocketclienthandshake.h"

#include "service/transport/httprequesthead.h"
#include "service/transport/websocketacceptkey.h"

#include <QTimer>

#include <sodium.h>

namespace coreflow {

WebSocketClientHandshake::WebSocketClientHandshake(TlsConnection *tls, QByteArray hostHeader, QByteArray target,
                                                   QObject *parent)
    : QObject(parent), m_tls(tls), m_hostHeader(std::move(hostHeader)), m_target(std::move(target)),
      m_answer(HttpMessageParser::Kind::Response, kMaxHeadBytes)
{
    m_tls->setParent(this);
    unsigned char nonce[16];
    randombytes_buf(nonce, sizeof nonce);
    m_key = QByteArray(reinterpret_cast<const char *>(nonce), sizeof nonce).toBase64();
    m_tls->setReceiver(this);
}

WebSocketClientHandshake::~WebSocketClientHandshake() = default;

void WebSocketClientHandshake::start()
{
    QTimer::singleShot(0, this, [this] {
        if (m_done)
            return;
        if (m_tls->state() == TlsConnection::State::Open)
            sendRequest();
        else
            m_tls->startHandshake();
    });
}

void WebSocketClientHandshake::abort()
{
    m_done = true;
    if (m_tls) {
        m_tls->setReceiver(nullptr);
        m_tls->abort();
    }
}

void WebSocketClientHandshake::sendRequest()
{
    if (m_requestSent || m_done)
        return;
    m_requestSent = true;
    const HttpClientRequest request{QByteArrayLiteral("GET"), m_target,
                                    {{QByteArrayLiteral("Upgrade"), QByteArrayLiteral("websocket")},
                                     {QByteArrayLiteral("Connection"), QByteArrayLiteral("Upgrade")},
                                     {QByteArrayLiteral("Sec-WebSocket-Key"), m_key},
                                     {QByteArrayLiteral("Sec-WebSocket-Version"), QByteArrayLiteral("13")}}};
    m_tls->write(httpRequestHead(request, m_hostHeader));
}

void WebSocketClientHandshake::tlsClosed()
{
    if (m_done)
        return;
    const QByteArray why = m_tls->handshakeFailure();
    fail(!why.isEmpty() ? QString::fromLatin1(why)
         : m_requestSent ? QStringLiteral("the connection closed before the WebSocket upgrade was answered")
                         : QStringLiteral("the connection closed during the TLS handshake"));
}

void WebSocketClientHandshake::onReadyRead()
{
    if (m_done)
        return;
    const HttpHeadReader::Outcome outcome = m_answer.readFrom(*m_tls);
    if (!m_requestSent && !m_answer.bytes().isEmpty())
        return fail(QStringLiteral("the server spoke before the WebSocket upgrade request"));
    switch (outcome) {
    case HttpHeadReader::Outcome::Waiting:
        return;
    case HttpHeadReader::Outcome::Complete:
        return decide();
    case HttpHeadReader::Outcome::Failed:
        return fail(QStringLiteral("the answer to the WebSocket upgrade is not HTTP/1.1"));
    case HttpHeadReader::Outcome::TooLarge:
        return fail(QStringLiteral("the answer to the WebSocket upgrade has a header block over %1 bytes").arg(kMaxHeadBytes));
    }
}

void WebSocketClientHandshake::decide()
{
    const HttpMessageParser &answer = m_answer.parser();
    const QByteArray &bytes = m_answer.bytes();
    const qsizetype headEnd = bytes.indexOf("\r\n\r\n");
    if (answer.statusCode() != 101)
        return fail(QStringLiteral("the WebSocket upgrade was answered with HTTP status %1").arg(answer.statusCode()));
    if (headEnd < 0 || headEnd + 4 > kMaxHeadBytes)
        return fail(QStringLiteral("the 101 answer's header block does not end in CRLF CRLF within %1 bytes").arg(kMaxHeadBytes));
    bool connectionUpgrade = false;
    for (const QByteArray &token : answer.headers().joined("connection").toLower().split(','))
        connectionUpgrade = connectionUpgrade || token.trimmed() == "upgrade";
    if (answer.headers().last("upgrade").toLower() != "websocket" || !connectionUpgrade)
        return fail(QStringLiteral("the 101 answer does not name the websocket upgrade"));
    if (answer.headers().last("sec-websocket-accept") != webSocketAcceptKey(m_key))
        return fail(QStringLiteral("the 101 answer carries the wrong Sec-WebSocket-Accept"));
    if (answer.headers().has("sec-websocket-extensions") || answer.headers().has("sec-websocket-protocol"))
        return fail(QStringLiteral("the 101 answer names an extension or subprotocol that was not offered"));
    m_done = true;
    m_tls->setReceiver(nullptr); // the session sets itself
    TlsConnection *tls = m_tls;
    m_tls = nullptr;
    Q_EMIT upgraded(tls, bytes.mid(headEnd + 4));
}

void WebSocketClientHandshake::fail(const QString &reason)
{
    if (m_done)
        return;
    m_done = true;
    if (m_tls) {
        m_tls->setReceiver(nullptr);
        m_tls->abort();
    }
    Q_EMIT failed(reason);
}

} // namespace coreflow
