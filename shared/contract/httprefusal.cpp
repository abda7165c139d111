#include "shared/contract/httprefusal.h"

#include "shared/contract/httprefusalbody.h"

namespace coreflow::contract {

HttpRefusal httpRefusal(int status, QLatin1StringView name, const QByteArray &reason, const QByteArray &failureClass,
                        const QList<QPair<QByteArray, QByteArray>> &extraHeaders)
{
    HttpRefusal refusal;
    refusal.status = status;
    refusal.body = httpRefusalBody(QLatin1StringView(status >= 500 ? "UNAVAILABLE" : "UNSUPPORTED"), name, reason,
                                   failureClass);
    refusal.headers = {{QByteArrayLiteral("Content-Type"), QByteArrayLiteral("application/json")},
                       {QByteArrayLiteral("Content-Length"), QByteArray::number(refusal.body.size())},
                       {QByteArrayLiteral("Docker-Distribution-API-Version"), QByteArrayLiteral("registry/2.0")}};
    refusal.headers += extraHeaders;
    return refusal;
}

} // namespace coreflow::contract
