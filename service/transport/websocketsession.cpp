#include "service/transport/websocketsession.h"

#include "service/transport/websocketcloseframe.h"
#include "service/transport/websocketframeencoder.h"

#include "shared/contract/refusalnames.h"

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
    // Delivered after the owner had a chance to connect to textMessage(): the bytes that followed the
    // upgrade request, then whatever OpenSSL read ahead (the socket notifier cannot see those).
    QTimer::singleShot(0, this, [this, bytes = std::move(alreadyRead)] {
        if (!bytes.isEmpty())
            decode(bytes);
        onReadyRead();
    });
}

WebSocketSession::~WebSocketSession() { chargeBudget(0); }

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
    close(1008, QByteArrayView(contract::refusal::relayReceiveBudget.data(), contract::refusal::relayReceiveBudget.size()));
}

void WebSocketSession::onReadyRead()
{
    char buffer[kReadChunk];
    while (m_tls && m_state != State::Closed) {
        const qsizetype n = m_tls->read(buffer, kReadChunk);
        if (n <= 0)
            return;
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
        } else {
            if (m_receiver)
                m_receiver->sessionBinary();
            Q_EMIT binaryMessage();
        }
    };
    sink.control = [this](WebSocketFrameDecoder::Opcode opcode, QByteArray payload) { onControl(opcode, payload); };
    m_decoder.feed(bytes, sink);
    chargeBudget(m_state == State::Open && m_decoder.failure() == WebSocketFrameDecoder::Failure::None
                     ? m_decoder.bufferedBytes()
                     : 0);
    if (m_decoder.failure() != WebSocketFrameDecoder::Failure::None && m_state == State::Open) {
        const char *reason = m_decoder.failure() == WebSocketFrameDecoder::Failure::MessageTooBig ? "message too large"
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

void WebSocketSession::sendText(QByteArrayView utf8)
{
    if (m_state != State::Open)
        return;
    if (!withinSendBound(utf8.size()))
        return;
    if (m_coalesce)
        m_tls->writeDeferred(WebSocketFrameEncoder::text(utf8, maskKey()));
    else
        m_tls->write(WebSocketFrameEncoder::text(utf8, maskKey()));
}

bool WebSocketSession::withinSendBound(qsizetype more)
{
    if (m_tls->pendingBytes() + more <= kMaxPendingBytes)
        return true;
    const auto &reason = m_mask ? contract::refusal::cloudlyNotReading : contract::refusal::nodeNotReading;
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
    chargeBudget(0);
    if (m_receiver)
        m_receiver->sessionClosed(code);
    Q_EMIT closed(code);
    if (m_selfOwned)
        deleteLater();
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
