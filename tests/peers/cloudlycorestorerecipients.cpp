#include "tests/peers/cloudlycorestorerecipients.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QUuid>
#include <sodium.h>

namespace coreflow::peers {

namespace {

Answer refused(const char *name, const QString &reason) { return Answer::refuse(QLatin1StringView(name), reason); }

QByteArray sealTo(const QByteArray &publicKey, const QByteArray &message)
{
    QByteArray sealed(message.size() + qsizetype(crypto_box_SEALBYTES), '\0');
    crypto_box_seal(reinterpret_cast<unsigned char *>(sealed.data()), reinterpret_cast<const unsigned char *>(message.constData()),
                    quint64(message.size()), reinterpret_cast<const unsigned char *>(publicKey.constData()));
    return sealed;
}

} // namespace

CloudlyCorestoreRecipients::CloudlyCorestoreRecipients(std::function<qint64()> now) : m_now(std::move(now))
{
    if (sodium_init() < 0)
        qFatal("libsodium does not start");
}

bool CloudlyCorestoreRecipients::serves(const QString &method) const
{
    return method == QLatin1StringView(stateMethod) || method == QLatin1StringView(beginMethod)
        || method == QLatin1StringView(completeMethod) || method == QLatin1StringView(materialMethod);
}

void CloudlyCorestoreRecipients::refuseStep(const QString &method, const QString &code)
{
    if (code.isEmpty())
        m_refusals.remove(method);
    else
        m_refusals.insert(method, code);
}

QByteArray CloudlyCorestoreRecipients::publicKeyOf(const QString &keyId) const
{
    return m_publicKeys.value(keyId).toBase64();
}

Answer CloudlyCorestoreRecipients::answer(const QString &method, const QJsonObject &request)
{
    if (m_refusals.contains(method)) {
        const QByteArray code = m_refusals.value(method).toUtf8();
        return Answer::refuse(QLatin1StringView(code), QStringLiteral("scripted refusal"));
    }
    if (method == QLatin1StringView(stateMethod))
        return Answer::respond({{QStringLiteral("activeKeyId"), m_active ? QJsonValue(*m_active) : QJsonValue(QJsonValue::Null)}});
    if (method == QLatin1StringView(beginMethod))
        return begin(request);
    if (method == QLatin1StringView(completeMethod))
        return complete(request);
    return material(request);
}

Answer CloudlyCorestoreRecipients::begin(const QJsonObject &request)
{
    ++m_begun;
    static const QRegularExpression keyIdPattern(
        QStringLiteral("^relay-corestore-control:[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$"));
    const QString keyId = request.value(QStringLiteral("keyId")).toString();
    const auto publicKey = QByteArray::fromBase64Encoding(request.value(QStringLiteral("publicKey")).toString().toLatin1(),
                                                          QByteArray::AbortOnBase64DecodingErrors);
    if (request.size() != 2 || !keyIdPattern.match(keyId).hasMatch() || !publicKey || publicKey.decoded.size() != crypto_box_PUBLICKEYBYTES)
        return refused("INVALID_REQUEST", QStringLiteral("keyId or publicKey is not the contract's"));
    if (m_publicKeys.contains(keyId))
        return refused("RECIPIENT_KEY_ID_TAKEN", QStringLiteral("the key id was enrolled before"));
    m_publicKeys.insert(keyId, *publicKey);
    Challenge challenge;
    challenge.keyId = keyId;
    challenge.bytes = QByteArray(m_challengeBytes, '\0');
    randombytes_buf(challenge.bytes.data(), size_t(challenge.bytes.size()));
    challenge.expiresAtMs = m_now() + 60000;
    const QString challengeId = QUuid::createUuid().toString(QUuid::WithoutBraces);
    const QByteArray sealed = sealTo(*publicKey, challenge.bytes);
    m_challenges.insert(challengeId, challenge);
    return Answer::respond({{QStringLiteral("challengeId"), challengeId},
                            {QStringLiteral("sealedChallenge"), QString::fromLatin1(sealed.toBase64())},
                            {QStringLiteral("expiresAt"), double(challenge.expiresAtMs)}});
}

Answer CloudlyCorestoreRecipients::complete(const QJsonObject &request)
{
    const QString keyId = request.value(QStringLiteral("keyId")).toString();
    const QString challengeId = request.value(QStringLiteral("challengeId")).toString();
    const QString proofText = request.value(QStringLiteral("proof")).toString();
    const auto it = m_challenges.constFind(challengeId);
    if (it == m_challenges.constEnd() || it->keyId != keyId) {
        ++m_proofsRejected;
        return refused("PROOF_REJECTED", QStringLiteral("no such challenge for this key"));
    }
    if (m_now() > it->expiresAtMs)
        return refused("CHALLENGE_EXPIRED", QStringLiteral("the challenge expired"));
    const QByteArray message = QByteArrayLiteral("coreflow-recipient-pop|") + keyId.toUtf8() + '|' + challengeId.toUtf8();
    unsigned char expected[32];
    crypto_generichash(expected, sizeof expected, reinterpret_cast<const unsigned char *>(message.constData()), size_t(message.size()),
                       reinterpret_cast<const unsigned char *>(it->bytes.constData()), size_t(it->bytes.size()));
    const QByteArray expectedText = QByteArray(reinterpret_cast<const char *>(expected), sizeof expected).toBase64();
    const QByteArray proof = proofText.toLatin1();
    if (proof.size() != expectedText.size() || sodium_memcmp(proof.constData(), expectedText.constData(), size_t(proof.size())) != 0) {
        ++m_proofsRejected;
        return refused("PROOF_REJECTED", QStringLiteral("the proof does not match the challenge"));
    }
    m_challenges.remove(challengeId);
    QJsonArray retired;
    if (m_active && *m_active != keyId) {
        retired.append(*m_active);
        m_retired.append(*m_active);
    }
    m_active = keyId;
    ++m_completed;
    m_generation = m_completed;
    m_enrolledOrder.append(keyId);
    return Answer::respond({{QStringLiteral("recipient"), QJsonObject{{QStringLiteral("keyId"), keyId}, {QStringLiteral("generation"), double(m_generation)}}},
                            {QStringLiteral("retiredKeyIds"), retired}});
}

Answer CloudlyCorestoreRecipients::material(const QJsonObject &request)
{
    const QString keyId = request.value(QStringLiteral("keyId")).toString();
    if (!m_publicKeys.contains(keyId))
        return refused("NOT_FOUND", QStringLiteral("no such recipient"));
    if (!m_active || *m_active != keyId)
        return refused("RECIPIENT_NOT_ACTIVE", QStringLiteral("the recipient is not the active one"));
    const QByteArray plain = QJsonDocument(QJsonObject{{QStringLiteral("token"), QString::fromUtf8(m_token)}}).toJson(QJsonDocument::Compact);
    const QByteArray sealed = sealTo(m_publicKeys.value(keyId), plain);
    ++m_materialsSealed;
    return Answer::respond({{QStringLiteral("material"), QJsonObject{{QStringLiteral("keyId"), keyId},
                                                                   {QStringLiteral("sealed"), QString::fromLatin1(sealed.toBase64())}}}});
}

} // namespace coreflow::peers
