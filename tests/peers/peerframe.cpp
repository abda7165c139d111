#include "tests/peers/peerframe.h"

#include <QJsonDocument>
#include <QJsonParseError>

namespace coreflow::peers {

namespace {

PeerResult<QJsonObject> objectOf(QByteArrayView raw, const QString &member)
{
    QJsonParseError error{};
    const QJsonDocument document = QJsonDocument::fromJson(raw.toByteArray(), &error);
    if (raw.isEmpty() || error.error != QJsonParseError::NoError || !document.isObject())
        return PeerRefusal{QStringLiteral("request-invalid"),
                                 QStringLiteral("member %1 is not a JSON object").arg(member)};
    return document.object();
}

} // namespace

PeerResult<QJsonObject> PeerFrame::requestObject() const { return objectOf(request, QStringLiteral("request")); }

PeerResult<QJsonObject> PeerFrame::responseObject() const { return objectOf(response, QStringLiteral("response")); }

PeerRefusal PeerFrame::errorRefusal() const
{
    const QJsonObject object = QJsonDocument::fromJson(error.toByteArray()).object();
    const QString text = object.value(QStringLiteral("text")).toString();
    QJsonObject data = object.value(QStringLiteral("data")).toObject();
    QString name = data.take(QStringLiteral("name")).toString();
    const qsizetype separator = text.indexOf(QStringLiteral(": "));
    if (name.isEmpty())
        name = separator >= 0 ? text.left(separator) : text;
    const QString prefix = name + QStringLiteral(": ");
    const QString reason = text.startsWith(prefix) ? text.mid(prefix.size()) : text;
    return PeerRefusal{name, reason, data};
}

} // namespace coreflow::peers
