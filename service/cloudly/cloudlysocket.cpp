#include "service/cloudly/cloudlysocket.h"

#include "service/transport/tcpdialer.h"
#include "service/transport/tlsclientcontext.h"
#include "service/transport/websocketclienthandshake.h"

#include "shared/contract/refusalnames.h"

#include <openssl/ssl.h>
#include <unistd.h>

namespace coreflow {

CloudlySocket::CloudlySocket(std::shared_ptr<TlsClientContext> tls, qsizetype maxMessageBytes,
                             std::shared_ptr<SessionKeepalive> keepalive, QObject *parent)
    : QObject(parent), m_tlsContext(std::move(tls)), m_maxMessageBytes(maxMessageBytes), m_keepalive(std::move(keepalive)),
      m_dialer(new TcpDialer(this))
{
    connect(m_dialer, &TcpDialer::connected, this, &CloudlySocket::onDialed);
    connect(m_dialer, &TcpDialer::failed, this, &CloudlySocket::failAttempt);
}

CloudlySocket::~CloudlySocket()
{
    m_state = State::Unconnected;
    tearDown();
}

void CloudlySocket::open(const QUrl &url)
{
    if (m_state != State::Unconnected)
        return;
    m_state = State::Connecting;
    m_error.clear();
    const bool secure = url.scheme() == QLatin1String("wss");
    const int defaultPort = secure ? 443 : 80;
    m_host = url.host();
    const int port = url.port(defaultPort);
    const QByteArray host = url.host(QUrl::FullyEncoded).toUtf8();
    const bool bracket = host.contains(':'); // an IPv6 literal
    m_hostHeader = (bracket ? '[' + host + ']' : host) + (port == defaultPort ? QByteArray() : ':' + QByteArray::number(port));
    m_target = url.path(QUrl::FullyEncoded).toUtf8();
    if (m_target.isEmpty())
        m_target = "/";
    if (url.hasQuery())
        m_target += '?' + url.query(QUrl::FullyEncoded).toUtf8();
    if (secure && !m_tlsContext) {
        failAttempt(QStringLiteral("no TLS context for a wss:// URL"));
        return;
    }
    if (!secure)
        m_tlsContext.reset();
    m_dialer->dial(m_host, quint16(port));
}

void CloudlySocket::onDialed(int fd)
{
    if (m_state != State::Connecting) {
        ::close(fd);
        return;
    }
    SSL *ssl = nullptr;
    if (m_tlsContext) {
        ssl = m_tlsContext->newConnection(fd, m_host);
        if (!ssl) {
            ::close(fd);
            failAttempt(QStringLiteral("TLS could not be set up for host %1").arg(m_host));
            return;
        }
        // Decrypted records are cleansed from OpenSSL's read buffer once read: Cloudly's answers
        // carry the bearer's echo, the identity token and the listener key (contract §19.4).
        SSL_set_options(ssl, SSL_OP_CLEANSE_PLAINTEXT);
        // The read buffer is kept (the one Cloudly session): released, OpenSSL would cleanse all of
        // its 64 KiB each time it ran empty, where kept it cleanses only the bytes each read consumed.
        SSL_clear_mode(ssl, SSL_MODE_RELEASE_BUFFERS);
    }
    auto *tls = new TlsConnection(fd, ssl);
    m_handshake = new WebSocketClientHandshake(tls, m_hostHeader, m_target, this);
    connect(m_handshake, &WebSocketClientHandshake::upgraded, this, &CloudlySocket::onUpgraded);
    connect(m_handshake, &WebSocketClientHandshake::failed, this, &CloudlySocket::failAttempt);
    m_handshake->start();
}

void CloudlySocket::onUpgraded(TlsConnection *tls, const QByteArray &rest)
{
    if (m_handshake)
        m_handshake->deleteLater(); // tls is no longer its child once the session takes it
    m_session = new WebSocketSession(tls, rest, m_maxMessageBytes, WebSocketFrameDecoder::Role::Client, {}, this);
    m_session->setReceiver(this);
    m_session->setWriteCoalescing(true); // many small frames per turn: one record, one system call
    m_session->startKeepalive(m_keepalive);
    m_session->setWipeMessages(true);    // answers echo the bearer's request (contract §19.4)
    m_state = State::Open;
    Q_EMIT connected();
}

void CloudlySocket::sessionText(const QByteArray &utf8)
{
    if (m_state == State::Open)
        Q_EMIT textMessage(utf8);
}

void CloudlySocket::sessionClosed(quint16 code)
{
    if (m_state == State::Unconnected)
        return;
    m_lostToSilence = m_session && m_session->endedBySilence();
    m_error = m_lostToSilence && m_keepalive
                  ? QStringLiteral("%1: nothing arrived from Cloudly for %2 ms")
                        .arg(QLatin1StringView(contract::refusal::cloudlySilent))
                        .arg(m_keepalive->silenceDeadlineMs())
                  : QStringLiteral("the Cloudly session closed (code %1)").arg(code);
    m_state = State::Unconnected;
    tearDown();
    Q_EMIT disconnected();
}

void CloudlySocket::failAttempt(const QString &reason)
{
    if (m_state == State::Unconnected)
        return;
    m_error = reason;
    m_state = State::Unconnected;
    tearDown();
    Q_EMIT disconnected();
}

void CloudlySocket::sendText(QByteArrayView utf8, TlsConnection::Content content)
{
    if (m_state == State::Open && m_session)
        m_session->sendText(utf8, content);
}

void CloudlySocket::sendBinary(QByteArrayView payload)
{
    if (m_state == State::Open && m_session)
        m_session->sendBinary(payload);
}

void CloudlySocket::closeNow(quint16 code, QByteArrayView reason)
{
    if (m_state == State::Open && m_session)
        m_session->close(code, reason);
    abort();
}

void CloudlySocket::abort()
{
    if (m_state == State::Unconnected)
        return;
    if (m_error.isEmpty())
        m_error = QStringLiteral("the Cloudly session was closed by the relay");
    m_state = State::Unconnected;
    tearDown();
    Q_EMIT disconnected();
}

void CloudlySocket::tearDown()
{
    m_dialer->abort();
    if (m_handshake) {
        m_handshake->disconnect(this);
        m_handshake->abort();
        m_handshake->deleteLater(); // takes its (closed) TlsConnection with it
        m_handshake = nullptr;
    }
    if (m_session) {
        m_lastReceivedAtMs = m_session->lastReceivedAtMs();
        m_session->setReceiver(nullptr);
        m_session->abort();
        m_session->deleteLater();
        m_session = nullptr;
    }
}

} // namespace coreflow
