#pragma once
// Result<T>: a value or the Refusal that explains why there is none. Used by every fallible reader and
// by calls whose failure is answered on the wire.
#include "shared/contract/refusal.h"

#include <utility>
#include <variant>

namespace coreflow::contract {

template <typename T>
class Result {
public:
    Result(T value) : m_v(std::move(value)) {}
    Result(Refusal refusal) : m_v(std::move(refusal)) {}

    bool ok() const { return std::holds_alternative<T>(m_v); }
    explicit operator bool() const { return ok(); }
    const T &value() const & { return std::get<T>(m_v); }
    T &value() & { return std::get<T>(m_v); }
    T &&value() && { return std::get<T>(std::move(m_v)); }
    const T *operator->() const { return &std::get<T>(m_v); }
    const Refusal &refusal() const { return std::get<Refusal>(m_v); }

private:
    std::variant<T, Refusal> m_v;
};

} // namespace coreflow::contract
