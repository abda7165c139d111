#include "service/vpn/noiseprimitives.h"

#include <openssl/evp.h>
#include <sodium.h>

#include <cstring>

namespace coreflow::vpn::noise {

namespace {

const unsigned char *bytes(QByteArrayView view)
{
    return reinterpret_cast<const unsigned char *>(view.data());
}

void nonceFor(std::uint64_t counter, unsigned char nonce[crypto_aead_chacha20poly1305_IETF_NPUBBYTES])
{
    std::memset(nonce, 0, 4);
    for (int i = 0; i < 8; ++i)
        nonce[4 + i] = static_cast<unsigned char>(counter >> (8 * i));
}

// BLAKE2s-256 of up to three parts into out (32 bytes).
void digest(unsigned char out[kHashLength], QByteArrayView a, QByteArrayView b = {}, QByteArrayView c = {})
{
    EVP_MD_CTX *context = EVP_MD_CTX_new();
    unsigned int length = 0;
    const bool ok = context && EVP_DigestInit_ex(context, EVP_blake2s256(), nullptr) == 1
        && EVP_DigestUpdate(context, a.data(), size_t(a.size())) == 1
        && EVP_DigestUpdate(context, b.data(), size_t(b.size())) == 1
        && EVP_DigestUpdate(context, c.data(), size_t(c.size())) == 1
        && EVP_DigestFinal_ex(context, out, &length) == 1 && length == kHashLength;
    EVP_MD_CTX_free(context);
    if (!ok)
        qFatal("BLAKE2s-256 is unavailable in this OpenSSL");
}

// HMAC-BLAKE2s (RFC 2104 over BLAKE2s-256, whose block is 64 bytes), the HMAC the Noise spec's HKDF
// is built on; EVP_Q_mac is OpenSSL 3's one-shot MAC.
void hmac(unsigned char out[kHashLength], QByteArrayView key, QByteArrayView data)
{
    size_t length = 0;
    char digestName[] = "BLAKE2S-256";
    if (!EVP_Q_mac(nullptr, "HMAC", nullptr, digestName, nullptr, key.data(), size_t(key.size()),
                   bytes(data), size_t(data.size()), out, kHashLength, &length)
        || length != kHashLength)
        qFatal("HMAC-BLAKE2s is unavailable in this OpenSSL");
}

} // namespace

QByteArray blake2s(QByteArrayView first, QByteArrayView second)
{
    QByteArray out(kHashLength, Qt::Uninitialized);
    digest(reinterpret_cast<unsigned char *>(out.data()), first, second);
    return out;
}

std::array<Secret, 2> hkdf2(QByteArrayView chainingKey, QByteArrayView inputKeyMaterial)
{
    unsigned char tempKey[kHashLength];
    unsigned char output1[kHashLength];
    unsigned char input2[kHashLength + 1];
    unsigned char output2[kHashLength];
    const unsigned char one = 0x01;
    hmac(tempKey, chainingKey, inputKeyMaterial);
    const QByteArrayView temp(reinterpret_cast<const char *>(tempKey), kHashLength);
    hmac(output1, temp, QByteArrayView(reinterpret_cast<const char *>(&one), 1));
    std::memcpy(input2, output1, kHashLength);
    input2[kHashLength] = 0x02;
    hmac(output2, temp, QByteArrayView(reinterpret_cast<const char *>(input2), kHashLength + 1));
    std::array<Secret, 2> out{Secret(QByteArrayView(reinterpret_cast<const char *>(output1), kHashLength)),
                              Secret(QByteArrayView(reinterpret_cast<const char *>(output2), kHashLength))};
    sodium_memzero(tempKey, sizeof tempKey);
    sodium_memzero(output1, sizeof output1);
    sodium_memzero(input2, sizeof input2);
    sodium_memzero(output2, sizeof output2);
    return out;
}

QByteArray x25519PublicKey(const Secret &privateKey)
{
    QByteArray out(kDhLength, '\0');
    if (privateKey.size() != kDhLength
        || crypto_scalarmult_base(reinterpret_cast<unsigned char *>(out.data()), bytes(privateKey.reveal())) != 0)
        return {};
    return out;
}

std::optional<Secret> x25519(const Secret &privateKey, QByteArrayView publicKey)
{
    if (privateKey.size() != kDhLength || publicKey.size() != kDhLength)
        return std::nullopt;
    unsigned char shared[kDhLength];
    // libsodium answers -1 for an all-zero result (a small-order public key).
    const int rc = crypto_scalarmult(shared, bytes(privateKey.reveal()), bytes(publicKey));
    std::optional<Secret> out;
    if (rc == 0 && !sodium_is_zero(shared, kDhLength))
        out = Secret(QByteArrayView(reinterpret_cast<const char *>(shared), kDhLength));
    sodium_memzero(shared, sizeof shared);
    return out;
}

Secret randomPrivateKey()
{
    unsigned char key[kDhLength];
    randombytes_buf(key, sizeof key);
    Secret out(QByteArrayView(reinterpret_cast<const char *>(key), kDhLength));
    sodium_memzero(key, sizeof key);
    return out;
}

void aeadEncrypt(const Secret &key, std::uint64_t counter, QByteArrayView associatedData,
                 QByteArrayView plaintext, char *out)
{
    unsigned char nonce[crypto_aead_chacha20poly1305_IETF_NPUBBYTES];
    nonceFor(counter, nonce);
    unsigned long long length = 0;
    crypto_aead_chacha20poly1305_ietf_encrypt(reinterpret_cast<unsigned char *>(out), &length,
        bytes(plaintext), static_cast<unsigned long long>(plaintext.size()),
        bytes(associatedData), static_cast<unsigned long long>(associatedData.size()),
        nullptr, nonce, bytes(key.reveal()));
}

bool aeadDecrypt(const Secret &key, std::uint64_t counter, QByteArrayView associatedData,
                 QByteArrayView ciphertext, char *out)
{
    if (ciphertext.size() < kTagLength || key.size() != kKeyLength)
        return false;
    unsigned char nonce[crypto_aead_chacha20poly1305_IETF_NPUBBYTES];
    nonceFor(counter, nonce);
    unsigned long long length = 0;
    // libsodium checks the tag before it writes any plaintext.
    return crypto_aead_chacha20poly1305_ietf_decrypt(reinterpret_cast<unsigned char *>(out), &length,
               nullptr, bytes(ciphertext), static_cast<unsigned long long>(ciphertext.size()),
               bytes(associatedData), static_cast<unsigned long long>(associatedData.size()),
               nonce, bytes(key.reveal())) == 0;
}

} // namespace coreflow::vpn::noise
