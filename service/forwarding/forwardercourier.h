#pragma once
// ForwarderCourier: the relay's EscrowCourier — reads a carried node's binding from the SessionForwarder
// registry and delivers renewals through SessionForwarder::requestConnection (the same bounded,
// by-name path as Cloudly's pushes; docs/contract.md §9.4).
#include "service/escrow/escrowcourier.h"

namespace coreflow {

class SessionForwarder;

class ForwarderCourier final : public EscrowCourier {
public:
    explicit ForwarderCourier(SessionForwarder &forwarder) : m_forwarder(forwarder) {}
    std::optional<contract::SessionBinding> currentBinding(const QString &nodeId) const override;
    void deliver(const QString &nodeId, const QByteArray &rawRequest, qint64 timeoutMs, Delivered done) override;

private:
    SessionForwarder &m_forwarder;
};

} // namespace coreflow
