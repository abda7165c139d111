#include "bridgedhttpconnection.h"

#include <QSocketNotifier>

#include <cerrno>
#include <sys/socket.h>
#include <unistd.h>

namespace coreflow {

BridgedHttpConnection::BridgedHttpConnection(TlsConnection *tls, int localFd, const QByteArray &firstBytes, QObject *parent)
    : QObject(parent), m_tls(tls), m_fd(localFd), m_toLocal(firstBytes)
{
    m_tls->setParent(this);
    m_localRead = new QSocketNotifier(qintptr(m_fd), QSocketNotifier::Read, this);
    m_localWrite = new QSocketNotifier(qintptr(m_fd), QSocketNotifier::Write, this);
    m_localWrite->setEnabled(false);
    connect(m_localRead, &QSocketNotifier::activated, this, &BridgedHttpConnection::toClient);
    connect(m_localWrite, &QSocketNotifier::activated, this, &BridgedHttpConnection::fromClient);
    m_tls->setReceiver(this);
    fromClient();
}

BridgedHttpConnection::~BridgedHttpConnection()
{
    if (m_fd >= 0)
        ::close(m_fd);
}

bool BridgedHttpConnection::flushToLocal()
{
    while (m_toLocalOffset < m_toLocal.size()) {
        const ssize_t n = ::send(m_fd, m_toLocal.constData() + m_toLocalOffset, size_t(m_toLocal.size() - m_toLocalOffset),
                                 MSG_NOSIGNAL);
        if (n > 0) {
            m_toLocalOffset += n;
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            m_localWrite->setEnabled(true);
            m_tls->setReadEnabled(false);
            return false;
        }
        if (n < 0 && errno == EINTR)
            continue;
        end(); // the Qt side is gone
        return false;
    }
    m_toLocal = QByteArray();
    m_toLocalOffset = 0;
    m_localWrite->setEnabled(false);
    if (!m_tls->readEnabled() && m_tls->state() == TlsConnection::State::Open)
        m_tls->setReadEnabled(true);
    return true;
}

void BridgedHttpConnection::fromClient()
{
    if (m_ended || !flushToLocal())
        return;
    char buffer[kChunkBytes];
    while (!m_ended) {
        if (m_tls->pendingBytes() >= kTlsWatermarkBytes) {
            // The client is not reading its answers: take no further requests from it until it does
            // (toClient() resumes), or Qt would queue answers without bound.
            m_tls->setReadEnabled(false);
            return;
        }
        const qsizetype n = m_tls->read(buffer, kChunkBytes);
        if (n <= 0)
            return;
        m_toLocal = QByteArray(buffer, n);
        m_toLocalOffset = 0;
        if (!flushToLocal())
            return;
    }
}

void BridgedHttpConnection::toClient()
{
    if (m_ended)
        return;
    char buffer[64 * 1024];
    while (!m_ended && m_tls->pendingBytes() < kTlsWatermarkBytes) {
        const ssize_t n = ::recv(m_fd, buffer, sizeof buffer, 0);
        if (n > 0) {
            m_tls->write(QByteArrayView(buffer, n));
            continue;
        }
        if (n == 0) { // Qt closed its side: flush, close_notify, close
            m_localRead->setEnabled(false);
            m_tls->shutdown();
            return;
        }
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK)
            end();
        else
            m_localRead->setEnabled(true);
        return;
    }
    if (m_ended)
        return;
    m_localRead->setEnabled(m_tls->pendingBytes() < kTlsWatermarkBytes);
    if (m_tls->pendingBytes() < kTlsWatermarkBytes && !m_tls->readEnabled() && m_toLocalOffset >= m_toLocal.size()
        && m_tls->state() == TlsConnection::State::Open) {
        m_tls->setReadEnabled(true);
        fromClient();
    }
}

void BridgedHttpConnection::end()
{
    if (m_ended)
        return;
    m_ended = true;
    m_localRead->setEnabled(false);
    m_localWrite->setEnabled(false);
    if (m_fd >= 0) {
        ::close(m_fd);
        m_fd = -1;
    }
    m_tls->setReceiver(nullptr);
    if (m_tls->state() != TlsConnection::State::Closed)
        m_tls->abort();
    deleteLater();
}

} // namespace coreflow
