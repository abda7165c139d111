#include "service/ingress/ingressregistration.h"

#include "shared/contract/exactkeyreader.h"
#include "shared/contract/ids.h"
#include "shared/contract/offers.h"

namespace coreflow {

using namespace contract;

Result<IngressRegistration> IngressRegistration::read(const QJsonObject &request, const QString &path)
{
    ExactKeyReader r(request, path);
    const QJsonObject offer = r.requiredObject(QStringLiteral("offer"));
    IngressRegistration out;
    out.m_ingressId = r.requiredString(QStringLiteral("ingressId"));
    out.m_nodeId = r.requiredString(QStringLiteral("nodeId"));
    const QJsonValue authorization = r.requiredAny(QStringLiteral("authorization"));
    if (!r.failed()) {
        if (!authorization.isString())
            r.fail(QStringLiteral("authorization"), QStringLiteral("is not a string"));
        else if (authorization.toString().isEmpty())
            r.fail(QStringLiteral("authorization"), QStringLiteral("is empty"));
    }
    const QString idProblem = notAnIdReason();
    if (!r.failed() && !isId(out.m_ingressId))
        r.fail(QStringLiteral("ingressId"), idProblem);
    if (!r.failed() && !isId(out.m_nodeId))
        r.fail(QStringLiteral("nodeId"), idProblem);
    if (auto refusal = r.finish()) {
        // An unknown member is named by its path only: a body that carries a bearer is not repeated.
        if (refusal->reason.endsWith(QLatin1String(" is unknown")))
            return Refusal{refusal->name, QStringLiteral("field %1 has a member the contract does not name").arg(path)};
        return *refusal;
    }
    auto readOffer = ProtocolOffer::read(offer, r.pathOf(QStringLiteral("offer")));
    if (!readOffer) {
        if (readOffer.refusal().reason.endsWith(QLatin1String(" is unknown")))
            return Refusal{readOffer.refusal().name,
                           QStringLiteral("field %1 has a member the contract does not name").arg(r.pathOf(QStringLiteral("offer")))};
        return readOffer.refusal();
    }
    return out;
}

} // namespace coreflow
