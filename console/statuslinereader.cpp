#include "console/statuslinereader.h"

#include <QJsonDocument>
#include <QJsonObject>

namespace coreflow::console {

namespace {
StatusLine protocolError(const QString &reason)
{
    StatusLine out;
    out.kind = StatusLine::Kind::ProtocolError;
    out.reason = reason;
    return out;
}
} // namespace

StatusLine StatusLineReader::read(const QByteArray &line)
{
    StatusLine out;
    if (line.trimmed().isEmpty())
        return out;
    QJsonParseError err{};
    const QJsonDocument doc = QJsonDocument::fromJson(line, &err);
    if (err.error != QJsonParseError::NoError || !doc.isObject())
        return protocolError(QStringLiteral("protocol error: the peer sent a line that is not a JSON object"));
    const QJsonObject msg = doc.object();
    const QString type = msg.value(QStringLiteral("type")).toString();
    if (type == QLatin1String("refusal")) {
        out.kind = StatusLine::Kind::Refusal;
        out.refusalName = msg.value(QStringLiteral("name")).toString();
        out.reason = msg.value(QStringLiteral("reason")).toString();
        return out;
    }
    if (type != QLatin1String("snapshot") && type != QLatin1String("event"))
        return protocolError(QStringLiteral("protocol error: unknown message type"));
    if (msg.value(QStringLiteral("version")).toInt(-1) != status::statusProtocolVersion)
        return protocolError(QStringLiteral("protocol error: %1 version %2 not spoken (this console speaks %3)")
                                 .arg(type)
                                 .arg(msg.value(QStringLiteral("version")).toInt(-1))
                                 .arg(status::statusProtocolVersion));
    if (type == QLatin1String("snapshot")) {
        const QJsonValue statusJson = msg.value(QStringLiteral("status"));
        if (!statusJson.isObject())
            return protocolError(QStringLiteral("protocol error: snapshot without a status object"));
        out.kind = StatusLine::Kind::Snapshot;
        out.status = status::RelayStatus::fromJson(statusJson.toObject());
        return out;
    }
    out.kind = StatusLine::Kind::Event;
    out.event = StatusEvent{qint64(msg.value(QStringLiteral("atMs")).toDouble()), msg.value(QStringLiteral("kind")).toString(),
                            msg.value(QStringLiteral("line")).toString()};
    return out;
}

} // namespace coreflow::console
