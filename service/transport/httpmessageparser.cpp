#include "service/transport/httpmessageparser.h"

#include <utility>

namespace coreflow {

HttpMessageParser::HttpMessageParser(Kind kind) : m_kind(kind)
{
    http_parser_settings_init(&m_settings);
    m_settings.on_message_begin = [](http_parser *p) {
        HttpMessageParser &s = of(p);
        s.m_url.clear();
        s.m_headers.clear();
        s.m_urlOverflow = false;
        s.m_urlPastBound = false;
        s.m_headersDone = false;
        return 0;
    };
    m_settings.on_url = [](http_parser *p, const char *at, size_t length) {
        HttpMessageParser &s = of(p);
        // Past the bound the URL's pieces are dropped; the refusal comes with the piece that ends it
        // (HttpHeaderCollector's rule, so the verdict does not depend on where the bytes split).
        if (!s.m_urlPastBound && s.m_maxHeldBytes >= 0 && s.m_url.size() + qsizetype(length) > s.m_maxHeldBytes)
            s.m_urlPastBound = true;
        if (!s.m_urlPastBound) {
            s.m_url.append(at, qsizetype(length));
            return 0;
        }
        if (!s.ends(at, length))
            return 0;
        s.m_urlOverflow = true;
        return 1;
    };
    m_settings.on_header_field = [](http_parser *p, const char *at, size_t length) {
        HttpMessageParser &s = of(p);
        // The URL is complete once a header begins: the lines may hold what it left of the bound.
        s.m_headers.setMaxBytes(s.m_maxHeldBytes < 0 ? -1 : s.m_maxHeldBytes - s.m_url.size());
        return s.m_headers.field(at, qsizetype(length), s.ends(at, length)) ? 0 : 1;
    };
    m_settings.on_header_value = [](http_parser *p, const char *at, size_t length) {
        HttpMessageParser &s = of(p);
        return s.m_headers.value(at, qsizetype(length), s.ends(at, length)) ? 0 : 1;
    };
    // Pauses at the end of each header block and each message, so the caller decides about a
    // message (bounds, body, the answer's head) before the parser reads on.
    m_settings.on_headers_complete = [](http_parser *p) {
        HttpMessageParser &s = of(p);
        s.m_headers.finish();
        s.m_headersDone = true;
        s.m_pending = Event::HeadersComplete;
        http_parser_pause(p, 1);
        // 1: no body follows this header block. An answer to HEAD (expectNoBody) and, whatever they
        // announce, 1xx, 204 and 304 answers carry no content (RFC 9112 §6.3; http_parser would read
        // an announced Content-Length of theirs as a body).
        const bool contentless = p->type == HTTP_RESPONSE
                                 && (p->status_code / 100 == 1 || p->status_code == 204 || p->status_code == 304);
        return s.m_expectNoBody || contentless ? 1 : 0;
    };
    m_settings.on_body = [](http_parser *p, const char *at, size_t length) {
        if (BodySink *sink = of(p).m_sink)
            sink->httpBody(at, qsizetype(length));
        return 0;
    };
    m_settings.on_message_complete = [](http_parser *p) {
        of(p).m_pending = Event::MessageComplete;
        http_parser_pause(p, 1);
        return 0;
    };
    reset();
}

void HttpMessageParser::reset()
{
    http_parser_init(&m_parser, m_kind == Kind::Request ? HTTP_REQUEST : HTTP_RESPONSE);
    m_parser.data = this;
    m_url.clear();
    m_headers.clear();
    m_urlOverflow = false;
    m_urlPastBound = false;
    m_pending = Event::None;
    m_headBytes = 0;
    m_headersDone = false;
}

void HttpMessageParser::nextMessage()
{
    m_url.clear();
    m_headers.clear();
    m_urlOverflow = false;
    m_urlPastBound = false;
    m_headBytes = 0;
    m_headersDone = false;
}

HttpMessageParser::Step HttpMessageParser::execute(const char *data, qsizetype size)
{
    if (size <= 0)
        return {};
    return run(data, size);
}

HttpMessageParser::Step HttpMessageParser::finish()
{
    return run(nullptr, 0);
}

HttpMessageParser::Step HttpMessageParser::run(const char *data, qsizetype size)
{
    m_bufferEnd = data == nullptr ? nullptr : data + size;
    const size_t used = http_parser_execute(&m_parser, &m_settings, data, size_t(size));
    m_bufferEnd = nullptr;
    Step step{qsizetype(used), Event::None};
    const http_errno error = HTTP_PARSER_ERRNO(&m_parser);
    if (error == HPE_PAUSED) {
        http_parser_pause(&m_parser, 0);
        step.event = std::exchange(m_pending, Event::None);
        // Paused on the header block's last LF, which http_parser reads again when it resumes.
        if (step.event == Event::HeadersComplete)
            m_headBytes += qsizetype(used) + 1;
        return step;
    }
    if (!m_headersDone)
        m_headBytes += qsizetype(used);
    if (error != HPE_OK)
        step.event = Event::Failed;
    return step;
}

} // namespace coreflow
