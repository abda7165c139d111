#include "shared/contract/secretstringtake.h"

#include <simdjson.h>
#include <sodium.h>

#include <vector>

namespace coreflow::contract {

std::optional<Secret> takeSecretString(QByteArray &json, std::initializer_list<std::string_view> path)
{
    if (json.isEmpty() || path.size() == 0)
        return std::nullopt;
    const size_t length = size_t(json.size());
    std::vector<char> padded(length + simdjson::SIMDJSON_PADDING, '\0');
    memcpy(padded.data(), json.constData(), length);
    std::vector<uint8_t> decoded;
    std::optional<Secret> out;
    qsizetype at = -1;
    qsizetype tokenSize = 0;
    {
        simdjson::ondemand::parser parser;
        simdjson::ondemand::document doc;
        if (!parser.iterate(simdjson::padded_string_view(padded.data(), length, padded.size())).get(doc)) {
            simdjson::ondemand::value value;
            bool found = false;
            {
                simdjson::ondemand::object object;
                if (!doc.get_object().get(object)) {
                    found = true;
                    size_t depth = 0;
                    for (std::string_view key : path) {
                        if (object.find_field_unordered(key).get(value)) {
                            found = false;
                            break;
                        }
                        if (++depth < path.size() && value.get_object().get(object)) {
                            found = false;
                            break;
                        }
                    }
                }
            }
            simdjson::ondemand::raw_json_string raw;
            if (found && value.type() == simdjson::ondemand::json_type::string) {
                const std::string_view token = value.raw_json_token();
                if (!value.get_raw_json_string().get(raw)) {
                    decoded.assign(token.size() + simdjson::SIMDJSON_PADDING, 0);
                    uint8_t *dst = decoded.data();
                    std::string_view text;
                    if (!parser.unescape(raw, dst).get(text)) {
                        out = Secret(QByteArrayView(text.data(), qsizetype(text.size())));
                        at = qsizetype(token.data() - padded.data());
                        tokenSize = qsizetype(token.size());
                    }
                }
            }
        }
    }
    if (!decoded.empty())
        sodium_memzero(decoded.data(), decoded.size());
    sodium_memzero(padded.data(), padded.size());
    // The token is the quoted string as written (simdjson may leave trailing whitespace in it).
    if (out && at >= 0) {
        char *bytes = json.data();
        qsizetype end = at + tokenSize;
        while (end > at + 1 && bytes[end - 1] != '"')
            --end;
        for (qsizetype i = at + 1; i < end - 1; ++i)
            bytes[i] = 'x';
    }
    return out;
}

} // namespace coreflow::contract
