#include "service/registry/registryheaders.h"

#include <array>

namespace coreflow {

namespace {

struct Allowed {
    const char *lower;
    const char *canonical;
};

constexpr std::array<Allowed, 7> kRequestAllowed{{
    {"authorization", "Authorization"},
    {"docker-distribution-api-version", "Docker-Distribution-API-Version"},
    {"range", "Range"},
    {"if-range", "If-Range"},
    {"if-none-match", "If-None-Match"},
    {"if-modified-since", "If-Modified-Since"},
    {"user-agent", "User-Agent"},
}};

constexpr std::array<Allowed, 17> kResponseAllowed{{
    {"content-type", "Content-Type"},
    {"content-length", "Content-Length"},
    {"content-range", "Content-Range"},
    {"content-encoding", "Content-Encoding"},
    {"accept-ranges", "Accept-Ranges"},
    {"etag", "ETag"},
    {"last-modified", "Last-Modified"},
    {"location", "Location"},
    {"link", "Link"},
    {"date", "Date"},
    {"cache-control", "Cache-Control"},
    {"expires", "Expires"},
    {"vary", "Vary"},
    {"retry-after", "Retry-After"},
    {"x-content-type-options", "X-Content-Type-Options"},
    {"docker-content-digest", "Docker-Content-Digest"},
    {"docker-distribution-api-version", "Docker-Distribution-API-Version"},
}};

template <std::size_t N>
const char *canonicalName(const std::array<Allowed, N> &list, const QByteArray &lower)
{
    for (const Allowed &a : list) {
        if (lower == a.lower)
            return a.canonical;
    }
    return nullptr;
}

} // namespace

bool RegistryHeaders::hasControlCharacter(const QByteArray &value)
{
    for (const char ch : value) {
        const auto c = static_cast<unsigned char>(ch);
        if ((c < 0x20 && c != '\t') || c == 0x7f)
            return true;
    }
    return false;
}

ForwardedRequestHeaders RegistryHeaders::forwardRequest(const HeaderPairs &nodeHeaders)
{
    ForwardedRequestHeaders out;
    if (nodeHeaders.size() > kMaxLines) {
        out.why = "too many request header lines";
        out.tooLarge = true;
        return out;
    }
    QByteArray accept;
    bool haveAccept = false;
    bool haveAuthorization = false;
    qsizetype total = 0;
    for (const auto &[name, value] : nodeHeaders) {
        if (hasControlCharacter(value) || hasControlCharacter(name)) {
            out.why = "a request header carries a control character";
            return out;
        }
    }
    for (const auto &[name, value] : nodeHeaders) {
        const QByteArray lower = name.trimmed().toLower();
        const QByteArray v = value.trimmed();
        if (lower == "accept") {
            if (haveAccept && !v.isEmpty() && !accept.isEmpty())
                accept += ", ";
            accept += v;
            haveAccept = true;
            total += v.size();
            continue;
        }
        const char *canonical = canonicalName(kRequestAllowed, lower);
        if (!canonical)
            continue;
        if (lower == "authorization") {
            if (haveAuthorization) {
                out.why = "more than one Authorization header";
                return out;
            }
            haveAuthorization = true;
        }
        if (v.size() > kMaxValueBytes) {
            out.why = "a request header value is over the bound";
            out.tooLarge = true;
            return out;
        }
        total += v.size();
        out.headers.append({QByteArray(canonical), v});
    }
    if (accept.size() > kMaxValueBytes) {
        out.why = "the merged Accept value is over the bound";
        out.tooLarge = true;
        return out;
    }
    if (total > kMaxTotalBytes) {
        out.why = "request headers are over the total bound";
        out.tooLarge = true;
        return out;
    }
    if (haveAccept)
        out.headers.append({QByteArrayLiteral("Accept"), accept});
    out.headers.append({QByteArrayLiteral("Accept-Encoding"), QByteArrayLiteral("identity")});
    out.ok = true;
    return out;
}

ReturnedResponseHeaders RegistryHeaders::returnResponse(const HeaderPairs &upstreamHeaders)
{
    ReturnedResponseHeaders out;
    out.failureClass = QByteArrayLiteral("HeadersTooLarge");
    if (upstreamHeaders.size() > kMaxLines) {
        out.why = "too many response header lines";
        return out;
    }
    qsizetype total = 0;
    QByteArray contentLength;
    bool haveContentLength = false;
    for (const auto &[name, value] : upstreamHeaders) {
        const QByteArray lower = name.trimmed().toLower();
        const bool isChallenge = lower == "www-authenticate";
        const char *canonical = isChallenge ? "WWW-Authenticate" : canonicalName(kResponseAllowed, lower);
        if (!canonical)
            continue;
        const QByteArray v = value.trimmed();
        if (hasControlCharacter(value)) {
            if (isChallenge) {
                out.why = "a WWW-Authenticate value carries a control character";
                out.failureClass = QByteArrayLiteral("Protocol");
                return out;
            }
            ++out.droppedForControlCharacters;
            continue;
        }
        if (v.size() > kMaxValueBytes) {
            out.why = "a response header value is over the bound";
            return out;
        }
        total += v.size();
        if (isChallenge) {
            out.wwwAuthenticate.append(v);
        } else if (lower == "content-length") {
            contentLength = v;
            haveContentLength = true;
        } else {
            if (lower == "content-encoding" && !v.isEmpty() && v.toLower() != "identity")
                out.encoded = true;
            out.headers.append({QByteArray(canonical), v});
        }
    }
    if (total > kMaxTotalBytes) {
        out.why = "response headers are over the total bound";
        return out;
    }
    if (haveContentLength && !out.encoded) {
        bool ok = false;
        const qint64 n = contentLength.toLongLong(&ok);
        if (!ok || n < 0) {
            out.why = "the registry's Content-Length is not a length";
            out.failureClass = QByteArrayLiteral("Protocol");
            return out;
        }
        out.contentLength = n;
        out.headers.append({QByteArrayLiteral("Content-Length"), QByteArray::number(n)});
    }
    out.failureClass.clear();
    out.ok = true;
    return out;
}

} // namespace coreflow
