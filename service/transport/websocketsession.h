#pragma once
// WebSocketSession: one upgraded WebSocket over a TlsConnection, with RFC 6455 framing from
// WebSocketFrameDecoder / WebSocketFrameEncoder. Role::Server: a node's or the ingress's lane on the
// relay listener (docs/contract.md §3.0, D-53). Role::Client: the relay's
// own Cloudly session (CloudlySocket; D-54): every frame it sends is masked with a fresh key
// (WebSocketMask), frames it receives must be unmasked.
//
// Messages arrive as UTF-8 bytes (textMessage), never as QString: the relay forwards bodies
// byte-for-byte, so there is no UTF-16 round trip on the hot path. sendText() frames and encrypts
// at once; what the socket does not take yet waits in the connection's queue.
//
// Bounds:
//  - incoming message: at most maxMessageBytes (the envelope's 16 MiB; the listener's sessions start
//    at 64 KiB until promote(), §3.4), else Close 1009; what all sessions hold of unfinished messages
//    at once is bounded by the ReceiveBudget they are charged to (beyond it the growing session is
//    closed 1008);
//  - outgoing queue: at most kMaxPendingBytes (32 MiB: two maximal frames), pongs included. A peer
//    that stops reading while more is sent (or while it keeps pinging) is closed with 1008
//    "node-not-reading" (server role) or "cloudly-not-reading" (client role); until then only its own requests wait (and time out by their own
//    timers), nobody else's. Before promote() (a listener session that has not registered, §3.4)
//    the bound is kUnpromotedMaxPendingBytes (256 KiB) and the reason "unregistered-not-reading".
//  - closing: after our Close frame the peer has kCloseGraceMs (2000 ms, real time) to answer with
//    its Close, and after its Close to read our answer; then the transport goes regardless. A Close
//    with an invalid code is answered 1002, one whose reason is not UTF-8 1007.
// Events go to one Receiver (the node connection that owns the session), called directly: signal
// connections would cost every idle node memory of their own. The signals carry the same events for
// holders without a receiver (tests).
// closed(code) is emitted once when the session ends (the peer's Close code, ours if we closed
// first, 1006 when the transport went without a Close). The owner deletes the session later.
// Silence (docs/contract.md §3.3, D-56; startKeepalive): once no byte arrived for the keepalive's
// ping interval the session sends a Ping, again every interval while the peer stays quiet; when no
// byte of any frame arrived for the silence deadline the session is lost: a Close 1001 with reason
// "cloudly-silent" (client role) or "node-silent" (server role) is offered to the socket, the
// transport is closed at once (a silent peer would not answer the closing handshake) and closed(1001)
// follows, with endedBySilence() true. Pings from the peer are answered at once, never deferred.
#include "service/transport/admissionseats.h"
#include "service/transport/sessionkeepalive.h"
#include "service/transport/tlsconnection.h"
#include "service/transport/receivebudget.h"
#include "service/transport/websocketframedecoder.h"
#include "service/transport/websocketmask.h"

#include <QBasicTimer>
#include <QObject>

#include <memory>

namespace coreflow {

class WebSocketSession : public QObject, private TlsConnection::Receiver {
    Q_OBJECT
public:
    static constexpr qsizetype kMaxPendingBytes = 32 * 1024 * 1024;
    static constexpr qsizetype kUnpromotedMaxPendingBytes = 256 * 1024;
    static constexpr int kCloseGraceMs = 2000;

    class Receiver {
    public:
        virtual ~Receiver() = default;
        virtual void sessionText(const QByteArray &utf8) = 0;
        // A whole binary message (fragments joined, unmasked): only the Cloudly session's database
        // closure chunks use them (docs/contract.md §3.0, §13.4).
        virtual void sessionBinary(const QByteArray &payload) = 0;
        virtual void sessionClosed(quint16 code) = 0;
        // Queued bytes left for the peer (pendingBytes() fell); for a holder applying backpressure.
        virtual void sessionWritten() {}
    };
    void setReceiver(Receiver *receiver) { m_receiver = receiver; }

    // Takes ownership of an open TLS connection; alreadyRead are bytes that followed the upgrade
    // request in the same read (decoded on the next event-loop turn).
    // budget (optional, shared by the listener's sessions): the bound on partially received bytes.
    // role: which end of the WebSocket this process is (decides masking both ways).
    WebSocketSession(TlsConnection *tls, QByteArray alreadyRead, qsizetype maxMessageBytes,
                     WebSocketFrameDecoder::Role role, std::shared_ptr<ReceiveBudget> budget = {},
                     QObject *parent = nullptr);
    ~WebSocketSession() override;

    bool isOpen() const { return m_state == State::Open; }
    // content Secret (a relay-held secret or its echo, §19.4): the encoded frame is wiped once handed
    // to the transport, which wipes its queue while the bytes wait.
    void sendText(QByteArrayView utf8, TlsConnection::Content content = TlsConnection::Content::Ordinary);
    // One binary message (a database closure chunk, docs/contract.md §13.4): framed and handed to the
    // transport at once, behind whatever waits in its queue (never deferred). The same send bound.
    void sendBinary(QByteArrayView payload);
    // Text messages leave at the end of the event-loop turn, together (TlsConnection::writeDeferred):
    // for the Cloudly session, which carries every forwarded request. Control frames are not deferred.
    void setWriteCoalescing(bool enabled) { m_coalesce = enabled; }
    // Each received text message is wiped once its receiver returns (when no one kept a copy): for the
    // Cloudly session, whose answers echo requests that carry the bearer (contract §19.4).
    void setWipeMessages(bool enabled) { m_wipeMessages = enabled; }
    // Every later text message counts as Secret content (TlsConnection::treatWritesAsSecret).
    void treatWritesAsSecret()
    {
        m_writesSecret = true;
        if (m_tls)
            m_tls->treatWritesAsSecret();
    }
    // Starts the closing handshake (Close frame with code and reason, reason cut to 123 bytes).
    void close(quint16 code, QByteArrayView reason);
    void abort();
    qsizetype pendingBytes() const { return m_tls ? m_tls->pendingBytes() : 0; }
    // The transport's application bytes both ways and its TCP peer (TlsConnection); 0 / "" without one.
    qint64 bytesRead() const { return m_tls ? m_tls->bytesRead() : 0; }
    qint64 bytesWritten() const { return m_tls ? m_tls->bytesWritten() : 0; }
    QString peerAddress() const { return m_tls ? m_tls->peerAddress() : QString(); }

    // Admission in two stages (docs/contract.md §3.4): a session starts under the bound and the receive
    // pool it was built with (the listener's unregistered ones) and moves once, at promote(), to the
    // bound and pool set here (the registered ones). Until then a message over the first bound closes
    // 1009 "unregistered-frame-too-large" and growth beyond the first pool closes 1008
    // "unregistered-receive-budget". Nothing per frame: promote() changes two members.
    void setPromotion(qsizetype maxMessageBytes, std::shared_ptr<ReceiveBudget> budget);
    // Moves to the promotion's bound and pool (the bytes buffered now move with it; a full pool closes
    // the session 1008 relay-receive-budget). No-op without a promotion or when already promoted.
    void promote();
    bool isPromoted() const { return m_promoted; }
    // Holds one of seats until promote() or the end of the session (the listener's count bound on
    // unregistered sessions, §3.4).
    void holdSeat(std::shared_ptr<AdmissionSeats> seats) { m_seat = std::move(seats); }
    bool holdsSeat() const { return m_seat != nullptr; }
    // Gives the seat back now (the listener closes this session to seat a newcomer, §3.4).
    void yieldSeat() { releaseSeat(); }
    // While shielded (its first registration is with Cloudly, D-110) the listener does not pick this
    // session to make room for a newcomer.
    void setSeatShielded(bool shielded) { m_seatShielded = shielded; }
    bool isSeatShielded() const { return m_seatShielded; }
    // Reading pause (backpressure, §3.4): while paused no byte is read from the socket, so the
    // peer's TCP window closes; resuming reads what waits at once.
    void setReadPaused(bool paused);
    // Hands the session to itself: it finishes a closing handshake already started (at most
    // kCloseGraceMs) and then deletes itself. Used when the owner leaves first.
    void releaseWhenClosed();

    // Joins the silence rule of keepalive (nullptr: none). Counts from now as if a frame had arrived.
    void startKeepalive(std::shared_ptr<SessionKeepalive> keepalive);
    enum class KeepaliveState { Off, Live, AwaitingPong, Silent };
    // Off: no keepalive; Live: a byte arrived within the ping interval, or since the last Ping;
    // AwaitingPong: a Ping went out and nothing arrived since; Silent: lost to silence.
    KeepaliveState keepaliveState() const;
    // The status object's word for a state (docs/contract.md §18.1): "off", "live", "awaiting-pong",
    // "silent".
    static QString keepaliveStateName(KeepaliveState state);
    // Clock ms of the last byte received (keepalive clock), 0 without a keepalive.
    qint64 lastReceivedAtMs() const { return m_lastReceivedAtMs; }
    bool endedBySilence() const { return m_silent; }

Q_SIGNALS:
    void textMessage(const QByteArray &utf8);
    void binaryMessage(const QByteArray &payload);
    void closed(quint16 code);

protected:
    void timerEvent(QTimerEvent *event) override;

private:
    enum class State { Open, Closing, Closed };
    void tlsReadable() override { onReadyRead(); }
    void tlsClosed() override { end(m_closeCode); }
    void tlsWritten() override
    {
        if (m_receiver)
            m_receiver->sessionWritten();
    }
    void onReadyRead();
    void decode(QByteArrayView bytes);
    void chargeBudget(qint64 buffered);
    void onControl(WebSocketFrameDecoder::Opcode opcode, const QByteArray &payload);
    // Whether `more` bytes still fit the send bound; beyond it the session closes 1008.
    bool withinSendBound(qsizetype more);
    void end(quint16 code);
    void armKeepalive();
    void keepaliveDue();
    void loseToSilence();
    void cancelKeepalive();
    // The key for the next frame sent: nullptr in the server role (server frames are not masked).
    const unsigned char *maskKey() { return m_mask ? m_mask->nextKey() : nullptr; }

    TlsConnection *m_tls;
    Receiver *m_receiver = nullptr;
    bool m_wipeMessages = false;
    bool m_writesSecret = false; // treatWritesAsSecret()
    std::shared_ptr<ReceiveBudget> m_budget;
    std::shared_ptr<ReceiveBudget> m_promotedBudget; // set by setPromotion(), taken by promote()
    qsizetype m_promotedMaxMessageBytes = 0;
    bool m_promotable = false;
    bool m_promoted = false;
    bool m_seatShielded = false;
    std::shared_ptr<AdmissionSeats> m_seat; // held until promoted or ended
    void releaseSeat()
    {
        if (m_seat)
            m_seat->release();
        m_seat.reset();
    }
    qint64 m_charged = 0; // bytes of unfinished messages charged to m_budget
    WebSocketFrameDecoder m_decoder;
    std::unique_ptr<WebSocketMask> m_mask; // client role only
    QBasicTimer m_closeTimer;
    State m_state = State::Open;
    quint16 m_closeCode = 1006;
    bool m_selfOwned = false;
    bool m_coalesce = false;
    std::shared_ptr<SessionKeepalive> m_keepalive;
    DeadlineQueue::Handle m_keepaliveCheck = 0; // the next check in m_keepalive's queue, 0 none
    qint64 m_lastReceivedAtMs = 0;
    qint64 m_lastPingAtMs = 0;
    bool m_silent = false;
};

} // namespace coreflow
