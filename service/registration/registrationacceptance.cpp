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

RegistrationAcceptance RegistrationAcceptance::read(const QJsonObject &response)
{
    RegistrationAcceptance out;
    ExactKeyReader reader(response, QStringLiteral("response"));
    const QJsonObject offerJson = reader.requiredObject(QStringLiteral("offer"));
    out.origin = reader.requiredString(QStringLiteral("origin"));
    std::optional<Refusal> problem;
    out.credential = readReference(reader, QStringLiteral("credential"), problem);
    std::optional<Refusal> recordProblem;
    out.record = readReference(reader, QStringLiteral("registration"), recordProblem);
    if (!problem)
        problem = recordProblem;
    if (!problem)
        problem = reader.finish();
    out.judged = judgeAnsweredOffer(&response, offerJson, problem);
    return out;
}

} // namespace coreflow
