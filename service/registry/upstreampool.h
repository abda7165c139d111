#pragma once
// UpstreamPool: the relay's own HTTP/1.1 client to the registry (IP-01, IP-20), separate from the
// Cloudly WebSocket session: a bounded set of keep-alive UpstreamConnections to one origin (CLOUDLY_URL's),
// all in the thread that owns the pool (the relay's main thread; no HTTP threads, no Qt-internal
// body buffering).
//
// submit() runs a request on an idle connection (the most recently used first), else on a new one
// while fewer than kMaxConnections exist, else it waits (first in, first out) until a connection is
// idle or closed; a waiting request's header timeout keeps running in its RegistryExchange.
// Idle connections: at most kMaxIdleConnections are kept (more are closed), each for
// UpstreamConnection::kIdleTimeoutMs.
// Retry: a request that fails on a reused connection before any byte of its answer arrived (the
// registry closed the idle connection meanwhile) is sent once more, on a new connection; GET and HEAD
// are safe to repeat. Every other failure reaches the handler (upstreamFailed) with its class.
//
// Every call delivers its answer to the handler given to submit() (see UpstreamResponseHandler).
// cancel() is the only way to withdraw a handler before its answer is over; after it (or after
// upstreamComplete/upstreamFailed) the pool never calls that handler again.
#include "service/registry/upstreamconnection.h"

#include <QHash>
#include <QList>
#include <QObject>
#include <QUrl>
#include <deque>
#include <memory>

namespace coreflow {

class TlsClientContext;
class UpstreamResponseHandler;

class UpstreamPool : public QObject {
    Q_OBJECT
public:
    static constexpr int kMaxConnections = 256;     // open or opening, idle included
    static constexpr int kMaxIdleConnections = 64;

    // origin: the registry's scheme, host and port. tls: for an https origin (nullptr: every https
    // request fails as TlsHandshake).
    UpstreamPool(const QUrl &origin, std::shared_ptr<const TlsClientContext> tls, QObject *parent = nullptr);
    ~UpstreamPool() override;

    void submit(UpstreamResponseHandler *handler, const UpstreamRequest &request);
    // The handler has room for body bytes again.
    void resume(UpstreamResponseHandler *handler);
    // Withdraws the handler: a waiting request is dropped, a running one aborted (its connection closed).
    void cancel(UpstreamResponseHandler *handler);

    int connectionCount() const { return m_connectionCount; }
    int idleCount() const { return int(m_idle.size()); }
    int waitingCount() const { return int(m_waiting.size()); }

private:
    struct Call {
        UpstreamResponseHandler *handler = nullptr;
        UpstreamRequest request;
        bool retried = false;
    };
    struct Running {
        UpstreamConnection *connection = nullptr;
        UpstreamRequest request;
        bool retried = false;
    };
    void dispatch();
    void onIdle(UpstreamConnection *connection);
    void onClosed(UpstreamConnection *connection);
    void onFailed(UpstreamConnection *connection, UpstreamResponseHandler *handler, const QByteArray &failureClass,
                  bool retryable);
    void forget(UpstreamConnection *connection);

    QUrl m_origin;
    std::shared_ptr<const TlsClientContext> m_tls;
    std::deque<Call> m_waiting;
    QList<UpstreamConnection *> m_idle;
    QHash<UpstreamResponseHandler *, Running> m_running;
    int m_connectionCount = 0;
};

} // namespace coreflow
