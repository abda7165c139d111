#include "service/transport/httpheadreader.h"

#include "service/transport/tlsconnection.h"

namespace coreflow {

HttpHeadReader::HttpHeadReader(HttpMessageParser::Kind kind, qsizetype maxBytes) : m_parser(kind), m_maxBytes(maxBytes)
{
}

HttpHeadReader::Outcome HttpHeadReader::readFrom(TlsConnection &tls)
{
    char buffer[16 * 1024];
    while (m_outcome == Outcome::Waiting) {
        const qsizetype n = tls.read(buffer, qsizetype(sizeof buffer));
        if (n <= 0)
            break;
        m_bytes.append(buffer, n);
        const HttpMessageParser::Event event = m_parser.execute(buffer, n).event;
        if (event == HttpMessageParser::Event::HeadersComplete)
            m_outcome = Outcome::Complete;
        else if (event == HttpMessageParser::Event::Failed)
            m_outcome = Outcome::Failed;
        else if (m_bytes.size() > m_maxBytes)
            m_outcome = Outcome::TooLarge;
    }
    return m_outcome;
}

} // namespace coreflow
