#pragma once
// CloudlyConnector: the relay's one outbound session to Cloudly (docs/contract.md §5, §6).
//
// On every new socket: exchangeClusterRelayAuthorization (the bearer, sent only here) ->
// registerCloudlyClientSession (identity token + the Cloudly-hop offer) -> dispatchable. The identity is
// renewed on the same socket before it expires (refreshClusterIdentity, then registerCloudlyClientSession
// again: a registration of the same carrier). A lost socket reconnects with bounded exponential backoff
// and jitter (RelayTiming::reconnect*; Decision D-11) and authenticates again. The carrier count is the
// number of sockets that reached "dispatchable" since start.
//
// call() sends a request on the current dispatchable socket. Outcomes: the answer frame (which may
// carry Cloudly's own error), or a relay refusal: cloudly-session-unavailable (no dispatchable
// session), cloudly-forward-timeout (no answer within timeoutMs), cloudly-session-lost (the socket
// closed first). Requests Cloudly sends are dispatched to the Cloudly-facing MethodTable and answered
// on the socket they came from.
//
// Silence (docs/contract.md §3.3, D-56): every socket pings Cloudly on the injected clock
// (RelayTiming::sessionPingIntervalMs) and is lost when nothing arrived for
// sessionSilenceDeadlineMs; that loss takes the path of a closed socket (sessionLost(), calls in flight
// refused cloudly-session-lost, reconnect with backoff) and lostToSilence() names it until a socket is
// dispatchable again (the readiness refusal cloudly-silent).
//
// The bearer and the identity token are Secrets: they appear in exactly two frame bodies and nowhere
// else (no log line, no error, no status member).
#include "service/core/methodtable.h"
#include "service/transport/tlsconnection.h"
#include "shared/contract/offers.h"
#include "shared/contract/timing.h"
#include "shared/contract/types.h"
#include "shared/secret.h"
#include "shared/util/clock.h"
#include "shared/util/deadlinequeue.h"
#include "service/transport/sessionkeepalive.h"

#include <QHash>
#include <QPointer>
#include <QSslCertificate>
#include <QUrl>
#include <QUuid>
#include <deque>
#include <functional>
#include <unordered_map>
#include <memory>
#include <optional>

namespace coreflow {

class CloudlySocket;
class TlsClientContext;

class CloudlyConnector : public QObject {
    Q_OBJECT
public:
    struct CallResult {
        bool delivered = false;      // an answer arrived; see answer (which may hold Cloudly's error)
        contract::Frame answer;
        contract::Refusal refusal;   // when !delivered
    };
    using CallCallback = std::function<void(const CallResult &)>;

    CloudlyConnector(QUrl url, Secret bearer, QList<QSslCertificate> extraCaCertificates, MethodTable &cloudlyMethods,
                     Clock &clock, const contract::RelayTiming &timing, QObject *parent = nullptr);
    ~CloudlyConnector() override;

    void start();
    // Stops reconnecting and renewing, waits for calls in flight (each is bounded), then closes.
    void stop(std::function<void()> done);

    bool isConnected() const;
    bool isDispatchable() const { return m_dispatchable; }
    qint64 carrierCount() const { return m_carrierCount; }
    qint64 reconnects() const { return m_reconnects; }
    qint64 identityRenewalDueMs() const;
    // When the next reconnect attempt is due (clock ms), 0 when none is scheduled.
    qint64 reconnectDueMs() const;
    std::optional<contract::ProtocolOffer> answeredOffer() const { return m_answeredOffer; }
    QString clusterId() const { return m_clusterId; }
    int callsInFlight() const { return int(m_pending.size()); }
    QUrl url() const { return m_url; }
    // The last session was lost to silence (cleared when a socket is dispatchable again).
    bool lostToSilence() const { return m_lostToSilence; }
    // For the status model (docs/contract.md §18.1 cloudly): clock ms the current socket became
    // dispatchable (0 while none is), and why the last socket ended or could not open, as a class:
    // "silent" (§3.3), "session-lost", "connect-failed", or the refusal name a handshake call ended
    // with; "" before any failure.
    qint64 dispatchableSinceMs() const { return m_dispatchable ? m_dispatchableSinceMs : 0; }
    const QString &lastErrorClass() const { return m_lastErrorClass; }
    // Clock ms of the last byte received from Cloudly (on the open socket, else on the last one); 0 none.
    qint64 lastFrameReceivedAtMs() const;
    // "off" | "live" | "awaiting-pong" | "silent" (the status model's keepalive words).
    QString keepaliveState() const;
    const std::shared_ptr<SessionKeepalive> &keepalive() const { return m_keepalive; }

    // Which queue a request frame waits in (docs/contract.md §13.4 "Fairness", D-112). Ordinary: handed
    // to the socket at once, ahead of every closure chunk still in the chunk lane. BehindClosureChunks:
    // after every chunk already in the lane (a closure's completion never overtakes its own chunks).
    enum class Lane { Ordinary, BehindClosureChunks };
    quint64 call(const QString &method, QByteArrayView rawRequest, qint64 timeoutMs, CallCallback callback,
                 Lane lane = Lane::Ordinary);

    // Upstream backpressure (docs/contract.md §3.4, D-58): once kSendHighWaterBytes (8 MiB) wait in
    // the socket's queue (ordinary frames and the chunks already handed to it; not the chunk lane, D-112)
    // the session is backlogged, and stays so until at most kSendLowWaterBytes (2 MiB)
    // wait or the socket is gone. The forwarding lane stops reading node sockets meanwhile, so the
    // session's own 32 MiB send bound (WebSocketSession::kMaxPendingBytes) is never reached by
    // forwarded traffic: 8 MiB + one maximal frame finishing (16 MiB) + the rest of one 16 KiB read.
    static constexpr qsizetype kSendHighWaterBytes = 8 * 1024 * 1024;
    static constexpr qsizetype kSendLowWaterBytes = 2 * 1024 * 1024;
    bool isSendBacklogged() const { return m_sendBacklogged; }
    // Times the session became backlogged (status, tests).
    qint64 sendBacklogEpisodes() const { return m_sendBacklogEpisodes; }
    void cancel(quint64 callId);

    // Database closure chunks (docs/contract.md §13.4 "Fairness", D-112): one binary message for the
    // dispatchable socket, queued in the chunk lane. The lane hands its frames to the socket, whole and
    // in order, only while fewer than kChunkLaneLowWaterBytes wait in the socket's queue, so an ordinary
    // frame (a node's forwarded request or push, any call) finds at most that plus one chunk frame ahead
    // of it. stream: the closure the chunk belongs to, for dropQueuedChunks(). False (nothing queued)
    // without a dispatchable socket. The lane is emptied when the socket goes.
    static constexpr qsizetype kChunkLaneLowWaterBytes = 256 * 1024;
    bool sendBinary(QByteArray payload, const QUuid &stream = {});
    // Withdraws the chunks of one closure still waiting in the lane (a stream that ended early: Cloudly
    // is told by an abort and needs no more of its bytes).
    void dropQueuedChunks(const QUuid &stream);
    // Bytes for Cloudly that the current socket has not taken yet, in its queue and in the chunk lane
    // (0 without a socket); the closure sender paces its chunks by it (at most 4 MiB, §13.4).
    // socketWritten() is emitted each time some left.
    qsizetype sendPendingBytes() const;
    // Of those, the bytes still in the chunk lane (status, tests).
    qsizetype chunkLaneBytes() const { return m_chunkLaneBytes; }

    // Test hook: closes the current socket as if the network dropped it.
    void abortSocketForTest();

    // Parking (docs/contract.md §6.6.1, D-18): no identity renewal, no re-offer, and no reconnect once
    // the socket is gone — the bearer this process holds is no longer accepted. The open socket stays.
    void park();
    bool isParked() const { return m_parked; }
    // When the refused Cloudly-hop offer is offered again (clock ms), 0 when none is scheduled.
    qint64 reofferDueMs() const;

Q_SIGNALS:
    // After every successful registerCloudlyClientSession. newCarrier: a new socket (the count rose);
    // false for an identity renewal on the unbroken socket.
    void dispatchable(qint64 carrierCount, bool newCarrier);
    void sessionLost();
    // A binary message from Cloudly on the current socket (a closure chunk, §13.4).
    void binaryFrame(const QByteArray &payload);
    // The current socket took queued bytes (sendPendingBytes() fell).
    void socketWritten();
    // Before the first dispatchable session: Cloudly refused the bearer or answered outside the
    // contract. The composition root fails the start with it.
    void startRefused(const contract::Refusal &refusal);
    void statusChanged();
    // isSendBacklogged() changed.
    void sendBacklogChanged(bool backlogged);
    // Cloudly-hop negotiation on registerCloudlyClientSession (docs/contract.md §2.3): the two kinds of
    // refusal, held apart, and the served answer that clears both. Offers as "kind@release".
    void cloudlyOfferRefused(const QString &peerOffer, const QString &ownOffer, const QString &line);
    void cloudlyAnswerNotContract(const QString &line);
    void cloudlyOfferServed();
    // Cloudly's answer named a servable offer even though the rest of it was not the contract's: the
    // offer disagreement (if any) ends; the answer refusal stands.
    void cloudlyOfferAgreed();

private:
    struct Pending {
        QString method;
        DeadlineQueue::Handle deadline = 0; // the call's timeout in m_callDeadlines
        CallCallback callback;
    };

    void connectNow();
    void onConnected();
    void onDisconnected();
    void onTextMessage(const QByteArray &message);
    void sendOnSocket(const QByteArray &frame, TlsConnection::Content content);
    void setSendBacklogged(bool backlogged);
    // wipeFrame: the composed frame is wiped once it is on the socket (a body that carries a secret).
    quint64 sendCall(const QString &method, QByteArrayView rawRequest, qint64 timeoutMs, CallCallback callback,
                     bool wipeFrame = false, Lane lane = Lane::Ordinary);
    // Hands lane frames to the socket while its queue is under kChunkLaneLowWaterBytes.
    void feedChunkLane();
    void clearChunkLane();
    // A call whose body is a Secret (the bearer, the identity token): the body stays in guarded memory
    // and the frame around it is wiped after sending (contract §19.4).
    quint64 sendSecretCall(const QString &method, const Secret &rawRequest, qint64 timeoutMs, CallCallback callback);
    void finishCall(quint64 id, CallResult result);
    void failAllPending(const contract::Refusal &refusal);
    void authenticate();
    void registerSession();
    void scheduleReoffer();
    void scheduleRenewal();
    void renewIdentity();
    void scheduleReconnect();
    void handshakeFailed(const contract::Refusal &refusal, bool byCloudly);
    void maybeFinishStop();

    QUrl m_url;
    Secret m_bearer;
    QList<QSslCertificate> m_extraCa;
    MethodTable &m_methods;
    Clock &m_clock;
    contract::RelayTiming m_timing;

    std::shared_ptr<TlsClientContext> m_tlsContext; // made at start() for a wss:// URL
    std::shared_ptr<SessionKeepalive> m_keepalive;  // nullptr when RelayTiming turns the rule off
    bool m_lostToSilence = false;
    qint64 m_dispatchableSinceMs = 0;
    QString m_lastErrorClass;
    bool m_handshakeFailedOnSocket = false; // the class names the handshake refusal, not the close after it
    qint64 m_lastFrameAtMs = 0; // of the last socket, kept after it is gone
    std::unique_ptr<CloudlySocket> m_socket;
    std::unique_ptr<ClockTimer> m_reconnectTimer;
    std::unique_ptr<ClockTimer> m_renewalTimer;
    std::unique_ptr<ClockTimer> m_handshakeTimer;
    std::unique_ptr<ClockTimer> m_reofferTimer;
    std::unordered_map<quint64, Pending> m_pending;
    bool m_sendBacklogged = false;
    struct LaneFrame {
        QByteArray bytes; // a chunk's payload, or a whole text frame (Lane::BehindClosureChunks)
        QUuid stream;     // the chunk's closure (null for a text frame)
        bool text = false;
    };
    std::deque<LaneFrame> m_chunkLane;
    qsizetype m_chunkLaneBytes = 0;
    qint64 m_sendBacklogEpisodes = 0;
    DeadlineQueue m_callDeadlines{m_clock}; // one clock timer for every call's timeout
    quint64 m_nextCallId = 1;

    std::optional<contract::ClusterIdentity> m_identity;
    qint64 m_identityIssuedAtMs = 0;
    std::optional<contract::ProtocolOffer> m_answeredOffer;
    QString m_clusterId;
    bool m_dispatchable = false;
    bool m_everDispatchable = false;
    bool m_started = false;
    bool m_stopping = false;
    bool m_parked = false;
    bool m_socketCounted = false; // this socket already raised the carrier count
    std::function<void()> m_stopDone;
    qint64 m_carrierCount = 0;
    qint64 m_reconnects = 0;
    int m_backoffAttempt = 0;
};

} // namespace coreflow
