#include "service/forwarding/forwardercourier.h"

#include "service/forwarding/listenersessions.h"
#include "service/forwarding/nodeconnection.h"
#include "service/forwarding/noderegistry.h"
#include "shared/contract/methods.h"
#include "shared/contract/refusalnames.h"

namespace coreflow {

using namespace contract;

std::optional<SessionBinding> ForwarderCourier::currentBinding(const QString &nodeId) const
{
    const NodeConnection *c = m_registry.carried(nodeId);
    if (!c)
        return std::nullopt;
    return c->binding();
}

void ForwarderCourier::deliver(const QString &nodeId, const QByteArray &rawRequest, qint64 timeoutMs, Delivered done)
{
    NodeConnection *c = m_registry.carried(nodeId);
    if (!c || !c->isOpen()) {
        const Refusal r{QString(refusal::nodeNotConnected), QStringLiteral("node %1 is not connected to this relay").arg(nodeId)};
        done(nullptr, &r);
        return;
    }
    m_sessions.requestConnection(c, QString(method::applyRuntimeNetworkDnsLeaseRenewal), rawRequest, timeoutMs, std::move(done));
}

} // namespace coreflow
