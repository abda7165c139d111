#include "service/isolatedrestore/jsonduplicatekeys.h"

#include "shared/contract/refusalquote.h"

#include <simdjson.h>

#include <string>
#include <unordered_set>

namespace coreflow {

namespace {

using Finding = JsonDuplicateKeys::Finding;
using Verdict = JsonDuplicateKeys::Verdict;

void walk(simdjson::ondemand::value value, const QString &at, bool quotable, const QSet<QString> &nameable, Finding &found, int depth);

void walkObject(simdjson::ondemand::object object, const QString &at, bool quotable, const QSet<QString> &nameable, Finding &found,
                int depth)
{
    std::unordered_set<std::string> seen;
    for (auto field : object) {
        std::string_view name;
        if (field.unescaped_key().get(name) != simdjson::SUCCESS) {
            found.verdict = Verdict::Unreadable;
            return;
        }
        if (!seen.emplace(name).second) {
            found.verdict = Verdict::Duplicate;
            found.path = at;
            return;
        }
        simdjson::ondemand::value child;
        if (field.value().get(child) != simdjson::SUCCESS) {
            found.verdict = Verdict::Unreadable;
            return;
        }
        const QString key = QString::fromUtf8(name.data(), qsizetype(name.size()));
        const bool plain = quotable && nameable.contains(key) && contract::RefusalQuote::isPlain(key);
        walk(child, plain ? at + QLatin1Char('.') + key : at, plain, nameable, found, depth + 1);
        if (found.verdict != Verdict::Clean)
            return;
    }
}

void walk(simdjson::ondemand::value value, const QString &at, bool quotable, const QSet<QString> &nameable, Finding &found, int depth)
{
    if (depth > JsonDuplicateKeys::kMaxDepth) {
        found.verdict = Verdict::Unreadable;
        return;
    }
    simdjson::ondemand::json_type type;
    if (value.type().get(type) != simdjson::SUCCESS) {
        found.verdict = Verdict::Unreadable;
        return;
    }
    if (type == simdjson::ondemand::json_type::object) {
        simdjson::ondemand::object object;
        if (value.get_object().get(object) != simdjson::SUCCESS) {
            found.verdict = Verdict::Unreadable;
            return;
        }
        walkObject(object, at, quotable, nameable, found, depth);
    } else if (type == simdjson::ondemand::json_type::array) {
        simdjson::ondemand::array array;
        if (value.get_array().get(array) != simdjson::SUCCESS) {
            found.verdict = Verdict::Unreadable;
            return;
        }
        int i = 0;
        for (auto element : array) {
            simdjson::ondemand::value child;
            if (element.get(child) != simdjson::SUCCESS) {
                found.verdict = Verdict::Unreadable;
                return;
            }
            walk(child, quotable ? QStringLiteral("%1[%2]").arg(at).arg(i) : at, quotable, nameable, found, depth + 1);
            ++i;
            if (found.verdict != Verdict::Clean)
                return;
        }
    }
}

} // namespace

JsonDuplicateKeys::Finding JsonDuplicateKeys::find(QByteArrayView json, const QString &root, const QSet<QString> &nameable)
{
    Finding found;
    const simdjson::padded_string padded(json.isEmpty() ? "" : json.data(), size_t(json.size()));
    simdjson::ondemand::parser parser;
    simdjson::ondemand::document doc;
    simdjson::ondemand::value value;
    simdjson::ondemand::json_type type;
    if (parser.iterate(padded).get(doc) != simdjson::SUCCESS || doc.get_value().get(value) != simdjson::SUCCESS
        || value.type().get(type) != simdjson::SUCCESS) {
        found.verdict = Verdict::Unreadable;
        return found;
    }
    found.rootIsObject = type == simdjson::ondemand::json_type::object;
    walk(value, root, true, nameable, found, 0);
    return found;
}

} // namespace coreflow
