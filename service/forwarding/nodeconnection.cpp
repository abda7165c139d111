#include "nodeconnection.h"

#include "contract/envelope.h"

#include <QTimer>

namespace coreflow {

NodeConnection::NodeConnection(QWebSocket *socket, quint64 connectionId, qint64 acceptedAt, QObject *parent)
    : QObject(parent), acceptedAtMs(acceptedAt), m_socket(socket), m_id(connectionId)
{
    m_socket->setParent(nullptr);
    m_socket->setMaxAllowedIncomingMessageSize(quint64(contract::Envelope::maxFrameBytes));
    m_socket->setMaxAllowedIncomingFrameSize(quint64(contract::Envelope::maxFrameBytes));
    connect(m_socket.get(), &QWebSocket::textMessageReceived, this,
            [this](const QString &message) { Q_EMIT frameReceived(this, message.toUtf8()); });
    // The listener's lanes carry text frames only (docs/contract.md §3): a binary frame closes the socket.
    connect(m_socket.get(), &QWebSocket::binaryMessageReceived, this, [this](const QByteArray &) {
        m_socket->close(QWebSocketProtocol::CloseCodeDatatypeNotSupported, QStringLiteral("binary frames are not served here"));
    });
    connect(m_socket.get(), &QWebSocket::disconnected, this, [this] {
        if (!m_closedEmitted) {
            m_closedEmitted = true;
            Q_EMIT closed(this);
        }
    });
}

NodeConnection::~NodeConnection()
{
    if (m_socket) {
        m_socket->disconnect(this);
        m_socket->abort();
    }
}

void NodeConnection::retire()
{
    if (m_socket && m_socket->state() != QAbstractSocket::ConnectedState) {
        // A socket this relay closed (e.g. the re-registration wave's 4000 close) may still be flushing
        // its close frame through TLS: aborting it now would drop the frame and the node would see 1006.
        // It drains for a bounded grace period under the same owner, then goes.
        QWebSocket *closing = m_socket.release();
        closing->disconnect(this);
        closing->setParent(parent());
        QTimer::singleShot(kCloseGraceMs, closing, [closing] {
            closing->abort();
            closing->deleteLater();
        });
    }
    deleteLater();
}

void NodeConnection::send(const QByteArray &frame)
{
    if (isOpen())
        m_socket->sendTextMessage(QString::fromUtf8(frame));
}

void NodeConnection::close(QWebSocketProtocol::CloseCode code, const QString &reason)
{
    if (m_socket)
        m_socket->close(code, reason);
}

bool NodeConnection::isOpen() const { return m_socket && m_socket->state() == QAbstractSocket::ConnectedState; }

QString NodeConnection::describe() const
{
    return binding ? QStringLiteral("node %1").arg(binding->nodeId) : QStringLiteral("connection #%1").arg(m_id);
}

} // namespace coreflow
