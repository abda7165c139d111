#pragma once
// NoiseOutcome<T>: the value a Noise handshake step produced, or the NoiseHandshakeFailure that says
// why there is none (docs/contract.md §11.4).
#include "service/vpn/noisehandshakefailure.h"

#include <utility>
#include <variant>

namespace coreflow::vpn {

template <typename T>
class NoiseOutcome {
public:
    NoiseOutcome(T value) : m_v(std::move(value)) {}
    NoiseOutcome(NoiseHandshakeFailure failure) : m_v(failure) {}

    bool ok() const { return std::holds_alternative<T>(m_v); }
    explicit operator bool() const { return ok(); }
    T &value() & { return std::get<T>(m_v); }
    const T &value() const & { return std::get<T>(m_v); }
    T &&value() && { return std::get<T>(std::move(m_v)); }
    NoiseHandshakeFailure failure() const { return std::get<NoiseHandshakeFailure>(m_v); }

private:
    std::variant<T, NoiseHandshakeFailure> m_v;
};

} // namespace coreflow::vpn
