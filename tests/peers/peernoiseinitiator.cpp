#include "tests/peers/peernoiseinitiator.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sodium.h>

#include <QList>

namespace coreflow::peers {

namespace {
const QByteArray kProtocolName = QByteArrayLiteral("Noise_IK_25519_ChaChaPoly_BLAKE2s");
const QByteArray kPrologue = QByteArrayLiteral("coreflow-vpn/1");

QByteArray nonceOf(quint64 counter)
{
    QByteArray nonce(12, '\0');
    for (int i = 0; i < 8; ++i)
        nonce[4 + i] = char((counter >> (8 * i)) & 0xff);
    return nonce;
}
} // namespace

PeerNoiseInitiator::PeerNoiseInitiator(const QByteArray &staticPrivate, const QByteArray &responderStatic)
    : m_staticPrivate(staticPrivate), m_staticPublic(publicKeyOf(staticPrivate)), m_responderStatic(responderStatic)
{
    if (sodium_init() < 0)
        qFatal("libsodium cannot start");
    // InitializeSymmetric: the name is longer than HASHLEN, so h = HASH(name); ck = h.
    m_h = hash(kProtocolName);
    m_ck = m_h;
    mixHash(kPrologue);
    // IK's pre-message: <- s.
    mixHash(m_responderStatic);
}

QByteArray PeerNoiseInitiator::newPrivateKey()
{
    if (sodium_init() < 0)
        qFatal("libsodium cannot start");
    QByteArray key(32, '\0');
    randombytes_buf(key.data(), 32);
    return key;
}

QByteArray PeerNoiseInitiator::publicKeyOf(const QByteArray &privateKey)
{
    QByteArray pub(32, '\0');
    crypto_scalarmult_base(reinterpret_cast<unsigned char *>(pub.data()), reinterpret_cast<const unsigned char *>(privateKey.constData()));
    return pub;
}

QByteArray PeerNoiseInitiator::hash(const QByteArray &data)
{
    QByteArray out(32, '\0');
    unsigned int length = 32;
    EVP_Digest(data.constData(), size_t(data.size()), reinterpret_cast<unsigned char *>(out.data()), &length, EVP_blake2s256(), nullptr);
    return out;
}

QByteArray PeerNoiseInitiator::hmac(const QByteArray &key, const QByteArray &data)
{
    QByteArray out(32, '\0');
    unsigned int length = 32;
    HMAC(EVP_blake2s256(), key.constData(), int(key.size()), reinterpret_cast<const unsigned char *>(data.constData()), size_t(data.size()),
         reinterpret_cast<unsigned char *>(out.data()), &length);
    return out;
}

QList<QByteArray> PeerNoiseInitiator::hkdf(const QByteArray &chainingKey, const QByteArray &inputKeyMaterial)
{
    const QByteArray tempKey = hmac(chainingKey, inputKeyMaterial);
    const QByteArray out1 = hmac(tempKey, QByteArray(1, '\x01'));
    const QByteArray out2 = hmac(tempKey, out1 + QByteArray(1, '\x02'));
    return {out1, out2};
}

std::optional<QByteArray> PeerNoiseInitiator::dh(const QByteArray &privateKey, const QByteArray &publicKey)
{
    QByteArray shared(32, '\0');
    if (crypto_scalarmult(reinterpret_cast<unsigned char *>(shared.data()), reinterpret_cast<const unsigned char *>(privateKey.constData()),
                          reinterpret_cast<const unsigned char *>(publicKey.constData())) != 0)
        return std::nullopt;
    return shared;
}

QByteArray PeerNoiseInitiator::seal(const QByteArray &key, quint64 counter, const QByteArray &ad, const QByteArray &plaintext)
{
    QByteArray out(plaintext.size() + crypto_aead_chacha20poly1305_ietf_ABYTES, '\0');
    unsigned long long length = 0;
    const QByteArray nonce = nonceOf(counter);
    crypto_aead_chacha20poly1305_ietf_encrypt(reinterpret_cast<unsigned char *>(out.data()), &length,
                                              reinterpret_cast<const unsigned char *>(plaintext.constData()), size_t(plaintext.size()),
                                              reinterpret_cast<const unsigned char *>(ad.constData()), size_t(ad.size()), nullptr,
                                              reinterpret_cast<const unsigned char *>(nonce.constData()),
                                              reinterpret_cast<const unsigned char *>(key.constData()));
    out.resize(qsizetype(length));
    return out;
}

std::optional<QByteArray> PeerNoiseInitiator::open(const QByteArray &key, quint64 counter, const QByteArray &ad, const QByteArray &ciphertext)
{
    if (ciphertext.size() < qsizetype(crypto_aead_chacha20poly1305_ietf_ABYTES))
        return std::nullopt;
    QByteArray out(ciphertext.size() - crypto_aead_chacha20poly1305_ietf_ABYTES, '\0');
    unsigned long long length = 0;
    const QByteArray nonce = nonceOf(counter);
    if (crypto_aead_chacha20poly1305_ietf_decrypt(reinterpret_cast<unsigned char *>(out.data()), &length, nullptr,
                                                  reinterpret_cast<const unsigned char *>(ciphertext.constData()), size_t(ciphertext.size()),
                                                  reinterpret_cast<const unsigned char *>(ad.constData()), size_t(ad.size()),
                                                  reinterpret_cast<const unsigned char *>(nonce.constData()),
                                                  reinterpret_cast<const unsigned char *>(key.constData())) != 0)
        return std::nullopt;
    out.resize(qsizetype(length));
    return out;
}

void PeerNoiseInitiator::mixHash(const QByteArray &data) { m_h = hash(m_h + data); }

bool PeerNoiseInitiator::mixKey(const QByteArray &inputKeyMaterial)
{
    const QList<QByteArray> out = hkdf(m_ck, inputKeyMaterial);
    m_ck = out[0];
    m_k = out[1];
    m_n = 0;
    return true;
}

QByteArray PeerNoiseInitiator::encryptAndHash(const QByteArray &plaintext)
{
    const QByteArray ciphertext = seal(m_k, m_n++, m_h, plaintext);
    mixHash(ciphertext);
    return ciphertext;
}

std::optional<QByteArray> PeerNoiseInitiator::decryptAndHash(const QByteArray &ciphertext)
{
    auto plaintext = open(m_k, m_n, m_h, ciphertext);
    if (!plaintext)
        return std::nullopt;
    ++m_n;
    mixHash(ciphertext);
    return plaintext;
}

QByteArray PeerNoiseInitiator::writeMessage1(const QByteArray &payload)
{
    m_ephemeralPrivate = newPrivateKey();
    const QByteArray ephemeralPublic = publicKeyOf(m_ephemeralPrivate);
    QByteArray message = ephemeralPublic; // e
    mixHash(ephemeralPublic);
    mixKey(dh(m_ephemeralPrivate, m_responderStatic).value_or(QByteArray(32, '\0'))); // es
    message += encryptAndHash(m_staticPublic);                                          // s
    mixKey(dh(m_staticPrivate, m_responderStatic).value_or(QByteArray(32, '\0')));    // ss
    message += encryptAndHash(payload);
    return message;
}

bool PeerNoiseInitiator::readMessage2(const QByteArray &message)
{
    if (message.size() < 32 + 16)
        return false;
    const QByteArray responderEphemeral = message.left(32); // e
    mixHash(responderEphemeral);
    const auto ee = dh(m_ephemeralPrivate, responderEphemeral);
    if (!ee)
        return false;
    mixKey(*ee);
    const auto se = dh(m_staticPrivate, responderEphemeral);
    if (!se)
        return false;
    mixKey(*se);
    if (!decryptAndHash(message.mid(32)))
        return false;
    // Split(): the initiator sends with the first key.
    const QList<QByteArray> keys = hkdf(m_ck, QByteArray());
    m_sendKey = keys[0];
    m_receiveKey = keys[1];
    return true;
}

} // namespace coreflow::peers
