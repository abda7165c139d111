#include "service/registry/upstreamresponseparser.h"

namespace coreflow {

UpstreamResponseParser::UpstreamResponseParser(Events &events) : m_events(events)
{
    http_parser_settings_init(&m_settings);
    m_settings.on_message_begin = &UpstreamResponseParser::onMessageBegin;
    m_settings.on_status = &UpstreamResponseParser::onStatus;
    m_settings.on_header_field = &UpstreamResponseParser::onHeaderField;
    m_settings.on_header_value = &UpstreamResponseParser::onHeaderValue;
    m_settings.on_headers_complete = &UpstreamResponseParser::onHeadersComplete;
    m_settings.on_body = &UpstreamResponseParser::onBody;
    m_settings.on_message_complete = &UpstreamResponseParser::onMessageComplete;
    reset(false);
}

void UpstreamResponseParser::reset(bool expectNoBody)
{
    http_parser_init(&m_parser, HTTP_RESPONSE);
    m_parser.data = this;
    m_headers.clear();
    m_inValue = false;
    m_expectNoBody = expectNoBody;
    m_interim = false;
    m_complete = false;
    m_headReported = false;
    m_keepAlive = false;
    m_failureClass.clear();
}

void UpstreamResponseParser::fail(const QByteArray &failureClass)
{
    if (m_failureClass.isEmpty())
        m_failureClass = failureClass;
}

qsizetype UpstreamResponseParser::feed(const char *data, qsizetype size)
{
    if (m_complete || failed() || size <= 0)
        return 0;
    const size_t consumed = http_parser_execute(&m_parser, &m_settings, data, size_t(size));
    const auto error = http_errno(m_parser.http_errno);
    if (error == HPE_PAUSED) {
        // Paused by onMessageComplete: the answer is over.
        http_parser_pause(&m_parser, 0);
    } else if (error != HPE_OK && !failed()) {
        fail(error == HPE_HEADER_OVERFLOW ? QByteArrayLiteral("HeadersTooLarge") : QByteArrayLiteral("Protocol"));
    }
    return qsizetype(consumed);
}

bool UpstreamResponseParser::feedEof()
{
    if (m_complete)
        return true;
    if (failed())
        return false;
    http_parser_execute(&m_parser, &m_settings, nullptr, 0);
    return m_complete;
}

int UpstreamResponseParser::onMessageBegin(http_parser *p)
{
    UpstreamResponseParser &s = self(p);
    s.m_headers.clear();
    s.m_inValue = false;
    return 0;
}

int UpstreamResponseParser::onStatus(http_parser *, const char *, size_t)
{
    return 0; // the reason phrase is not relayed (the node's server writes its own)
}

int UpstreamResponseParser::onHeaderField(http_parser *p, const char *at, size_t length)
{
    UpstreamResponseParser &s = self(p);
    if (s.m_inValue || s.m_headers.isEmpty()) {
        if (s.m_headers.size() >= kMaxHeaderLines) {
            s.fail(QByteArrayLiteral("HeadersTooLarge"));
            return 1;
        }
        s.m_headers.append({QByteArray(), QByteArray()});
        s.m_inValue = false;
    }
    s.m_headers.last().first.append(at, qsizetype(length));
    return 0;
}

int UpstreamResponseParser::onHeaderValue(http_parser *p, const char *at, size_t length)
{
    UpstreamResponseParser &s = self(p);
    if (s.m_headers.isEmpty())
        return 1;
    s.m_inValue = true;
    s.m_headers.last().second.append(at, qsizetype(length));
    return 0;
}

int UpstreamResponseParser::onHeadersComplete(http_parser *p)
{
    UpstreamResponseParser &s = self(p);
    const int status = int(p->status_code);
    if (status < 100 || status > 599) {
        // http_parser takes any 1..3 digits; RFC 9110 §15 allows 100..599 only (docs/contract.md §17).
        s.fail(QByteArrayLiteral("Protocol"));
        return -1;
    }
    if (status >= 100 && status < 200 && status != 101) {
        s.m_interim = true; // no body; the real answer follows on the same connection
        return 0;
    }
    s.m_headReported = true;
    s.m_events.head(status, s.m_headers);
    s.m_headers.clear();
    s.m_headers.squeeze();
    return s.m_expectNoBody ? 1 : 0;
}

int UpstreamResponseParser::onBody(http_parser *p, const char *at, size_t length)
{
    self(p).m_events.body(at, qsizetype(length));
    return 0;
}

int UpstreamResponseParser::onMessageComplete(http_parser *p)
{
    UpstreamResponseParser &s = self(p);
    if (s.m_interim) {
        s.m_interim = false;
        return 0; // keep parsing: the final answer comes next
    }
    s.m_complete = true;
    s.m_keepAlive = http_should_keep_alive(p) != 0;
    http_parser_pause(p, 1);
    s.m_events.complete();
    return 0;
}

} // namespace coreflow
