#include "service/forwarding/requestsession.h"

#include "shared/contract/refusalnames.h"

#include <QJsonDocument>

namespace coreflow {

using namespace contract;

Result<SessionBinding> readRequestSession(const Frame &frame, bool readable, const std::optional<QByteArrayView> &member)
{
    auto invalid = [](const QString &why) { return Refusal{QString(refusal::requestInvalid), why}; };
    if (readable) {
        if (!member)
            return invalid(QStringLiteral("field request.session is missing"));
        const QJsonDocument doc = member->startsWith('{') ? QJsonDocument::fromJson(member->toByteArray()) : QJsonDocument();
        if (!doc.isObject())
            return invalid(QStringLiteral("field request.session is not an object"));
        return SessionBinding::read(doc.object(), QStringLiteral("request.session"));
    }
    auto request = frame.requestObject();
    if (!request)
        return request.refusal();
    const QJsonValue session = request.value().value(QStringLiteral("session"));
    if (session.isUndefined())
        return invalid(QStringLiteral("field request.session is missing"));
    if (!session.isObject())
        return invalid(QStringLiteral("field request.session is not an object"));
    return SessionBinding::read(session.toObject(), QStringLiteral("request.session"));
}

} // namespace coreflow
