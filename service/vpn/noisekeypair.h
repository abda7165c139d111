#pragma once
// NoiseKeyPair: an X25519 key pair of the Noise handshake (docs/contract.md §11.4): the private key in
// guarded memory (Secret), the 32-byte public key in the clear. The hub's static pair is generated at
// bind and lives as long as the hub (a restart re-keys it, VH-18); ephemeral pairs live for one
// handshake message and are wiped with their Secret.
#include "shared/secret.h"

#include <QByteArray>

namespace coreflow::vpn {

struct NoiseKeyPair {
    Secret privateKey;      // 32 bytes
    QByteArray publicKey;   // 32 bytes

    // A fresh pair from libsodium's randomness.
    static NoiseKeyPair generate();
    // The pair of a given 32-byte private key (test vectors, a peer's fixed key); an empty pair when
    // the key is not 32 bytes.
    static NoiseKeyPair fromPrivateKey(Secret privateKey);
    bool isValid() const { return privateKey.size() == 32 && publicKey.size() == 32; }
};

} // namespace coreflow::vpn
