#pragma once
// EscrowCourier: what the lease escrow needs from the node lane, and nothing more (docs/contract.md §9: "Only
// a node the forwarder carries is reached"; ES-09, ES-22, ES-23). The relay's
// implementation is ForwarderCourier (over the forwarding lane's NodeRegistry and ListenerSessions);
// unit tests and the benchmark use fakes.
#include "shared/contract/envelope.h"
#include "shared/contract/types.h"

#include <functional>
#include <optional>

namespace coreflow {

class EscrowCourier {
public:
    // Exactly one of answer (the node's response-phase frame, which may carry its error) or refusal
    // (the relay's: node-not-connected, node-push-timeout, node-connection-lost) is set.
    using Delivered = std::function<void(const contract::Frame *answer, const contract::Refusal *refusal)>;

    virtual ~EscrowCourier() = default;
    // The Cloudly-issued binding of the node as the forwarder carries it now; nullopt when not carried.
    virtual std::optional<contract::SessionBinding> currentBinding(const QString &nodeId) const = 0;
    // Sends applyRuntimeNetworkDnsLeaseRenewal with rawRequest to the node's current connection, bounded
    // at timeoutMs. A node that is not carried is refused node-not-connected without a delivery attempt;
    // done may then run before deliver() returns.
    virtual void deliver(const QString &nodeId, const QByteArray &rawRequest, qint64 timeoutMs, Delivered done) = 0;
};

} // namespace coreflow
