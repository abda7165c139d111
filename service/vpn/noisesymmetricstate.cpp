#include "service/vpn/noisesymmetricstate.h"

#include "service/vpn/noiseprimitives.h"

namespace coreflow::vpn {

NoiseSymmetricState::NoiseSymmetricState(QByteArrayView protocolName)
{
    if (protocolName.size() <= noise::kHashLength) {
        m_h = protocolName.toByteArray();
        m_h.append(noise::kHashLength - protocolName.size(), '\0');
    } else {
        m_h = noise::blake2s(protocolName);
    }
    m_ck = Secret(QByteArrayView(m_h));
}

void NoiseSymmetricState::mixHash(QByteArrayView data)
{
    m_h = noise::blake2s(m_h, data);
}

void NoiseSymmetricState::mixKey(QByteArrayView inputKeyMaterial)
{
    auto outputs = noise::hkdf2(m_ck.reveal(), inputKeyMaterial);
    m_ck = std::move(outputs[0]);
    m_cipher.initializeKey(std::move(outputs[1]));
}

bool NoiseSymmetricState::encryptAndHash(QByteArrayView plaintext, QByteArray &out)
{
    if (!m_cipher.encryptWithAd(m_h, plaintext, out))
        return false;
    mixHash(out);
    return true;
}

bool NoiseSymmetricState::decryptAndHash(QByteArrayView ciphertext, QByteArray &out)
{
    if (!m_cipher.decryptWithAd(m_h, ciphertext, out))
        return false;
    mixHash(ciphertext);
    return true;
}

std::array<Secret, 2> NoiseSymmetricState::split() const
{
    return noise::hkdf2(m_ck.reveal(), {});
}

} // namespace coreflow::vpn
