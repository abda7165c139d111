#include "service/closures/streamingsha256.h"

#include <openssl/evp.h>

namespace coreflow {

namespace {
constexpr int kDigestBytes = 32;
} // namespace

void StreamingSha256::ContextFree::operator()(evp_md_ctx_st *context) const { EVP_MD_CTX_free(context); }

StreamingSha256::StreamingSha256() : m_context(EVP_MD_CTX_new())
{
    if (!m_context || EVP_DigestInit_ex(m_context.get(), EVP_sha256(), nullptr) != 1)
        qFatal("StreamingSha256: OpenSSL cannot start a SHA-256 digest");
}

StreamingSha256::~StreamingSha256() = default;

void StreamingSha256::update(QByteArrayView bytes)
{
    if (m_hex.isEmpty() && !bytes.isEmpty())
        EVP_DigestUpdate(m_context.get(), bytes.data(), size_t(bytes.size()));
}

QByteArray StreamingSha256::hexDigest()
{
    if (m_hex.isEmpty()) {
        unsigned char digest[EVP_MAX_MD_SIZE];
        unsigned int length = 0;
        if (EVP_DigestFinal_ex(m_context.get(), digest, &length) != 1 || length != kDigestBytes)
            qFatal("StreamingSha256: OpenSSL cannot finish a SHA-256 digest");
        m_hex = QByteArray(reinterpret_cast<const char *>(digest), int(length)).toHex();
    }
    return m_hex;
}

bool StreamingSha256::isHexDigest(QByteArrayView text)
{
    if (text.size() != 2 * kDigestBytes)
        return false;
    for (char c : text)
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
            return false;
    return true;
}

} // namespace coreflow
