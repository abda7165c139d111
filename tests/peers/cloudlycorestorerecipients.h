#pragma once
// CloudlyCorestoreRecipients: the loopback Cloudly's side of the Corestore control credential
// (docs/contract.md §12.1), written from the contract only: it includes nothing of service/ or
// shared/contract/ (method and refusal names are spelled out here). LoopbackCloudly owns one and
// routes the four methods to it.
//
//   getCorestoreControlRecipientState {}              -> { activeKeyId: string | null }
//   beginCorestoreControlRecipientEnrollment { keyId, publicKey }
//       keyId must be "relay-corestore-control:<uuid v4, lowercase>", publicKey base64 of 32 bytes,
//       else INVALID_REQUEST; a keyId seen before: RECIPIENT_KEY_ID_TAKEN. Seals 32 random bytes
//       (randombytes_buf; setChallengeBytes() changes the length, to test the relay's refusal) to
//       publicKey with crypto_box_seal -> { challengeId: fresh uuid, sealedChallenge, expiresAt:
//       now + 60000 }.
//   completeCorestoreControlRecipientEnrollment { keyId, challengeId, proof }
//       unknown challenge: PROOF_REJECTED; past expiresAt: CHALLENGE_EXPIRED; proof must equal
//       base64(crypto_generichash(32, "coreflow-recipient-pop|<keyId>|<challengeId>", key = the
//       challenge bytes)) (sodium_memcmp), else PROOF_REJECTED. Then the recipient is active with
//       generation n (counting completions from 1) and the previous active one is retired:
//       -> { recipient: { keyId, generation }, retiredKeyIds: [previous] | [] }.
//   getCorestoreControlCredentialMaterial { keyId }
//       unknown keyId: NOT_FOUND; not the active one: RECIPIENT_NOT_ACTIVE;
//       -> { material: { keyId, sealed: base64 crypto_box_seal of {"token":<token()>} to its key } }.
// refuseStep(method, code) makes that method refuse with `code` (data.name) until cleared ("").
// setActiveKeyId() rotates the active recipient behind the relay's back (null: none).
#include "tests/peers/answer.h"

#include <QByteArray>
#include <QHash>
#include <QJsonObject>
#include <QString>
#include <QStringList>
#include <functional>
#include <optional>

namespace coreflow::peers {

class CloudlyCorestoreRecipients {
public:
    static constexpr const char *stateMethod = "getCorestoreControlRecipientState";
    static constexpr const char *beginMethod = "beginCorestoreControlRecipientEnrollment";
    static constexpr const char *completeMethod = "completeCorestoreControlRecipientEnrollment";
    static constexpr const char *materialMethod = "getCorestoreControlCredentialMaterial";

    explicit CloudlyCorestoreRecipients(std::function<qint64()> now);

    // True when method is one of the four; answer is then set.
    bool serves(const QString &method) const;
    Answer answer(const QString &method, const QJsonObject &request);

    void setToken(const QByteArray &token) { m_token = token; }
    QByteArray token() const { return m_token; }
    void refuseStep(const QString &method, const QString &code);
    void setChallengeBytes(int bytes) { m_challengeBytes = bytes; }
    void setActiveKeyId(const std::optional<QString> &keyId) { m_active = keyId; }
    std::optional<QString> activeKeyId() const { return m_active; }
    qint64 activeGeneration() const { return m_generation; }

    int beginCount() const { return m_begun; }
    int completedCount() const { return m_completed; }
    int proofsRejected() const { return m_proofsRejected; }
    int materialsSealed() const { return m_materialsSealed; }
    QStringList enrolledKeyIds() const { return m_enrolledOrder; }
    QStringList retiredKeyIds() const { return m_retired; }
    // The public key (base64) offered under keyId, "" when unknown.
    QByteArray publicKeyOf(const QString &keyId) const;

private:
    struct Challenge {
        QString keyId;
        QByteArray bytes;
        qint64 expiresAtMs = 0;
    };
    Answer begin(const QJsonObject &request);
    Answer complete(const QJsonObject &request);
    Answer material(const QJsonObject &request);

    std::function<qint64()> m_now;
    QByteArray m_token = "corestore-control-token";
    QHash<QString, QString> m_refusals;        // method -> code
    QHash<QString, QByteArray> m_publicKeys;   // keyId -> 32 bytes
    QHash<QString, Challenge> m_challenges;    // challengeId -> challenge
    QStringList m_enrolledOrder;
    QStringList m_retired;
    std::optional<QString> m_active;
    qint64 m_generation = 0;
    int m_challengeBytes = 32;
    int m_begun = 0;
    int m_completed = 0;
    int m_proofsRejected = 0;
    int m_materialsSealed = 0;
};

} // namespace coreflow::peers
