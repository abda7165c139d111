#pragma once
// CloudlySocket: one attempt at the relay's WebSocket to Cloudly, on the relay's own transport
// (docs/contract.md §6.0.1, D-54): TcpDialer -> TlsConnection (client, verified
// against CLOUDLY_URL's host with a TlsClientContext; plaintext for a loopback ws:// URL) ->
// WebSocketClientHandshake -> WebSocketSession in the client role (masked frames out, at most
// maxMessageBytes per incoming message, the 32 MiB send bound). CloudlyConnector makes a new one for
// every connection attempt.
//
// Text messages arrive and leave as UTF-8 bytes: no QString on the forwarding path.
// Lifecycle: open() -> connected() once the 101 arrived -> textMessage()... -> disconnected() once,
// whether the attempt failed (errorString() names the step: resolve, connect, TLS verification,
// upgrade status; never a URL path, query, header value or credential), the peer closed, or abort()
// was called (abort() emits disconnected() before it returns, when the socket was not already
// unconnected). Internals are deleted later, never inside their own callbacks.
// Silence (docs/contract.md §3.3, D-56): with a keepalive the open session pings Cloudly and is lost
// when nothing arrived within the silence deadline; disconnected() then follows as for any close,
// with lostToSilence() true and errorString() saying so.
#include "service/transport/websocketsession.h"

#include <QObject>
#include <QPointer>
#include <QUrl>

#include <memory>

namespace coreflow {

class TcpDialer;
class TlsClientContext;
class WebSocketClientHandshake;

class CloudlySocket : public QObject, private WebSocketSession::Receiver {
    Q_OBJECT
public:
    enum class State { Unconnected, Connecting, Open, Closing };

    // tls: the client context for wss:// (nullptr for ws://).
    // keepalive: the silence rule of the open session (nullptr: none).
    CloudlySocket(std::shared_ptr<TlsClientContext> tls, qsizetype maxMessageBytes,
                  std::shared_ptr<SessionKeepalive> keepalive = {}, QObject *parent = nullptr);
    ~CloudlySocket() override;

    void open(const QUrl &url);
    // Closing: the session sent its Close (e.g. at the send bound) and waits for the transport to go.
    State state() const
    {
        return m_state == State::Open && !(m_session && m_session->isOpen()) ? State::Closing : m_state;
    }
    bool isOpen() const { return state() == State::Open; }
    QString errorString() const { return m_error; }
    // Frames one text message (UTF-8 bytes) and sends what the socket takes now; nothing on a socket
    // that is not open.
    // content Secret: the frame carries a relay-held secret or its echo (WebSocketSession::sendText).
    void sendText(QByteArrayView utf8, TlsConnection::Content content = TlsConnection::Content::Ordinary);
    // Frames one binary message (a closure chunk, docs/contract.md §13.4); nothing when not open.
    void sendBinary(QByteArrayView payload);
    // Bytes framed for Cloudly that the socket has not taken yet; written() each time some left.
    qsizetype pendingBytes() const { return m_session ? m_session->pendingBytes() : 0; }
    // Sends a Close frame (code, reason) and then closes the transport without waiting for the answer.
    void closeNow(quint16 code, QByteArrayView reason);
    void abort();

    // The session ended because Cloudly went silent (no frame within the silence deadline).
    bool lostToSilence() const { return m_lostToSilence; }
    // Clock ms of the last byte from Cloudly on the open session (0: none or no keepalive).
    qint64 lastReceivedAtMs() const { return m_session ? m_session->lastReceivedAtMs() : m_lastReceivedAtMs; }
    WebSocketSession::KeepaliveState keepaliveState() const
    {
        if (m_lostToSilence)
            return WebSocketSession::KeepaliveState::Silent;
        return m_session ? m_session->keepaliveState() : WebSocketSession::KeepaliveState::Off;
    }

Q_SIGNALS:
    void connected();
    void disconnected();
    void textMessage(const QByteArray &utf8);
    void binaryMessage(const QByteArray &payload);
    void written();

private:
    void sessionText(const QByteArray &utf8) override;
    void sessionBinary(const QByteArray &payload) override { Q_EMIT binaryMessage(payload); }
    void sessionClosed(quint16 code) override;
    void sessionWritten() override { Q_EMIT written(); }
    void onDialed(int fd);
    void onUpgraded(TlsConnection *tls, const QByteArray &rest);
    void failAttempt(const QString &reason);
    void tearDown();

    std::shared_ptr<TlsClientContext> m_tlsContext;
    qsizetype m_maxMessageBytes;
    std::shared_ptr<SessionKeepalive> m_keepalive;
    bool m_lostToSilence = false;
    qint64 m_lastReceivedAtMs = 0; // kept from the session once it is gone
    State m_state = State::Unconnected;
    QString m_error;
    QString m_host;
    QByteArray m_hostHeader;
    QByteArray m_target;
    TcpDialer *m_dialer = nullptr;
    QPointer<WebSocketClientHandshake> m_handshake;
    QPointer<WebSocketSession> m_session;
};

} // namespace coreflow
