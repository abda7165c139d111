#pragma once
// NodeConnection: one WebSocket session on the relay listener (a Pallet node, or later the ingress).
// It keeps exactly what the seed allows per carried node (seed "Outage continuity", OC-10): the
// connection, the Cloudly-issued binding and the carrier count it registered under — plus value-free
// activity facts for the status model. No body, no bearer, nothing on disk.
#include "shared/contract/types.h"

#include <QObject>
#include <QPointer>
#include "service/transport/websocketsession.h"

#include <QWebSocketProtocol>
#include <memory>
#include <optional>

namespace coreflow {

class NodeConnection : public QObject, private WebSocketSession::Receiver {
    Q_OBJECT
public:
    // What a connection reports to (the forwarder), called directly: signal connections would cost
    // every idle node memory of their own.
    class Owner {
    public:
        virtual ~Owner() = default;
        virtual void nodeFrame(NodeConnection *connection, const QByteArray &utf8) = 0;
        // Once, when the session ended; the owner retires the connection.
        virtual void nodeClosed(NodeConnection *connection) = 0;
    };

    NodeConnection(WebSocketSession *session, quint64 connectionId, qint64 acceptedAtMs, Owner &owner, QObject *parent = nullptr);
    ~NodeConnection() override;

    // How long a socket the relay closed may keep flushing its close frame after the connection is
    // dropped from the registry (ms, real time; a bounded courtesy, not a contract timer).
    static constexpr int kCloseGraceMs = WebSocketSession::kCloseGraceMs;

    quint64 connectionId() const { return m_id; }
    void send(const QByteArray &frame);
    void close(QWebSocketProtocol::CloseCode code, const QString &reason);
    // Leaves the relay: deleted on the next turn; a session still in its closing handshake finishes it
    // on its own (at most kCloseGraceMs) so the close frame reaches the node.
    void retire();
    bool isOpen() const;
    // Bytes sent to this node that its socket has not taken yet.
    qsizetype pendingBytes() const { return m_session ? m_session->pendingBytes() : 0; }
    // The silence rule's facts (docs/contract.md §3.3): clock ms of the last byte from the node (0
    // without a keepalive), and "live" | "awaiting-pong" | "silent" | "off".
    qint64 lastReceivedAtMs() const { return m_session ? m_session->lastReceivedAtMs() : 0; }
    QString keepaliveState() const;
    bool endedBySilence() const { return m_session && m_session->endedBySilence(); }
    // "node-a" once registered, else "connection #7" (for log lines).
    QString describe() const;

    std::optional<contract::SessionBinding> binding;
    // The raw bytes of the last request.session accepted on this connection under `binding` (the
    // forwarder's fast path; cleared whenever the binding changes). Not secret: a session reference.
    QByteArray acceptedSessionRaw;
    qint64 registeredUnderCarrier = 0;
    qint64 registeredAtMs = 0;
    qint64 acceptedAtMs = 0;
    QString lastMethod;
    qint64 lastForwardAtMs = 0;
    int forwardsInFlight = 0;

private:
    void sessionText(const QByteArray &utf8) override { m_owner.nodeFrame(this, utf8); }
    void sessionBinary() override;
    void sessionClosed(quint16 code) override;

    Owner &m_owner;
    WebSocketSession *m_session; // owned (child), or handed to itself by retire()
    quint64 m_id;
    bool m_closedEmitted = false;
};

} // namespace coreflow
