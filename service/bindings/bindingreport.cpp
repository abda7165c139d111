#include "service/bindings/bindingreport.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace coreflow {

QByteArray BindingReport::toJson() const
{
    QJsonArray list;
    for (const auto &e : endpoints) {
        QJsonObject o{{QStringLiteral("name"), e.name},
                      {QStringLiteral("capability"), e.capability},
                      {QStringLiteral("protocol"), e.protocol},
                      {QStringLiteral("networkAlias"), e.networkAlias}};
        if (e.port)
            o.insert(QStringLiteral("port"), *e.port);
        list.append(o);
    }
    const QJsonObject o{{QStringLiteral("nodeId"), nodeId ? QJsonValue(*nodeId) : QJsonValue(QJsonValue::Null)},
                        {QStringLiteral("serviceId"), serviceId},
                        {QStringLiteral("bindingName"), bindingName},
                        {QStringLiteral("capability"), capability},
                        {QStringLiteral("status"), status},
                        {QStringLiteral("statusReason"), statusReason ? QJsonValue(*statusReason) : QJsonValue(QJsonValue::Null)},
                        {QStringLiteral("endpoints"), list}};
    return QJsonDocument(o).toJson(QJsonDocument::Compact);
}

} // namespace coreflow
