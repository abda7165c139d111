#pragma once
// The primitives of Noise_IK_25519_ChaChaPoly_BLAKE2s (Noise spec rev 34, §4 and §5.1 HKDF), from the
// libraries only: X25519 and ChaCha20-Poly1305 IETF from libsodium, BLAKE2s-256 and HMAC-BLAKE2s
// from OpenSSL EVP (libsodium 1.0.18 has no BLAKE2s). Nothing here is hand-made cryptography; this
// file only names the calls the way the Noise spec names them. docs/contract.md §11.4.
//
// Sizes: DHLEN = HASHLEN = key = 32 bytes, tag = 16 bytes. Secret material (private keys, DH outputs,
// chaining keys, cipher keys) travels as Secret; intermediates on the stack are wiped.
#include "shared/secret.h"

#include <QByteArray>
#include <QByteArrayView>
#include <array>
#include <cstdint>
#include <optional>

namespace coreflow::vpn::noise {

inline constexpr int kDhLength = 32;
inline constexpr int kHashLength = 32;
inline constexpr int kKeyLength = 32;
inline constexpr int kTagLength = 16;

// BLAKE2s-256 of first || second.
QByteArray blake2s(QByteArrayView first, QByteArrayView second = {});
// Noise's HKDF(chaining_key, input_key_material, 2): two 32-byte outputs.
std::array<Secret, 2> hkdf2(QByteArrayView chainingKey, QByteArrayView inputKeyMaterial);
// The X25519 public key of a 32-byte private key.
QByteArray x25519PublicKey(const Secret &privateKey);
// DH(private, public): nullopt when the public key is not 32 bytes or the result is all zero (a
// small-order point; the handshake then fails).
std::optional<Secret> x25519(const Secret &privateKey, QByteArrayView publicKey);
// 32 random bytes as a private key (libsodium randombytes).
Secret randomPrivateKey();
// ChaCha20-Poly1305 IETF with Noise's nonce (4 zero bytes, then the counter little-endian):
// out receives plaintext.size() + 16 bytes.
void aeadEncrypt(const Secret &key, std::uint64_t counter, QByteArrayView associatedData,
                 QByteArrayView plaintext, char *out);
// The inverse: false when the tag does not authenticate (out then holds nothing meaningful and is
// zeroed) or the ciphertext is shorter than a tag; out receives ciphertext.size() - 16 bytes.
bool aeadDecrypt(const Secret &key, std::uint64_t counter, QByteArrayView associatedData,
                 QByteArrayView ciphertext, char *out);

} // namespace coreflow::vpn::noise
