#pragma once
// Secret: the one type that holds secret material (bearers, identity tokens, private keys, route-table
// key material, controls). docs/contract.md §1 "Secret" (the bearer is never
// logged, never written, never sent in a registration body; §6.0, D-30).
//
// A Secret cannot be printed, logged, converted to a QString, put into a Refusal or serialised into the
// status model: it has no conversion operators, its QDebug operator is deleted, and the only way to the
// bytes is reveal(), which call sites use exactly where the bytes must travel (a WebSocket frame to
// Cloudly, a TLS key handed to OpenSSL). The bytes are wiped with sodium_memzero when released.
#include <QByteArray>
#include <QDebug>

namespace coreflow {

class Secret {
public:
    Secret() = default;
    explicit Secret(QByteArray bytes);
    Secret(const Secret &other);
    Secret &operator=(const Secret &other);
    Secret(Secret &&other) noexcept;
    Secret &operator=(Secret &&other) noexcept;
    ~Secret();

    bool isEmpty() const { return m_bytes.isEmpty(); }
    qsizetype size() const { return m_bytes.size(); }
    // The bytes, for the one place they must travel to. Never pass the result to a log or an error.
    const QByteArray &reveal() const { return m_bytes; }
    // Constant-time comparison (sodium_memcmp).
    bool equals(const Secret &other) const;
    // What may be said about a secret: that it exists and how long it is.
    QString describe() const;

private:
    void wipe();
    QByteArray m_bytes;
};

QDebug operator<<(QDebug, const Secret &) = delete;

} // namespace coreflow
