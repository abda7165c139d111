#include "service/statussocket/statushelloreader.h"

#include "shared/contract/refusalquote.h"
#include "shared/status/relaystatus.h"

#include <QJsonDocument>
#include <QJsonObject>

namespace coreflow {

namespace {
QString describeType(const QJsonValue &type)
{
    if (!type.isString())
        return QStringLiteral("a message without a type");
    const QString t = type.toString();
    // The type is echoed only when it is a plain name (RefusalQuote), so a refusal never quotes client input.
    return contract::RefusalQuote::isPlain(t) ? QStringLiteral("message type \"%1\"").arg(t) : QStringLiteral("an unknown message type");
}

StatusHelloOutcome refused(const QString &reason) { return {StatusHelloOutcome::Kind::Refuse, reason, false}; }
} // namespace

StatusHelloOutcome StatusHelloReader::read(const QByteArray &rawLine, bool alreadyHelloed)
{
    const QByteArray line = rawLine.trimmed();
    if (line.isEmpty())
        return {};
    QJsonParseError err{};
    const QJsonDocument doc = QJsonDocument::fromJson(line, &err);
    if (err.error != QJsonParseError::NoError || !doc.isObject())
        return refused(QStringLiteral("not a JSON object; this socket is read-only and answers only hello"));
    const QJsonObject msg = doc.object();
    const QJsonValue type = msg.value(QStringLiteral("type"));
    if (type.toString() != QLatin1String("hello"))
        return refused(QStringLiteral("%1 is not served; this socket is read-only and answers only hello").arg(describeType(type)));
    if (alreadyHelloed)
        return refused(QStringLiteral("hello already received on this connection"));
    const QJsonValue version = msg.value(QStringLiteral("version"));
    if (!version.isDouble() || version.toDouble() != double(status::statusProtocolVersion))
        return refused(QStringLiteral("hello version not spoken; this relay speaks version %1").arg(status::statusProtocolVersion));
    const QJsonValue subscribe = msg.value(QStringLiteral("subscribe"));
    if (!subscribe.isUndefined() && !subscribe.isBool())
        return refused(QStringLiteral("hello field subscribe must be true or false"));
    return {StatusHelloOutcome::Kind::Hello, QString(), subscribe.toBool(false)};
}

} // namespace coreflow
