#include "tests/peers/corestoreexchange.h"

#include <QHttpServerResponder>
#include <QSslSocket>
#include <QTcpSocket>

namespace coreflow::peers {

namespace {
constexpr qint64 maxQueuedBytes = 256 * 1024;
constexpr qint64 pieceBytes = 64 * 1024;
constexpr int paceTickMs = 20;
} // namespace

CorestoreExchange::CorestoreExchange(QHttpServerResponder &&responder, Plan plan, QObject *parent)
    : QObject(parent),
      m_responder(std::make_unique<QHttpServerResponder>(std::move(responder))),
      m_socket(m_responder->socket()),
      m_plan(std::move(plan))
{
    m_target = m_plan.sendBytes < 0 ? m_plan.declaredLength : qMin(m_plan.sendBytes, m_plan.declaredLength);
    m_paceTimer.setInterval(paceTickMs);
    connect(&m_paceTimer, &QTimer::timeout, this, &CorestoreExchange::pump);
    if (m_socket) {
        connect(m_socket, &QAbstractSocket::disconnected, this, [this] { finish(false); });
        connect(m_socket, &QObject::destroyed, this, [this] { finish(false); });
        const auto drained = [this] {
            if (m_begun && m_plan.bytesPerSecond <= 0)
                pump();
        };
        connect(m_socket, &QIODevice::bytesWritten, this, drained);
        if (auto *ssl = qobject_cast<QSslSocket *>(m_socket.data()))
            connect(ssl, &QSslSocket::encryptedBytesWritten, this, drained);
    }
}

CorestoreExchange::~CorestoreExchange() = default;

qint64 CorestoreExchange::queuedBytes() const
{
    if (!m_socket)
        return 0;
    auto *ssl = qobject_cast<QSslSocket *>(m_socket.data());
    return m_socket->bytesToWrite() + (ssl ? ssl->encryptedBytesToWrite() : 0);
}

bool CorestoreExchange::socketUsable() const
{
    return m_socket && m_socket->state() == QAbstractSocket::ConnectedState && m_socket->isOpen();
}

void CorestoreExchange::start()
{
    QTimer::singleShot(int(qMax<qint64>(0, m_plan.delayMs)), this, &CorestoreExchange::begin);
}

void CorestoreExchange::begin()
{
    if (m_done)
        return;
    if (!socketUsable())
        return finish(false);
    switch (m_plan.mode) {
    case Mode::Hang:
        return; // holds the responder; finished when the client goes
    case Mode::Drop:
        m_socket->abort();
        return finish(false);
    case Mode::Respond:
        break;
    }
    m_responder->writeStatusLine(QHttpServerResponder::StatusCode(m_plan.status));
    for (const auto &header : m_plan.headers)
        m_responder->writeHeader(header.first, header.second);
    m_responder->writeHeader("Content-Length", QByteArray::number(m_plan.declaredLength));
    m_responder->writeBody("", 0); // ends the header block
    m_begun = true;
    m_paceClock.start();
    if (m_plan.bytesPerSecond > 0)
        m_paceTimer.start();
    pump();
}

void CorestoreExchange::pump()
{
    if (m_done || !m_begun)
        return;
    if (!socketUsable())
        return finish(false);
    qint64 allowance = m_target - m_sent;
    if (m_plan.bytesPerSecond > 0) {
        // Never faster than the rate: a late tick catches up by at most two ticks' worth, so a busy
        // event loop makes the body slower, never a burst.
        const qint64 due = m_paceClock.elapsed() * m_plan.bytesPerSecond / 1000;
        const qint64 perTick = qMax<qint64>(1, m_plan.bytesPerSecond * paceTickMs / 1000);
        allowance = qMin(allowance, qMin(2 * perTick, qMax<qint64>(0, due - m_sent)));
    }
    QByteArray buffer;
    while (allowance > 0 && queuedBytes() < maxQueuedBytes) {
        const qint64 n = qMin(allowance, pieceBytes);
        buffer.resize(qsizetype(n));
        m_plan.source(m_sent, buffer.data(), n);
        m_responder->writeBody(buffer.constData(), n);
        m_sent += n;
        allowance -= n;
    }
    if (m_sent < m_target)
        return;
    m_paceTimer.stop();
    if (m_target == m_plan.declaredLength)
        return finish(true);
    if (m_plan.closeAfterPartial)
        closeWhenFlushed();
    // else: a stall, silent with the connection open until the client goes
}

void CorestoreExchange::closeWhenFlushed()
{
    if (!socketUsable())
        return finish(false);
    if (queuedBytes() > 0) {
        QTimer::singleShot(5, this, &CorestoreExchange::closeWhenFlushed);
        return;
    }
    m_socket->disconnectFromHost();
    finish(false);
}

void CorestoreExchange::finish(bool completely)
{
    if (m_done)
        return;
    m_done = true;
    m_paceTimer.stop();
    Q_EMIT finished(completely);
}

} // namespace coreflow::peers
