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
#include "service/transport/httpheaderpairs.h"
#include "service/transport/httprequestbodystream.h"
#include "shared/secret.h"

#include <QByteArray>

namespace coreflow {

struct HttpClientRequest {
    QByteArray method;
    QByteArray target;
    HttpHeaderPairs headers;
    Secret bearer{};
    // A body sent as it becomes available (HttpRequestBodyStream; the lane's headers state its
    // length). nullptr: no streamed body. Not owned; it must outlive the exchange.
    HttpRequestBodyStream *bodyStream = nullptr;
};

} // namespace coreflow
