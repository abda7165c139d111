#pragma once
// Secret: the one type that holds secret material (bearers, identity tokens, private keys, route-table
// key material, controls). docs/contract.md §1 "Secret" (the bearer is never logged, never
// written, never sent in a registration body; §6.0, D-30) and §19.4 "Secrets in memory".
//
// A Secret cannot be printed, logged, converted to a QString, put into a Refusal or serialised into the
// status model: it has no conversion operators, its QDebug operator is deleted, and the only way to the
// bytes is reveal(), which call sites use exactly where the bytes must travel (a WebSocket frame to
// Cloudly, a TLS key handed to OpenSSL).
//
// Memory: the bytes live in guarded memory of their own (libsodium's sodium_malloc: guard pages
// around the allocation, locked with mlock so they are never swapped, marked MADV_DONTDUMP so no core
// dump carries them) and are wiped (sodium_free zeroes them) when the Secret is released. reveal()
// hands out a view into that memory, never a copy: the view is valid only while the Secret lives and
// is not changed. A QByteArray given to the constructor is wiped once copied when this Secret is its
// only owner (a temporary, a moved value); the caller wipes what it keeps. An empty Secret holds no
// allocation. sodium_init() runs before the first allocation (and in main(), contract §19.4).
#include <QByteArray>
#include <QByteArrayView>
#include <QDebug>
#include <QList>
#include <initializer_list>

namespace coreflow {

class Secret {
public:
    Secret() = default;
    explicit Secret(QByteArray bytes);
    explicit Secret(QByteArrayView bytes);
    Secret(const Secret &other);
    Secret &operator=(const Secret &other);
    Secret(Secret &&other) noexcept;
    Secret &operator=(Secret &&other) noexcept;
    ~Secret();

    // The UTF-8 of text in guarded memory; text's own buffer is wiped when it is its only owner (a
    // value read out of a parsed body for this purpose).
    static Secret fromText(QString text);
    // The parts joined, composed directly in guarded memory (a request body around a bearer).
    static Secret concatenated(std::initializer_list<QByteArrayView> parts);
    static Secret concatenated(const QList<QByteArrayView> &parts);

    bool isEmpty() const { return m_size == 0; }
    qsizetype size() const { return qsizetype(m_size); }
    // The bytes, for the one place they must travel to; a view into this Secret's guarded memory,
    // valid while it lives. Never pass it to a log or an error.
    QByteArrayView reveal() const { return QByteArrayView(m_data, qsizetype(m_size)); }
    // The bytes as a JSON string literal (quotes, escapes of '"', '\\' and control characters), built
    // in guarded memory: how a bearer or token enters a request body without a QString copy.
    Secret jsonQuoted() const;
    // Constant-time comparison (sodium_memcmp).
    bool equals(const Secret &other) const;
    // What may be said about a secret: that it exists and how long it is.
    QString describe() const;
    // True when the bytes are in guarded memory (always, unless the allocation failed and the Secret
    // is empty). Tests read it; production code does not branch on it.
    bool isGuarded() const { return m_data != nullptr; }

    // sodium_init(), once per process; false when libsodium cannot start (main() then exits 1).
    static bool initialiseSodium();
    // Wipes a QByteArray the caller owns (an intermediate such as a received frame or a PEM buffer),
    // when it is the only owner of its bytes; shared or static data is left alone. Then clears it.
    static void wipe(QByteArray &bytes);

private:
    void allocate(size_t size);
    void assign(QByteArrayView bytes);
    void release();

    char *m_data = nullptr;
    size_t m_size = 0;
};

QDebug operator<<(QDebug, const Secret &) = delete;

} // namespace coreflow
