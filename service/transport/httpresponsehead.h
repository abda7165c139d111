#pragma once
// The one writer of an HTTP/1.1 answer head the relay serves (docs/contract.md §3 listener
// handshake, §17 listener HTTP surface): the listener's responders and its refusals. Pure: no I/O.
//
//   httpStatusLine:   "HTTP/1.1 <status> <reason phrase>\r\n" (RFC 9110 phrases; "Unknown" for a
//                     status without one)
//   httpResponseHead: the status line, "<name>: <value>\r\n" for every header in order, then the
//                     blank line. Nothing is added: the caller names the framing (Content-Length or
//                     Transfer-Encoding) and Connection itself. Values must hold no CR or LF.
#include "service/transport/httpheaderpairs.h"

#include <QByteArray>

namespace coreflow {

QByteArray httpStatusLine(int status);
QByteArray httpResponseHead(int status, const HttpHeaderPairs &headers);

} // namespace coreflow
