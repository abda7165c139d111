#pragma once
// ForwarderCourier: the relay's EscrowCourier — reads a carried node's binding from the NodeRegistry
// and delivers renewals through ListenerSessions::requestConnection (the same bounded, by-name path as
// Cloudly's pushes; docs/contract.md §9.4).
#include "service/escrow/escrowcourier.h"

namespace coreflow {

class ListenerSessions;
class NodeRegistry;

class ForwarderCourier final : public EscrowCourier {
public:
    ForwarderCourier(const NodeRegistry &registry, ListenerSessions &sessions) : m_registry(registry), m_sessions(sessions) {}
    std::optional<contract::SessionBinding> currentBinding(const QString &nodeId) const override;
    void deliver(const QString &nodeId, const QByteArray &rawRequest, qint64 timeoutMs, Delivered done) override;

private:
    const NodeRegistry &m_registry;
    ListenerSessions &m_sessions;
};

} // namespace coreflow
