#include "service/forwarding/nodeconnection.h"

#include "shared/contract/refusalquote.h"

namespace coreflow {

NodeConnection::NodeConnection(WebSocketSession *session, quint64 connectionId, qint64 acceptedAt, Owner &owner, QObject *parent)
    : QObject(parent), m_owner(owner), m_session(session), m_id(connectionId), m_acceptedAtMs(acceptedAt)
{
    m_session->setParent(this);
    m_session->setReceiver(this);
}

// The listener's lanes carry text frames only (docs/contract.md §3): a binary frame closes the socket.
void NodeConnection::sessionBinary(const QByteArray &)
{
    m_session->close(QWebSocketProtocol::CloseCodeDatatypeNotSupported, "binary frames are not served here");
}

void NodeConnection::sessionClosed(quint16)
{
    if (!m_closedEmitted) {
        m_closedEmitted = true;
        m_owner.nodeClosed(this);
    }
}

NodeConnection::~NodeConnection()
{
    if (m_session) {
        m_session->setReceiver(nullptr);
        m_session->abort();
    }
}

void NodeConnection::retire()
{
    if (m_session && m_session->parent() == this) {
        // A session this relay closed (e.g. the re-registration wave's 4000 close) may still be in its
        // closing handshake: aborting it now would drop the frame and the node would see 1006. It
        // finishes on its own (bounded by kCloseGraceMs), then goes.
        m_session->setReceiver(nullptr);
        m_session->setParent(parent());
        m_session->releaseWhenClosed();
        m_session = nullptr;
    }
    deleteLater();
}

void NodeConnection::send(const QByteArray &frame)
{
    if (isOpen())
        m_session->sendText(frame);
}

void NodeConnection::close(quint16 code, const QString &reason)
{
    if (m_session)
        m_session->close(code, reason.toUtf8());
}

bool NodeConnection::isOpen() const { return m_session && m_session->isOpen(); }

QString NodeConnection::keepaliveState() const
{
    return WebSocketSession::keepaliveStateName(m_session ? m_session->keepaliveState() : WebSocketSession::KeepaliveState::Off);
}

QString NodeConnection::describe() const
{
    return m_binding ? QStringLiteral("node %1").arg(contract::RefusalQuote::nameOrLength(m_binding->nodeId)) : QStringLiteral("connection #%1").arg(m_id);
}

void NodeConnection::bindTo(const contract::SessionBinding &binding, qint64 carrierCount, qint64 atMs)
{
    m_binding = binding;
    m_acceptedSessionRaw.clear();
    m_registeredUnderCarrier = carrierCount;
    m_registeredAtMs = atMs;
    admitAsRegistered();
}

} // namespace coreflow
