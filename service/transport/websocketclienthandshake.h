#pragma once
// WebSocketClientHandshake: the client side of the RFC 6455 opening handshake (§4.1) for the relay's
// own Cloudly session (docs/contract.md D-54), over a TlsConnection that may still be in its TLS
// handshake (it is started here) or plaintext (loopback ws:// only).
//
// Sends: GET <target> HTTP/1.1, Host, Upgrade: websocket, Connection: Upgrade, a fresh 16-byte
// Sec-WebSocket-Key (libsodium randombytes), Sec-WebSocket-Version: 13. No subprotocol, no
// extension, no cookie, no credential: the bearer travels only inside the session's first frame.
// Reads the answer's header block with http_parser (at most kMaxHeadBytes = 64 KiB) and accepts only
// 101 with Upgrade: websocket, a Connection header naming Upgrade, the matching Sec-WebSocket-Accept,
// and neither Sec-WebSocket-Extensions nor Sec-WebSocket-Protocol (none were offered).
//
// Outcome, exactly once: upgraded(tls, rest) hands the connection on (rest: bytes after the header
// block, the server's first frames), or failed(reason) after the connection was closed; reason
// names the step and, for an answer, its status code only (never a header value or body byte).
// The handshake holds no timer: the Cloudly handshake bound (cloudlyHandshakeTimeoutMs) covers it.
#include "service/transport/httpheadreader.h"
#include "service/transport/tlsconnection.h"

#include <QObject>

namespace coreflow {

class WebSocketClientHandshake : public QObject, private TlsConnection::Receiver {
    Q_OBJECT
public:
    static constexpr qsizetype kMaxHeadBytes = 64 * 1024;

    // hostHeader: host[:port] as the Host header carries it; target: path and query ("/" at least).
    WebSocketClientHandshake(TlsConnection *tls, QByteArray hostHeader, QByteArray target, QObject *parent = nullptr);
    ~WebSocketClientHandshake() override;

    // Starts TLS (or sends the request at once on a plaintext connection). Outcomes are signalled
    // from the event loop, never from inside start().
    void start();
    // Ends the attempt at once, silently (no signal): the connection is closed.
    void abort();

Q_SIGNALS:
    void upgraded(coreflow::TlsConnection *tls, const QByteArray &rest);
    void failed(const QString &reason);

private:
    void tlsOpen() override { sendRequest(); }
    void tlsReadable() override { onReadyRead(); }
    void tlsClosed() override;
    void sendRequest();
    void onReadyRead();
    void decide();
    void fail(const QString &reason);

    TlsConnection *m_tls;
    QByteArray m_hostHeader;
    QByteArray m_target;
    QByteArray m_key;
    HttpHeadReader m_answer; // the upgrade answer's header block, and every byte read so far
    bool m_requestSent = false;
    bool m_done = false;
};

} // namespace coreflow
