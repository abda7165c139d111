#include "service/forwarding/connectionrequests.h"

#include "service/forwarding/nodeconnection.h"
#include "shared/contract/refusalnames.h"

namespace coreflow {

using namespace contract;

struct ConnectionRequests::Pending {
    QPointer<NodeConnection> connection;
    QString method;
    AnswerCallback callback;
    DeadlineQueue::Handle deadline = 0; // in m_deadlines
};

ConnectionRequests::ConnectionRequests(Clock &clock) : m_deadlines(clock) {}

ConnectionRequests::~ConnectionRequests() = default;

QString ConnectionRequests::send(NodeConnection *connection, const QString &method, QByteArrayView rawRequest,
                                 qint64 timeoutMs, AnswerCallback callback)
{
    const QString requestId = QStringLiteral("p%1").arg(m_nextId++);
    auto pending = std::make_shared<Pending>();
    pending->connection = connection;
    pending->method = method;
    pending->callback = std::move(callback);
    const QString who = connection->describe();
    pending->deadline = m_deadlines.schedule(timeoutMs, [this, requestId, who, method, timeoutMs] {
        const Refusal r{QString(refusal::nodePushTimeout),
                        QStringLiteral("%1 did not answer %2 within %3 ms").arg(who, method).arg(timeoutMs)};
        finish(requestId, nullptr, &r);
    });
    m_pending.insert(requestId, pending);
    connection->send(Envelope::request(method, requestId, rawRequest));
    return requestId;
}

bool ConnectionRequests::answered(NodeConnection *connection, const Frame &answer)
{
    auto it = m_pending.constFind(answer.correlationId);
    if (it == m_pending.constEnd() || it.value()->connection != connection)
        return false;
    finish(answer.correlationId, &answer, nullptr);
    return true;
}

void ConnectionRequests::connectionLost(NodeConnection *connection)
{
    const auto ids = m_pending.keys();
    for (const QString &id : ids) {
        auto it = m_pending.constFind(id);
        if (it != m_pending.constEnd() && it.value()->connection == connection) {
            const Refusal r{QString(refusal::nodeConnectionLost),
                            QStringLiteral("%1 closed its connection before it answered %2").arg(connection->describe(), it.value()->method)};
            finish(id, nullptr, &r);
        }
    }
}

void ConnectionRequests::finish(const QString &requestId, const Frame *answer, const Refusal *refusal)
{
    auto it = m_pending.find(requestId);
    if (it == m_pending.end())
        return;
    std::shared_ptr<Pending> pending = it.value();
    m_pending.erase(it);
    m_deadlines.cancel(pending->deadline);
    if (pending->callback)
        pending->callback(answer, refusal);
    if (m_pending.isEmpty() && m_idle)
        m_idle();
}

} // namespace coreflow
