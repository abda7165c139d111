#include "shared/secret.h"

#include <sodium.h>

namespace coreflow {

Secret::Secret(QByteArray bytes) : m_bytes(std::move(bytes)) { m_bytes.detach(); }
Secret::Secret(const Secret &other) : m_bytes(other.m_bytes) { m_bytes.detach(); }
Secret &Secret::operator=(const Secret &other)
{
    if (this != &other) {
        wipe();
        m_bytes = other.m_bytes;
        m_bytes.detach();
    }
    return *this;
}
Secret::Secret(Secret &&other) noexcept : m_bytes(std::move(other.m_bytes)) {}
Secret &Secret::operator=(Secret &&other) noexcept
{
    if (this != &other) {
        wipe();
        m_bytes = std::move(other.m_bytes);
    }
    return *this;
}
Secret::~Secret() { wipe(); }

void Secret::wipe()
{
    if (!m_bytes.isEmpty() && !m_bytes.isDetached()) {
        m_bytes = QByteArray();
        return;
    }
    if (!m_bytes.isEmpty())
        sodium_memzero(m_bytes.data(), size_t(m_bytes.size()));
    m_bytes = QByteArray();
}

bool Secret::equals(const Secret &other) const
{
    if (m_bytes.size() != other.m_bytes.size())
        return false;
    return sodium_memcmp(m_bytes.constData(), other.m_bytes.constData(), size_t(m_bytes.size())) == 0;
}

QString Secret::describe() const
{
    return m_bytes.isEmpty() ? QStringLiteral("<no secret>")
                             : QStringLiteral("<secret, %1 bytes>").arg(m_bytes.size());
}

} // namespace coreflow
