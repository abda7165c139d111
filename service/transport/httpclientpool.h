#pragma once
// HttpClientPool: the relay's own HTTP/1.1 client to one origin, separate from the WebSocket
// sessions: a bounded set of keep-alive HttpClientConnections, all in the thread that owns the pool
// (the relay's main thread; no HTTP threads, no Qt-internal body buffering). The lane that owns it
// supplies its bounds (HttpClientLimits) and names failures on its own surface; the pool logs
// nothing. docs/contract.md §17 (the relay's own HTTP client).
//
// submit() runs a request on an idle connection (the most recently used first), else on a new one
// while fewer than limits.maxConnections exist, else it waits (first in, first out) until a
// connection is idle or closed; a waiting request's own timeouts are the lane's.
// Idle connections: at most limits.maxIdleConnections are kept (more are closed), each for
// limits.idleTimeoutMs on the injected Clock.
// Retry: a GET or HEAD that fails on a reused connection before any byte of its answer arrived (the
// peer closed the idle connection meanwhile) is sent once more, on a new connection (requestRetried()
// says so). Any other method (a POST with a body) is never sent twice: the peer may have applied it
// before closing, so that failure reaches the receiver like every other (responseFailed).
//
// Connection first: connectFor() opens a new connection for a receiver before it has a request (a
// lane that must know the origin can be reached before it commits to anything else, contract §13.6,
// D-130). The receiver hears connectionEstablished() once TCP (and TLS) is up, or responseFailed()
// with the dial's or the handshake's failure; the connection is then its own: submit() sends the
// request on it, cancel() closes it. It counts toward limits.maxConnections (an idle connection is
// closed to make room; else it waits like a request). Bytes or a close from the peer before the
// request is sent fail it (Protocol, RemoteClosed). Its bound is the lane's.
// Every call delivers its answer to the receiver given to submit() (see HttpResponseReceiver).
// cancel() is the only way to withdraw a receiver before its answer is over; after it (or after
// responseComplete/responseFailed) the pool never calls that receiver again.
#include "service/transport/httpclientconnection.h"

#include <QHash>
#include <QList>
#include <QObject>
#include <QUrl>
#include <deque>
#include <memory>

namespace coreflow {

class Clock;
class TlsClientContext;
class HttpResponseReceiver;

class HttpClientPool : public QObject {
    Q_OBJECT
public:
    // origin: scheme (https or http), host and port. tls: for an https origin (nullptr: every https
    // request fails as TlsHandshake). limits: the lane's bounds. clock: runs the connections' idle
    // bound; it must outlive the pool.
    HttpClientPool(const QUrl &origin, std::shared_ptr<const TlsClientContext> tls, const HttpClientLimits &limits,
                   Clock &clock, QObject *parent = nullptr);
    ~HttpClientPool() override;

    void submit(HttpResponseReceiver *receiver, const HttpClientRequest &request);
    // Opens a new connection for the receiver's coming request (see above).
    void connectFor(HttpResponseReceiver *receiver);
    // The receiver has room for body bytes again.
    void resume(HttpResponseReceiver *receiver);
    // The request's HttpRequestBodyStream has bytes again.
    void resumeBody(HttpResponseReceiver *receiver);
    // Withdraws the receiver: a waiting request is dropped, a running one aborted (its connection closed).
    void cancel(HttpResponseReceiver *receiver);

    const HttpClientLimits &limits() const { return m_limits; }
    int connectionCount() const { return m_connectionCount; }
    int idleCount() const { return int(m_idle.size()); }
    int waitingCount() const { return int(m_waiting.size()); }

Q_SIGNALS:
    // A kept-alive connection failed under a request before any byte of its answer (`failure`): the
    // request is sent once more on a new connection.
    void requestRetried(coreflow::HttpClientFailure failure);

private:
    struct Call {
        HttpResponseReceiver *receiver = nullptr;
        HttpClientRequest request;
        bool retried = false;
        bool connectOnly = false; // connectFor(): a new connection, no request yet
    };
    struct Running {
        HttpClientConnection *connection = nullptr;
        HttpClientRequest request;
        bool retried = false;
        bool connectOnly = false; // held for the receiver until submit()
    };
    void dispatch();
    void onIdle(HttpClientConnection *connection);
    void onClosed(HttpClientConnection *connection);
    void onEstablished(HttpClientConnection *connection, HttpResponseReceiver *receiver);
    void onFailed(HttpClientConnection *connection, HttpResponseReceiver *receiver, HttpClientFailure failure,
                  bool retryable);
    void forget(HttpClientConnection *connection);

    QUrl m_origin;
    std::shared_ptr<const TlsClientContext> m_tls;
    HttpClientLimits m_limits;
    Clock &m_clock;
    std::deque<Call> m_waiting;
    QList<HttpClientConnection *> m_idle;
    QHash<HttpResponseReceiver *, Running> m_running;
    int m_connectionCount = 0;
};

} // namespace coreflow
