#pragma once
// PeerResult<T>: a value a loopback peer read, or the PeerRefusal that says why there is none.
// The peers' own small type (the relay's shared/contract/result.h is not theirs to use).
#include "tests/peers/peerrefusal.h"

#include <utility>
#include <variant>

namespace coreflow::peers {

template <typename T>
class PeerResult {
public:
    PeerResult(T value) : m_v(std::move(value)) {}
    PeerResult(PeerRefusal refusal) : m_v(std::move(refusal)) {}

    bool ok() const { return std::holds_alternative<T>(m_v); }
    explicit operator bool() const { return ok(); }
    const T &value() const & { return std::get<T>(m_v); }
    T &value() & { return std::get<T>(m_v); }
    T &&value() && { return std::get<T>(std::move(m_v)); }
    const T *operator->() const { return &std::get<T>(m_v); }
    const PeerRefusal &refusal() const { return std::get<PeerRefusal>(m_v); }

private:
    std::variant<T, PeerRefusal> m_v;
};

} // namespace coreflow::peers
