#pragma once
// HttpResponseParser: reads the HTTP/1.1 answers on one HttpClientConnection (HttpMessageParser in
// response mode: http_parser; never by hand). docs/contract.md §17 (the relay's own HTTP client).
//
// Input: the connection's bytes as they arrive, in any split (feed()), and the end of the stream
// (feedEof()). Output: calls on the Events given at construction, in this order for one answer:
//   head(status, headers)   status line and header block; headers in arrival order, names as sent,
//                           values trimmed (a value split over several reads is joined); interim 1xx
//                           answers (other than 101) are skipped and never reported
//   httpBody(data, size)    zero or more times: the body with its transfer framing removed (chunked
//                           is decoded; Content-Length and close-delimited bodies pass as they are),
//                           straight out of the caller's buffer
//   complete()              the answer is over
// Parsing stops right after complete(): bytes after the answer's end are not read (feed() returns
// how many bytes it consumed; the caller treats a remainder as a protocol error, since nothing was
// asked for). expectNoBody (a HEAD) makes the parser expect no body whatever the headers announce.
//
// Bounds: the header block is bounded by http_parser's compiled-in 80 KiB (HTTP_MAX_HEADER_SIZE) and
// by maxHeaderLines lines (the pool's HttpClientLimits); beyond either the answer fails as
// HeadersTooLarge. Any other parse error is Protocol, and so is a status code outside 100..599
// (RFC 9110 §15; http_parser itself takes any one to three digits): such an answer is never reported.
#include "service/transport/httpclientfailure.h"
#include "service/transport/httpmessageparser.h"

#include <optional>

namespace coreflow {

class HttpResponseParser {
public:
    struct Events : HttpMessageParser::BodySink {
        virtual void head(int status, const HttpHeaderPairs &headers) = 0;
        virtual void complete() = 0;
    };

    HttpResponseParser(Events &events, qsizetype maxHeaderLines);

    // Starts over for the next answer on the connection.
    void reset(bool expectNoBody);
    // Parses up to `size` bytes; returns how many were consumed (fewer after complete() or an error).
    qsizetype feed(const char *data, qsizetype size);
    // The peer closed the stream. Returns true when that completed the answer (a close-delimited
    // body); false means the answer was cut short (the caller's failure: RemoteClosed).
    bool feedEof();

    bool failed() const { return m_failure.has_value(); }
    // Why parsing failed (HeadersTooLarge or Protocol); meaningful only when failed().
    HttpClientFailure failure() const { return m_failure.value_or(HttpClientFailure::Protocol); }
    bool isComplete() const { return m_complete; }
    bool headReported() const { return m_headReported; }
    // Valid once complete(): the connection may carry another request (HTTP/1.1 keep-alive).
    bool keepAlive() const { return m_keepAlive; }

private:
    // Acts on one event of the message parser; false when parsing stops (complete or failed).
    bool handle(HttpMessageParser::Event event);

    Events &m_events;
    HttpMessageParser m_parser{HttpMessageParser::Kind::Response};
    std::optional<HttpClientFailure> m_failure;
    bool m_interim = false;
    bool m_complete = false;
    bool m_headReported = false;
    bool m_keepAlive = false;
};

} // namespace coreflow
