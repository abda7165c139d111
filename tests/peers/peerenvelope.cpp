#include "tests/peers/peerenvelope.h"

#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonParseError>

namespace coreflow::peers {

namespace {

PeerRefusal invalid(const QString &what) { return PeerRefusal{QStringLiteral("request-invalid"), what}; }

bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// A cursor over text already validated as JSON: it only needs to find where each value ends.
struct Scanner {
    const char *at;
    const char *end;

    void skipSpace()
    {
        while (at < end && isSpace(*at))
            ++at;
    }
    void skipString() // at points at the opening quote
    {
        for (++at; at < end; ++at) {
            if (*at == '\\')
                ++at;
            else if (*at == '"') {
                ++at;
                return;
            }
        }
    }
    void skipValue()
    {
        if (at >= end)
            return;
        if (*at == '"') {
            skipString();
            return;
        }
        if (*at == '{' || *at == '[') {
            int depth = 0;
            while (at < end) {
                const char c = *at;
                if (c == '"') {
                    skipString();
                    continue;
                }
                if (c == '{' || c == '[')
                    ++depth;
                else if (c == '}' || c == ']')
                    --depth;
                ++at;
                if (depth == 0)
                    return;
            }
            return;
        }
        while (at < end && !isSpace(*at) && *at != ',' && *at != '}' && *at != ']')
            ++at;
    }
};

QString keyOf(QByteArrayView quoted)
{
    if (!quoted.contains('\\'))
        return QString::fromUtf8(quoted.sliced(1, quoted.size() - 2));
    const QByteArray wrapped = "[" + quoted.toByteArray() + "]";
    return QJsonDocument::fromJson(wrapped).array().at(0).toString();
}

// The exact bytes of every top-level member's value (the last occurrence of a repeated key).
QHash<QString, QByteArrayView> topLevelMembers(const QByteArray &raw)
{
    QHash<QString, QByteArrayView> members;
    Scanner s{raw.constData(), raw.constData() + raw.size()};
    s.skipSpace();
    if (s.at >= s.end || *s.at != '{')
        return members;
    ++s.at;
    for (;;) {
        s.skipSpace();
        if (s.at >= s.end || *s.at == '}')
            break;
        const char *keyBegin = s.at;
        s.skipString();
        const QString key = keyOf(QByteArrayView(keyBegin, s.at - keyBegin));
        s.skipSpace();
        ++s.at; // ':'
        s.skipSpace();
        const char *valueBegin = s.at;
        s.skipValue();
        members.insert(key, QByteArrayView(valueBegin, s.at - valueBegin));
        s.skipSpace();
        if (s.at < s.end && *s.at == ',')
            ++s.at;
    }
    return members;
}

QByteArrayView unlessNull(QByteArrayView value) { return value == "null" ? QByteArrayView() : value; }

QByteArray head(QStringView method, QByteArrayView rawRequest)
{
    return "{\"method\":" + PeerEnvelope::jsonString(method) + ",\"request\":"
           + (rawRequest.isEmpty() ? QByteArray("{}") : rawRequest.toByteArray());
}

QByteArray tail(QStringView correlationId, QByteArrayView phase)
{
    return ",\"correlation\":{\"id\":" + PeerEnvelope::jsonString(correlationId) + ",\"phase\":\""
           + phase.toByteArray() + "\"}}";
}

} // namespace

PeerResult<PeerFrame> PeerEnvelope::parse(const QByteArray &utf8)
{
    QJsonParseError error{};
    const QJsonDocument document = QJsonDocument::fromJson(utf8, &error);
    if (error.error != QJsonParseError::NoError)
        return invalid(QStringLiteral("the frame is not JSON"));
    if (!document.isObject())
        return invalid(QStringLiteral("the frame is not a JSON object"));
    const QJsonObject object = document.object();
    const QJsonValue method = object.value(QStringLiteral("method"));
    if (!method.isString())
        return invalid(QStringLiteral("member method is missing or not a string"));
    const QJsonObject correlation = object.value(QStringLiteral("correlation")).toObject();
    const QJsonValue id = correlation.value(QStringLiteral("id"));
    if (!id.isString())
        return invalid(QStringLiteral("member correlation.id is missing or not a string"));
    const QString phase = correlation.value(QStringLiteral("phase")).toString();
    if (phase != QLatin1StringView("request") && phase != QLatin1StringView("response"))
        return invalid(QStringLiteral("member correlation.phase is neither request nor response"));
    if (object.contains(QStringLiteral("request")) && !object.value(QStringLiteral("request")).isObject())
        return invalid(QStringLiteral("member request is not an object"));

    PeerFrame frame;
    frame.raw = utf8;
    frame.method = method.toString();
    frame.correlationId = id.toString();
    frame.phase = phase == QLatin1StringView("request") ? Phase::Request : Phase::Response;
    const QHash<QString, QByteArrayView> members = topLevelMembers(frame.raw);
    frame.request = members.value(QStringLiteral("request"), QByteArrayView("{}"));
    frame.response = unlessNull(members.value(QStringLiteral("response")));
    frame.error = unlessNull(members.value(QStringLiteral("error")));
    frame.retry = unlessNull(members.value(QStringLiteral("retry")));
    return frame;
}

QByteArray PeerEnvelope::request(QStringView method, QStringView correlationId, QByteArrayView rawRequest)
{
    return head(method, rawRequest) + tail(correlationId, "request");
}

QByteArray PeerEnvelope::response(QStringView method, QStringView correlationId, QByteArrayView rawRequest,
                                  QByteArrayView rawResponse)
{
    return head(method, rawRequest) + ",\"response\":"
           + (rawResponse.isEmpty() ? QByteArray("null") : rawResponse.toByteArray()) + tail(correlationId, "response");
}

QByteArray PeerEnvelope::error(QStringView method, QStringView correlationId, QByteArrayView rawRequest,
                               QByteArrayView rawError, QByteArrayView rawRetry)
{
    QByteArray out = head(method, rawRequest) + ",\"response\":null";
    if (!rawError.isEmpty())
        out += ",\"error\":" + rawError.toByteArray();
    if (!rawRetry.isEmpty())
        out += ",\"retry\":" + rawRetry.toByteArray();
    return out + tail(correlationId, "response");
}

QJsonObject PeerEnvelope::errorJson(const PeerRefusal &refusal)
{
    QJsonObject data = refusal.data;
    data.insert(QStringLiteral("name"), refusal.name);
    return {{QStringLiteral("text"), refusal.name + QStringLiteral(": ") + refusal.reason},
            {QStringLiteral("data"), data}};
}

QByteArray PeerEnvelope::compact(const QJsonObject &object) { return QJsonDocument(object).toJson(QJsonDocument::Compact); }

QByteArray PeerEnvelope::jsonString(QStringView text)
{
    const QByteArray array = QJsonDocument(QJsonArray{text.toString()}).toJson(QJsonDocument::Compact);
    return array.sliced(1, array.size() - 2);
}

} // namespace coreflow::peers
