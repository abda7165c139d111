#include "service/forwarding/noderegistry.h"

#include "service/core/logging.h"
#include "service/forwarding/nodeconnection.h"
#include "shared/contract/refusalnames.h"
#include "shared/contract/refusalquote.h"

#include <algorithm>

namespace coreflow {

using namespace contract;

void NodeRegistry::add(NodeConnection *connection) { m_connections.insert(connection->connectionId(), connection); }

bool NodeRegistry::remove(NodeConnection *connection)
{
    if (!m_connections.remove(connection->connectionId()))
        return false;
    const auto &binding = connection->binding();
    if (binding && m_carried.value(binding->nodeId) == connection) {
        m_carried.remove(binding->nodeId);
        qCInfo(logForwarder).noquote() << connection->describe()
                                       << (connection->endedBySilence() ? "went silent (docs/contract.md §3.3); dropped, no longer carried"
                                                                        : "disconnected; no longer carried");
        Q_EMIT nodeGone(binding->nodeId);
    }
    return true;
}

void NodeRegistry::bind(NodeConnection *connection, const SessionBinding &binding, qint64 carrierCount, qint64 atMs)
{
    NodeConnection *previous = m_carried.value(binding.nodeId);
    if (previous && previous != connection) {
        // The superseded socket is closed, not kept until its TCP flow ends (docs/contract.md §3.3).
        qCInfo(logForwarder).noquote() << "node" << RefusalQuote::nameOrLength(binding.nodeId) << "registered again on a new connection; the older one is superseded and closed";
        previous->close(QWebSocketProtocol::CloseCodeNormal, QString(refusal::nodeSuperseded));
    }
    const auto &held = connection->binding();
    if (held && held->nodeId != binding.nodeId && m_carried.value(held->nodeId) == connection)
        m_carried.remove(held->nodeId);
    connection->bindTo(binding, carrierCount, atMs);
    m_carried.insert(binding.nodeId, connection);
    qCInfo(logForwarder).noquote() << QStringLiteral("node %1 registered through this relay (carrier %2)").arg(RefusalQuote::nameOrLength(binding.nodeId)).arg(carrierCount);
    Q_EMIT nodeRegistered(binding);
}

bool NodeRegistry::carries(const NodeConnection *connection) const
{
    const auto &binding = connection->binding();
    return binding && m_carried.value(binding->nodeId) == connection;
}

QList<status::CarriedNode> NodeRegistry::carriedNodes() const
{
    QList<status::CarriedNode> nodes;
    for (auto it = m_carried.constBegin(); it != m_carried.constEnd(); ++it) {
        const NodeConnection *c = it.value();
        nodes.append(status::CarriedNode{it.key(), c->registeredAtMs(), c->registeredUnderCarrier(), c->lastMethod(),
                                         c->lastForwardAtMs(), c->forwardsInFlight(), c->lastReceivedAtMs(), c->keepaliveState(),
                                         c->peerAddress(), c->offeredRelease(), c->acceptedAtMs(), c->bytesReceived(),
                                         c->bytesSent()});
    }
    std::sort(nodes.begin(), nodes.end(), [](const auto &a, const auto &b) { return a.nodeId < b.nodeId; });
    return nodes;
}

} // namespace coreflow
