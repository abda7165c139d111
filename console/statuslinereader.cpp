#include "console/statuslinereader.h"

#include <QJsonDocument>
#include <QJsonObject>

#include <cmath>

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
    // atMs is an integer of Unix ms (§18); a number that is none within qint64 is refused, never
    // cast (a cast of an out-of-range double is undefined behaviour; found by fuzz_status_lines).
    const QJsonValue atMs = msg.value(QStringLiteral("atMs"));
    const double at = atMs.toDouble();
    constexpr double kTwoTo63 = 9223372036854775808.0;
    if (atMs.isDouble() && !(std::trunc(at) == at && at >= -kTwoTo63 && at < kTwoTo63))
        return protocolError(QStringLiteral("protocol error: event atMs is not an integer of Unix ms"));
    out.kind = StatusLine::Kind::Event;
    out.event = StatusEvent{qint64(at), msg.value(QStringLiteral("kind")).toString(), msg.value(QStringLiteral("line")).toString()};
    return out;
}

} // namespace coreflow::console
