#include "service/registration/registrationacceptance.h"

#include "shared/contract/exactkeyreader.h"

namespace coreflow {

using namespace contract;

namespace {
std::optional<RecordReference> readReference(ExactKeyReader &parent, const QString &key, std::optional<Refusal> &problem)
{
    const QJsonObject json = parent.requiredObject(key);
    if (parent.failed())
        return std::nullopt;
    ExactKeyReader r(json, parent.pathOf(key));
    RecordReference ref{r.requiredString(QStringLiteral("id")), r.requiredInteger(QStringLiteral("generation"))};
    if (!r.failed() && ref.id.isEmpty())
        r.fail(QStringLiteral("id"), QStringLiteral("is empty"));
    if (!r.failed() && ref.generation < 0)
        r.fail(QStringLiteral("generation"), QStringLiteral("is negative"));
    if (auto refusal = r.finish()) {
        problem = refusal;
        return std::nullopt;
    }
    return ref;
}
} // namespace

Result<RegistrationAcceptance> RegistrationAcceptance::read(const QJsonObject &response)
{
    ExactKeyReader reader(response, QStringLiteral("response"));
    const QJsonObject offerJson = reader.requiredObject(QStringLiteral("offer"));
    const QString origin = reader.requiredString(QStringLiteral("origin"));
    std::optional<Refusal> problem;
    const auto credential = readReference(reader, QStringLiteral("credential"), problem);
    std::optional<Refusal> recordProblem;
    const auto record = readReference(reader, QStringLiteral("registration"), recordProblem);
    if (!problem)
        problem = recordProblem;
    if (!problem)
        problem = reader.finish();
    if (problem)
        return *problem;
    auto offer = ProtocolOffer::read(offerJson, QStringLiteral("response.offer"));
    if (!offer)
        return offer.refusal();
    return RegistrationAcceptance{offer.value(), origin, *credential, *record};
}

} // namespace coreflow
