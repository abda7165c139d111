#pragma once
// HttpMessageParser: the relay's one http_parser setup (Debian libhttp-parser; HTTP is never parsed
// by hand), for requests (the listener's first header block and its HTTP/1.1 server loop) and for
// answers (the WebSocket client handshake, the HTTP client's HttpResponseParser). docs/contract.md
// §3 (listener handshake), §17 (listener HTTP surface, the relay's own HTTP client).
//
// execute() parses bytes in any split and stops at the first event of a message:
//   HeadersComplete  the header block ended: url(), headers(), method() / statusCode() are read;
//                    headBytes() counts the message's bytes up to and including the blank line
//                    (leading blank lines included);
//   MessageComplete  the message (its body included) ended: keepAlive() and upgrade() are valid;
//   Failed           http_parser refused the bytes (error() names why; a piece past a bound below
//                    is HPE_CB_url, HPE_CB_header_field or HPE_CB_header_value with overflow() set);
//   None             every byte given was consumed without an event.
// Step::used is how many bytes were consumed; after an event the caller calls execute() again with
// the rest (the parser resumes where it stopped; after HeadersComplete the block's last LF is
// handed back, as http_parser itself reads it again).
// Body bytes (transfer framing removed: chunked decoded) go to the BodySink, if any, as they are
// parsed, straight out of the caller's buffer (no copy). setExpectNoBody(true) (an answer to HEAD)
// makes an answer end at its header block whatever it announces; a 1xx, 204 or 304 answer always ends
// there (RFC 9112 §6.3).
// finish() tells the parser the stream ended (a close-delimited answer completes there).
// A new message clears url() and headers() when it begins; nextMessage() also restarts headBytes().
// Bounds, checked on every piece as http_parser hands it over (nothing past a bound is kept;
// docs/contract.md §17, D-60): header lines per message (setMaxHeaderLines) and bytes held per
// message, URL and header names and values together (setMaxHeldBytes); heldBytes() is what the
// message holds now. The refusal comes with the piece that ends the URL, name or value crossing the
// bound (D-107), so the verdict is the same for any split of the bytes.
#include "service/transport/httpheadercollector.h"

#include <QByteArray>

#include <http_parser.h>

namespace coreflow {

class HttpMessageParser {
public:
    enum class Kind { Request, Response };
    enum class Event { None, HeadersComplete, MessageComplete, Failed };
    struct Step {
        qsizetype used = 0;
        Event event = Event::None;
    };
    class BodySink {
    public:
        virtual ~BodySink() = default;
        virtual void httpBody(const char *data, qsizetype size) = 0;
    };

    explicit HttpMessageParser(Kind kind);
    HttpMessageParser(const HttpMessageParser &) = delete;
    HttpMessageParser &operator=(const HttpMessageParser &) = delete;

    // Starts over (a new stream): the parser, the message and headBytes().
    void reset();
    // The caller is done with the message that completed: the next one's headBytes() start at 0.
    void nextMessage();
    void setExpectNoBody(bool expectNoBody) { m_expectNoBody = expectNoBody; }
    void setBodySink(BodySink *sink) { m_sink = sink; }
    // Header lines per message at most (HttpHeaderCollector::setMaxLines; negative: unbounded).
    void setMaxHeaderLines(qsizetype lines) { m_headers.setMaxLines(lines); }
    // Bytes of URL, header names and values one message may hold at most (negative: unbounded).
    void setMaxHeldBytes(qsizetype bytes) { m_maxHeldBytes = bytes; }
    qsizetype heldBytes() const { return m_url.size() + m_headers.heldBytes(); }
    // Which bound failed the message (Bytes for a URL past the held bound), or None.
    HttpHeaderCollector::Overflow overflow() const
    {
        return m_urlOverflow ? HttpHeaderCollector::Overflow::Bytes : m_headers.overflow();
    }

    Step execute(const char *data, qsizetype size);
    Step finish();

    const QByteArray &url() const { return m_url; }
    const HttpHeaderCollector &headers() const { return m_headers; }
    HttpHeaderCollector &headers() { return m_headers; }
    bool headersDone() const { return m_headersDone; }
    qsizetype headBytes() const { return m_headBytes; }
    int statusCode() const { return int(m_parser.status_code); }
    http_method method() const { return http_method(m_parser.method); }
    const char *methodName() const { return http_method_str(method()); }
    bool keepAlive() const { return http_should_keep_alive(&m_parser) != 0; }
    bool upgrade() const { return m_parser.upgrade != 0; }
    http_errno error() const { return HTTP_PARSER_ERRNO(&m_parser); }

private:
    static HttpMessageParser &of(http_parser *p) { return *static_cast<HttpMessageParser *>(p->data); }
    Step run(const char *data, qsizetype size);
    // True when a piece http_parser handed over ends before the buffer being parsed does: it saw the
    // byte that ends the piece (a ':', a line end, a space), so the URL, name or value is complete.
    // A piece that reaches the buffer's end is only what that read held.
    bool ends(const char *at, size_t length) const { return at + length < m_bufferEnd; }

    Kind m_kind;
    http_parser m_parser{};
    http_parser_settings m_settings{};
    QByteArray m_url;
    HttpHeaderCollector m_headers;
    BodySink *m_sink = nullptr;
    Event m_pending = Event::None;
    qsizetype m_headBytes = 0;
    qsizetype m_maxHeldBytes = -1;
    bool m_urlOverflow = false;
    bool m_urlPastBound = false; // the URL crossed the held bound; refused once it ends
    const char *m_bufferEnd = nullptr; // the end of the bytes run() is parsing
    bool m_headersDone = false;
    bool m_expectNoBody = false;
};

} // namespace coreflow
