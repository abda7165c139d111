#pragma once
// HttpHeadReader: reads the first header block of a connection off a TlsConnection, for the two
// handshakes (the listener's first request, docs/contract.md §3; the WebSocket client handshake's
// answer, §2 / D-54). Every byte read is kept (bytes()): what follows the block belongs to the
// next holder of the connection. Parsed by HttpMessageParser (http_parser).
//
// readFrom() reads what the connection has, 16 KiB at a time, and returns:
//   Complete  the header block ended (parser(): url, headers, method or status);
//   Failed    http_parser refused the bytes;
//   TooLarge  more than maxBytes were read without either of the above;
//   Waiting   the connection has nothing more to read now (call again when it is readable).
// After any outcome but Waiting nothing more is read.
#include "service/transport/httpmessageparser.h"

#include <QByteArray>

namespace coreflow {

class TlsConnection;

class HttpHeadReader {
public:
    enum class Outcome { Waiting, Complete, Failed, TooLarge };

    HttpHeadReader(HttpMessageParser::Kind kind, qsizetype maxBytes);

    Outcome readFrom(TlsConnection &tls);

    const QByteArray &bytes() const { return m_bytes; }
    const HttpMessageParser &parser() const { return m_parser; }

private:
    HttpMessageParser m_parser;
    qsizetype m_maxBytes;
    QByteArray m_bytes;
    Outcome m_outcome = Outcome::Waiting;
};

} // namespace coreflow
