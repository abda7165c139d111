#pragma once
// NoiseSymmetricState: the Noise spec's SymmetricState (rev 34 §5.2) over BLAKE2s: the chaining key ck
// (Secret), the handshake hash h (public) and a NoiseCipherState. docs/contract.md §11.4.
#include "service/vpn/noisecipherstate.h"
#include "shared/secret.h"

#include <QByteArray>
#include <QByteArrayView>
#include <array>

namespace coreflow::vpn {

class NoiseSymmetricState {
public:
    // InitializeSymmetric(protocolName): h = the name padded to 32 bytes, or its hash if longer; ck = h.
    explicit NoiseSymmetricState(QByteArrayView protocolName);

    void mixHash(QByteArrayView data);
    // MixKey(input): ck, k = HKDF(ck, input, 2); the cipher restarts at nonce 0.
    void mixKey(QByteArrayView inputKeyMaterial);
    // EncryptAndHash / DecryptAndHash: false when the cipher refuses (see NoiseCipherState).
    bool encryptAndHash(QByteArrayView plaintext, QByteArray &out);
    bool decryptAndHash(QByteArrayView ciphertext, QByteArray &out);
    // Split(): the two transport keys (first for the initiator's sending direction).
    std::array<Secret, 2> split() const;
    const QByteArray &handshakeHash() const { return m_h; }

private:
    Secret m_ck;
    QByteArray m_h;
    NoiseCipherState m_cipher;
};

} // namespace coreflow::vpn
