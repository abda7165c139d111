#pragma once
// NodeConnection: one WebSocket session on the relay listener (a Pallet node, or the cluster ingress).
// Per carried node it keeps exactly what docs/contract.md §8.4 allows: the connection, the
// Cloudly-issued binding and the carrier count it registered under — plus the value-free activity facts
// of the status model (§18 `nodes`). No body, no bearer, nothing on disk.
//
// Everyone may read it; only the forwarding lane changes it, through the narrow mutators below: the
// NodeRegistry binds it (bindTo), the BindingGate remembers the session bytes it accepted, the
// UpstreamForwarder counts its forwards.
#include "shared/contract/types.h"
#include "service/transport/websocketsession.h"

#include <QObject>
#include <QPointer>
#include <QWebSocketProtocol>
#include <optional>

namespace coreflow {

class NodeConnection : public QObject, private WebSocketSession::Receiver {
    Q_OBJECT
public:
    // What a connection reports to (the forwarding lane's SessionForwarder), called directly: signal
    // connections would cost every idle node memory of their own.
    class Owner {
    public:
        virtual ~Owner() = default;
        virtual void nodeFrame(NodeConnection *connection, const QByteArray &utf8) = 0;
        // Once, when the session ended; the owner retires the connection.
        virtual void nodeClosed(NodeConnection *connection) = 0;
    };

    // acceptedAtMs: clock ms of the accept.
    NodeConnection(WebSocketSession *session, quint64 connectionId, qint64 acceptedAtMs, Owner &owner, QObject *parent = nullptr);
    ~NodeConnection() override;

    // How long a socket the relay closed may keep flushing its close frame after the connection is
    // dropped from the registry (ms, real time; a bounded courtesy, not a contract timer).
    static constexpr int kCloseGraceMs = WebSocketSession::kCloseGraceMs;

    quint64 connectionId() const { return m_id; }
    void send(const QByteArray &frame);
    // Every later frame on this connection counts as secret-bearing: the transport wipes what it had
    // to queue (the bound cluster ingress, once it is sent the route table's keys; §19.4).
    void treatWritesAsSecret()
    {
        if (m_session)
            m_session->treatWritesAsSecret();
    }
    // The wire code, not QWebSocketProtocol::CloseCode: that enum has no fixed underlying type and
    // ends at 1015, so the relay's own 4000 (§8.4) is no value of it (undefined behaviour to hold one).
    void close(quint16 code, const QString &reason);
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
    // "node node-a" once registered, else "connection #7" (for log lines).
    QString describe() const;

    // --- what it holds (read by anyone) ---
    // The binding Cloudly issued to the last registration answered on this connection (§8.1).
    const std::optional<contract::SessionBinding> &binding() const { return m_binding; }
    // The carrier count of the Cloudly session it registered under (§8.4), and when (clock ms).
    qint64 registeredUnderCarrier() const { return m_registeredUnderCarrier; }
    qint64 registeredAtMs() const { return m_registeredAtMs; }
    qint64 acceptedAtMs() const { return m_acceptedAtMs; }
    // For the status model (docs/contract.md §18.1 nodes): bytes both ways on this connection, the TCP
    // peer, and the release of the offer its last admitted registration carried ("" none).
    qint64 bytesReceived() const { return m_session ? m_session->bytesRead() : 0; }
    qint64 bytesSent() const { return m_session ? m_session->bytesWritten() : 0; }
    QString peerAddress() const { return m_session ? m_session->peerAddress() : QString(); }
    const QString &offeredRelease() const { return m_offeredRelease; }
    // UpstreamForwarder: the registration's offer passed §2.2 (at most 64 characters are kept).
    void noteOfferedRelease(const QString &release) { m_offeredRelease = release.left(64); }
    // Activity for the status model (§18): the last method forwarded (a name), when (clock ms), and how
    // many forwards are in flight (a registration waiting for a session counts).
    const QString &lastMethod() const { return m_lastMethod; }
    qint64 lastForwardAtMs() const { return m_lastForwardAtMs; }
    int forwardsInFlight() const { return m_forwardsInFlight; }
    // Whether raw is, byte for byte, the request.session last accepted under the current binding (the
    // binding check's fast path; never true after a new binding).
    bool presentedAcceptedSession(QByteArrayView raw) const
    {
        return !m_acceptedSessionRaw.isEmpty() && raw == QByteArrayView(m_acceptedSessionRaw);
    }

    // --- narrow mutators for the forwarding lane ---
    // NodeRegistry: a registration answer bound this connection (carrierCount, atMs: clock ms); forgets
    // the accepted session bytes, so the next request.session is read in full.
    void bindTo(const contract::SessionBinding &binding, qint64 carrierCount, qint64 atMs);
    // A registration of this connection was accepted (a node's by NodeRegistry::bind, the ingress' by
    // the ingress lane): from now on it has the registered frame bound and receive pool (§3.4).
    void admitAsRegistered()
    {
        if (m_session)
            m_session->promote();
    }
    // Whether a registration of this connection was accepted (admitAsRegistered).
    bool isAdmitted() const { return m_session && m_session->isPromoted(); }
    // SessionForwarder: stop or resume reading this connection (upstream backpressure, §3.4).
    void setReadPaused(bool paused)
    {
        if (m_session)
            m_session->setReadPaused(paused);
    }
    // BindingGate: raw (a session reference, not secret) passed the binding check; empty forgets it.
    void rememberAcceptedSession(QByteArray raw) { m_acceptedSessionRaw = std::move(raw); }
    // UpstreamForwarder: a forward began (waiting or sent) / ended; the count never goes below 0.
    void forwardBegan()
    {
        ++m_forwardsInFlight;
        firstAttemptBegan();
    }
    void forwardEnded()
    {
        m_forwardsInFlight = qMax(0, m_forwardsInFlight - 1);
        firstAttemptEnded();
    }
    // ClusterIngress: a registerClusterIngress of this connection went to Cloudly / came back (or was
    // dropped); the count never goes below 0.
    void ingressRegistrationBegan()
    {
        ++m_ingressRegistrationsInFlight;
        firstAttemptBegan();
    }
    void ingressRegistrationEnded()
    {
        m_ingressRegistrationsInFlight = qMax(0, m_ingressRegistrationsInFlight - 1);
        firstAttemptEnded();
    }
    // The one bound both registration lanes ask (§3.4 "One request in flight before registering",
    // D-57, D-90): true while a connection none of whose registrations was accepted (no binding, not
    // admitted) has a request waiting or with Cloudly on either lane, node registration or ingress
    // registration; its next request is then refused unregistered-request-in-flight.
    bool hasUnregisteredRequestInFlight() const
    {
        return !m_binding && !isAdmitted() && (m_forwardsInFlight > 0 || m_ingressRegistrationsInFlight > 0);
    }
    // FrameRefusalLog: one more frame of this connection was refused (unreadable, or by the binding
    // check); returns the count so far.
    qint64 countRefusedFrame() { return ++m_refusedFrames; }
    qint64 refusedFrames() const { return m_refusedFrames; }
    // UpstreamForwarder: method left for Cloudly at atMs (clock ms).
    void forwardSent(const QString &method, qint64 atMs)
    {
        m_lastMethod = method;
        m_lastForwardAtMs = atMs;
    }

private:
    // §3.4 (D-110): while the FIRST request of a connection not yet registered is with Cloudly (its
    // registration, on either lane), the listener does not unseat its session to make room for a
    // newcomer. Later attempts, after a refusal, have no such shield, so a stranger cannot keep its
    // seat by retrying.
    void firstAttemptBegan()
    {
        if (m_firstAttemptBegun || m_binding || isAdmitted() || !m_session)
            return;
        m_firstAttemptBegun = true;
        m_session->setSeatShielded(true);
    }
    void firstAttemptEnded()
    {
        if (m_session && m_forwardsInFlight == 0 && m_ingressRegistrationsInFlight == 0)
            m_session->setSeatShielded(false);
    }

    void sessionText(const QByteArray &utf8) override { m_owner.nodeFrame(this, utf8); }
    void sessionBinary(const QByteArray &payload) override;
    void sessionClosed(quint16 code) override;

    Owner &m_owner;
    WebSocketSession *m_session; // owned (child), or handed to itself by retire()
    quint64 m_id;
    bool m_closedEmitted = false;
    QString m_offeredRelease;

    std::optional<contract::SessionBinding> m_binding;
    QByteArray m_acceptedSessionRaw;
    qint64 m_registeredUnderCarrier = 0;
    qint64 m_registeredAtMs = 0;
    qint64 m_acceptedAtMs = 0;
    QString m_lastMethod;
    qint64 m_lastForwardAtMs = 0;
    int m_forwardsInFlight = 0;
    int m_ingressRegistrationsInFlight = 0;
    bool m_firstAttemptBegun = false;
    qint64 m_refusedFrames = 0;
};

} // namespace coreflow
