#include "shared/contract/exactkeyreader.h"

#include "shared/contract/refusalnames.h"
#include "shared/contract/refusalquote.h"

#include <cmath>

namespace coreflow::contract {

ExactKeyReader::ExactKeyReader(const QJsonObject &object, QString path, QString refusalName)
    : m_object(object), m_path(std::move(path)),
      m_refusalName(refusalName.isEmpty() ? QString(refusal::requestInvalid) : std::move(refusalName))
{
}

QString ExactKeyReader::pathOf(const QString &key) const
{
    return m_path.isEmpty() ? key : m_path + QLatin1Char('.') + key;
}

void ExactKeyReader::fail(const QString &key, const QString &problem)
{
    if (!m_refusal)
        m_refusal = Refusal{m_refusalName, QStringLiteral("field %1 %2").arg(pathOf(key), problem)};
}

void ExactKeyReader::wrongType(const QString &key, const char *expected)
{
    fail(key, QStringLiteral("is not %1").arg(QLatin1String(expected)));
}

QJsonValue ExactKeyReader::take(const QString &key, bool required)
{
    m_seen.insert(key);
    const auto it = m_object.constFind(key);
    if (it == m_object.constEnd()) {
        if (required)
            fail(key, QStringLiteral("is missing"));
        return QJsonValue(QJsonValue::Undefined);
    }
    return it.value();
}

QString ExactKeyReader::requiredString(const QString &key)
{
    const QJsonValue v = take(key, true);
    if (v.isUndefined())
        return {};
    if (!v.isString()) {
        wrongType(key, "a string");
        return {};
    }
    return v.toString();
}

std::optional<QString> ExactKeyReader::optionalString(const QString &key)
{
    const QJsonValue v = take(key, false);
    if (v.isUndefined())
        return std::nullopt;
    if (!v.isString()) {
        wrongType(key, "a string");
        return std::nullopt;
    }
    return v.toString();
}

namespace {
bool asInteger(const QJsonValue &v, qint64 *out)
{
    if (!v.isDouble())
        return false;
    const double d = v.toDouble();
    if (!std::isfinite(d) || std::floor(d) != d || std::fabs(d) > 9007199254740991.0)
        return false;
    *out = qint64(d);
    return true;
}
} // namespace

qint64 ExactKeyReader::requiredInteger(const QString &key)
{
    const QJsonValue v = take(key, true);
    if (v.isUndefined())
        return 0;
    qint64 out = 0;
    if (!asInteger(v, &out)) {
        wrongType(key, "an integer");
        return 0;
    }
    return out;
}

std::optional<qint64> ExactKeyReader::optionalInteger(const QString &key)
{
    const QJsonValue v = take(key, false);
    if (v.isUndefined())
        return std::nullopt;
    qint64 out = 0;
    if (!asInteger(v, &out)) {
        wrongType(key, "an integer");
        return std::nullopt;
    }
    return out;
}

bool ExactKeyReader::requiredBool(const QString &key)
{
    const QJsonValue v = take(key, true);
    if (v.isUndefined())
        return false;
    if (!v.isBool()) {
        wrongType(key, "a boolean");
        return false;
    }
    return v.toBool();
}

QJsonObject ExactKeyReader::requiredObject(const QString &key)
{
    const QJsonValue v = take(key, true);
    if (v.isUndefined())
        return {};
    if (!v.isObject()) {
        wrongType(key, "an object");
        return {};
    }
    return v.toObject();
}

std::optional<QJsonObject> ExactKeyReader::nullableObject(const QString &key)
{
    const QJsonValue v = take(key, true);
    if (v.isUndefined() || v.isNull())
        return std::nullopt;
    if (!v.isObject()) {
        wrongType(key, "an object or null");
        return std::nullopt;
    }
    return v.toObject();
}

std::optional<QJsonObject> ExactKeyReader::optionalObject(const QString &key)
{
    const QJsonValue v = take(key, false);
    if (v.isUndefined())
        return std::nullopt;
    if (!v.isObject()) {
        wrongType(key, "an object");
        return std::nullopt;
    }
    return v.toObject();
}

QJsonArray ExactKeyReader::requiredArray(const QString &key)
{
    const QJsonValue v = take(key, true);
    if (v.isUndefined())
        return {};
    if (!v.isArray()) {
        wrongType(key, "an array");
        return {};
    }
    return v.toArray();
}

QJsonValue ExactKeyReader::requiredAny(const QString &key) { return take(key, true); }

void ExactKeyReader::allow(const QString &key) { m_seen.insert(key); }

std::optional<Refusal> ExactKeyReader::finish()
{
    if (!m_refusal) {
        QStringList keys = m_object.keys();
        for (const QString &key : keys) {
            if (!m_seen.contains(key)) {
                // The key is the peer's choice: named only when plain (RefusalQuote, contract §1).
                m_refusal = Refusal{m_refusalName, RefusalQuote::unknownMember(m_path, key)};
                break;
            }
        }
    }
    return m_refusal;
}

} // namespace coreflow::contract
