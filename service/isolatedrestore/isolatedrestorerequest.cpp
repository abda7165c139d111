#include "service/isolatedrestore/isolatedrestorerequest.h"

#include "service/isolatedrestore/jsonduplicatekeys.h"

#include "shared/contract/exactkeyreader.h"
#include "shared/contract/ids.h"
#include "shared/contract/refusalnames.h"
#include "shared/contract/refusalquote.h"

#include <QJsonDocument>
#include <simdjson.h>

namespace coreflow {

using namespace contract;

namespace {

const QString kInvalid = QString(refusal::restoreControlInvalid);
const QString kRoot = QStringLiteral("request");

Refusal invalid(const QString &reason) { return Refusal{kInvalid, reason}; }

// The control member's raw JSON (trailing whitespace trimmed), or nullopt.
std::optional<QByteArray> controlBytes(const simdjson::padded_string &padded)
{
    simdjson::ondemand::parser parser;
    simdjson::ondemand::document doc;
    simdjson::ondemand::object root;
    if (parser.iterate(padded).get(doc) != simdjson::SUCCESS || doc.get_object().get(root) != simdjson::SUCCESS)
        return std::nullopt;
    simdjson::ondemand::object control;
    if (root.find_field_unordered("control").get_object().get(control) != simdjson::SUCCESS)
        return std::nullopt;
    std::string_view raw;
    if (control.raw_json().get(raw) != simdjson::SUCCESS)
        return std::nullopt;
    while (!raw.empty() && (raw.back() == ' ' || raw.back() == '\n' || raw.back() == '\r' || raw.back() == '\t'))
        raw.remove_suffix(1);
    return QByteArray(raw.data(), qsizetype(raw.size()));
}

} // namespace

Result<IsolatedRestoreRequest> IsolatedRestoreRequest::read(QByteArrayView requestJson, const QString &operation)
{
    // The members §14 names; a duplicate inside any other member is reported without its name.
    static const QSet<QString> nameable{QStringLiteral("nodeId"), QStringLiteral("control"), QStringLiteral("operation"),
                                        QStringLiteral("restoreId"), QStringLiteral("grant"), QStringLiteral("expectedRevision"),
                                        QStringLiteral("manifest"), QStringLiteral("objects"), QStringLiteral("key"),
                                        QStringLiteral("sizeBytes"), QStringLiteral("sha256"), QStringLiteral("chunk"),
                                        QStringLiteral("objectKey"), QStringLiteral("offset"), QStringLiteral("data"),
                                        QStringLiteral("chunkSha256")};
    const JsonDuplicateKeys::Finding keys = JsonDuplicateKeys::find(requestJson, kRoot, nameable);
    if (keys.verdict == JsonDuplicateKeys::Verdict::Unreadable || !keys.rootIsObject)
        return invalid(QStringLiteral("field request is not one readable JSON object"));
    if (keys.verdict == JsonDuplicateKeys::Verdict::Duplicate)
        return invalid(QStringLiteral("field %1 names a key more than once").arg(keys.path));
    QJsonParseError error{};
    const QJsonDocument document = QJsonDocument::fromJson(requestJson.toByteArray(), &error);
    if (error.error != QJsonParseError::NoError || !document.isObject())
        return invalid(QStringLiteral("field request is not a JSON object"));
    const QJsonObject body = document.object();
    for (auto it = body.begin(); it != body.end(); ++it)
        if (it.key() != QLatin1String("nodeId") && it.key() != QLatin1String("control"))
            return invalid(RefusalQuote::unnamedMember(kRoot));
    ExactKeyReader r(body, kRoot, kInvalid);
    IsolatedRestoreRequest out;
    out.nodeId = r.requiredString(QStringLiteral("nodeId"));
    const QJsonObject control = r.requiredObject(QStringLiteral("control"));
    if (auto refused = r.finish())
        return *refused;
    if (!isId(out.nodeId))
        return invalid(QStringLiteral("field request.nodeId %1").arg(notAnIdReason()));
    auto judged = IsolatedRestoreControl::read(control, kRoot + QStringLiteral(".control"), operation);
    if (!judged)
        return judged.refusal();
    out.judged = std::move(judged).value();
    const simdjson::padded_string padded(requestJson.data(), size_t(requestJson.size()));
    auto bytes = controlBytes(padded);
    if (!bytes)
        return invalid(QStringLiteral("field request.control is not readable JSON"));
    out.control = std::move(*bytes);
    return out;
}

} // namespace coreflow
