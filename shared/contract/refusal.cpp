#include "refusal.h"

namespace coreflow::contract {

QJsonObject Refusal::toErrorJson() const
{
    return QJsonObject{{QStringLiteral("text"), text()},
                       {QStringLiteral("data"), QJsonObject{{QStringLiteral("name"), name}}}};
}

Refusal Refusal::fromErrorJson(const QJsonObject &error)
{
    const QString text = error.value(QStringLiteral("text")).toString();
    QString name = error.value(QStringLiteral("data")).toObject().value(QStringLiteral("name")).toString();
    QString reason = text;
    const qsizetype sep = text.indexOf(QStringLiteral(": "));
    if (name.isEmpty())
        name = sep > 0 ? text.left(sep) : text;
    if (sep > 0 && text.left(sep) == name)
        reason = text.mid(sep + 2);
    return Refusal{name, reason};
}

} // namespace coreflow::contract
