#include "service/transport/httpresponseparser.h"

namespace coreflow {

HttpResponseParser::HttpResponseParser(Events &events, qsizetype maxHeaderLines) : m_events(events)
{
    m_parser.setBodySink(&m_events);
    m_parser.setMaxHeaderLines(maxHeaderLines);
    reset(false);
}

void HttpResponseParser::reset(bool expectNoBody)
{
    m_parser.reset();
    m_parser.setExpectNoBody(expectNoBody);
    m_failure.reset();
    m_interim = false;
    m_complete = false;
    m_headReported = false;
    m_keepAlive = false;
}

qsizetype HttpResponseParser::feed(const char *data, qsizetype size)
{
    qsizetype used = 0;
    while (used < size && !m_complete && !failed()) {
        const HttpMessageParser::Step step = m_parser.execute(data + used, size - used);
        used += step.used;
        if (!handle(step.event))
            break;
    }
    return used;
}

bool HttpResponseParser::feedEof()
{
    if (m_complete)
        return true;
    if (failed())
        return false;
    // Only a close-delimited body completes here; an error at the end is the answer cut short.
    if (m_parser.finish().event == HttpMessageParser::Event::MessageComplete)
        handle(HttpMessageParser::Event::MessageComplete);
    return m_complete;
}

bool HttpResponseParser::handle(HttpMessageParser::Event event)
{
    switch (event) {
    case HttpMessageParser::Event::None:
        return true;
    case HttpMessageParser::Event::HeadersComplete: {
        const int status = m_parser.statusCode();
        if (status < 100 || status > 599) {
            // http_parser takes any one to three digits; RFC 9110 §15 allows 100..599 only
            // (docs/contract.md §17): not an answer the relay reports or relays.
            m_failure = HttpClientFailure::Protocol;
            return false;
        }
        if (status >= 100 && status < 200 && status != 101) {
            m_interim = true; // no body; the real answer follows on the same connection
            return true;
        }
        m_headReported = true;
        m_events.head(status, m_parser.headers().headers());
        m_parser.headers().take(); // the head was handed over: its memory goes now
        return true;
    }
    case HttpMessageParser::Event::MessageComplete:
        if (m_interim) {
            m_interim = false;
            return true; // keep parsing: the final answer comes next
        }
        m_complete = true;
        m_keepAlive = m_parser.keepAlive();
        m_events.complete();
        return false;
    case HttpMessageParser::Event::Failed:
        m_failure = m_parser.error() == HPE_HEADER_OVERFLOW || m_parser.headers().overflowed()
                        ? HttpClientFailure::HeadersTooLarge
                        : HttpClientFailure::Protocol;
        return false;
    }
    return false;
}

} // namespace coreflow
