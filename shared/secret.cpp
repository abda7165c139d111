#include "shared/secret.h"

#include <sodium.h>

#include <cstring>
#include <sys/mman.h>
#include <unistd.h>

namespace coreflow {

bool Secret::initialiseSodium()
{
    static const bool ready = ::sodium_init() >= 0;
    return ready;
}

void Secret::wipe(QByteArray &bytes)
{
    if (!bytes.isEmpty() && bytes.isDetached())
        sodium_memzero(bytes.data(), size_t(bytes.size()));
    bytes = QByteArray();
}

Secret::Secret(QByteArray bytes)
{
    assign(bytes);
    wipe(bytes);
}

Secret::Secret(QByteArrayView bytes) { assign(bytes); }

Secret Secret::fromText(QString text)
{
    Secret secret(text.toUtf8());
    if (!text.isEmpty() && text.isDetached())
        sodium_memzero(text.data(), size_t(text.size()) * sizeof(QChar));
    return secret;
}

Secret::Secret(const Secret &other) { assign(other.reveal()); }

Secret &Secret::operator=(const Secret &other)
{
    if (this != &other) {
        release();
        assign(other.reveal());
    }
    return *this;
}

Secret::Secret(Secret &&other) noexcept : m_data(other.m_data), m_size(other.m_size)
{
    other.m_data = nullptr;
    other.m_size = 0;
}

Secret &Secret::operator=(Secret &&other) noexcept
{
    if (this != &other) {
        release();
        m_data = other.m_data;
        m_size = other.m_size;
        other.m_data = nullptr;
        other.m_size = 0;
    }
    return *this;
}

Secret::~Secret() { release(); }

void Secret::allocate(size_t size)
{
    release();
    if (size == 0)
        return;
    if (!initialiseSodium())
        qFatal("Secret: libsodium cannot start");
    // sodium_malloc: its own pages between guard pages, mlock'd and MADV_DONTDUMP (libsodium does both
    // on the pages it hands out); the madvise below states the core-dump exclusion for exactly these
    // pages, whatever the library version.
    auto *data = static_cast<char *>(sodium_malloc(size));
    if (!data)
        qFatal("Secret: sodium_malloc failed for %zu bytes", size);
    const auto page = uintptr_t(::sysconf(_SC_PAGESIZE));
    const uintptr_t first = uintptr_t(data) & ~(page - 1);
    const uintptr_t end = (uintptr_t(data) + size + page - 1) & ~(page - 1);
    (void)::madvise(reinterpret_cast<void *>(first), end - first, MADV_DONTDUMP);
    m_data = data;
    m_size = size;
}

void Secret::assign(QByteArrayView bytes)
{
    allocate(size_t(bytes.size()));
    if (m_data)
        std::memcpy(m_data, bytes.data(), m_size);
}

void Secret::release()
{
    if (m_data)
        sodium_free(m_data); // zeroes the bytes, unlocks and unmaps the pages
    m_data = nullptr;
    m_size = 0;
}

Secret Secret::concatenated(std::initializer_list<QByteArrayView> parts)
{
    return concatenated(QList<QByteArrayView>(parts));
}

Secret Secret::concatenated(const QList<QByteArrayView> &parts)
{
    size_t total = 0;
    for (QByteArrayView part : parts)
        total += size_t(part.size());
    Secret out;
    out.allocate(total);
    size_t at = 0;
    for (QByteArrayView part : parts) {
        if (out.m_data && !part.isEmpty())
            std::memcpy(out.m_data + at, part.data(), size_t(part.size()));
        at += size_t(part.size());
    }
    return out;
}

Secret Secret::jsonQuoted() const
{
    static const char hex[] = "0123456789abcdef";
    size_t length = 2;
    for (size_t i = 0; i < m_size; ++i) {
        const auto c = static_cast<unsigned char>(m_data[i]);
        length += (c == '"' || c == '\\') ? 2 : (c < 0x20 ? 6 : 1);
    }
    // Escaped in a guarded buffer: the plain bytes never pass through an unguarded one.
    Secret out;
    out.allocate(length);
    char *o = out.m_data;
    if (!o)
        return out;
    size_t at = 0;
    o[at++] = '"';
    for (size_t i = 0; i < m_size; ++i) {
        const auto c = static_cast<unsigned char>(m_data[i]);
        if (c == '"' || c == '\\') {
            o[at++] = '\\';
            o[at++] = char(c);
        } else if (c < 0x20) {
            o[at++] = '\\';
            o[at++] = 'u';
            o[at++] = '0';
            o[at++] = '0';
            o[at++] = hex[c >> 4];
            o[at++] = hex[c & 0xf];
        } else {
            o[at++] = char(c);
        }
    }
    o[at++] = '"';
    return out;
}

bool Secret::equals(const Secret &other) const
{
    if (m_size != other.m_size)
        return false;
    return m_size == 0 || sodium_memcmp(m_data, other.m_data, m_size) == 0;
}

QString Secret::describe() const
{
    return m_size == 0 ? QStringLiteral("<no secret>") : QStringLiteral("<secret, %1 bytes>").arg(m_size);
}

} // namespace coreflow
