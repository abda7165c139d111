#include "service/closures/streamingsha256.h"

namespace coreflow {

StreamingSha256::StreamingSha256() { crypto_hash_sha256_init(&m_state); }

void StreamingSha256::update(QByteArrayView bytes)
{
    if (m_hex.isEmpty() && !bytes.isEmpty())
        crypto_hash_sha256_update(&m_state, reinterpret_cast<const unsigned char *>(bytes.data()), quint64(bytes.size()));
}

QByteArray StreamingSha256::hexDigest()
{
    if (m_hex.isEmpty()) {
        unsigned char digest[crypto_hash_sha256_BYTES];
        crypto_hash_sha256_final(&m_state, digest);
        m_hex = QByteArray(reinterpret_cast<const char *>(digest), int(sizeof digest)).toHex();
    }
    return m_hex;
}

bool StreamingSha256::isHexDigest(QByteArrayView text)
{
    if (text.size() != 2 * crypto_hash_sha256_BYTES)
        return false;
    for (char c : text)
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
            return false;
    return true;
}

} // namespace coreflow
