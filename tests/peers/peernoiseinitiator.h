#pragma once
// PeerNoiseInitiator: the simulated VPN member's own Noise_IK_25519_ChaChaPoly_BLAKE2s initiator,
// written from the Noise Protocol Framework (revision 34: §5 processing rules, §7.5 pattern IK) and
// docs/contract.md §11.4 (prologue "coreflow-vpn/1"), with libsodium's X25519 and ChaCha20-Poly1305
// IETF and OpenSSL's BLAKE2s-256 / HMAC. It shares no code with the hub (tests/peers rule).
//
// writeMessage1() -> e, es, s, ss (96 bytes with an empty payload, 108 with the 12-byte TAI64N timestamp §11.4 asks for); readMessage2() <- e, ee, se (48
// bytes) and splits into the transport keys: sendKey (initiator -> responder) and receiveKey.
#include <QByteArray>
#include <optional>

namespace coreflow::peers {

class PeerNoiseInitiator {
public:
    // staticPrivate: the member's 32-byte X25519 private key; responderStatic: the hub's public key.
    PeerNoiseInitiator(const QByteArray &staticPrivate, const QByteArray &responderStatic);

    QByteArray writeMessage1(const QByteArray &payload = {});
    // false when message 2 does not authenticate (or a DH result is all zero).
    bool readMessage2(const QByteArray &message);

    QByteArray sendKey() const { return m_sendKey; }
    QByteArray receiveKey() const { return m_receiveKey; }

    // Helpers the peer uses elsewhere.
    static QByteArray publicKeyOf(const QByteArray &privateKey);
    static QByteArray newPrivateKey();
    // ChaCha20-Poly1305 IETF with Noise's nonce (4 zero bytes, then the counter little-endian).
    static QByteArray seal(const QByteArray &key, quint64 counter, const QByteArray &ad, const QByteArray &plaintext);
    static std::optional<QByteArray> open(const QByteArray &key, quint64 counter, const QByteArray &ad, const QByteArray &ciphertext);

private:
    void mixHash(const QByteArray &data);
    bool mixKey(const QByteArray &inputKeyMaterial);
    QByteArray encryptAndHash(const QByteArray &plaintext);
    std::optional<QByteArray> decryptAndHash(const QByteArray &ciphertext);
    static QByteArray hash(const QByteArray &data);
    static QByteArray hmac(const QByteArray &key, const QByteArray &data);
    static QList<QByteArray> hkdf(const QByteArray &chainingKey, const QByteArray &inputKeyMaterial);
    static std::optional<QByteArray> dh(const QByteArray &privateKey, const QByteArray &publicKey);

    QByteArray m_staticPrivate;
    QByteArray m_staticPublic;
    QByteArray m_responderStatic;
    QByteArray m_ephemeralPrivate;
    QByteArray m_h;
    QByteArray m_ck;
    QByteArray m_k;
    quint64 m_n = 0;
    QByteArray m_sendKey;
    QByteArray m_receiveKey;
};

} // namespace coreflow::peers
