#include "service/bindings/publicationreceipt.h"

#include "shared/contract/exactkeyreader.h"
#include "shared/contract/refusalnames.h"

namespace coreflow {

using namespace contract;

Result<PublicationReceipt> PublicationReceipt::read(const QJsonObject &response)
{
    const QString name(refusal::publicationAnswerInvalid);
    ExactKeyReader outer(response, QStringLiteral("response"), name);
    const QJsonObject receipt = outer.requiredObject(QStringLiteral("receipt"));
    if (auto refused = outer.finish())
        return *refused;
    ExactKeyReader r(receipt, QStringLiteral("response.receipt"), name);
    PublicationReceipt read;
    read.mutationId = r.requiredString(QStringLiteral("mutationId"));
    read.organizationId = r.requiredString(QStringLiteral("organizationId"));
    read.clusterId = r.requiredString(QStringLiteral("clusterId"));
    read.serviceId = r.requiredString(QStringLiteral("serviceId"));
    read.bindingName = r.requiredString(QStringLiteral("bindingName"));
    read.envelopeDigest = r.requiredString(QStringLiteral("envelopeDigest"));
    read.acceptedAtMs = r.requiredInteger(QStringLiteral("acceptedAt"));
    if (!r.failed() && read.acceptedAtMs < 0)
        r.fail(QStringLiteral("acceptedAt"), QStringLiteral("is negative"));
    if (auto refused = r.finish())
        return *refused;
    return read;
}

} // namespace coreflow
