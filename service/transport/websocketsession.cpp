#include "service/transport/websocketsession.h"

#include "service/transport/websocketcloseframe.h"
#include "service/transport/websocketframeencoder.h"

#include "shared/contract/refusalnames.h"
#include "shared/secret.h"

#include <sodium.h>

#include <QScopeGuard>
#include <QTimer>
#include <QTimerEvent>

namespace coreflow {

namespace {
constexpr qsizetype kReadChunk = 16 * 1024;
}

WebSocketSession::WebSocketSession(TlsConnection *tls, QByteArray alreadyRead, qsizetype maxMessageBytes,
                                   WebSocketFrameDecoder::Role role, std::shared_ptr<ReceiveBudget> budget,
                                   QObject *parent)
    : QObject(parent), m_tls(tls), m_budget(std::move(budget)), m_decoder(maxMessageBytes, role),
      m_mask(role == WebSocketFrameDecoder::Role::Client ? std::make_unique<WebSocketMask>() : nullptr)
{
    m_tls->setParent(this);
    m_tls->setReceiver(this);
    // The client role is the relay's one Cloudly session, which carries the closure chunks (§13.4): its
    // decoder keeps two chunk-sized buffers instead of allocating two per chunk (D-137). A listener
    // session holds nothing between messages (D-53).
    if (role == WebSocketFrameDecoder::Role::Client)
        m_decoder.setRetainBuffers(true);
    // Delivered after the owner had a chance to connect to textMessage(): the bytes that followed the
    // upgrade request, then whatever OpenSSL read ahead (the socket notifier cannot see those).
    QTimer::singleShot(0, this, [this, bytes = std::move(alreadyRead)] {
        if (!bytes.isEmpty())
            decode(bytes);
        onReadyRead();
    });
}

WebSocketSession::~WebSocketSession()
{
    cancelKeepalive();
    chargeBudget(0);
    releaseSeat();
}

void WebSocketSession::chargeBudget(qint64 buffered)
{
    if (!m_budget || buffered == m_charged)
        return;
    if (m_budget->adjust(buffered - m_charged)) {
        m_charged = buffered;
        return;
    }
    // The listener holds as much unfinished input as it allows: this session's growth is refused.
    m_budget->adjust(-m_charged);
    m_charged = 0;
    m_decoder.stop();
    const auto &reason = m_promotable ? contract::refusal::unregisteredReceiveBudget : contract::refusal::relayReceiveBudget;
    close(1008, QByteArrayView(reason.data(), reason.size()));
}

void WebSocketSession::setPromotion(qsizetype maxMessageBytes, std::shared_ptr<ReceiveBudget> budget)
{
    m_promotedMaxMessageBytes = maxMessageBytes;
    m_promotedBudget = std::move(budget);
    m_promotable = !m_promoted;
}

void WebSocketSession::promote()
{
    if (!m_promotable)
        return;
    m_promotable = false;
    m_promoted = true;
    releaseSeat();
    m_decoder.setMaxMessageBytes(m_promotedMaxMessageBytes);
    const qint64 held = m_charged;
    if (m_budget)
        m_budget->adjust(-m_charged);
    m_charged = 0;
    m_budget = std::move(m_promotedBudget);
    chargeBudget(held);
}

void WebSocketSession::setReadPaused(bool paused)
{
    if (!m_tls || m_tls->readEnabled() == !paused)
        return;
    m_tls->setReadEnabled(!paused);
    if (!paused)
        QTimer::singleShot(0, this, [this] { onReadyRead(); }); // bytes OpenSSL already holds
}

void WebSocketSession::onReadyRead()
{
    char buffer[kReadChunk];
    qsizetype used = 0;
    // Read before decode() may end this session: the flag and the buffer are this frame's own.
    const bool wipe = m_wipeMessages;
    const auto wipeBuffer = qScopeGuard([&] {
        if (wipe && used > 0)
            sodium_memzero(buffer, size_t(used));
    });
    while (m_tls && m_state != State::Closed && m_tls->readEnabled()) {
        const qsizetype n = m_tls->read(buffer, kReadChunk);
        if (n <= 0)
            return;
        if (m_keepalive)
            m_lastReceivedAtMs = m_keepalive->clock().nowMs(); // any byte of any frame counts (§3.3)
        used = qMax(used, n);
        decode(QByteArrayView(buffer, n));
        // Stop when OpenSSL holds nothing more: the socket notifier (level-triggered) reports bytes
        // still in the kernel, and a further read() here would only return EAGAIN.
        if (!m_tls || !m_tls->hasBufferedInput())
            return;
    }
}

void WebSocketSession::decode(QByteArrayView bytes)
{
    if (m_state == State::Closed)
        return;
    WebSocketFrameDecoder::Sink sink;
    sink.message = [this](WebSocketFrameDecoder::Opcode opcode, QByteArray payload) {
        if (m_state != State::Open)
            return; // after our Close, data frames are read and dropped (RFC 6455 §5.5.1)
        if (opcode == WebSocketFrameDecoder::Opcode::Text) {
            if (m_receiver)
                m_receiver->sessionText(payload);
            Q_EMIT textMessage(payload);
            if (m_wipeMessages)
                Secret::wipe(payload);
        } else {
            if (m_receiver)
                m_receiver->sessionBinary(payload);
            Q_EMIT binaryMessage(payload);
        }
    };
    sink.control = [this](WebSocketFrameDecoder::Opcode opcode, QByteArray payload) { onControl(opcode, payload); };
    m_decoder.feed(bytes, sink);
    chargeBudget(m_state == State::Open && m_decoder.failure() == WebSocketFrameDecoder::Failure::None
                     ? m_decoder.bufferedBytes()
                     : 0);
    if (m_decoder.failure() != WebSocketFrameDecoder::Failure::None && m_state == State::Open) {
        const char *reason = m_decoder.failure() == WebSocketFrameDecoder::Failure::MessageTooBig
                                 ? (m_promotable ? contract::refusal::unregisteredFrameTooLarge.data() : "message too large")
                             : m_decoder.failure() == WebSocketFrameDecoder::Failure::InvalidUtf8 ? "text frame is not UTF-8"
                                                                                                   : "protocol error";
        close(m_decoder.failureCloseCode(), reason);
    }
}

void WebSocketSession::onControl(WebSocketFrameDecoder::Opcode opcode, const QByteArray &payload)
{
    switch (opcode) {
    case WebSocketFrameDecoder::Opcode::Ping:
        if (m_state == State::Open && withinSendBound(payload.size()))
            m_tls->write(WebSocketFrameEncoder::pong(payload, maskKey()));
        return;
    case WebSocketFrameDecoder::Opcode::Pong:
        return;
    case WebSocketFrameDecoder::Opcode::Close: {
        m_decoder.stop();
        const WebSocketCloseVerdict verdict = WebSocketCloseFrame::read(payload);
        const quint16 answer = verdict.answerCode;
        if (m_state == State::Open) {
            // Answer the Close (echoing a valid code) and let the transport go once it is flushed.
            const unsigned char *key = maskKey();
            m_tls->write(answer == 1002   ? WebSocketFrameEncoder::close(1002, "invalid close frame", key)
                         : answer == 1007 ? WebSocketFrameEncoder::close(1007, "close reason is not UTF-8", key)
                                          : WebSocketFrameEncoder::close(answer, {}, key));
            m_closeCode = verdict.sessionCloseCode;
        }
        m_state = State::Closing;
        // A peer that closed but does not read our answer still goes after the grace period.
        if (!m_closeTimer.isActive())
            m_closeTimer.start(kCloseGraceMs, this);
        m_tls->shutdown();
        return;
    }
    default:
        return;
    }
}

void WebSocketSession::sendText(QByteArrayView utf8, TlsConnection::Content content)
{
    if (m_state != State::Open)
        return;
    if (!withinSendBound(utf8.size()))
        return;
    if (m_writesSecret)
        content = TlsConnection::Content::Secret;
    QByteArray frame = WebSocketFrameEncoder::text(utf8, maskKey());
    if (m_coalesce)
        m_tls->writeDeferred(frame, content);
    else
        m_tls->write(frame, content);
    if (content == TlsConnection::Content::Secret)
        Secret::wipe(frame); // the frame holds the message in the clear (or masked: as good; §19.4)
}

void WebSocketSession::sendBinary(QByteArrayView payload)
{
    if (m_state != State::Open || !withinSendBound(payload.size()))
        return;
    m_tls->write(WebSocketFrameEncoder::frame(0x2, payload, maskKey()));
}

bool WebSocketSession::withinSendBound(qsizetype more)
{
    // Before promotion (a listener session that has not registered, §3.4) the queue is small.
    const qsizetype bound = m_promotable ? kUnpromotedMaxPendingBytes : kMaxPendingBytes;
    if (m_tls->pendingBytes() + more <= bound)
        return true;
    const auto &reason = m_mask         ? contract::refusal::cloudlyNotReading
                         : m_promotable ? contract::refusal::unregisteredNotReading
                                        : contract::refusal::nodeNotReading;
    close(1008, QByteArrayView(reason.data(), reason.size()));
    return false;
}

void WebSocketSession::close(quint16 code, QByteArrayView reason)
{
    if (m_state != State::Open)
        return;
    m_state = State::Closing;
    m_closeCode = code;
    m_tls->write(WebSocketFrameEncoder::close(code, reason, maskKey()));
    m_closeTimer.start(kCloseGraceMs, this);
}

void WebSocketSession::abort()
{
    if (m_tls)
        m_tls->abort();
}

void WebSocketSession::timerEvent(QTimerEvent *event)
{
    if (event->timerId() != m_closeTimer.timerId())
        return QObject::timerEvent(event);
    m_closeTimer.stop();
    if (m_tls)
        m_tls->abort(); // the peer never answered our Close in time
}

void WebSocketSession::end(quint16 code)
{
    if (m_state == State::Closed)
        return;
    m_state = State::Closed;
    m_closeTimer.stop();
    cancelKeepalive();
    chargeBudget(0);
    releaseSeat();
    if (m_receiver)
        m_receiver->sessionClosed(code);
    Q_EMIT closed(code);
    if (m_selfOwned)
        deleteLater();
}

void WebSocketSession::startKeepalive(std::shared_ptr<SessionKeepalive> keepalive)
{
    cancelKeepalive();
    m_keepalive = std::move(keepalive);
    if (!m_keepalive || m_state != State::Open)
        return;
    m_lastReceivedAtMs = m_keepalive->clock().nowMs();
    m_lastPingAtMs = 0;
    armKeepalive();
}

QString WebSocketSession::keepaliveStateName(KeepaliveState state)
{
    switch (state) {
    case KeepaliveState::Live:
        return QStringLiteral("live");
    case KeepaliveState::AwaitingPong:
        return QStringLiteral("awaiting-pong");
    case KeepaliveState::Silent:
        return QStringLiteral("silent");
    case KeepaliveState::Off:
        break;
    }
    return QStringLiteral("off");
}

WebSocketSession::KeepaliveState WebSocketSession::keepaliveState() const
{
    if (m_silent)
        return KeepaliveState::Silent;
    if (!m_keepalive)
        return KeepaliveState::Off;
    return m_lastPingAtMs > m_lastReceivedAtMs ? KeepaliveState::AwaitingPong : KeepaliveState::Live;
}

void WebSocketSession::cancelKeepalive()
{
    if (m_keepalive && m_keepaliveCheck) {
        m_keepalive->deadlines().cancel(m_keepaliveCheck);
        m_keepaliveCheck = 0;
    }
}

// One queue entry per session, re-armed lazily: a received byte only moves m_lastReceivedAtMs, and
// a check that finds the peer heard from since merely re-arms for the new time.
void WebSocketSession::armKeepalive()
{
    const qint64 interval = m_keepalive->pingIntervalMs();
    const qint64 lostAt = m_lastReceivedAtMs + m_keepalive->silenceDeadlineMs();
    const bool pingOutstanding = m_lastPingAtMs > m_lastReceivedAtMs;
    const qint64 pingAt = (pingOutstanding ? m_lastPingAtMs : m_lastReceivedAtMs) + interval;
    const qint64 at = qMin(pingAt, lostAt);
    m_keepaliveCheck = m_keepalive->deadlines().schedule(at - m_keepalive->clock().nowMs(), [this] {
        m_keepaliveCheck = 0;
        keepaliveDue();
    });
}

void WebSocketSession::keepaliveDue()
{
    if (m_state != State::Open || !m_keepalive)
        return;
    // Bytes OpenSSL or the kernel already hold count as heard from: read them before any verdict.
    onReadyRead();
    if (m_state != State::Open)
        return;
    const qint64 now = m_keepalive->clock().nowMs();
    if (!m_tls->readEnabled()) {
        // The relay itself stopped reading (backpressure, §3.4): what the peer sent waits unread, so
        // silence cannot be judged; the interval restarts when reading does.
        m_lastReceivedAtMs = now;
        return armKeepalive();
    }
    if (now - m_lastReceivedAtMs >= m_keepalive->silenceDeadlineMs())
        return loseToSilence();
    const bool pingOutstanding = m_lastPingAtMs > m_lastReceivedAtMs;
    const qint64 quietSince = pingOutstanding ? m_lastPingAtMs : m_lastReceivedAtMs;
    if (now - quietSince >= m_keepalive->pingIntervalMs() && withinSendBound(2)) {
        m_tls->write(WebSocketFrameEncoder::frame(0x9, {}, maskKey()));
        m_lastPingAtMs = now;
        m_keepalive->countPing();
    }
    if (m_state == State::Open)
        armKeepalive();
}

void WebSocketSession::loseToSilence()
{
    m_silent = true;
    m_keepalive->countSilentSession();
    const auto &reason = m_mask ? contract::refusal::cloudlySilent : contract::refusal::nodeSilent;
    m_state = State::Closing;
    m_closeCode = 1001;
    // Offered, not awaited: a silent peer answers no closing handshake.
    m_tls->write(WebSocketFrameEncoder::close(1001, QByteArrayView(reason.data(), reason.size()), maskKey()));
    m_tls->abort();
    end(1001);
}

void WebSocketSession::releaseWhenClosed()
{
    m_selfOwned = true;
    m_receiver = nullptr;
    disconnect(this, &WebSocketSession::textMessage, nullptr, nullptr);
    disconnect(this, &WebSocketSession::closed, nullptr, nullptr);
    if (m_state == State::Closed) {
        deleteLater();
        return;
    }
    if (m_state == State::Open)
        close(1001, "going away");
    else if (!m_closeTimer.isActive())
        m_closeTimer.start(kCloseGraceMs, this);
}

} // namespace coreflow
