#pragma once
// UpstreamResponseParser: reads the registry's HTTP/1.1 answers on one upstream connection with the
// http_parser library (Debian libhttp-parser-dev, response mode); the relay never parses HTTP by hand.
// Used by UpstreamConnection only (docs/contract.md §17, IP-12, IP-13, IP-21).
//
// Input: the connection's bytes as they arrive, in any split (feed()), and the end of the stream
// (feedEof()). Output: calls on the Events given at construction, in this order for one answer:
//   head(status, headers)   status line and header block; headers in arrival order, names and values
//                           as sent (a value split over several reads is joined); interim 1xx answers
//                           (other than 101) are skipped and never reported
//   body(data, size)        zero or more times: the body with its transfer framing removed (chunked
//                           is decoded; Content-Length and close-delimited bodies pass as they are)
//   complete()              the answer is over
// Parsing stops right after complete(): bytes after the answer's end are not read (feed() returns
// how many bytes it consumed; the caller treats a remainder as a protocol error, since nothing was
// asked for). expectNoBody (a HEAD) makes the parser expect no body whatever the headers announce.
//
// Bounds: the header block is bounded by http_parser's compiled-in 80 KiB (HTTP_MAX_HEADER_SIZE) and
// by kMaxHeaderLines lines; beyond either the answer fails with the class HeadersTooLarge. Any other
// parse error is the class Protocol, and so is a status code outside 100..599 (RFC 9110 §15; http_parser
// itself accepts any one to three digits): such an answer is never reported.
#include <QByteArray>
#include <QList>
#include <QPair>

#include <http_parser.h>

namespace coreflow {

class UpstreamResponseParser {
public:
    static constexpr int kMaxHeaderLines = 128; // RegistryHeaders refuses more than 100 anyway

    struct Events {
        virtual ~Events() = default;
        virtual void head(int status, const QList<QPair<QByteArray, QByteArray>> &headers) = 0;
        virtual void body(const char *data, qsizetype size) = 0;
        virtual void complete() = 0;
    };

    explicit UpstreamResponseParser(Events &events);

    // Starts over for the next answer on the connection.
    void reset(bool expectNoBody);
    // Parses up to `size` bytes; returns how many were consumed (fewer after complete() or an error).
    qsizetype feed(const char *data, qsizetype size);
    // The peer closed the stream. Returns true when that completed the answer (a close-delimited
    // body); false means the answer was cut short (the caller's failure class: RemoteClosed).
    bool feedEof();

    bool failed() const { return !m_failureClass.isEmpty(); }
    QByteArray failureClass() const { return m_failureClass; } // HeadersTooLarge or Protocol
    bool isComplete() const { return m_complete; }
    bool headReported() const { return m_headReported; }
    // Valid once complete(): the connection may carry another request (HTTP/1.1 keep-alive).
    bool keepAlive() const { return m_keepAlive; }

private:
    static int onMessageBegin(http_parser *p);
    static int onStatus(http_parser *p, const char *at, size_t length);
    static int onHeaderField(http_parser *p, const char *at, size_t length);
    static int onHeaderValue(http_parser *p, const char *at, size_t length);
    static int onHeadersComplete(http_parser *p);
    static int onBody(http_parser *p, const char *at, size_t length);
    static int onMessageComplete(http_parser *p);
    static UpstreamResponseParser &self(http_parser *p) { return *static_cast<UpstreamResponseParser *>(p->data); }
    void fail(const QByteArray &failureClass);

    Events &m_events;
    http_parser m_parser;
    http_parser_settings m_settings;
    QList<QPair<QByteArray, QByteArray>> m_headers;
    bool m_inValue = false;
    bool m_expectNoBody = false;
    bool m_interim = false;
    bool m_complete = false;
    bool m_headReported = false;
    bool m_keepAlive = false;
    QByteArray m_failureClass;
};

} // namespace coreflow
