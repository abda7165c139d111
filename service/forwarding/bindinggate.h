#pragma once
// BindingGate: the binding check of the nine session requests (docs/contract.md §8.1 "The nine session
// requests"). A request passes only when its request.session equals the binding that this very
// connection registered and that connection still carries the node; otherwise session-binding-refused
// with one of the contract's reasons, or request-invalid when request.session is missing or unreadable.
//
// Fast path: the very bytes of request.session a connection presented before and that passed, while
// its binding and its place in the registry are unchanged, pass again without being parsed (same bytes,
// same value, same verdict). One registry lookup per request.
#include "shared/contract/envelope.h"
#include "shared/contract/types.h"

#include <optional>

namespace coreflow {

class NodeConnection;
class NodeRegistry;

class BindingGate {
public:
    explicit BindingGate(const NodeRegistry &registry) : m_registry(registry) {}

    // nullopt: frame may be forwarded. A refusal of session-binding-refused is logged (method and
    // connection only).
    std::optional<contract::Refusal> admit(const contract::Frame &frame, NodeConnection *connection) const;

private:
    std::optional<contract::Refusal> compare(const NodeConnection *connection, const contract::SessionBinding &binding) const;

    const NodeRegistry &m_registry;
};

} // namespace coreflow
