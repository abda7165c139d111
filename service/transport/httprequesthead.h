#pragma once
// httpRequestHead: the one writer of an HTTP/1.1 request head the relay sends as a client
// (docs/contract.md §17 for the HTTP client, §3 for the WebSocket client handshake). Pure: no I/O.
//
//   <method> <target> HTTP/1.1\r\n
//   Host: <host>\r\n
//   <name>: <value>\r\n                  every request header, in order
//   Content-Length: <size>\r\n          when the request has a body, or the method is POST or PUT
//   Connection: <connection>\r\n         only when connection is not empty
//   \r\n
//   <body>                               request.body, when not empty
// host: host[:port] as the Host header carries it.
// httpRequestHead writes no bearer line (request.bearer is ignored); httpRequestHeadWithBearer writes
// the same head with "Authorization: Bearer <bearer>\r\n" after the headers, composed in guarded
// memory (a Secret: the bytes never lie in an ordinary buffer, §19.4).
#include "service/transport/httpclientrequest.h"
#include "shared/secret.h"

#include <QByteArray>
#include <QByteArrayView>

namespace coreflow {

QByteArray httpRequestHead(const HttpClientRequest &request, QByteArrayView host, QByteArrayView connection = {});
Secret httpRequestHeadWithBearer(const HttpClientRequest &request, QByteArrayView host, QByteArrayView connection = {});

} // namespace coreflow
