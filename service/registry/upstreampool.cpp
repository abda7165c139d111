#include "service/registry/upstreampool.h"

#include "service/core/logging.h"
#include "service/registry/upstreamresponsehandler.h"

namespace coreflow {

UpstreamPool::UpstreamPool(const QUrl &origin, std::shared_ptr<const TlsClientContext> tls, QObject *parent)
    : QObject(parent), m_origin(origin), m_tls(std::move(tls))
{
}

UpstreamPool::~UpstreamPool()
{
    m_waiting.clear();
    m_running.clear();
    const auto connections = findChildren<UpstreamConnection *>(Qt::FindDirectChildrenOnly);
    for (UpstreamConnection *c : connections) {
        c->disconnect(this);
        delete c;
    }
}

void UpstreamPool::submit(UpstreamResponseHandler *handler, const UpstreamRequest &request)
{
    m_waiting.push_back({handler, request, false});
    dispatch();
}

void UpstreamPool::dispatch()
{
    while (!m_waiting.empty()) {
        Call &next = m_waiting.front();
        UpstreamConnection *connection = nullptr;
        if (!next.retried && !m_idle.isEmpty()) {
            connection = m_idle.takeLast();
        } else {
            if (m_connectionCount >= kMaxConnections && !m_idle.isEmpty())
                m_idle.takeFirst()->abort(); // a retry needs a new connection: make room
            if (m_connectionCount >= kMaxConnections)
                return; // waits for a connection to go idle or close
            connection = new UpstreamConnection(m_origin, m_tls, this);
            ++m_connectionCount;
            connect(connection, &UpstreamConnection::idle, this, &UpstreamPool::onIdle);
            connect(connection, &UpstreamConnection::closed, this, &UpstreamPool::onClosed);
            connect(connection, &UpstreamConnection::failed, this, &UpstreamPool::onFailed);
        }
        Call call = std::move(next);
        m_waiting.pop_front();
        m_running.insert(call.handler, {connection, call.request, call.retried});
        connection->send(call.request, call.handler);
    }
}

void UpstreamPool::resume(UpstreamResponseHandler *handler)
{
    const auto it = m_running.constFind(handler);
    if (it != m_running.constEnd())
        it->connection->resume();
}

void UpstreamPool::cancel(UpstreamResponseHandler *handler)
{
    for (auto it = m_waiting.begin(); it != m_waiting.end(); ++it) {
        if (it->handler == handler) {
            m_waiting.erase(it);
            return;
        }
    }
    const auto it = m_running.find(handler);
    if (it == m_running.end())
        return;
    UpstreamConnection *connection = it->connection;
    m_running.erase(it);
    connection->abort(); // closed() follows: forgotten there
}

void UpstreamPool::forget(UpstreamConnection *connection)
{
    for (auto it = m_running.begin(); it != m_running.end();) {
        if (it->connection == connection)
            it = m_running.erase(it);
        else
            ++it;
    }
}

void UpstreamPool::onIdle(UpstreamConnection *connection)
{
    forget(connection);
    if (m_idle.size() >= kMaxIdleConnections) {
        connection->abort();
        return;
    }
    m_idle.append(connection);
    // Later: the connection is still inside its own answer's end.
    QMetaObject::invokeMethod(this, &UpstreamPool::dispatch, Qt::QueuedConnection);
}

void UpstreamPool::onClosed(UpstreamConnection *connection)
{
    forget(connection);
    m_idle.removeAll(connection);
    --m_connectionCount;
    connection->deleteLater();
    QMetaObject::invokeMethod(this, &UpstreamPool::dispatch, Qt::QueuedConnection);
}

void UpstreamPool::onFailed(UpstreamConnection *connection, UpstreamResponseHandler *handler,
                            const QByteArray &failureClass, bool retryable)
{
    const auto it = m_running.find(handler);
    if (it == m_running.end() || it->connection != connection)
        return; // withdrawn meanwhile
    Running running = std::move(*it);
    m_running.erase(it);
    if (retryable && !running.retried) {
        qCInfo(logRegistry, "a kept-alive registry connection was closed under a request (%s): sent again on a new one",
               failureClass.constData());
        m_waiting.push_front({handler, std::move(running.request), true});
        QMetaObject::invokeMethod(this, &UpstreamPool::dispatch, Qt::QueuedConnection);
        return;
    }
    handler->upstreamFailed(failureClass);
}

} // namespace coreflow
