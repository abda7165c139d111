#pragma once
// ListenerHandshake: what happens on a listener connection before it is a node session or an HTTP
// exchange (docs/contract.md §5: one TLS port; a WebSocket upgrade at "/", image pulls
// under /v2/). It runs the TLS handshake, reads the first request's header block with
// http_parser (Debian libhttp-parser) and decides:
//  - Upgrade: websocket at "/" (GET, Sec-WebSocket-Version 13, a 16-byte Sec-WebSocket-Key):
//    answers 101 itself and emits upgraded();
//  - Upgrade: websocket elsewhere: 404 path-not-served (registry error shape), connection closed;
//  - an upgrade at "/" with a broken WebSocket handshake: 400 request-invalid, connection closed;
//  - anything else (including a header block the parser refuses, one over kMaxHeadBytes, and one
//    with more lines than maxHeadLines, the HTTP handler's line bound, decided the moment the line
//    past it begins; D-60): emits
//    httpRequest() with every byte read so far, for the listener's HTTP server loop
//    (ListenerHttpConnection), which answers oversize or body-carrying requests by name.
// A connection that has not reached a decision within kTimeoutMs (10000 ms on the injected Clock,
// counted from accept; TLS handshake included, bytes arriving do not extend it: a handshake or an
// upgrade that drips is dropped at the same deadline) is dropped (contract §3.4 "Slow strangers"). After emitting, the handshake has handed the TlsConnection on
// (reparented by the receiver) and deletes itself.
#include "service/core/refusallogbound.h"
#include "service/transport/httpheadreader.h"
#include "service/transport/tlsconnection.h"

#include <QObject>
#include <memory>

namespace coreflow {

class Clock;
class ClockTimer;

class ListenerHandshake : public QObject, private TlsConnection::Receiver {
    Q_OBJECT
public:
    static constexpr int kTimeoutMs = 10000;
    static constexpr qsizetype kMaxHeadBytes = 64 * 1024;

    // maxHeadLines: header lines the first request may have (negative: unbounded).
    // refusalLog: the relay's bound on refusal log lines (docs/contract.md §3.1); nullptr: every
    // refused upgrade is logged.
    // clock: runs the kTimeoutMs deadline.
    ListenerHandshake(TlsConnection *tls, Clock &clock, qsizetype maxHeadLines, RefusalLogBound *refusalLog = nullptr,
                      QObject *parent = nullptr);
    ~ListenerHandshake() override;

    // Drops the connection now, without an answer, the way the kTimeoutMs deadline does (the listener
    // makes room for a newcomer, §3.4 "Count bounds"). No-op once decided or closed.
    void drop();

Q_SIGNALS:
    // rest: bytes that followed the upgrade request (the node's first frames), possibly empty.
    void upgraded(coreflow::TlsConnection *tls, const QByteArray &rest);
    void httpRequest(coreflow::TlsConnection *tls, const QByteArray &bytesSoFar);

private:
    void onTimeout();
    void tlsReadable() override { onReadyRead(); }
    void tlsClosed() override;
    void onReadyRead();
    void decide();
    // Answers in the HTTP refusal shape (contract::httpRefusal, contract §17), Connection: close, and closes.
    void refuse(int status, QLatin1StringView name, const QByteArray &reason);
    void handOver();

    TlsConnection *m_tls;
    RefusalLogBound *m_refusalLog;
    std::unique_ptr<ClockTimer> m_timeout;
    HttpHeadReader m_head; // the first request's header block, and every byte read so far
    bool m_done = false;
};

} // namespace coreflow
