#include "service/transport/tcpdialer.h"

#include "service/transport/tcpliveness.h"

#include <QHostInfo>
#include <QSocketNotifier>

#include <cerrno>
#include <cstring>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

namespace coreflow {

TcpDialer::TcpDialer(QObject *parent) : QObject(parent) {}

TcpDialer::~TcpDialer() { abort(); }

void TcpDialer::dial(const QString &host, quint16 port)
{
    abort();
    m_host = host;
    m_port = port;
    m_addresses.clear();
    m_next = 0;
    m_lastError.clear();
    m_lastErrno = 0;
    m_failure = Failure::None;
    const QHostAddress literal(host);
    if (!literal.isNull()) {
        m_addresses.append(literal);
        // Reported from the event loop like every other outcome, never from inside dial().
        QMetaObject::invokeMethod(this, [this, generation = m_generation] {
            if (generation == m_generation)
                tryNext();
        }, Qt::QueuedConnection);
        return;
    }
    m_lookupId = QHostInfo::lookupHost(host, this, &TcpDialer::onResolved);
}

void TcpDialer::abort()
{
    ++m_generation; // a queued start of an earlier dial() does nothing now
    if (m_lookupId >= 0) {
        QHostInfo::abortHostLookup(m_lookupId);
        m_lookupId = -1;
    }
    m_addresses.clear();
    m_next = 0;
    closeAttempt();
}

void TcpDialer::closeAttempt()
{
    if (m_notifier) {
        m_notifier->setEnabled(false);
        m_notifier->deleteLater();
        m_notifier = nullptr;
    }
    if (m_fd >= 0) {
        ::close(m_fd);
        m_fd = -1;
    }
}

void TcpDialer::onResolved(const QHostInfo &info)
{
    if (info.lookupId() != m_lookupId)
        return;
    m_lookupId = -1;
    if (info.error() != QHostInfo::NoError || info.addresses().isEmpty()) {
        m_failure = Failure::HostNotFound;
        Q_EMIT failed(QStringLiteral("could not resolve %1: %2").arg(m_host, info.errorString()));
        return;
    }
    m_addresses = info.addresses();
    tryNext();
}

void TcpDialer::tryNext()
{
    closeAttempt();
    while (m_next < m_addresses.size()) {
        const QHostAddress address = m_addresses.at(m_next++);
        sockaddr_storage storage{};
        socklen_t length = 0;
        if (address.protocol() == QAbstractSocket::IPv4Protocol) {
            auto *in = reinterpret_cast<sockaddr_in *>(&storage);
            in->sin_family = AF_INET;
            in->sin_port = htons(m_port);
            in->sin_addr.s_addr = htonl(address.toIPv4Address());
            length = sizeof(sockaddr_in);
        } else if (address.protocol() == QAbstractSocket::IPv6Protocol) {
            auto *in6 = reinterpret_cast<sockaddr_in6 *>(&storage);
            in6->sin6_family = AF_INET6;
            in6->sin6_port = htons(m_port);
            const Q_IPV6ADDR bytes = address.toIPv6Address();
            std::memcpy(&in6->sin6_addr, bytes.c, 16);
            in6->sin6_scope_id = address.scopeId().toUInt();
            length = sizeof(sockaddr_in6);
        } else {
            continue;
        }
        m_fd = ::socket(storage.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (m_fd < 0) {
            m_lastErrno = errno;
            m_lastError = QString::fromLocal8Bit(std::strerror(errno));
            continue;
        }
        const int one = 1;
        ::setsockopt(m_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        applyTcpLiveness(m_fd); // a peer that goes silent ends the connection (§3.3)
        if (::connect(m_fd, reinterpret_cast<sockaddr *>(&storage), length) == 0 || errno == EINPROGRESS) {
            m_notifier = new QSocketNotifier(qintptr(m_fd), QSocketNotifier::Write, this);
            connect(m_notifier, &QSocketNotifier::activated, this, &TcpDialer::onWritable);
            return;
        }
        m_lastErrno = errno;
        m_lastError = QString::fromLocal8Bit(std::strerror(errno));
        ::close(m_fd);
        m_fd = -1;
    }
    m_failure = m_lastErrno == ECONNREFUSED ? Failure::ConnectionRefused : Failure::Other;
    Q_EMIT failed(QStringLiteral("could not connect to %1 port %2: %3")
                      .arg(m_host)
                      .arg(m_port)
                      .arg(m_lastError.isEmpty() ? QStringLiteral("no usable address") : m_lastError));
}

void TcpDialer::onWritable()
{
    int error = 0;
    socklen_t length = sizeof error;
    if (::getsockopt(m_fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0)
        error = errno;
    if (error != 0) {
        m_lastErrno = error;
        m_lastError = QString::fromLocal8Bit(std::strerror(error));
        tryNext();
        return;
    }
    const int fd = m_fd;
    m_fd = -1; // handed over
    closeAttempt();
    m_addresses.clear();
    Q_EMIT connected(fd);
}

} // namespace coreflow
