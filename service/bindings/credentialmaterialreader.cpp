#include "service/bindings/credentialmaterialreader.h"

#include <simdjson.h>
#include <sodium.h>

#include <cstring>
#include <set>
#include <string>
#include <vector>

namespace coreflow {

namespace {

using namespace simdjson;

class WipedCopy {
public:
    explicit WipedCopy(QByteArrayView bytes) : m_length(size_t(bytes.size())), m_buffer(m_length + SIMDJSON_PADDING, '\0')
    {
        if (m_length)
            std::memcpy(m_buffer.data(), bytes.data(), m_length);
    }
    ~WipedCopy() { sodium_memzero(m_buffer.data(), m_buffer.size()); }
    WipedCopy(const WipedCopy &) = delete;
    WipedCopy &operator=(const WipedCopy &) = delete;
    padded_string_view view() const { return padded_string_view(m_buffer.data(), m_length, m_buffer.size()); }

private:
    size_t m_length;
    std::vector<char> m_buffer;
};

QString problem(const char *member, const char *what) { return QStringLiteral("material.%1 %2").arg(QLatin1String(member), QLatin1String(what)); }

// A non-empty string member, read without keeping its value.
bool isNonEmptyString(ondemand::value &v)
{
    if (v.type() != ondemand::json_type::string)
        return false;
    std::string_view raw = v.raw_json_token();
    // raw is the quoted token (possibly followed by whitespace): "" is empty.
    while (!raw.empty() && raw.back() != '"')
        raw.remove_suffix(1);
    return raw.size() > 2;
}

} // namespace

std::variant<CredentialMaterialFacts, QString> CredentialMaterialReader::read(const Secret &material)
{
    WipedCopy copy(material.reveal());
    ondemand::parser parser;
    ondemand::document doc;
    ondemand::object object;
    if (parser.iterate(copy.view()).get(doc) || doc.get_object().get(object))
        return QStringLiteral("material is not a JSON object");

    CredentialMaterialFacts facts;
    std::set<std::string> seen;
    bool unknown = false;
    bool typeFault = false;
    const char *faultMember = nullptr;
    std::optional<DatabaseEndpoint> endpointObject;
    bool endpointIsString = false;
    for (auto field : object) {
        std::string_view key;
        if (field.unescaped_key().get(key))
            return QStringLiteral("material is not a JSON object");
        const std::string name(key);
        if (!seen.insert(name).second)
            return QStringLiteral("material has a repeated member");
        ondemand::value v;
        if (field.value().get(v))
            return QStringLiteral("material is not a JSON object");
        if (name == "capability") {
            std::string_view c;
            if (v.get_string().get(c))
                typeFault = true, faultMember = "capability";
            else
                facts.capability = QString::fromUtf8(c.data(), qsizetype(c.size()));
        } else if (name == "endpoint") {
            if (v.type() == ondemand::json_type::object) {
                ondemand::object e;
                if (v.get_object().get(e))
                    return QStringLiteral("material is not a JSON object");
                DatabaseEndpoint ep;
                bool host = false, port = false, bad = false;
                for (auto ef : e) {
                    std::string_view ek;
                    if (ef.unescaped_key().get(ek)) {
                        bad = true;
                        break;
                    }
                    ondemand::value ev;
                    if (ef.value().get(ev)) {
                        bad = true;
                        break;
                    }
                    if (ek == "host" && !host) {
                        std::string_view h;
                        if (ev.get_string().get(h))
                            bad = true;
                        else
                            ep.host = QString::fromUtf8(h.data(), qsizetype(h.size())), host = true;
                    } else if (ek == "port" && !port) {
                        int64_t p = 0;
                        if (ev.get_int64().get(p) || p < 1 || p > 65535)
                            bad = true;
                        else
                            ep.port = int(p), port = true;
                    } else {
                        bad = true;
                    }
                }
                if (bad || !host || !port)
                    typeFault = true, faultMember = "endpoint";
                else
                    endpointObject = ep;
            } else if (isNonEmptyString(v)) {
                endpointIsString = true;
            } else {
                typeFault = true, faultMember = "endpoint";
            }
        } else if (name == "database" || name == "username" || name == "password" || name == "uri" || name == "bucket"
                   || name == "accessKeyId" || name == "secretAccessKey" || name == "region") {
            if (!isNonEmptyString(v)) {
                typeFault = true;
                static const char *const names[] = {"database", "username", "password", "uri", "bucket", "accessKeyId", "secretAccessKey", "region"};
                for (const char *n : names)
                    if (name == n)
                        faultMember = n;
            }
        } else {
            unknown = true;
        }
        if (typeFault)
            return problem(faultMember, "is not a non-empty string of its shape");
    }
    if (unknown)
        return QStringLiteral("material has a member the contract does not name");
    auto require = [&seen](std::initializer_list<const char *> names) -> const char * {
        for (const char *n : names)
            if (!seen.count(n))
                return n;
        return nullptr;
    };
    if (facts.capability == QLatin1String("database")) {
        if (const char *missing = require({"endpoint", "database", "username", "password", "uri"}))
            return problem(missing, "is missing");
        if (seen.size() != 6 || !endpointObject)
            return problem("endpoint", "is not { host, port } or the material has members of the other capability");
        facts.endpoint = endpointObject;
    } else if (facts.capability == QLatin1String("objectstorage")) {
        if (const char *missing = require({"endpoint", "bucket", "accessKeyId", "secretAccessKey", "region"}))
            return problem(missing, "is missing");
        if (seen.size() != 6 || !endpointIsString)
            return problem("endpoint", "is not a URL string or the material has members of the other capability");
    } else if (!seen.count("capability")) {
        return problem("capability", "is missing");
    } else {
        return problem("capability", "is not database or objectstorage");
    }
    return facts;
}

} // namespace coreflow
