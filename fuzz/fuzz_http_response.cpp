// fuzz_http_response: HttpResponseParser, the relay's HTTP client's answer reader (registry and, as
// they land, Corestore answers; docs/contract.md §17, IP-12, IP-13, IP-21) over any answer bytes. Byte 0: bit 0 expects no body (a HEAD), bits 1..7 the feeding (0: at once, n: chunks of
// n bytes); the rest is the stream, then the end of the stream. Fed in chunks it gives what it gives
// fed at once (head, body bytes with the transfer framing removed, completion, failure class); events
// come in order (head before body, nothing after complete) and a failure is HeadersTooLarge or Protocol.
#include "service/transport/httpresponseparser.h"

#include <cstdio>
#include <cstdlib>

using namespace coreflow;

namespace {
constexpr qsizetype kMaxHeaderLines = 100; // the registry lane's bound (HttpClientLimits)

[[noreturn]] void broken(const char *what)
{
    std::fprintf(stderr, "fuzz_http_response: %s\n", what);
    std::abort();
}

struct Outcome : HttpResponseParser::Events {
    int status = 0;
    HttpHeaderPairs headers;
    QByteArray bodyBytes;
    int heads = 0;
    int completes = 0;
    int failure = -1;
    bool eofCompleted = false;
    qsizetype consumed = 0;

    void head(int s, const HttpHeaderPairs &h) override
    {
        if (heads++ || completes)
            broken("a second head, or a head after complete");
        status = s;
        headers = h;
    }
    void httpBody(const char *data, qsizetype size) override
    {
        if (!heads || completes)
            broken("body bytes before the head or after complete");
        bodyBytes.append(data, size);
    }
    void complete() override
    {
        if (!heads || completes++)
            broken("complete before the head, or twice");
    }
    bool operator==(const Outcome &o) const
    {
        return status == o.status && headers == o.headers && bodyBytes == o.bodyBytes && heads == o.heads && completes == o.completes
               && failure == o.failure && eofCompleted == o.eofCompleted && (failure != -1 || consumed == o.consumed);
        // After a failure the connection is dropped: where in the last piece http_parser stopped
        // (consumed) is not compared, only that and how it failed.
    }
};

void run(Outcome &out, const char *data, qsizetype size, qsizetype chunk, bool expectNoBody)
{
    HttpResponseParser parser(out, kMaxHeaderLines);
    parser.reset(expectNoBody);
    qsizetype at = 0;
    while (at < size && !parser.failed() && !parser.isComplete()) {
        const qsizetype n = chunk == 0 ? size - at : std::min(chunk, size - at);
        const qsizetype used = parser.feed(data + at, n);
        if (used < 0 || used > n)
            broken("feed() consumed more than it was given");
        at += used;
        if (used < n)
            break;
    }
    out.consumed = at;
    if (!parser.failed() && !parser.isComplete())
        out.eofCompleted = parser.feedEof();
    if (parser.failed()) {
        out.failure = int(parser.failure());
        if (parser.failure() != HttpClientFailure::HeadersTooLarge && parser.failure() != HttpClientFailure::Protocol)
            broken("a parse failure other than HeadersTooLarge or Protocol");
    }
    if (parser.isComplete() != (out.completes == 1))
        broken("isComplete() and complete() disagree");
    if (parser.failed() && parser.isComplete())
        broken("both failed and complete");
    if (parser.headReported() != (out.heads == 1))
        broken("headReported() and head() disagree");
    if (out.heads && (out.status < 100 || out.status > 599))
        broken("a status outside 100..599 reported");
    if (out.headers.size() > kMaxHeaderLines)
        broken("more header lines than the bound reported");
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const bool expectNoBody = data[0] & 1;
    const qsizetype chunk = data[0] >> 1;
    const char *bytes = reinterpret_cast<const char *>(data + 1);
    const auto n = qsizetype(size - 1);
    Outcome whole;
    run(whole, bytes, n, 0, expectNoBody);
    if (chunk != 0) {
        Outcome pieces;
        run(pieces, bytes, n, chunk, expectNoBody);
        if (!(pieces == whole)) {
            std::fprintf(stderr, "at once / in %d-byte chunks: status %d/%d, %d/%d headers, %d/%d body bytes, "
                                 "complete %d/%d, failure %d/%d, eof %d/%d, consumed %d/%d\n",
                         int(chunk), whole.status, pieces.status, int(whole.headers.size()), int(pieces.headers.size()),
                         int(whole.bodyBytes.size()), int(pieces.bodyBytes.size()), whole.completes, pieces.completes,
                         whole.failure, pieces.failure, int(whole.eofCompleted), int(pieces.eofCompleted),
                         int(whole.consumed), int(pieces.consumed));
            broken("fed in chunks it parses differently from fed at once");
        }
    }
    return 0;
}
