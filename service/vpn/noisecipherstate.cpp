#include "service/vpn/noisecipherstate.h"

#include "service/vpn/noiseprimitives.h"

namespace coreflow::vpn {

namespace {
constexpr std::uint64_t kReservedNonce = ~std::uint64_t(0);
}

void NoiseCipherState::initializeKey(Secret key)
{
    m_key = std::move(key);
    m_nonce = 0;
}

bool NoiseCipherState::encryptWithAd(QByteArrayView associatedData, QByteArrayView plaintext, QByteArray &out)
{
    if (!hasKey()) {
        out = plaintext.toByteArray();
        return true;
    }
    if (m_nonce == kReservedNonce) {
        out.clear();
        return false;
    }
    out.resize(plaintext.size() + noise::kTagLength);
    noise::aeadEncrypt(m_key, m_nonce, associatedData, plaintext, out.data());
    ++m_nonce;
    return true;
}

bool NoiseCipherState::decryptWithAd(QByteArrayView associatedData, QByteArrayView ciphertext, QByteArray &out)
{
    if (!hasKey()) {
        out = ciphertext.toByteArray();
        return true;
    }
    if (m_nonce == kReservedNonce || ciphertext.size() < noise::kTagLength) {
        out.clear();
        return false;
    }
    out.resize(ciphertext.size() - noise::kTagLength);
    if (!noise::aeadDecrypt(m_key, m_nonce, associatedData, ciphertext, out.data())) {
        out.clear();
        return false;
    }
    ++m_nonce;
    return true;
}

} // namespace coreflow::vpn
