#include "service/transport/tlsconnection.h"

#include "service/core/logging.h"
#include "shared/secret.h"

#include <QSocketNotifier>
#include <QTimerEvent>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <cerrno>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace coreflow {

TlsConnection::TlsConnection(int fd, SSL *ssl, QObject *parent)
    : QObject(parent), m_fd(fd), m_ssl(ssl), m_state(ssl ? State::Handshaking : State::Open), m_plaintext(!ssl)
{
    m_readNotifier = new QSocketNotifier(qintptr(fd), QSocketNotifier::Read, this);
    connect(m_readNotifier, &QSocketNotifier::activated, this, &TlsConnection::onReadable);
}

void TlsConnection::setWriteNotification(bool enabled)
{
    if (!m_writeNotifier) {
        if (!enabled)
            return;
        m_writeNotifier = new QSocketNotifier(qintptr(m_fd), QSocketNotifier::Write, this);
        connect(m_writeNotifier, &QSocketNotifier::activated, this, &TlsConnection::onWritable);
    }
    m_writeNotifier->setEnabled(enabled);
}

void TlsConnection::readable()
{
    if (m_receiver)
        m_receiver->tlsReadable();
}

TlsConnection::~TlsConnection()
{
    if (m_ssl)
        SSL_free(m_ssl);
    if (m_fd >= 0)
        ::close(m_fd);
}

void TlsConnection::finish()
{
    if (m_state == State::Closed)
        return;
    m_state = State::Closed;
    m_deferredFlush.stop();
    m_readNotifier->setEnabled(false);
    setWriteNotification(false);
    releaseQueue(); // the queue may hold a secret's bytes (a bearer's head, a frame; §19.4)
    ERR_clear_error();
    if (m_ssl) {
        SSL_free(m_ssl);
        m_ssl = nullptr;
    }
    if (m_fd >= 0) {
        ::close(m_fd);
        m_fd = -1;
    }
    if (m_receiver)
        m_receiver->tlsClosed();
}

void TlsConnection::continueHandshake()
{
    ERR_clear_error();
    const int rc = SSL_do_handshake(m_ssl);
    if (rc == 1) {
        m_state = State::Open;
        updateWriteNotifier();
        if (m_receiver)
            m_receiver->tlsOpen();
        if (m_state != State::Open)
            return;
        // With read-ahead the handshake may have taken the first application records off the socket
        // already: the notifier would never report them.
        readable();
        return;
    }
    switch (SSL_get_error(m_ssl, rc)) {
    case SSL_ERROR_WANT_READ:
        setWriteNotification(false);
        return;
    case SSL_ERROR_WANT_WRITE:
        setWriteNotification(true);
        return;
    default: {
        const long verify = SSL_get_verify_result(m_ssl);
        m_handshakeFailure = verify != X509_V_OK
                                 ? QByteArray("certificate verification failed: ") + X509_verify_cert_error_string(verify)
                                 : QByteArray("TLS handshake failed");
        qCDebug(logListener) << "TLS handshake failed";
        finish();
    }
    }
}

void TlsConnection::startHandshake()
{
    if (m_state == State::Handshaking)
        continueHandshake();
}

void TlsConnection::onReadable()
{
    if (m_state == State::Handshaking)
        return continueHandshake();
    if (m_state == State::Open)
        readable();
}

void TlsConnection::onWritable()
{
    if (m_state == State::Handshaking)
        return continueHandshake();
    if (m_state != State::Open)
        return;
    if (m_readWantsWrite) {
        m_readWantsWrite = false;
        readable();
        if (m_state != State::Open)
            return;
    }
    flush();
}

qsizetype TlsConnection::read(char *data, qsizetype max)
{
    if (m_state != State::Open)
        return m_state == State::Closed ? -1 : 0;
    if (m_plaintext) {
        const ssize_t n = ::recv(m_fd, data, size_t(max), 0);
        if (n > 0) {
            m_bytesRead += n;
            return qsizetype(n);
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
            return 0;
        finish(); // orderly close (0) or a transport error
        return -1;
    }
    ERR_clear_error();
    const int rc = SSL_read(m_ssl, data, int(qMin<qsizetype>(max, 1 << 30)));
    if (rc > 0) {
        m_bytesRead += rc;
        return rc;
    }
    switch (SSL_get_error(m_ssl, rc)) {
    case SSL_ERROR_WANT_READ:
        return 0;
    case SSL_ERROR_WANT_WRITE:
        m_readWantsWrite = true;
        setWriteNotification(true);
        return 0;
    default: // close_notify, EOF, reset, protocol error
        finish();
        return -1;
    }
}

QString TlsConnection::peerAddress() const
{
    if (m_fd < 0)
        return QString();
    sockaddr_storage address{};
    socklen_t length = sizeof(address);
    if (::getpeername(m_fd, reinterpret_cast<sockaddr *>(&address), &length) != 0)
        return QString();
    char host[INET6_ADDRSTRLEN] = {};
    if (address.ss_family == AF_INET) {
        const auto *v4 = reinterpret_cast<const sockaddr_in *>(&address);
        ::inet_ntop(AF_INET, &v4->sin_addr, host, sizeof(host));
        return QStringLiteral("%1:%2").arg(QLatin1StringView(host)).arg(ntohs(v4->sin_port));
    }
    if (address.ss_family == AF_INET6) {
        const auto *v6 = reinterpret_cast<const sockaddr_in6 *>(&address);
        ::inet_ntop(AF_INET6, &v6->sin6_addr, host, sizeof(host));
        return QStringLiteral("[%1]:%2").arg(QLatin1StringView(host)).arg(ntohs(v6->sin6_port));
    }
    return QString();
}

bool TlsConnection::hasBufferedInput() const { return m_ssl && m_state == State::Open && SSL_has_pending(m_ssl); }

void TlsConnection::write(QByteArrayView bytes, Content content)
{
    if (m_state == State::Closed || bytes.isEmpty() || m_shutdownRequested)
        return;
    if (m_writesSecret)
        content = Content::Secret;
    if (pendingBytes() == 0 && m_state == State::Open) {
        // Fast path: nothing queued, hand the bytes to OpenSSL directly and keep only the rest.
        qsizetype offset = 0;
        while (offset < bytes.size()) {
            const qsizetype n = writeSome(bytes.data() + offset, bytes.size() - offset);
            if (n > 0) {
                offset += n;
                continue;
            }
            if (n == 0)
                break;
            finish();
            return;
        }
        if (offset == bytes.size())
            return;
        m_out = QByteArray(bytes.data() + offset, bytes.size() - offset);
        m_outOffset = 0;
        m_outHoldsSecret = content == Content::Secret;
        updateWriteNotifier();
        return;
    }
    queue(bytes, content);
    updateWriteNotifier();
}

void TlsConnection::queue(QByteArrayView bytes, Content content)
{
    if (content == Content::Secret)
        m_outHoldsSecret = true;
    // While it holds a secret, grown by hand so that no realloc() frees an unwiped copy (§19.4).
    if (m_outHoldsSecret && !m_out.isEmpty() && m_out.capacity() - m_out.size() < bytes.size()) {
        QByteArray grown;
        grown.reserve(qMax(2 * m_out.size(), m_out.size() + bytes.size()));
        grown.append(m_out.constData(), m_out.size());
        Secret::wipe(m_out);
        m_out = std::move(grown);
    }
    m_out.append(bytes.data(), bytes.size());
}

void TlsConnection::releaseQueue()
{
    if (m_outHoldsSecret)
        Secret::wipe(m_out);
    else
        m_out = QByteArray();
    m_outOffset = 0;
    m_outHoldsSecret = false;
}

qsizetype TlsConnection::writeSome(const char *data, qsizetype size)
{
    if (m_plaintext) {
        const ssize_t n = ::send(m_fd, data, size_t(size), MSG_NOSIGNAL);
        if (n >= 0) {
            m_bytesWritten += n;
            return qsizetype(n);
        }
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1;
    }
    ERR_clear_error();
    const int rc = SSL_write(m_ssl, data, int(qMin<qsizetype>(size, 1 << 30)));
    if (rc > 0) {
        m_bytesWritten += rc;
        return rc;
    }
    const int error = SSL_get_error(m_ssl, rc);
    return error == SSL_ERROR_WANT_WRITE || error == SSL_ERROR_WANT_READ ? 0 : -1;
}

void TlsConnection::writeDeferred(QByteArrayView bytes, Content content)
{
    if (m_state == State::Closed || bytes.isEmpty() || m_shutdownRequested)
        return;
    if (m_writesSecret)
        content = Content::Secret;
    if (pendingBytes() == 0 && bytes.size() >= kDeferredFlushBytes)
        return write(bytes, content);
    queue(bytes, content);
    if (m_state != State::Open)
        return;
    // Already waiting for the socket to take more: the write notifier sends these too.
    const bool waitingForSocket = m_writeNotifier && m_writeNotifier->isEnabled();
    if (waitingForSocket)
        return;
    if (pendingBytes() >= kDeferredFlushBytes) {
        m_deferredFlush.stop();
        drain(false);
    } else if (!m_deferredFlush.isActive()) {
        m_deferredFlush.start(0, this);
    }
}

void TlsConnection::timerEvent(QTimerEvent *event)
{
    if (event->timerId() != m_deferredFlush.timerId())
        return QObject::timerEvent(event);
    m_deferredFlush.stop();
    if (m_state == State::Open)
        flush();
}

void TlsConnection::flush() { drain(true); }

void TlsConnection::drain(bool notify)
{
    bool wrote = false;
    while (pendingBytes() > 0) {
        const qsizetype n = writeSome(m_out.constData() + m_outOffset, pendingBytes());
        if (n > 0) {
            m_outOffset += n;
            wrote = true;
            continue;
        }
        if (n == 0)
            break;
        finish();
        return;
    }
    if (pendingBytes() == 0) {
        releaseQueue(); // the queue's allocation goes back while idle (wiped if it held a secret)
    } else if (m_outOffset > (1 << 20) && m_outOffset > m_out.size() / 2) {
        QByteArray rest(m_out.constData() + m_outOffset, pendingBytes());
        const bool holdsSecret = m_outHoldsSecret;
        releaseQueue();
        m_out = std::move(rest);
        m_outHoldsSecret = holdsSecret;
        m_outOffset = 0;
    }
    updateWriteNotifier();
    if (notify && wrote && m_receiver && m_state == State::Open)
        m_receiver->tlsWritten();
    if (m_state == State::Open && m_shutdownRequested && pendingBytes() == 0) {
        ERR_clear_error();
        if (m_ssl)
            SSL_shutdown(m_ssl); // close_notify, best effort; the peer's answer is not awaited
        ::shutdown(m_fd, SHUT_WR);
        finish();
    }
}

void TlsConnection::updateWriteNotifier()
{
    if (m_state == State::Closed)
        return;
    setWriteNotification(pendingBytes() > 0 || m_readWantsWrite);
}

void TlsConnection::setReadEnabled(bool enabled)
{
    m_readEnabled = enabled;
    if (m_state != State::Closed)
        m_readNotifier->setEnabled(enabled);
}

void TlsConnection::shutdown()
{
    if (m_state == State::Closed)
        return;
    if (m_state == State::Handshaking)
        return abort();
    m_shutdownRequested = true;
    flush();
}

void TlsConnection::abort()
{
    // What the socket takes now still goes (an answer written earlier in this turn and deferred, a
    // Close frame just written); nothing is waited for. Without this a deferred answer was dropped with
    // the queue.
    if (m_state == State::Open && pendingBytes() > 0)
        drain(false);
    finish();
}

} // namespace coreflow
