// fuzz_http_request: the listener's HTTP request path without a socket (docs/contract.md §17): any
// bytes through HttpMessageParser in request mode (http_parser, the header collector with its line
// bound), each complete request's target made a QUrl as ListenerHttpConnection makes it, then the
// /v2/ path filter (RegistryPathFilter), the log class (RegistryProxy::pathClass) and the request
// header filter (RegistryHeaders::forwardRequest). Byte 0 is the feeding (0: at once, n: chunks of
// n bytes); the rest is the stream. Checks: fed in chunks it reads the same requests as fed at once;
// a served path is under /v2 and decodes to no "."/".." segment, no separator, backslash or
// control character; the log class is one of the fixed words; forwarded headers are allow-listed.
#include "service/registry/registryheaders.h"
#include "service/registry/registrypathfilter.h"
#include "service/registry/registryproxy.h"
#include "service/transport/httpmessageparser.h"

#include <QSet>
#include <QUrl>

#include <cstdio>
#include <cstdlib>

using namespace coreflow;

namespace {
[[noreturn]] void broken(const char *what)
{
    std::fprintf(stderr, "fuzz_http_request: %s\n", what);
    std::abort();
}

struct Request {
    QByteArray method;
    QByteArray target;
    HttpHeaderPairs headers;
    bool operator==(const Request &) const = default;
};

struct Reading {
    QList<Request> requests;
    bool failed = false;
    int error = 0;
    // Which error http_parser names is not compared (only that the request failed): the collector
    // refuses a bound with the piece that ends the name or value crossing it, so a block over the
    // bound AND malformed fails alike for any split (D-107; fuzz_http_response compares the class),
    // but this target claims no more than the listener needs: the request is refused (400 or 431,
    // contract §17) and nothing of it reaches a handler.
    bool operator==(const Reading &o) const { return requests == o.requests && failed == o.failed; }
};

Reading read(const char *data, qsizetype size, qsizetype chunk)
{
    Reading out;
    HttpMessageParser parser(HttpMessageParser::Kind::Request);
    parser.setMaxHeaderLines(RegistryHeaders::kMaxLines + 1);
    qsizetype fed = 0; // bytes handed to the parser so far
    qsizetype at = 0;
    while (at < size && !out.failed) {
        const qsizetype end = chunk == 0 ? size : std::min(size, fed + chunk);
        fed = end;
        while (at < end && !out.failed) {
            const HttpMessageParser::Step step = parser.execute(data + at, end - at);
            if (step.used < 0 || step.used > end - at)
                broken("execute() consumed more than it was given");
            at += step.used;
            if (step.event == HttpMessageParser::Event::MessageComplete) {
                out.requests.append({parser.methodName(), parser.url(), parser.headers().take()});
                parser.nextMessage();
                if (!parser.keepAlive() || parser.upgrade())
                    return out; // the listener stops reading such a connection
            } else if (step.event == HttpMessageParser::Event::Failed) {
                out.failed = true;
                out.error = int(parser.error());
            } else if (step.event == HttpMessageParser::Event::None && step.used == 0) {
                break;
            }
        }
        if (at < end && !out.failed)
            break;
    }
    return out;
}

const QSet<QByteArray> kClasses = {"base", "manifest", "blob", "blob-upload", "tags", "catalog", "other", "token", "outside"};
const QSet<QByteArray> kForwarded = {"Authorization", "Accept", "Range", "If-Range", "If-None-Match", "If-Modified-Since",
                                     "User-Agent", "Docker-Distribution-API-Version", "Accept-Encoding"};

void judge(const Request &request)
{
    const QUrl url = QUrl::fromEncoded(request.target, QUrl::TolerantMode);
    const QString path = url.path(QUrl::FullyEncoded);
    const bool token = path == QLatin1String("/token");
    if (!kClasses.contains(RegistryProxy::pathClass(path, token)))
        broken("a log class that is not one of the fixed words");
    if (RegistryPathFilter::isServed(path, token)) {
        if (!token && path != QLatin1String("/v2") && !path.startsWith(QLatin1String("/v2/")))
            broken("a path outside /v2 served");
        const QByteArray decoded = QByteArray::fromPercentEncoding(path.toUtf8());
        for (const QByteArray &segment : path.toUtf8().split('/')) {
            const QByteArray d = QByteArray::fromPercentEncoding(segment);
            if (d == "." || d == ".." || d.contains('/') || d.contains('\\'))
                broken("a served path with a dot segment or an encoded separator");
        }
        for (char c : decoded)
            if (uchar(c) < 0x20 || uchar(c) == 0x7f)
                broken("a served path with a control character");
    }
    const ForwardedRequestHeaders headers = RegistryHeaders::forwardRequest(request.headers);
    if (headers.ok)
        for (const auto &[name, value] : headers.headers)
            if (!kForwarded.contains(name) || RegistryHeaders::hasControlCharacter(value))
                broken("a forwarded header outside the allow-list or with a control character");
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const qsizetype chunk = data[0];
    const char *bytes = reinterpret_cast<const char *>(data + 1);
    const auto n = qsizetype(size - 1);
    const Reading whole = read(bytes, n, 0);
    for (const Request &request : whole.requests)
        judge(request);
    if (chunk != 0) {
        const Reading pieces = read(bytes, n, chunk);
        if (!(pieces == whole)) {
            std::fprintf(stderr, "at once: %d requests, failed %d (http_errno %d); in %d-byte chunks: %d requests, failed %d (http_errno %d)\n",
                         int(whole.requests.size()), int(whole.failed), whole.error, int(chunk), int(pieces.requests.size()),
                         int(pieces.failed), pieces.error);
            broken("fed in chunks it reads other requests than fed at once");
        }
    }
    return 0;
}
