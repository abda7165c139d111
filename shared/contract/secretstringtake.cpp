#include "shared/contract/secretstringtake.h"

#include <simdjson.h>
#include <sodium.h>

#include <vector>

namespace coreflow::contract {

namespace {

// One document read by simdjson's on-demand parser over a padded copy of json that is wiped when
// this ends, with the spans of the secret strings taken from it (offsets into json).
class SecretTaker {
public:
    explicit SecretTaker(const QByteArray &json)
        : m_length(size_t(json.size())), m_padded(m_length + simdjson::SIMDJSON_PADDING, '\0')
    {
        memcpy(m_padded.data(), json.constData(), m_length);
    }
    ~SecretTaker()
    {
        sodium_memzero(m_padded.data(), m_padded.size());
        if (!m_decoded.empty())
            sodium_memzero(m_decoded.data(), m_decoded.size());
    }
    SecretTaker(const SecretTaker &) = delete;
    SecretTaker &operator=(const SecretTaker &) = delete;

    bool open() { return !m_parser.iterate(simdjson::padded_string_view(m_padded.data(), m_length, m_padded.size())).get(m_doc); }
    simdjson::ondemand::document &document() { return m_doc; }

    // Walks object keys from `object`; false when a key is missing or a step is not an object.
    static bool walk(simdjson::ondemand::object object, std::initializer_list<std::string_view> path,
                     simdjson::ondemand::value &out)
    {
        size_t depth = 0;
        for (std::string_view key : path) {
            if (object.find_field_unordered(key).get(out))
                return false;
            if (++depth < path.size() && out.get_object().get(object))
                return false;
        }
        return depth > 0;
    }

    // The string value, unescaped straight into a buffer wiped afterwards; its span is remembered.
    std::optional<Secret> take(simdjson::ondemand::value &value)
    {
        if (value.type() != simdjson::ondemand::json_type::string)
            return std::nullopt;
        const std::string_view token = value.raw_json_token();
        simdjson::ondemand::raw_json_string raw;
        if (value.get_raw_json_string().get(raw))
            return std::nullopt;
        if (m_decoded.size() < token.size() + simdjson::SIMDJSON_PADDING) {
            if (!m_decoded.empty())
                sodium_memzero(m_decoded.data(), m_decoded.size());
            m_decoded.assign(token.size() + simdjson::SIMDJSON_PADDING, 0);
        }
        uint8_t *dst = m_decoded.data();
        std::string_view text;
        if (m_parser.unescape(raw, dst).get(text))
            return std::nullopt;
        Secret out(QByteArrayView(text.data(), qsizetype(text.size())));
        sodium_memzero(m_decoded.data(), token.size());
        m_spans.append({qsizetype(token.data() - m_padded.data()), qsizetype(token.size())});
        return out;
    }

    // The raw text of an object value, copied into a Secret; its span is blanked as an object.
    std::optional<Secret> takeObject(simdjson::ondemand::value &value)
    {
        simdjson::ondemand::object object;
        if (value.get_object().get(object))
            return std::nullopt;
        std::string_view text;
        if (object.raw_json().get(text))
            return std::nullopt;
        while (!text.empty() && text.back() != '}')
            text.remove_suffix(1);
        if (text.size() < 2)
            return std::nullopt;
        Secret out(QByteArrayView(text.data(), qsizetype(text.size())));
        m_objectSpans.append({qsizetype(text.data() - m_padded.data()), qsizetype(text.size())});
        return out;
    }

    // Overwrites every taken string's characters in json with 'x' (quotes kept).
    void blank(QByteArray &json) const
    {
        char *bytes = json.data();
        for (const auto &[at, size] : m_spans) {
            qsizetype end = at + size; // the token may carry trailing whitespace
            while (end > at + 1 && bytes[end - 1] != '"')
                --end;
            for (qsizetype i = at + 1; i < end - 1; ++i)
                bytes[i] = 'x';
        }
        for (const auto &[at, size] : m_objectSpans) {
            bytes[at] = '{';
            for (qsizetype i = at + 1; i < at + size - 1; ++i)
                bytes[i] = ' ';
            bytes[at + size - 1] = '}';
        }
    }

private:
    size_t m_length;
    std::vector<char> m_padded;
    std::vector<uint8_t> m_decoded;
    simdjson::ondemand::parser m_parser;
    simdjson::ondemand::document m_doc;
    QList<std::pair<qsizetype, qsizetype>> m_spans;
    QList<std::pair<qsizetype, qsizetype>> m_objectSpans;
};

} // namespace

std::optional<Secret> takeSecretString(QByteArray &json, std::initializer_list<std::string_view> path)
{
    if (json.isEmpty() || path.size() == 0)
        return std::nullopt;
    std::optional<Secret> out;
    SecretTaker taker(json);
    if (!taker.open())
        return std::nullopt;
    simdjson::ondemand::object top;
    simdjson::ondemand::value value;
    if (!taker.document().get_object().get(top) && SecretTaker::walk(top, path, value))
        out = taker.take(value);
    if (out)
        taker.blank(json);
    return out;
}

std::optional<QList<Secret>> takeSecretStrings(QByteArray &json, std::initializer_list<std::string_view> arrayPath,
                                               std::string_view key)
{
    return takeSecretStrings(json, arrayPath, {key}); // one member of each element: a path of one key
}

std::optional<QList<Secret>> takeSecretStrings(QByteArray &json, std::initializer_list<std::string_view> arrayPath,
                                               std::initializer_list<std::string_view> elementPath)
{
    if (json.isEmpty() || arrayPath.size() == 0 || elementPath.size() == 0)
        return std::nullopt;
    SecretTaker taker(json);
    if (!taker.open())
        return std::nullopt;
    simdjson::ondemand::object top;
    simdjson::ondemand::value value;
    simdjson::ondemand::array array;
    if (taker.document().get_object().get(top) || !SecretTaker::walk(top, arrayPath, value) || value.get_array().get(array))
        return std::nullopt;
    QList<Secret> out;
    for (auto element : array) {
        simdjson::ondemand::object object;
        simdjson::ondemand::value member;
        std::optional<Secret> taken;
        if (!element.get_object().get(object) && SecretTaker::walk(object, elementPath, member))
            taken = taker.take(member);
        out.append(taken ? std::move(*taken) : Secret());
    }
    taker.blank(json);
    return out;
}

std::optional<Secret> takeSecretObject(QByteArray &json, std::initializer_list<std::string_view> path)
{
    if (json.isEmpty() || path.size() == 0)
        return std::nullopt;
    std::optional<Secret> out;
    SecretTaker taker(json);
    if (!taker.open())
        return std::nullopt;
    simdjson::ondemand::object top;
    simdjson::ondemand::value value;
    if (!taker.document().get_object().get(top) && SecretTaker::walk(top, path, value))
        out = taker.takeObject(value);
    if (out)
        taker.blank(json);
    return out;
}

} // namespace coreflow::contract
