#pragma once
// Helpers the JSON fuzz targets share: the input as a JSON object (as the relay reads a body with
// QJsonDocument), and the checks every exact-key reader's refusal must pass (docs/contract.md
// "Reading bodies", "Refusals"): a name and a reason, and a reason that never quotes secret material.
#include "shared/contract/refusal.h"

#include <QByteArray>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QStringList>

#include <cstdio>
#include <cstdlib>
#include <optional>

namespace coreflow::fuzz {

[[noreturn]] inline void fuzzFailure(const char *target, const char *what)
{
    std::fprintf(stderr, "%s: %s\n", target, what);
    std::abort();
}

inline std::optional<QJsonObject> jsonObjectOf(const uint8_t *data, size_t size)
{
    QJsonParseError err{};
    const QJsonDocument doc = QJsonDocument::fromJson(QByteArray(reinterpret_cast<const char *>(data), qsizetype(size)), &err);
    if (err.error != QJsonParseError::NoError || !doc.isObject())
        return std::nullopt;
    return doc.object();
}

// Every string value under key names in `keys`, at any depth (the secrets of a body).
inline void collectStringsUnder(const QJsonValue &value, const QStringList &keys, QStringList &out)
{
    if (value.isObject()) {
        const QJsonObject o = value.toObject();
        for (auto it = o.begin(); it != o.end(); ++it) {
            if (keys.contains(it.key()) && it.value().isString())
                out.append(it.value().toString());
            collectStringsUnder(it.value(), keys, out);
        }
    } else if (value.isArray()) {
        for (const QJsonValue &v : value.toArray())
            collectStringsUnder(v, keys, out);
    }
}

// One fuzz input as a JSON object with the strings a refusal must never quote: every string under
// one of secretKeys (nullopt when the input is not a JSON object).
struct ObjectWithQuiet {
    QJsonObject object;
    QStringList quiet;
};
inline std::optional<ObjectWithQuiet> objectWithQuietStrings(const uint8_t *data, size_t size, const QStringList &secretKeys)
{
    auto object = jsonObjectOf(data, size);
    if (!object)
        return std::nullopt;
    ObjectWithQuiet out{*object, {}};
    collectStringsUnder(out.object, secretKeys, out.quiet);
    return out;
}

// A refusal has a name and a reason, and its reason and data quote none of `secrets` (only strings
// of 16 characters or more are checked, so a secret cannot match a reason's own words by chance).
inline void checkRefusal(const char *target, const contract::Refusal &refusal, const QStringList &secrets = {})
{
    if (refusal.name.isEmpty() || refusal.reason.isEmpty())
        fuzzFailure(target, "a refusal without a name or a reason");
    const QString data = QString::fromUtf8(QJsonDocument(refusal.data).toJson(QJsonDocument::Compact));
    for (const QString &secret : secrets)
        if (secret.size() >= 16 && (refusal.reason.contains(secret) || data.contains(secret)))
            fuzzFailure(target, "a refusal quotes secret material");
}

} // namespace coreflow::fuzz
