#pragma once
// HttpClientRequest: one HTTP/1.1 request the relay sends as a client (the HTTP client's
// HttpClientConnection, the WebSocket client handshake), as httpRequestHead() writes it.
// docs/contract.md §17 (the relay's own HTTP client).
//
// Shapes: method as sent ("GET", "HEAD", ...); target the request target (path and query,
// percent-encoded, "/" at least); headers every header line to send except Host (and, for the HTTP
// client, Connection), in order. Values must hold no CR or LF (the lane checks what it forwards):
// the writer does not split or refuse lines. bearer: when not empty, an "Authorization: Bearer
// <bearer>" line follows the headers; it is held only in guarded memory and the head that carries it
// is composed there too (httpRequestHeadWithBearer, docs/contract.md §19.4).
// body: a whole request body (bytes), sent after the head with "Content-Length: <size>" in the same
// buffer (guarded too when a bearer is present). Empty: no body, and no Content-Length unless the
// method is POST or PUT (then "Content-Length: 0"). Streamed bodies are not written here.
#include "service/transport/httpheaderpairs.h"
#include "shared/secret.h"

#include <QByteArray>

namespace coreflow {

struct HttpClientRequest {
    QByteArray method;
    QByteArray target;
    HttpHeaderPairs headers;
    Secret bearer{};
    QByteArray body{};
};

} // namespace coreflow
