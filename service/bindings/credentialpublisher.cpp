#include "service/bindings/credentialpublisher.h"

#include "service/bindings/ingressrecipient.h"
#include "service/bindings/publicationenvelope.h"
#include "service/bindings/publicationreceiptvalidator.h"
#include "service/core/logging.h"
#include "shared/contract/envelope.h"
#include "shared/contract/methods.h"
#include "shared/contract/refusalnames.h"
#include "shared/contract/refusalquote.h"

#include <QJsonObject>
#include <QPointer>

namespace coreflow {

using namespace contract;
using Kind = BindingPublicationOutcome::Kind;

namespace {

constexpr QLatin1StringView kMutationPrefix("corestore-publication:");

QString mutationIdOf(const QString &grantOperation) { return kMutationPrefix + grantOperation; }

Refusal replayConflict()
{
    return Refusal{QString(refusal::cloudlyReplayConflict), QStringLiteral("Cloudly committed another envelope under this grant's mutation")};
}

// Cloudly's code is repeated only when it is a plain name.
QString plainCode(const QString &code) { return RefusalQuote::isPlain(code) ? code : QString(); }

BindingPublicationOutcome outcomeOf(Kind kind, const Refusal &why = {})
{
    BindingPublicationOutcome outcome;
    outcome.kind = kind;
    if (!why.name.isEmpty())
        outcome.reason = why.reason.isEmpty() ? why.name : why.text();
    return outcome;
}

} // namespace

CredentialPublisher::CredentialPublisher(CloudlyConnector &cloudly, const RelayTiming &timing, QObject *parent)
    : QObject(parent), m_cloudly(cloudly), m_timing(timing)
{
}

CredentialPublisher::~CredentialPublisher() = default;

bool CredentialPublisher::holdsReceipt(const QString &grantOperation) const
{
    const auto it = m_held.constFind(grantOperation);
    return it != m_held.constEnd() && it->receipt.has_value();
}

bool CredentialPublisher::holdsRequest(const QString &grantOperation) const
{
    const auto it = m_held.constFind(grantOperation);
    return it != m_held.constEnd() && !it->body.isEmpty();
}

bool CredentialPublisher::isMarkedCommitted(const QString &grantOperation) const
{
    const auto it = m_held.constFind(grantOperation);
    return it != m_held.constEnd() && it->committedElsewhere;
}

qsizetype CredentialPublisher::materialBytesHeld() const
{
    qsizetype bytes = 0;
    for (const Held &held : m_held)
        bytes += held.material.size();
    return bytes;
}

void CredentialPublisher::forget(const QString &grantOperation)
{
    // The grant left the config push (CS-39): the held request, the receipt and any attempt under way
    // are dropped; an answer still to come finds nothing and changes nothing.
    const auto it = m_held.find(grantOperation);
    if (it == m_held.end())
        return;
    std::vector<Done> waiting = std::move(it->waiting);
    m_held.erase(it);
    for (auto &done : waiting)
        answer(std::move(done), outcomeOf(Kind::Retry, Refusal{QString(refusal::publicationForgotten),
                                                               QStringLiteral("the grant left the config before Cloudly answered")}));
}

void CredentialPublisher::answer(Done done, const BindingPublicationOutcome &outcome)
{
    QMetaObject::invokeMethod(this, [done = std::move(done), outcome] { done(outcome); }, Qt::QueuedConnection);
}

void CredentialPublisher::warnCommitted(const Held &held) const
{
    qCWarning(logBindings).noquote() << QStringLiteral("%1: grant %2 (binding %3/%4 on node %5): Cloudly committed another envelope under "
                                                       "mutation %6; nothing is sealed or sent again under this grant and the binding "
                                                       "stays as Cloudly states it")
                                            .arg(QLatin1StringView(refusal::publicationReplayConflict), held.request.grantOperation,
                                                 held.request.serviceId, held.request.bindingName, held.request.nodeId,
                                                 mutationIdOf(held.request.grantOperation));
}

void CredentialPublisher::publish(const BindingPublicationRequest &request, Secret material, Done done)
{
    const QString op = request.grantOperation;
    if (op.isEmpty()) {
        answer(std::move(done), outcomeOf(Kind::Failed, Refusal{QString(refusal::publicationUnbound), QStringLiteral("the grant names no operation")}));
        return;
    }
    auto it = m_held.find(op);
    if (it != m_held.end()) {
        // The grant's material was sealed once; a repeated publish never seals it again (CS-40, CS-43, CS-44).
        material = Secret();
        if (it->receipt) {
            answer(std::move(done), outcomeOf(Kind::Published));
            return;
        }
        if (it->committedElsewhere) {
            warnCommitted(*it);
            answer(std::move(done), outcomeOf(Kind::Committed, replayConflict()));
            return;
        }
        it->waiting.push_back(std::move(done));
        if (!it->running)
            send(op); // the identical request again (CS-38, CS-42, CS-44)
        return;
    }
    // Nothing is held yet: failures from here to the held request are reported failed (CS-46).
    if (request.clusterId.isEmpty() || request.organizationId.isEmpty()) {
        answer(std::move(done), outcomeOf(Kind::Failed, Refusal{QString(refusal::publicationUnbound),
                                             QStringLiteral("the service has no %1 to bind the publication to")
                                                 .arg(request.clusterId.isEmpty() ? QStringLiteral("cluster") : QStringLiteral("organization"))}));
        return;
    }
    if (!PublicationEnvelope::isJsonObject(material)) {
        answer(std::move(done), outcomeOf(Kind::Failed, Refusal{QString(refusal::publicationMaterialUnusable),
                                             QStringLiteral("the credential material is not one JSON object")}));
        return;
    }
    Held held;
    held.request = request;
    held.material = std::move(material);
    held.waiting.push_back(std::move(done));
    m_held.insert(op, std::move(held));
    readRecipient(op);
}

void CredentialPublisher::readRecipient(const QString &grantOperation)
{
    auto it = m_held.find(grantOperation);
    it->running = true;
    const quint64 attempt = it->attempt = m_nextAttempt++;
    QPointer<CredentialPublisher> self(this);
    m_cloudly.call(QString(method::getSecretIngressRecipient), QByteArrayView("{}"), m_timing.cloudlyCallTimeoutMs,
                   [self, grantOperation, attempt](const CloudlyConnector::CallResult &result) {
                       if (!self)
                           return;
                       const auto held = self->m_held.constFind(grantOperation);
                       if (held == self->m_held.constEnd() || held->attempt != attempt)
                           return; // forgotten meanwhile
                       std::optional<Refusal> failure;
                       std::optional<IngressRecipient> recipient;
                       if (!result.delivered) {
                           failure = result.refusal;
                       } else if (result.answer.hasError()) {
                           const Refusal refused = result.answer.errorRefusal();
                           const QString code = plainCode(refused.name);
                           failure = Refusal{code.isEmpty() ? QString(refusal::publicationAnswerInvalid) : code,
                                             QStringLiteral("Cloudly refused getSecretIngressRecipient")};
                       } else if (auto response = result.answer.responseObject(); !response) {
                           failure = Refusal{QString(refusal::publicationAnswerInvalid),
                                             QStringLiteral("getSecretIngressRecipient answered no JSON object")};
                       } else if (auto read = IngressRecipient::read(response.value()); !read) {
                           failure = read.refusal();
                       } else {
                           recipient = read.value();
                       }
                       if (failure)
                           return self->finish(grantOperation, outcomeOf(Kind::Failed, *failure), true);
                       self->sealAndSend(grantOperation, *recipient);
                   });
}

void CredentialPublisher::sealAndSend(const QString &grantOperation, const IngressRecipient &recipient)
{
    auto it = m_held.find(grantOperation);
    const BindingPublicationRequest &request = it->request;
    const QString mutationId = mutationIdOf(grantOperation);
    const QString context = PublicationEnvelope::contextFor(request.clusterId, request.organizationId, request.serviceId,
                                                            request.bindingName, mutationId);
    auto sealed = PublicationEnvelope::seal(recipient, context, it->material);
    it->material = Secret(); // wiped: only the ciphertext is kept from here on
    if (!sealed)
        return finish(grantOperation, outcomeOf(Kind::Failed, sealed.refusal()), true);
    ++m_seals;
    const PublicationEnvelope &envelope = sealed.value();
    it->digest = envelope.digest;
    it->body = Envelope::compact(QJsonObject{
        {QStringLiteral("mutationId"), mutationId},
        {QStringLiteral("grantOperation"), grantOperation},
        {QStringLiteral("serviceId"), request.serviceId},
        {QStringLiteral("bindingName"), request.bindingName},
        {QStringLiteral("capability"), request.capability},
        {QStringLiteral("envelope"), QJsonObject{{QStringLiteral("recipientKeyId"), envelope.recipientKeyId},
                                                 {QStringLiteral("context"), envelope.context},
                                                 {QStringLiteral("sealed"), QString::fromLatin1(envelope.sealed)},
                                                 {QStringLiteral("digest"), envelope.digest}}}});
    qCInfo(logBindings).noquote() << QStringLiteral("sealed the credential material of %1/%2 (grant %3) to Cloudly's recipient %4 "
                                                    "(generation %5); envelope digest %6")
                                         .arg(request.serviceId, request.bindingName, grantOperation,
                                              RefusalQuote::nameOrLength(recipient.keyId))
                                         .arg(recipient.generation)
                                         .arg(envelope.digest);
    send(grantOperation);
}

void CredentialPublisher::send(const QString &grantOperation)
{
    auto it = m_held.find(grantOperation);
    it->running = true;
    const quint64 attempt = it->attempt = m_nextAttempt++;
    ++m_sends;
    QPointer<CredentialPublisher> self(this);
    // A copy of the held bytes: the call may answer synchronously, and forget() may drop the entry.
    const QByteArray body = it->body;
    m_cloudly.call(QString(method::publishCorestoreCredentialMaterial), body, m_timing.cloudlyCallTimeoutMs,
                   [self, grantOperation, attempt](const CloudlyConnector::CallResult &result) {
                       if (!self)
                           return;
                       const auto held = self->m_held.constFind(grantOperation);
                       if (held == self->m_held.constEnd() || held->attempt != attempt)
                           return;
                       self->onAnswer(grantOperation, result);
                   });
}

void CredentialPublisher::onAnswer(const QString &grantOperation, const CloudlyConnector::CallResult &result)
{
    auto it = m_held.find(grantOperation);
    Held &held = *it;
    if (!result.delivered) {
        // A lost answer: Cloudly may have committed; the same bytes go out again (CS-38, CS-42).
        qCInfo(logBindings).noquote() << QStringLiteral("publication under grant %1 has no answer (%2); the sealed request stays held "
                                                        "and is sent again unchanged")
                                             .arg(grantOperation, result.refusal.name);
        return finish(grantOperation, outcomeOf(Kind::Retry, result.refusal), false);
    }
    if (result.answer.hasError()) {
        const Refusal refused = result.answer.errorRefusal();
        const QString code = plainCode(refused.name);
        if (code == QLatin1StringView(refusal::cloudlyReplayConflict)) {
            held.committedElsewhere = true;
            held.body.clear(); // nothing is sent under this grant again (CS-43)
            warnCommitted(held);
            return finish(grantOperation, outcomeOf(Kind::Committed, replayConflict()), false);
        }
        if (code.isEmpty() || code == QLatin1StringView(refusal::cloudlyInternalError)) {
            qCInfo(logBindings).noquote() << QStringLiteral("publication under grant %1 answered %2; the sealed request stays held and is "
                                                            "sent again unchanged")
                                                 .arg(grantOperation, code.isEmpty() ? QStringLiteral("an unnamed error") : code);
            return finish(grantOperation,
                          outcomeOf(Kind::Retry, Refusal{code.isEmpty() ? QString(refusal::publicationAnswerInvalid) : code,
                                                         QStringLiteral("Cloudly answered no receipt")}),
                          false);
        }
        // Any other name: the request is dropped; the next attempt seals afresh (CS-41).
        return finish(grantOperation,
                      outcomeOf(Kind::Failed, Refusal{code, QStringLiteral("Cloudly refused publishCorestoreCredentialMaterial")}), true);
    }
    QStringList reasons;
    QStringList misstatements;
    std::optional<PublicationReceipt> receipt;
    if (auto response = result.answer.responseObject(); !response) {
        reasons << QStringLiteral("the answer is not a JSON object");
    } else if (auto read = PublicationReceipt::read(response.value()); !read) {
        reasons << read.refusal().reason;
    } else {
        const PublicationReceiptValidator::Expected expected{mutationIdOf(grantOperation), held.request.organizationId,
                                                             held.request.clusterId,        held.request.serviceId,
                                                             held.request.bindingName,      held.digest};
        const auto verdict = PublicationReceiptValidator::check(expected, read.value());
        if (verdict.valid())
            receipt = read.value();
        reasons = verdict.reasons;
        misstatements = verdict.misstatements;
    }
    if (!receipt) {
        // Cloudly committed an envelope: the binding's readiness is its word, never failed here; the
        // request stays held and goes out again unchanged (CS-44, CS-45).
        qCCritical(logBindings).noquote()
            << QStringLiteral("%1: grant %2 (binding %3/%4 on node %5): %6%7; the sealed request stays held without a receipt and is "
                              "sent again unchanged")
                   .arg(QLatin1StringView(refusal::publicationReceiptRefused), grantOperation, held.request.serviceId,
                        held.request.bindingName, held.request.nodeId, reasons.join(QStringLiteral("; ")),
                        misstatements.isEmpty() ? QString() : QStringLiteral("; ") + misstatements.join(QStringLiteral("; ")));
        return finish(grantOperation, outcomeOf(Kind::Retry, Refusal{QString(refusal::publicationReceiptRefused),
                                                                              reasons.join(QStringLiteral("; "))}),
                      false);
    }
    held.receipt = receipt;
    qCInfo(logBindings).noquote() << QStringLiteral("Cloudly accepted the credential material of %1/%2 under grant %3 (envelope %4)")
                                         .arg(held.request.serviceId, held.request.bindingName, grantOperation, held.digest);
    finish(grantOperation, outcomeOf(Kind::Published), false);
}

void CredentialPublisher::finish(const QString &grantOperation, const BindingPublicationOutcome &outcome, bool dropHeld)
{
    auto it = m_held.find(grantOperation);
    if (it == m_held.end())
        return;
    std::vector<Done> waiting = std::move(it->waiting);
    it->waiting.clear();
    it->running = false;
    if (dropHeld)
        m_held.erase(it); // the ciphertext and the material (if any) go with it
    for (auto &done : waiting)
        answer(std::move(done), outcome);
}

} // namespace coreflow
