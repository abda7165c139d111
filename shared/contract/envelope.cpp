#include "shared/contract/envelope.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QScopeGuard>
#include <simdjson.h>
#include <sodium.h>

#include "shared/contract/refusalnames.h"
#include "shared/secret.h"

namespace coreflow::contract {

namespace {

Refusal invalid(const QString &reason) { return Refusal{QString(refusal::requestInvalid), reason}; }

QByteArrayView viewOf(const QByteArray &raw, std::string_view sv)
{
    // raw_json() views point into the parsed buffer, which is raw's own storage.
    const qsizetype offset = sv.data() - raw.constData();
    if (offset < 0 || offset + qsizetype(sv.size()) > raw.size())
        return {};
    QByteArrayView v(raw.constData() + offset, qsizetype(sv.size()));
    // raw_json may include trailing whitespace before the next token; trim it.
    while (!v.isEmpty() && (v.back() == ' ' || v.back() == '\n' || v.back() == '\r' || v.back() == '\t'))
        v.chop(1);
    return v;
}

// simdjson 3.0 has raw_json() on objects and arrays, raw_json_token() on scalars.
simdjson::simdjson_result<std::string_view> rawJsonOf(simdjson::ondemand::value &value)
{
    simdjson::ondemand::json_type type;
    if (auto err = value.type().get(type))
        return err;
    if (type == simdjson::ondemand::json_type::object) {
        simdjson::ondemand::object o;
        if (auto err = value.get_object().get(o))
            return err;
        return o.raw_json();
    }
    if (type == simdjson::ondemand::json_type::array) {
        simdjson::ondemand::array a;
        if (auto err = value.get_array().get(a))
            return err;
        return a.raw_json();
    }
    return value.raw_json_token();
}

// This thread's parsers (simdjson parsers are not thread-safe; one set per thread). Each refuses a
// document above the frame bound by itself (max_capacity), whatever its caller checked.
thread_local simdjson::dom::parser validatorParser{size_t(Envelope::maxFrameBytes)};
thread_local simdjson::ondemand::parser frameParser{size_t(Envelope::maxFrameBytes)};
thread_local simdjson::ondemand::parser memberParser{size_t(Envelope::maxFrameBytes)};

// A parser grows to the largest document it has seen (several bytes of index and tape per byte of
// JSON) and would keep that forever. After a document above retainedParserCapacityBytes it is
// replaced by a fresh one, which allocates again on its next use (docs/contract.md §3 "Parser memory").
template <typename Parser>
void releaseIfOversized(Parser &parser)
{
    if (parser.capacity() > size_t(Envelope::retainedParserCapacityBytes))
        parser = Parser(size_t(Envelope::maxFrameBytes));
}

Result<QJsonObject> objectOf(QByteArrayView raw, const QString &member)
{
    if (raw.isEmpty())
        return invalid(QStringLiteral("member %1 is missing").arg(member));
    QJsonParseError err{};
    // The copy QJsonDocument reads is wiped: a body may carry a token (docs/contract.md §19.4).
    QByteArray copy = raw.toByteArray();
    const QJsonDocument doc = QJsonDocument::fromJson(copy, &err);
    Secret::wipe(copy);
    if (err.error != QJsonParseError::NoError || !doc.isObject())
        return invalid(QStringLiteral("member %1 is not a JSON object").arg(member));
    return doc.object();
}

} // namespace


Result<QJsonObject> Frame::requestObject() const { return objectOf(request, QStringLiteral("request")); }
Result<QJsonObject> Frame::responseObject() const { return objectOf(response, QStringLiteral("response")); }

std::optional<QByteArrayView> Frame::requestMember(std::string_view key, bool *readable) const
{
    *readable = false;
    if (request.isEmpty() || raw.isEmpty())
        return std::nullopt;
    const char *begin = raw.constData();
    const char *data = request.constData();
    if (data < begin || data + request.size() > begin + raw.size())
        return std::nullopt; // not a view into raw (e.g. the "{}" default): nothing to find
    // parse() reserved SIMDJSON_PADDING bytes after raw, so the view may be read up to raw's capacity.
    const size_t capacity = size_t(begin + raw.capacity() - data);
    if (capacity < size_t(request.size()) + simdjson::SIMDJSON_PADDING)
        return std::nullopt;
    simdjson::ondemand::parser &parser = memberParser;
    const auto release = qScopeGuard([&parser] { releaseIfOversized(parser); }); // runs after doc is gone
    simdjson::ondemand::document doc;
    if (parser.iterate(simdjson::padded_string_view(data, size_t(request.size()), capacity)).get(doc) != simdjson::SUCCESS)
        return std::nullopt;
    simdjson::ondemand::object object;
    if (doc.get_object().get(object) != simdjson::SUCCESS)
        return std::nullopt;
    std::optional<QByteArrayView> found;
    bool complete = true;
    for (auto field : object) {
        std::string_view k;
        if (field.unescaped_key().get(k) != simdjson::SUCCESS) {
            complete = false;
            break;
        }
        if (k != key)
            continue; // on-demand skips the unread value
        simdjson::ondemand::value value;
        std::string_view rawValue;
        if (field.value().get(value) != simdjson::SUCCESS || rawJsonOf(value).get(rawValue) != simdjson::SUCCESS) {
            complete = false;
            break;
        }
        QByteArrayView v = viewOf(raw, rawValue);
        if (v.isEmpty()) {
            complete = false;
            break;
        }
        found = v;
    }
    *readable = complete;
    return complete ? found : std::nullopt;
}

qsizetype Envelope::heldParserCapacityBytes()
{
    return qsizetype(validatorParser.capacity() + frameParser.capacity() + memberParser.capacity());
}

void Envelope::wipeDecodedStrings(qsizetype documentBytes)
{
    // simdjson's document keeps decoded strings in string_buf, allocated for at least 5/3 of its
    // capacity plus padding, and writes them from its start; a document of documentBytes used at most
    // that much of it.
    simdjson::dom::document &doc = validatorParser.doc;
    if (!doc.string_buf || documentBytes <= 0 || size_t(documentBytes) > validatorParser.capacity())
        return;
    sodium_memzero(doc.string_buf.get(), 5 * size_t(documentBytes) / 3 + simdjson::SIMDJSON_PADDING);
}

Refusal Frame::errorRefusal() const
{
    auto obj = objectOf(error, QStringLiteral("error"));
    if (!obj)
        return Refusal{QStringLiteral("error-unreadable"), QStringLiteral("the peer's error member is not an object")};
    return Refusal::fromErrorJson(obj.value());
}

Result<Frame> Envelope::parse(QByteArray utf8)
{
    if (utf8.size() > maxFrameBytes)
        return Refusal{QString(refusal::frameTooLarge),
                       QStringLiteral("frame of %1 bytes exceeds %2 bytes").arg(utf8.size()).arg(maxFrameBytes)};
    Frame frame;
    frame.raw = std::move(utf8);
    const qsizetype len = frame.raw.size();
    frame.raw.reserve(len + qsizetype(simdjson::SIMDJSON_PADDING));
    frame.raw.detach();

    simdjson::padded_string_view input(frame.raw.constData(), size_t(len), size_t(frame.raw.capacity()));
    // Full validation first (the on-demand pass below is lazy about values it only slices).
    {
        simdjson::dom::parser &validator = validatorParser;
        const auto release = qScopeGuard([&validator] { releaseIfOversized(validator); });
        simdjson::dom::element validated;
        if (validator.parse(frame.raw.constData(), size_t(len), false).get(validated) != simdjson::SUCCESS)
            return invalid(QStringLiteral("the frame is not JSON"));
    }
    simdjson::ondemand::parser &parser = frameParser;
    const auto release = qScopeGuard([&parser] { releaseIfOversized(parser); }); // runs after doc is gone
    simdjson::ondemand::document doc;
    if (parser.iterate(input).get(doc) != simdjson::SUCCESS)
        return invalid(QStringLiteral("the frame is not JSON"));
    simdjson::ondemand::object root;
    if (doc.get_object().get(root) != simdjson::SUCCESS)
        return invalid(QStringLiteral("the frame is not a JSON object"));
    {
        // The whole object must be the whole frame (trailing whitespace aside).
        std::string_view whole;
        if (root.raw_json().get(whole) != simdjson::SUCCESS)
            return invalid(QStringLiteral("the frame is not valid JSON"));
        const qsizetype end = (whole.data() - frame.raw.constData()) + qsizetype(whole.size());
        for (qsizetype i = end; i < len; ++i) {
            const char ch = frame.raw.at(i);
            if (ch != ' ' && ch != '\n' && ch != '\r' && ch != '\t')
                return invalid(QStringLiteral("the frame has trailing content"));
        }
        if (root.reset().error() != simdjson::SUCCESS)
            return invalid(QStringLiteral("the frame is not valid JSON"));
    }

    bool haveMethod = false, haveCorrelation = false;
    for (auto field : root) {
        std::string_view key;
        if (field.unescaped_key().get(key) != simdjson::SUCCESS)
            return invalid(QStringLiteral("the frame is not valid JSON"));
        simdjson::ondemand::value value;
        if (field.value().get(value) != simdjson::SUCCESS)
            return invalid(QStringLiteral("the frame is not valid JSON"));
        if (key == "method") {
            std::string_view m;
            if (value.get_string().get(m) != simdjson::SUCCESS)
                return invalid(QStringLiteral("field method is not a string"));
            frame.method = QString::fromUtf8(m.data(), qsizetype(m.size()));
            haveMethod = true;
        } else if (key == "correlation") {
            simdjson::ondemand::object corr;
            if (value.get_object().get(corr) != simdjson::SUCCESS)
                return invalid(QStringLiteral("field correlation is not an object"));
            bool haveId = false, havePhase = false;
            for (auto cf : corr) {
                std::string_view ck;
                if (cf.unescaped_key().get(ck) != simdjson::SUCCESS)
                    return invalid(QStringLiteral("field correlation is not valid JSON"));
                if (ck == "id") {
                    std::string_view id;
                    if (cf.value().get_string().get(id) != simdjson::SUCCESS)
                        return invalid(QStringLiteral("field correlation.id is not a string"));
                    frame.correlationId = QString::fromUtf8(id.data(), qsizetype(id.size()));
                    haveId = true;
                } else if (ck == "phase") {
                    std::string_view ph;
                    if (cf.value().get_string().get(ph) != simdjson::SUCCESS)
                        return invalid(QStringLiteral("field correlation.phase is not a string"));
                    if (ph == "request")
                        frame.phase = Phase::Request;
                    else if (ph == "response")
                        frame.phase = Phase::Response;
                    else
                        return invalid(QStringLiteral("field correlation.phase is neither request nor response"));
                    havePhase = true;
                }
                // other correlation members are read over
            }
            if (!haveId)
                return invalid(QStringLiteral("field correlation.id is missing"));
            if (!havePhase)
                return invalid(QStringLiteral("field correlation.phase is missing"));
            haveCorrelation = true;
        } else {
            std::string_view raw;
            if (rawJsonOf(value).get(raw) != simdjson::SUCCESS)
                return invalid(QStringLiteral("field %1 is not valid JSON").arg(QString::fromUtf8(key.data(), qsizetype(key.size()))));
            QByteArrayView v = viewOf(frame.raw, raw);
            const bool isNull = v == QByteArrayView("null");
            if (key == "request") {
                if (!v.startsWith('{'))
                    return invalid(QStringLiteral("field request is not an object"));
                frame.request = v;
            } else if (key == "response") {
                if (!isNull && !v.startsWith('{'))
                    return invalid(QStringLiteral("field response is not an object"));
                frame.response = isNull ? QByteArrayView() : v;
            } else if (key == "error") {
                if (!isNull && !v.startsWith('{'))
                    return invalid(QStringLiteral("field error is not an object"));
                frame.error = isNull ? QByteArrayView() : v;
            } else if (key == "retry") {
                frame.retry = isNull ? QByteArrayView() : v;
            }
            // authInfo, localData, serverData and anything else: read over, never forwarded.
        }
    }
    if (!haveMethod)
        return invalid(QStringLiteral("field method is missing"));
    if (!haveCorrelation)
        return invalid(QStringLiteral("field correlation is missing"));
    if (frame.request.isEmpty())
        frame.request = QByteArrayView("{}");
    return frame;
}

QByteArray Envelope::jsonString(QStringView text)
{
    // Fast path for what travels on every frame (method names, correlation ids): printable ASCII with
    // nothing to escape is its own JSON text. Anything else takes the QJsonDocument path below.
    bool plain = true;
    for (const QChar ch : text) {
        const char16_t u = ch.unicode();
        if (u < 0x20 || u > 0x7e || u == u'"' || u == u'\\') {
            plain = false;
            break;
        }
    }
    if (plain) {
        QByteArray quoted;
        quoted.reserve(text.size() + 2);
        quoted += '"';
        quoted += QStringView(text).toLatin1();
        quoted += '"';
        return quoted;
    }
    QByteArray out = QJsonDocument(QJsonArray{text.toString()}).toJson(QJsonDocument::Compact);
    return out.mid(1, out.size() - 2);
}

QByteArray Envelope::compact(const QJsonObject &object)
{
    return QJsonDocument(object).toJson(QJsonDocument::Compact);
}

namespace {
QByteArray head(QStringView method, QByteArrayView rawRequest)
{
    QByteArray out;
    out.reserve(rawRequest.size() + 128);
    out += "{\"method\":";
    out += Envelope::jsonString(method);
    out += ",\"request\":";
    out += rawRequest.isEmpty() ? QByteArrayView("{}") : rawRequest;
    return out;
}
void tail(QByteArray &out, QStringView correlationId, const char *phase)
{
    out += ",\"correlation\":{\"id\":";
    out += Envelope::jsonString(correlationId);
    out += ",\"phase\":\"";
    out += phase;
    out += "\"}}";
}
} // namespace

QByteArray Envelope::request(QStringView method, QStringView correlationId, QByteArrayView rawRequest)
{
    QByteArray out = head(method, rawRequest);
    tail(out, correlationId, "request");
    return out;
}

QByteArray Envelope::response(QStringView method, QStringView correlationId, QByteArrayView rawRequest,
                              QByteArrayView rawResponse)
{
    QByteArray out = head(method, rawRequest);
    out += ",\"response\":";
    out += rawResponse.isEmpty() ? QByteArrayView("null") : rawResponse;
    tail(out, correlationId, "response");
    return out;
}

QByteArray Envelope::relayedError(QStringView method, QStringView correlationId, QByteArrayView rawRequest,
                                  QByteArrayView rawError, QByteArrayView rawRetry)
{
    QByteArray out = head(method, rawRequest);
    out += ",\"response\":null";
    if (!rawError.isEmpty()) {
        out += ",\"error\":";
        out += rawError;
    }
    if (!rawRetry.isEmpty()) {
        out += ",\"retry\":";
        out += rawRetry;
    }
    tail(out, correlationId, "response");
    return out;
}

QByteArray Envelope::refusal(QStringView method, QStringView correlationId, QByteArrayView rawRequest,
                             const Refusal &r)
{
    return relayedError(method, correlationId, rawRequest, compact(r.toErrorJson()), {});
}

} // namespace coreflow::contract
