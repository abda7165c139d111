#pragma once
// CloudlySecretIngress: the loopback Cloudly's side of credential publication (docs/contract.md §12.4),
// written from the contract only: it includes nothing of service/ or shared/ (method and refusal names
// are spelled out here). LoopbackCloudly owns one and routes the two methods to it.
//
//   getSecretIngressRecipient {}
//       -> { recipient: { keyId: "secret-ingress:<n>", publicKey: base64 X25519, generation: n } }
//       The key pair is generated here (crypto_box_keypair) and its secret key never leaves this class;
//       rotateRecipient() makes a fresh one (n + 1) and retires the previous one. refuseRecipient(code)
//       answers that refusal (NOT_FOUND, INTERNAL_ERROR) until cleared ("").
//   publishCorestoreCredentialMaterial { mutationId, grantOperation, serviceId, bindingName, capability,
//                                        envelope: { recipientKeyId, context, sealed, digest } }
//       Checked in this order, each failure answered INVALID_REQUEST unless named otherwise:
//       exactly those members (strings, capability "database" | "objectstorage");
//       mutationId == "corestore-publication:" + grantOperation;
//       the service's organization is known (setOrganization), else FORBIDDEN;
//       recipientKeyId is the active recipient, else RECIPIENT_NOT_ACTIVE;
//       context == "corestore-credential-material|<clusterId>|<organizationId>|<serviceId>|
//                   <bindingName>|<mutationId>" (clusterId: the constructor's);
//       digest == lowercase hex SHA-256 of the base64-decoded sealed bytes;
//       sealed opens (crypto_box_seal_open) with the active secret key to UTF-8 JSON with exactly the
//       members context (equal to envelope.context) and material (an object).
//       Replay: per mutationId the first committed envelope digest is kept; the same digest again is
//       answered the same receipt (idempotent), another digest REPLAY_CONFLICT.
//       Then the next scripted step (scriptPublish; Commit when none is queued) decides the answer:
//         Commit                   commit, answer { receipt }
//         InternalErrorAfterCommit commit, answer INTERNAL_ERROR (as after a failed config push)
//         SilenceAfterCommit       commit, never answer (the relay's call times out: a lost answer)
//         DropAfterCommit          commit, abort the socket instead of answering
//         Refuse                   answer the scripted code (e.g. GRANT_NOT_ACTIVE), commit nothing
//         ReplayConflict           answer REPLAY_CONFLICT, commit nothing
//         BadReceipt               commit, answer a receipt with the scripted members replaced
//       receipt: { mutationId, organizationId, clusterId, serviceId, bindingName, envelopeDigest,
//                  acceptedAt: now() }.
// Every successfully opened envelope is kept (opened()): the plaintext and its material as read, so
// a test proves the material arrived intact.
#include "tests/peers/answer.h"

#include <QByteArray>
#include <QHash>
#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>
#include <functional>

namespace coreflow::peers {

class CloudlySecretIngress {
public:
    static constexpr const char *recipientMethod = "getSecretIngressRecipient";
    static constexpr const char *publishMethod = "publishCorestoreCredentialMaterial";

    enum class Step { Commit, InternalErrorAfterCommit, SilenceAfterCommit, DropAfterCommit, Refuse, ReplayConflict, BadReceipt };
    struct Scripted {
        Step step = Step::Commit;
        QString code;              // Refuse: the data.name answered
        QJsonObject receiptFields; // BadReceipt: receipt members replaced (or added)
    };
    struct Opened {
        QString mutationId;
        QString context;
        QString digest;
        QByteArray plaintext;  // the opened UTF-8 JSON, verbatim
        QJsonObject material;  // its material member
    };

    CloudlySecretIngress(std::function<qint64()> now, std::function<QString()> clusterId);
    ~CloudlySecretIngress();
    CloudlySecretIngress(const CloudlySecretIngress &) = delete;
    CloudlySecretIngress &operator=(const CloudlySecretIngress &) = delete;

    bool serves(const QString &method) const;
    Answer answer(const QString &method, const QJsonObject &request);

    void setOrganization(const QString &serviceId, const QString &organizationId) { m_organizations.insert(serviceId, organizationId); }
    void refuseRecipient(const QString &code) { m_recipientRefusal = code; }
    void rotateRecipient();
    QString recipientKeyId() const;
    QByteArray recipientPublicKey() const { return m_publicKey; }
    qint64 recipientGeneration() const { return m_generation; }
    // Queues the answer of the next publish that passes the checks (code: Refuse's data.name;
    // receiptFields: BadReceipt's replaced members).
    void scriptPublish(Step step, const QString &code = {}, const QJsonObject &receiptFields = {})
    {
        m_script.append(Scripted{step, code, receiptFields});
    }
    int scriptedStepsLeft() const { return int(m_script.size()); }

    const QList<Opened> &opened() const { return m_opened; }
    // mutationId -> the committed envelope digest.
    const QHash<QString, QString> &committed() const { return m_committed; }
    // Every publish answered with a refusal: "<code>" in order (INVALID_REQUEST marks a request that
    // broke the contract; a relay test expects none).
    const QStringList &refusalsAnswered() const { return m_refusalsAnswered; }
    int recipientReads() const { return m_recipientReads; }

private:
    Answer publish(const QJsonObject &request);
    Answer refused(const char *name, const QString &reason);
    Answer receiptAnswer(const QString &mutationId, const QString &serviceId, const QString &bindingName,
                         const QString &digest, const QJsonObject &replaced = {});

    std::function<qint64()> m_now;
    std::function<QString()> m_clusterId;
    QByteArray m_publicKey;  // 32 bytes
    QByteArray m_secretKey;  // 32 bytes, wiped when replaced
    qint64 m_generation = 0;
    QString m_recipientRefusal;
    QHash<QString, QString> m_organizations;
    QList<Scripted> m_script;
    QList<Opened> m_opened;
    QHash<QString, QString> m_committed;
    QStringList m_refusalsAnswered;
    int m_recipientReads = 0;
};

} // namespace coreflow::peers
