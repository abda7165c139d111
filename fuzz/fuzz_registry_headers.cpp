// fuzz_registry_headers: RegistryHeaders (docs/contract.md §17, IP-15..IP-19) over any header block:
// each input line "name:value" is one header (the request's and, alike, the answer's). What crosses is
// only allow-listed, canonically named, free of control characters and within the stated bounds;
// Accept-Encoding is always "identity"; an encoded answer loses its Content-Length.
#include "service/registry/registryheaders.h"

#include <QSet>

#include <cstdio>
#include <cstdlib>

using namespace coreflow;

namespace {
[[noreturn]] void broken(const char *what)
{
    std::fprintf(stderr, "fuzz_registry_headers: %s\n", what);
    std::abort();
}

const QSet<QByteArray> kRequestNames = {"Authorization", "Accept", "Range", "If-Range", "If-None-Match", "If-Modified-Since",
                                        "User-Agent", "Docker-Distribution-API-Version", "Accept-Encoding"};
const QSet<QByteArray> kResponseNames = {"Content-Type", "Content-Length", "Content-Range", "Content-Encoding", "Accept-Ranges",
                                         "ETag", "Last-Modified", "Location", "Link", "Date", "Cache-Control", "Expires", "Vary",
                                         "Retry-After", "X-Content-Type-Options", "Docker-Content-Digest",
                                         "Docker-Distribution-API-Version"};

void checkBounds(const HeaderPairs &headers)
{
    qsizetype total = 0;
    for (const auto &[name, value] : headers) {
        if (RegistryHeaders::hasControlCharacter(value))
            broken("a header with a control character crosses");
        if (value.size() > RegistryHeaders::kMaxValueBytes)
            broken("a header value over the bound crosses");
        total += value.size();
    }
    if (total > RegistryHeaders::kMaxTotalBytes + 16)
        broken("headers over the total bound cross");
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    HeaderPairs headers;
    for (const QByteArray &line : QByteArray(reinterpret_cast<const char *>(data), qsizetype(size)).split('\n')) {
        const qsizetype colon = line.indexOf(':');
        if (colon < 0)
            headers.append({line, QByteArray()});
        else
            headers.append({line.left(colon), line.mid(colon + 1)});
    }

    const ForwardedRequestHeaders request = RegistryHeaders::forwardRequest(headers);
    if (request.ok) {
        if (headers.size() > RegistryHeaders::kMaxLines)
            broken("a request over the line bound forwarded");
        int encodings = 0;
        for (const auto &[name, value] : request.headers) {
            if (!kRequestNames.contains(name))
                broken("a request header outside the allow-list forwarded");
            if (name == "Accept-Encoding" && (++encodings > 1 || value != "identity"))
                broken("Accept-Encoding is not exactly one identity");
        }
        if (encodings != 1)
            broken("Accept-Encoding identity is missing");
        checkBounds(request.headers);
        for (const auto &[name, value] : headers)
            if (RegistryHeaders::hasControlCharacter(value))
                broken("a request with a control character in a header forwarded");
    } else if (request.why.isEmpty()) {
        broken("a request refused without saying why");
    }

    const ReturnedResponseHeaders response = RegistryHeaders::returnResponse(headers);
    if (response.ok) {
        for (const auto &[name, value] : response.headers) {
            if (!kResponseNames.contains(name))
                broken("an answer header outside the allow-list returned");
            if (name == "Content-Length" && response.encoded)
                broken("an encoded answer keeps its Content-Length");
        }
        checkBounds(response.headers);
        for (const QByteArray &challenge : response.wwwAuthenticate)
            if (RegistryHeaders::hasControlCharacter(challenge))
                broken("a WWW-Authenticate with a control character returned");
    } else if (response.failureClass != "HeadersTooLarge" && response.failureClass != "Protocol") {
        broken("an answer failed with an unnamed class");
    }
    return 0;
}
