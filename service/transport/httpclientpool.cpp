#include "service/transport/httpclientpool.h"

#include "service/transport/httpresponsereceiver.h"

namespace coreflow {

HttpClientPool::HttpClientPool(const QUrl &origin, std::shared_ptr<const TlsClientContext> tls,
                               const HttpClientLimits &limits, Clock &clock, QObject *parent)
    : QObject(parent), m_origin(origin), m_tls(std::move(tls)), m_limits(limits), m_clock(clock)
{
}

HttpClientPool::~HttpClientPool()
{
    m_waiting.clear();
    m_running.clear();
    const auto connections = findChildren<HttpClientConnection *>(Qt::FindDirectChildrenOnly);
    for (HttpClientConnection *c : connections) {
        c->disconnect(this);
        delete c;
    }
}

void HttpClientPool::submit(HttpResponseReceiver *receiver, const HttpClientRequest &request)
{
    const auto running = m_running.find(receiver);
    if (running != m_running.end() && running->connectOnly) {
        // The connection opened for this receiver (connectFor) carries its request.
        running->connectOnly = false;
        running->request = request;
        running->connection->send(request, receiver);
        return;
    }
    for (Call &waiting : m_waiting) {
        if (waiting.receiver == receiver && waiting.connectOnly) {
            waiting.connectOnly = false; // still waiting for room: it goes as an ordinary request
            waiting.request = request;
            return;
        }
    }
    m_waiting.push_back({receiver, request, false, false});
    dispatch();
}

void HttpClientPool::connectFor(HttpResponseReceiver *receiver)
{
    m_waiting.push_back({receiver, HttpClientRequest(), false, true});
    dispatch();
}

void HttpClientPool::dispatch()
{
    while (!m_waiting.empty()) {
        Call &next = m_waiting.front();
        HttpClientConnection *connection = nullptr;
        if (!next.retried && !next.connectOnly && !m_idle.isEmpty()) {
            connection = m_idle.takeLast();
        } else {
            if (m_connectionCount >= m_limits.maxConnections && !m_idle.isEmpty())
                m_idle.takeFirst()->abort(); // a retry or a connectFor() needs a new connection: make room
            if (m_connectionCount >= m_limits.maxConnections)
                return; // waits for a connection to go idle or close
            connection = new HttpClientConnection(m_origin, m_tls, m_limits, m_clock, this);
            ++m_connectionCount;
            connect(connection, &HttpClientConnection::idle, this, &HttpClientPool::onIdle);
            connect(connection, &HttpClientConnection::closed, this, &HttpClientPool::onClosed);
            connect(connection, &HttpClientConnection::failed, this, &HttpClientPool::onFailed);
            connect(connection, &HttpClientConnection::established, this, &HttpClientPool::onEstablished);
        }
        Call call = std::move(next);
        m_waiting.pop_front();
        m_running.insert(call.receiver, {connection, call.request, call.retried, call.connectOnly});
        if (call.connectOnly)
            connection->connectFor(call.receiver);
        else
            connection->send(call.request, call.receiver);
    }
}

void HttpClientPool::resume(HttpResponseReceiver *receiver)
{
    const auto it = m_running.constFind(receiver);
    if (it != m_running.constEnd())
        it->connection->resume();
}

void HttpClientPool::resumeBody(HttpResponseReceiver *receiver)
{
    const auto it = m_running.constFind(receiver);
    if (it != m_running.constEnd())
        it->connection->resumeBody();
}

void HttpClientPool::cancel(HttpResponseReceiver *receiver)
{
    for (auto it = m_waiting.begin(); it != m_waiting.end(); ++it) {
        if (it->receiver == receiver) {
            m_waiting.erase(it);
            return;
        }
    }
    const auto it = m_running.find(receiver);
    if (it == m_running.end())
        return;
    HttpClientConnection *connection = it->connection;
    m_running.erase(it);
    connection->abort(); // closed() follows: forgotten there
}

void HttpClientPool::forget(HttpClientConnection *connection)
{
    for (auto it = m_running.begin(); it != m_running.end();) {
        if (it->connection == connection)
            it = m_running.erase(it);
        else
            ++it;
    }
}

void HttpClientPool::onIdle(HttpClientConnection *connection)
{
    forget(connection);
    if (m_idle.size() >= m_limits.maxIdleConnections) {
        connection->abort();
        return;
    }
    m_idle.append(connection);
    // Later: the connection is still inside its own answer's end.
    QMetaObject::invokeMethod(this, &HttpClientPool::dispatch, Qt::QueuedConnection);
}

void HttpClientPool::onClosed(HttpClientConnection *connection)
{
    forget(connection);
    m_idle.removeAll(connection);
    --m_connectionCount;
    connection->deleteLater();
    QMetaObject::invokeMethod(this, &HttpClientPool::dispatch, Qt::QueuedConnection);
}

void HttpClientPool::onEstablished(HttpClientConnection *connection, HttpResponseReceiver *receiver)
{
    const auto it = m_running.constFind(receiver);
    if (it == m_running.constEnd() || it->connection != connection || !it->connectOnly)
        return; // withdrawn meanwhile
    receiver->connectionEstablished();
}

void HttpClientPool::onFailed(HttpClientConnection *connection, HttpResponseReceiver *receiver,
                              HttpClientFailure failure, bool retryable)
{
    const auto it = m_running.find(receiver);
    if (it == m_running.end() || it->connection != connection)
        return; // withdrawn meanwhile
    Running running = std::move(*it);
    m_running.erase(it);
    // Only a request that is safe to repeat goes again (RFC 9110 §9.2.2): a POST may have been applied
    // by a peer that closed before answering (an isolated-restore control, contract §14, IR-08). A
    // connection opened for a request not yet given (connectFor) is never redialled: its failure is
    // the answer the lane asked for.
    const bool idempotent = !running.connectOnly && (running.request.method == "GET" || running.request.method == "HEAD");
    if (retryable && idempotent && !running.retried) {
        Q_EMIT requestRetried(failure);
        m_waiting.push_front({receiver, std::move(running.request), true});
        QMetaObject::invokeMethod(this, &HttpClientPool::dispatch, Qt::QueuedConnection);
        return;
    }
    receiver->responseFailed(failure);
}

} // namespace coreflow
