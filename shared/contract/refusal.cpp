#include "shared/contract/refusal.h"

namespace coreflow::contract {

QJsonObject Refusal::toErrorJson() const
{
    QJsonObject dataJson = data;
    dataJson.insert(QStringLiteral("name"), name);
    return QJsonObject{{QStringLiteral("text"), text()}, {QStringLiteral("data"), dataJson}};
}

Refusal Refusal::fromErrorJson(const QJsonObject &error)
{
    const QString text = error.value(QStringLiteral("text")).toString();
    QJsonObject data = error.value(QStringLiteral("data")).toObject();
    QString name = data.value(QStringLiteral("name")).toString();
    data.remove(QStringLiteral("name"));
    QString reason = text;
    const qsizetype sep = text.indexOf(QStringLiteral(": "));
    if (name.isEmpty())
        name = sep > 0 ? text.left(sep) : text;
    if (sep > 0 && text.left(sep) == name)
        reason = text.mid(sep + 2);
    return Refusal{name, reason, data};
}

} // namespace coreflow::contract
