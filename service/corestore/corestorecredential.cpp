#include "service/corestore/corestorecredential.h"

#include "service/core/logging.h"
#include "shared/contract/envelope.h"
#include "shared/contract/exactkeyreader.h"
#include "shared/contract/methods.h"
#include "shared/contract/refusalnames.h"
#include "shared/contract/refusalquote.h"
#include "shared/contract/secretstringtake.h"

#include <QJsonDocument>
#include <QPointer>
#include <QUuid>
#include <sodium.h>

namespace coreflow {

using namespace contract;

namespace {

constexpr qsizetype kChallengeBytes = 32;
constexpr QLatin1StringView kKeyIdPrefix("relay-corestore-control:");

// Cloudly's code is repeated only when it is a plain name (RefusalQuote).
QString plainCode(const QString &code) { return RefusalQuote::isPlain(code) ? code : QStringLiteral("unnamed"); }

} // namespace

CorestoreCredential::CorestoreCredential(CloudlyConnector &cloudly, Clock &clock, const RelayTiming &timing, QObject *parent)
    : QObject(parent), m_cloudly(cloudly), m_clock(clock), m_timing(timing)
{
}

CorestoreCredential::~CorestoreCredential() = default;

QString CorestoreCredential::stateWord(State state)
{
    switch (state) {
    case State::None:
        return QStringLiteral("none");
    case State::Enrolling:
        return QStringLiteral("enrolling");
    case State::Held:
        return QStringLiteral("held");
    case State::Failed:
        return QStringLiteral("failed");
    }
    return QStringLiteral("none");
}

void CorestoreCredential::acquire(Ready ready)
{
    if (m_held && !m_busy) {
        ready(&m_token, m_tokenGeneration, Refusal{});
        return;
    }
    if (m_busy) {
        m_waiting.push_back(std::move(ready));
        return;
    }
    if (m_state == State::Failed && m_clock.nowMs() < m_nextAttemptAtMs) {
        ready(nullptr, 0, m_failure);
        return;
    }
    m_waiting.push_back(std::move(ready));
    startEnrollment();
}

void CorestoreCredential::reread(quint64 usedGeneration, Ready ready)
{
    if (m_busy) {
        m_waiting.push_back(std::move(ready));
        return;
    }
    if (m_held && m_tokenGeneration != usedGeneration) {
        ready(&m_token, m_tokenGeneration, Refusal{}); // another call re-read it meanwhile
        return;
    }
    if (!m_held || m_keyId.isEmpty()) {
        acquire(std::move(ready));
        return;
    }
    // Drop the token and read the material again with the same key (§12.1, CS-13).
    m_token = Secret();
    m_held = false;
    m_busy = true;
    m_state = State::Enrolling;
    ++m_attempt;
    m_waiting.push_back(std::move(ready));
    qCInfo(logCorestore).noquote() << "Corestore refused the control token; reading the credential material again for" << m_keyId;
    Q_EMIT statusChanged();
    readMaterial();
}

void CorestoreCredential::recipientStateChanged()
{
    if (!m_held || m_busy)
        return; // nothing enrolled: the next call enrolls anyway
    const quint64 attempt = m_attempt;
    QPointer<CorestoreCredential> self(this);
    m_cloudly.call(QString(method::getCorestoreControlRecipientState), QByteArrayView("{}"), m_timing.cloudlyCallTimeoutMs,
                   [self, attempt](const CloudlyConnector::CallResult &result) {
                       if (!self || attempt != self->m_attempt || !self->m_held || self->m_busy)
                           return;
                       QString problem;
                       if (!result.delivered)
                           problem = result.refusal.name;
                       else if (result.answer.hasError())
                           problem = result.answer.errorRefusal().name;
                       std::optional<QString> active;
                       if (problem.isEmpty()) {
                           auto response = result.answer.responseObject();
                           if (!response) {
                               problem = QString(refusal::enrollmentAnswerInvalid);
                           } else {
                               ExactKeyReader r(response.value(), QStringLiteral("response"));
                               const QJsonValue value = r.requiredAny(QStringLiteral("activeKeyId"));
                               if (!r.failed() && !value.isNull() && !value.isString())
                                   r.fail(QStringLiteral("activeKeyId"), QStringLiteral("is not a string or null"));
                               if (auto refused = r.finish())
                                   problem = QString(refusal::enrollmentAnswerInvalid);
                               else if (value.isString())
                                   active = value.toString();
                           }
                       }
                       if (!problem.isEmpty()) {
                           qCWarning(logCorestore).noquote() << "getCorestoreControlRecipientState failed:"
                                                             << plainCode(problem) << "; the held credential stays";
                           return;
                       }
                       if (active && *active == self->m_keyId)
                           return; // unchanged: nothing to do (§12.1)
                       const QString line = QStringLiteral("the active Corestore control recipient is no longer %1; enrolling again before the next Corestore call")
                                                .arg(self->m_keyId);
                       qCInfo(logCorestore).noquote() << line;
                       self->dropKey();
                       self->m_state = State::None;
                       Q_EMIT self->eventLine(line);
                       Q_EMIT self->statusChanged();
                   });
}

void CorestoreCredential::startEnrollment()
{
    dropKey();
    m_busy = true;
    m_state = State::Enrolling;
    ++m_attempt;
    ++m_enrollmentsBegun;
    unsigned char publicKey[crypto_box_PUBLICKEYBYTES];
    unsigned char secretKey[crypto_box_SECRETKEYBYTES];
    crypto_box_keypair(publicKey, secretKey);
    m_publicKey = QByteArray(reinterpret_cast<const char *>(publicKey), qsizetype(sizeof publicKey));
    m_privateKey = Secret(QByteArrayView(reinterpret_cast<const char *>(secretKey), qsizetype(sizeof secretKey)));
    sodium_memzero(secretKey, sizeof secretKey);
    m_keyId = kKeyIdPrefix + QUuid::createUuid().toString(QUuid::WithoutBraces).toLower();
    qCInfo(logCorestore).noquote() << "enrolling Corestore control recipient" << m_keyId;
    Q_EMIT statusChanged();
    begin();
}

std::optional<QJsonObject> CorestoreCredential::answerOf(const CloudlyConnector::CallResult &result, const QString &step)
{
    if (!result.delivered) {
        fail(plainCode(result.refusal.name), QStringLiteral("%1: the Cloudly call failed").arg(step));
        return std::nullopt;
    }
    if (result.answer.hasError()) {
        const Refusal refused = result.answer.errorRefusal();
        fail(plainCode(refused.name), QStringLiteral("%1: Cloudly refused it").arg(step));
        return std::nullopt;
    }
    auto response = result.answer.responseObject();
    if (!response) {
        fail(QString(refusal::enrollmentAnswerInvalid), QStringLiteral("%1: the answer is not a JSON object").arg(step));
        return std::nullopt;
    }
    return response.value();
}

void CorestoreCredential::begin()
{
    const quint64 attempt = m_attempt;
    QPointer<CorestoreCredential> self(this);
    const QByteArray body = Envelope::compact(QJsonObject{{QStringLiteral("keyId"), m_keyId},
                                                          {QStringLiteral("publicKey"), QString::fromLatin1(m_publicKey.toBase64())}});
    m_cloudly.call(QString(method::beginCorestoreControlRecipientEnrollment), body, m_timing.cloudlyCallTimeoutMs,
                   [self, attempt](const CloudlyConnector::CallResult &result) {
                       if (!self || attempt != self->m_attempt)
                           return;
                       auto response = self->answerOf(result, QStringLiteral("begin"));
                       if (!response)
                           return;
                       ExactKeyReader r(*response, QStringLiteral("response"));
                       const QString challengeId = r.requiredString(QStringLiteral("challengeId"));
                       const QString sealed = r.requiredString(QStringLiteral("sealedChallenge"));
                       r.requiredInteger(QStringLiteral("expiresAt"));
                       if (!r.failed() && challengeId.isEmpty())
                           r.fail(QStringLiteral("challengeId"), QStringLiteral("is empty"));
                       if (auto refused = r.finish())
                           return self->fail(QString(refusal::enrollmentAnswerInvalid), QStringLiteral("begin: %1").arg(refused->reason));
                       const auto decoded = QByteArray::fromBase64Encoding(sealed.toLatin1(), QByteArray::AbortOnBase64DecodingErrors);
                       if (!decoded)
                           return self->fail(QString(refusal::enrollmentChallengeInvalid), QStringLiteral("begin: the sealed challenge is not base64"));
                       self->complete(challengeId, *decoded);
                   });
}

void CorestoreCredential::complete(const QString &challengeId, const QByteArray &sealedChallenge)
{
    // Only a challenge that opens to exactly 32 bytes is answered, and never with its bytes (D-72).
    if (sealedChallenge.size() != kChallengeBytes + qsizetype(crypto_box_SEALBYTES))
        return fail(QString(refusal::enrollmentChallengeInvalid), QStringLiteral("complete: the challenge does not open to 32 bytes"));
    unsigned char opened[kChallengeBytes];
    const QByteArrayView secretKey = m_privateKey.reveal();
    if (secretKey.size() != crypto_box_SECRETKEYBYTES
        || crypto_box_seal_open(opened, reinterpret_cast<const unsigned char *>(sealedChallenge.constData()),
                                quint64(sealedChallenge.size()), reinterpret_cast<const unsigned char *>(m_publicKey.constData()),
                                reinterpret_cast<const unsigned char *>(secretKey.data()))
            != 0) {
        sodium_memzero(opened, sizeof opened);
        return fail(QString(refusal::enrollmentChallengeInvalid), QStringLiteral("complete: the challenge does not open with this key"));
    }
    const QByteArray message = QByteArrayLiteral("coreflow-recipient-pop|") + m_keyId.toUtf8() + '|' + challengeId.toUtf8();
    unsigned char proof[32];
    crypto_generichash(proof, sizeof proof, reinterpret_cast<const unsigned char *>(message.constData()), size_t(message.size()), opened,
                       sizeof opened);
    sodium_memzero(opened, sizeof opened);
    const QString proofText = QString::fromLatin1(QByteArray(reinterpret_cast<const char *>(proof), sizeof proof).toBase64());
    const quint64 attempt = m_attempt;
    QPointer<CorestoreCredential> self(this);
    const QByteArray body = Envelope::compact(QJsonObject{{QStringLiteral("keyId"), m_keyId},
                                                          {QStringLiteral("challengeId"), challengeId},
                                                          {QStringLiteral("proof"), proofText}});
    m_cloudly.call(QString(method::completeCorestoreControlRecipientEnrollment), body, m_timing.cloudlyCallTimeoutMs,
                   [self, attempt](const CloudlyConnector::CallResult &result) {
                       if (!self || attempt != self->m_attempt)
                           return;
                       auto response = self->answerOf(result, QStringLiteral("complete"));
                       if (!response)
                           return;
                       ExactKeyReader r(*response, QStringLiteral("response"));
                       const QJsonObject recipient = r.requiredObject(QStringLiteral("recipient"));
                       const QJsonArray retired = r.requiredArray(QStringLiteral("retiredKeyIds"));
                       if (auto refused = r.finish())
                           return self->fail(QString(refusal::enrollmentAnswerInvalid), QStringLiteral("complete: %1").arg(refused->reason));
                       ExactKeyReader rr(recipient, QStringLiteral("response.recipient"));
                       const QString keyId = rr.requiredString(QStringLiteral("keyId"));
                       const qint64 generation = rr.requiredInteger(QStringLiteral("generation"));
                       if (!rr.failed() && keyId != self->m_keyId)
                           rr.fail(QStringLiteral("keyId"), QStringLiteral("names another key"));
                       if (!rr.failed() && generation < 0)
                           rr.fail(QStringLiteral("generation"), QStringLiteral("is negative"));
                       for (const QJsonValue &id : retired)
                           if (!id.isString() && !rr.failed())
                               rr.fail(QStringLiteral("retiredKeyIds"), QStringLiteral("holds a member that is not a string"));
                       if (auto refused = rr.finish())
                           return self->fail(QString(refusal::enrollmentAnswerInvalid), QStringLiteral("complete: %1").arg(refused->reason));
                       self->m_generation = generation;
                       self->readMaterial();
                   });
}

void CorestoreCredential::readMaterial()
{
    const quint64 attempt = m_attempt;
    QPointer<CorestoreCredential> self(this);
    const QByteArray body = Envelope::compact(QJsonObject{{QStringLiteral("keyId"), m_keyId}});
    m_cloudly.call(QString(method::getCorestoreControlCredentialMaterial), body, m_timing.cloudlyCallTimeoutMs,
                   [self, attempt](const CloudlyConnector::CallResult &result) {
                       if (!self || attempt != self->m_attempt)
                           return;
                       auto response = self->answerOf(result, QStringLiteral("material"));
                       if (!response)
                           return;
                       ExactKeyReader r(*response, QStringLiteral("response"));
                       const QJsonObject material = r.requiredObject(QStringLiteral("material"));
                       if (auto refused = r.finish())
                           return self->fail(QString(refusal::enrollmentAnswerInvalid), QStringLiteral("material: %1").arg(refused->reason));
                       ExactKeyReader m(material, QStringLiteral("response.material"));
                       const QString keyId = m.requiredString(QStringLiteral("keyId"));
                       const QString sealed = m.requiredString(QStringLiteral("sealed"));
                       if (!m.failed() && keyId != self->m_keyId)
                           m.fail(QStringLiteral("keyId"), QStringLiteral("names another key"));
                       if (auto refused = m.finish())
                           return self->fail(QString(refusal::enrollmentAnswerInvalid), QStringLiteral("material: %1").arg(refused->reason));
                       const auto decoded = QByteArray::fromBase64Encoding(sealed.toLatin1(), QByteArray::AbortOnBase64DecodingErrors);
                       if (!decoded || decoded.decoded.size() <= qsizetype(crypto_box_SEALBYTES))
                           return self->fail(QString(refusal::enrollmentAnswerInvalid), QStringLiteral("material: the sealed material does not open"));
                       const QByteArray &box = *decoded;
                       const size_t plainSize = size_t(box.size()) - crypto_box_SEALBYTES;
                       // The opened material lives in guarded memory only (contract §19.4).
                       auto *plain = static_cast<char *>(sodium_malloc(plainSize));
                       if (!plain)
                           return self->fail(QString(refusal::enrollmentAnswerInvalid), QStringLiteral("material: no memory to open it"));
                       const QByteArrayView secretKey = self->m_privateKey.reveal();
                       const int opened = crypto_box_seal_open(reinterpret_cast<unsigned char *>(plain),
                                                               reinterpret_cast<const unsigned char *>(box.constData()), quint64(box.size()),
                                                               reinterpret_cast<const unsigned char *>(self->m_publicKey.constData()),
                                                               reinterpret_cast<const unsigned char *>(secretKey.data()));
                       Secret token;
                       bool readable = false;
                       if (opened == 0) {
                           // The token goes from the opened bytes straight into its Secret (simdjson,
                           // §19.4); QJsonDocument reads only a copy with it blanked, wiped afterwards.
                           QByteArray blanked(plain, qsizetype(plainSize));
                           std::optional<Secret> taken = takeSecretString(blanked, {"token"});
                           QJsonParseError error{};
                           const QJsonDocument document = QJsonDocument::fromJson(blanked, &error);
                           Secret::wipe(blanked);
                           if (taken && !taken->isEmpty() && error.error == QJsonParseError::NoError && document.isObject()) {
                               const QJsonObject object = document.object();
                               if (object.size() == 1 && object.value(QStringLiteral("token")).isString()) {
                                   token = std::move(*taken);
                                   readable = true;
                               }
                           }
                       }
                       sodium_free(plain);
                       if (opened != 0)
                           return self->fail(QString(refusal::enrollmentAnswerInvalid), QStringLiteral("material: the sealed material does not open with this key"));
                       if (!readable)
                           return self->fail(QString(refusal::enrollmentAnswerInvalid), QStringLiteral("material: the opened material is not { token: string }"));
                       self->m_token = std::move(token);
                       self->succeed();
                   });
}

void CorestoreCredential::succeed()
{
    m_held = true;
    m_busy = false;
    m_state = State::Held;
    ++m_tokenGeneration;
    m_consecutiveFailures = 0;
    m_nextAttemptAtMs = 0;
    m_failure = Refusal{};
    m_failureCode.clear();
    if (m_enrolledAtMs == 0)
        m_enrolledAtMs = m_clock.nowMs(); // a re-read keeps the enrollment's time
    const QString line = QStringLiteral("Corestore control credential held: recipient %1 generation %2").arg(m_keyId).arg(m_generation);
    qCInfo(logCorestore).noquote() << line;
    Q_EMIT eventLine(line);
    Q_EMIT statusChanged();
    settle();
}

void CorestoreCredential::fail(const QString &code, const QString &reason)
{
    ++m_attempt; // later answers of this attempt are ignored
    dropKey();
    m_busy = false;
    m_state = State::Failed;
    ++m_consecutiveFailures;
    qint64 wait = m_timing.reconnectInitialBackoffMs;
    for (int i = 1; i < m_consecutiveFailures && wait < m_timing.reconnectMaxBackoffMs; ++i)
        wait *= 2;
    wait = qMin(wait, qint64(m_timing.reconnectMaxBackoffMs));
    m_nextAttemptAtMs = m_clock.nowMs() + wait;
    m_failureCode = code;
    m_failure = Refusal{QString(refusal::corestoreCredentialEnrollmentError), code + QStringLiteral(": ") + reason};
    qCWarning(logCorestore).noquote() << m_failure.text() << QStringLiteral("(next attempt in %1 ms at the earliest)").arg(wait);
    Q_EMIT eventLine(m_failure.text());
    Q_EMIT statusChanged();
    settle();
}

void CorestoreCredential::dropKey()
{
    m_token = Secret();
    m_privateKey = Secret();
    m_publicKey.clear();
    m_keyId.clear();
    m_held = false;
    m_generation = 0;
    m_enrolledAtMs = 0;
}

void CorestoreCredential::settle()
{
    std::vector<Ready> waiting;
    waiting.swap(m_waiting);
    for (Ready &ready : waiting) {
        if (m_held)
            ready(&m_token, m_tokenGeneration, Refusal{});
        else
            ready(nullptr, 0, m_failure);
    }
}

bool CorestoreCredential::matchesToken(QByteArrayView bytes) const
{
    const QByteArrayView token = m_token.reveal();
    return !token.isEmpty() && token.size() == bytes.size() && sodium_memcmp(token.data(), bytes.data(), size_t(bytes.size())) == 0;
}

} // namespace coreflow
