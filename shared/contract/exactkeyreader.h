#pragma once
// ExactKeyReader: reads one JSON object of the contract exactly. A missing key, an unknown key or a
// value of the wrong type is a named refusal naming the field by its path ("session.nodeId"), never a
// crash and never a guess. docs/contract.md "Reading bodies".
//
// Usage:
//   ExactKeyReader r(object, QStringLiteral("session"));
//   binding.nodeId = r.requiredString("nodeId");
//   binding.generation = r.requiredInteger("generation");
//   if (auto refusal = r.finish()) return *refusal;   // request-invalid: field session.x is unknown
//
// The first problem wins; later reads return defaults. Values are reasons-safe: a refusal names the
// field and the expected type, never the value it found. An unknown key is named only when it is a
// plain name of at most 64 characters (RefusalQuote); any other key is reported as "field <path> has a
// member the contract does not name", so a reason never repeats control characters, quotes or a long
// name the peer chose (docs/contract.md §1 "Exact keys").
#include "shared/contract/refusal.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QSet>
#include <optional>

namespace coreflow::contract {

class ExactKeyReader {
public:
    ExactKeyReader(const QJsonObject &object, QString path, QString refusalName = {});

    QString requiredString(const QString &key);
    std::optional<QString> optionalString(const QString &key);
    qint64 requiredInteger(const QString &key);
    std::optional<qint64> optionalInteger(const QString &key);
    bool requiredBool(const QString &key);
    QJsonObject requiredObject(const QString &key);
    // An object or null; nullopt when null.
    std::optional<QJsonObject> nullableObject(const QString &key);
    std::optional<QJsonObject> optionalObject(const QString &key);
    QJsonArray requiredArray(const QString &key);
    QJsonValue requiredAny(const QString &key);
    // Marks a key as known without reading it (a member that is carried, not read).
    void allow(const QString &key);

    QString pathOf(const QString &key) const;
    bool failed() const { return m_refusal.has_value(); }
    // Checks for unknown keys and returns the first problem, if any.
    std::optional<Refusal> finish();
    // Records a problem found by the caller (e.g. a value out of range).
    void fail(const QString &key, const QString &problem);

private:
    QJsonValue take(const QString &key, bool required);
    void wrongType(const QString &key, const char *expected);

    QJsonObject m_object;
    QString m_path;
    QString m_refusalName;
    QSet<QString> m_seen;
    std::optional<Refusal> m_refusal;
};

} // namespace coreflow::contract
