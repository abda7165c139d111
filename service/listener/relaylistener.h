#pragma once
// RelayListener: the relay's one TLS port (docs/contract.md §3, §17,
// D-53). A WebSocket upgrade at "/" becomes a node (or ingress) session handed out by
// nodeSessionAccepted(); every other HTTP request goes to the ListenerHttpHandler (the /v2/ image
// pull endpoint) through the listener's own HTTP/1.1 server loop on the same TLS connection
// (ListenerHttpConnection: bounds, body refusals, pipelining) or, without a handler, is answered
// 404 path-not-served. An upgrade on any other path is refused before any 101.
//
// TLS is the listener's own (TlsServerContext: one OpenSSL context for every connection, record
// buffers released while idle); each accepted socket goes through a ListenerHandshake (TLS
// handshake and first header block within 10000 ms on the injected clock) before it is a session or an
// HTTP exchange.
//
// The bind address and port are daemon-local facts (COREFLOW_RELAY_BIND_HOSTNAME/_PORT), never cluster
// state. listen() failures are named (listener-bind-failed) with address, port and the socket error.
#include "shared/contract/envelope.h"
#include "shared/contract/result.h"
#include "service/listener/listenerhttpconnection.h"
#include "service/transport/websocketsession.h"
#include "shared/util/clock.h"

#include <QObject>
#include <QPointer>
#include <QSslConfiguration>

#include <memory>

namespace coreflow {

class ListenerHandshake;
class SocketHandoffServer;
class TlsServerContext;

class RelayListener : public QObject {
    Q_OBJECT
public:
    explicit RelayListener(QObject *parent = nullptr);
    ~RelayListener() override;

    // Binds hostname:port with TLS. hostname is an address literal, or a name resolved once at start.
    std::optional<contract::Refusal> listen(const QString &hostname, quint16 port, const QSslConfiguration &tls);
    // Stops accepting new connections (sessions already handed out are the forwarder's to close).
    void close();

    void setHttpHandler(ListenerHttpHandler *handler) { m_httpSide.handler = handler; }
    // The relay's bound on log lines refused input causes (docs/contract.md §3.1, D-70): refused
    // upgrades and refused HTTP requests log under it. Without one every refusal is logged.
    void setRefusalLog(RefusalLogBound *refusalLog) { m_httpSide.refusalLog = refusalLog; }
    // The clock of the accept-to-decision deadline (ListenerHandshake::kTimeoutMs, contract §3.4); the
    // listener's own SystemClock unless set (before listen()).
    void setClock(Clock &clock) { m_clock = &clock; }
    // The silence rule every WebSocket session accepted from now on joins (docs/contract.md §3.3,
    // D-56; nullptr: none). Accepted sockets get TCP keepalive and TCP_USER_TIMEOUT regardless.
    void setSessionKeepalive(std::shared_ptr<SessionKeepalive> keepalive) { m_keepalive = std::move(keepalive); }
    const std::shared_ptr<SessionKeepalive> &sessionKeepalive() const { return m_keepalive; }
    // HTTP requests refused by the listener's own bounds so far (431, 413, 405, 400; see
    // ListenerHttpConnection).
    qint64 refusedHttpRequests() const { return m_httpSide.refusedRequests; }
    // Replaces the receive budget for sessions accepted from now on (tests; default kReceiveBudgetBytes).
    void setReceiveBudgetBytes(qint64 bytes) { m_receiveBudget = std::make_shared<ReceiveBudget>(bytes); }
    // Tests: the idle bound of HTTP connections (ms; default ListenerHttpConnection::kIdleRequestTimeoutMs).
    void setIdleRequestTimeoutMs(int ms) { m_httpSide.idleRequestTimeoutMs = ms; }
    qint64 idleClosedConnections() const { return m_httpSide.idleClosed; }
    // Tests: the bound on plain HTTP connections open at once (default ListenerHttpConnection::kMaxConnections).
    void setMaxHttpConnections(int connections) { m_httpSide.maxConnections = connections; }
    qint64 busyRefusedConnections() const { return m_httpSide.busyRefused; }
    int openHttpConnections() const { return m_httpSide.openConnections; }
    // The most request bytes (URLs, header names and values, read and waiting) one HTTP connection
    // held at once, bytes (ListenerHttpConnection::kMaxHeldRequestBytes bounds it; contract §17, D-60).
    qsizetype peakHeldHttpRequestBytes() const { return m_httpSide.peakHeldRequestBytes; }
    bool isListening() const;
    QString boundAddress() const { return m_boundAddress; }
    quint16 boundPort() const { return m_boundPort; }

    // Largest WebSocket message a registered session accepts (bytes; larger: Close 1009).
    static constexpr qsizetype kMaxMessageBytes = contract::Envelope::maxFrameBytes;
    // What all registered node sessions may hold of messages still arriving, together (bytes): 16
    // maximal ones.
    static constexpr qint64 kReceiveBudgetBytes = 16 * kMaxMessageBytes;
    // Before its registration is accepted (docs/contract.md §3.4, D-57) a session accepts messages of
    // at most 64 KiB (a registration is a few KiB; larger: Close 1009 unregistered-frame-too-large),
    // and all such sessions together hold at most 4 MiB of messages still arriving (their own pool,
    // apart from the registered one; beyond it: Close 1008 unregistered-receive-budget).
    static constexpr qsizetype kUnregisteredMaxMessageBytes = 64 * 1024;
    static constexpr qint64 kUnregisteredReceiveBudgetBytes = 4 * 1024 * 1024;
    // Tests: replaces the unregistered pool for sessions accepted from now on.
    void setUnregisteredReceiveBudgetBytes(qint64 bytes) { m_unregisteredBudget = std::make_shared<ReceiveBudget>(bytes); }
    qint64 unregisteredReceiveBudgetUsed() const { return m_unregisteredBudget->used(); }
    qint64 receiveBudgetUsed() const { return m_receiveBudget->used(); }
    // Count bounds (§3.4, D-59, D-110): at most kMaxUnregisteredSessions upgraded sessions not
    // registered yet and at most kMaxPendingHandshakes accepted connections still in their TLS
    // handshake or first request. When one is full, the OLDEST holder makes room for the newcomer:
    // the oldest pending connection is dropped without an answer, the oldest unregistered session is
    // closed 1013 unregistered-sessions-full. Strangers holding every seat thus cannot shut a node
    // out: a node's handshake and registration take a round trip, a held seat ages.
    static constexpr int kMaxUnregisteredSessions = 1024;
    static constexpr int kMaxPendingHandshakes = 512;
    // Tests: replace the bounds for connections accepted from now on.
    void setMaxUnregisteredSessions(int sessions) { m_unregisteredSeats = std::make_shared<AdmissionSeats>(sessions); }
    void setMaxPendingHandshakes(int handshakes) { m_maxPendingHandshakes = handshakes; }
    int unregisteredSessions() const { return m_unregisteredSeats->taken(); }
    int pendingHandshakes() const { return int(m_pendingHandshakes.size()); }
    // Pending connections dropped to make room (kMaxPendingHandshakes were pending); sessions closed
    // unregistered-sessions-full to make room; connections accepted and dropped at the descriptor limit.
    qint64 droppedHandshakes() const { return m_droppedHandshakes; }
    qint64 refusedUnregisteredSessions() const { return m_refusedSessions; }
    qint64 droppedAtDescriptorLimit() const;

Q_SIGNALS:
    // A WebSocket session at "/"; the receiver takes ownership.
    void nodeSessionAccepted(coreflow::WebSocketSession *session);

private:
    void onDescriptor(int descriptor);
    // Closes the oldest unregistered session still holding a seat; false when none does.
    bool unseatOldestSession();

    QPointer<SocketHandoffServer> m_server;
    ListenerHttpSide m_httpSide;
    SystemClock m_systemClock;
    Clock *m_clock = &m_systemClock;
    std::shared_ptr<TlsServerContext> m_tls;
    std::shared_ptr<ReceiveBudget> m_receiveBudget = std::make_shared<ReceiveBudget>(kReceiveBudgetBytes);
    std::shared_ptr<ReceiveBudget> m_unregisteredBudget = std::make_shared<ReceiveBudget>(kUnregisteredReceiveBudgetBytes);
    std::shared_ptr<AdmissionSeats> m_unregisteredSeats = std::make_shared<AdmissionSeats>(kMaxUnregisteredSessions);
    int m_maxPendingHandshakes = kMaxPendingHandshakes;
    QList<ListenerHandshake *> m_pendingHandshakes; // oldest first; removed when destroyed
    QList<QPointer<WebSocketSession>> m_seatHolders;  // unregistered sessions by upgrade time, oldest first
    qint64 m_droppedHandshakes = 0;
    qint64 m_refusedSessions = 0;
    std::shared_ptr<SessionKeepalive> m_keepalive;
    QString m_boundAddress;
    quint16 m_boundPort = 0;
};

} // namespace coreflow
