#include "service/forwarding/bindinggate.h"

#include "service/core/logging.h"
#include "service/forwarding/nodeconnection.h"
#include "service/forwarding/noderegistry.h"
#include "service/forwarding/requestsession.h"
#include "shared/contract/refusalnames.h"

namespace coreflow {

using namespace contract;

std::optional<Refusal> BindingGate::admit(const Frame &frame, NodeConnection *connection) const
{
    bool readable = false;
    const std::optional<QByteArrayView> raw = frame.requestMember("session", &readable);
    if (readable && raw && connection->presentedAcceptedSession(*raw) && m_registry.carries(connection))
        return std::nullopt;
    auto binding = readRequestSession(frame, readable, raw);
    if (!binding)
        return binding.refusal();
    if (auto refusal = compare(connection, binding.value())) {
        qCInfo(logForwarder).noquote() << "refused" << frame.method << "from" << connection->describe() << ":" << refusal->name;
        return refusal;
    }
    connection->rememberAcceptedSession(readable && raw ? raw->toByteArray() : QByteArray());
    return std::nullopt;
}

std::optional<Refusal> BindingGate::compare(const NodeConnection *connection, const SessionBinding &binding) const
{
    auto refused = [](const QString &why) { return Refusal{QString(refusal::sessionBindingRefused), why}; };
    if (!connection->binding())
        return refused(QStringLiteral("this connection has registered no session"));
    const SessionBinding &own = *connection->binding();
    const NodeConnection *current = m_registry.carried(binding.nodeId);
    if (own == binding) {
        if (current == connection)
            return std::nullopt;
        return refused(QStringLiteral("the session of node %1 on this connection was superseded by a newer registration")
                           .arg(binding.nodeId));
    }
    if (current && current != connection && current->binding() && *current->binding() == binding)
        return refused(QStringLiteral("that session of node %1 was registered on another connection").arg(binding.nodeId));
    if (binding.nodeId != own.nodeId)
        return refused(QStringLiteral("the binding names node %1 but this connection registered node %2").arg(binding.nodeId, own.nodeId));
    if (binding.clusterId != own.clusterId)
        return refused(QStringLiteral("the binding names another cluster than the session registered here"));
    if (binding.sessionId != own.sessionId)
        return refused(QStringLiteral("the binding names a superseded session of node %1").arg(binding.nodeId));
    if (binding.relayRegistrationGeneration < own.relayRegistrationGeneration)
        return refused(QStringLiteral("the binding names an older relay registration generation (%1 < %2)")
                           .arg(binding.relayRegistrationGeneration)
                           .arg(own.relayRegistrationGeneration));
    return refused(QStringLiteral("the binding is not the one this connection registered"));
}

} // namespace coreflow
