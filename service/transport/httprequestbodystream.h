#pragma once
// HttpRequestBodyStream: a request body the relay's HTTP client sends as it becomes available,
// never collected whole (docs/contract.md §13.4 receive direction: a database closure restored into a
// node's Corestore, D-75). The request states the body's length (HttpClientRequest::bodyStreamBytes,
// written as Content-Length; identity encodings); the connection writes the head, then pulls body bytes while its socket
// has room (at most HttpClientConnection::kBodyQueueBytes handed to TLS and not yet taken by the
// kernel) and the stream has bytes. A stream that has none now returns 0 and calls
// HttpClientPool::resumeBody() once it has more. Calls come on the pool's thread, never re-entrantly.
// A request with a stream is never retried by the pool once a byte of it was pulled.
#include <QtGlobal>

namespace coreflow {

class HttpRequestBodyStream {
public:
    virtual ~HttpRequestBodyStream() = default;
    // Copies up to `max` next body bytes to `out`; returns how many (0: none available now).
    virtual qsizetype requestBodyRead(char *out, qsizetype max) = 0;
    // Bytes pulled so far were taken by the socket (its queue fell below the bound): the lane's
    // measure of what the peer consumed (credit, §13.4).
    virtual void requestBodyDrained() {}
};

} // namespace coreflow
