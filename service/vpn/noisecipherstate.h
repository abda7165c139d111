#pragma once
// NoiseCipherState: the Noise spec's CipherState (rev 34 §5.1) for ChaChaPoly: a key k (Secret, may
// be empty) and a nonce n. Used by the handshake (NoiseSymmetricState); the data plane seals with
// explicit counters instead (VpnDatagramSealer), over the same AEAD and nonce layout.
#include "shared/secret.h"

#include <QByteArray>
#include <QByteArrayView>
#include <cstdint>

namespace coreflow::vpn {

class NoiseCipherState {
public:
    void initializeKey(Secret key);
    bool hasKey() const { return !m_key.isEmpty(); }
    // EncryptWithAd: the plaintext itself while there is no key; false when the nonce is exhausted
    // (2^64 - 1 is reserved) — out is then left empty.
    bool encryptWithAd(QByteArrayView associatedData, QByteArrayView plaintext, QByteArray &out);
    // DecryptWithAd: false when the tag does not authenticate or the nonce is exhausted; the nonce
    // advances only on success.
    bool decryptWithAd(QByteArrayView associatedData, QByteArrayView ciphertext, QByteArray &out);
    const Secret &key() const { return m_key; }

private:
    Secret m_key;
    std::uint64_t m_nonce = 0;
};

} // namespace coreflow::vpn
