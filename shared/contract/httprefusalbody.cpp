#include "shared/contract/httprefusalbody.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace coreflow::contract {

QByteArray httpRefusalBody(QLatin1StringView code, QLatin1StringView name, const QByteArray &reason,
                           const QByteArray &failureClass)
{
    QJsonObject detail{{QStringLiteral("name"), QString(name)}};
    if (!failureClass.isEmpty())
        detail.insert(QStringLiteral("class"), QString::fromLatin1(failureClass));
    QString message = QString(name);
    if (!reason.isEmpty())
        message += QStringLiteral(": ") + QString::fromUtf8(reason);
    const QJsonObject error{{QStringLiteral("code"), QString(code)},
                            {QStringLiteral("message"), message},
                            {QStringLiteral("detail"), detail}};
    const QJsonObject root{{QStringLiteral("errors"), QJsonArray{error}}};
    return QJsonDocument(root).toJson(QJsonDocument::Compact);
}

} // namespace coreflow::contract
