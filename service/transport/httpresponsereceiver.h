#pragma once
// HttpResponseReceiver: what receives one answer from the relay's HTTP client (HttpClientPool /
// HttpClientConnection); a lane implements it per request (the registry lane: RegistryExchange).
// docs/contract.md §17 (the relay's own HTTP client). All calls come on the thread that owns the
// pool, never re-entrantly from inside one another.
//
// Order for one request: zero or one responseHead(), then zero or more responseBody(), then exactly
// one of responseComplete() or responseFailed(); nothing after that. responseFailed() may come before
// any responseHead() (no answer: refused, unreachable, TLS, closed, unparsable) or mid-body.
// A receiver that had a connection opened first (HttpClientPool::connectFor) hears exactly one of
// connectionEstablished() or responseFailed() before it submits its request.
#include "service/transport/httpclientfailure.h"
#include "service/transport/httpheaderpairs.h"

#include <QtGlobal>

namespace coreflow {

class HttpResponseReceiver {
public:
    virtual ~HttpResponseReceiver() = default;

    // Status line and header block, as the peer sent them (values trimmed, nothing filtered).
    virtual void responseHead(int status, const HttpHeaderPairs &headers) = 0;
    // Backpressure: body bytes are read from the socket only while this is true. When it turns true
    // again the receiver calls HttpClientPool::resume(). Asked before every read (at most
    // HttpClientConnection::kReadChunkBytes are handed over per read).
    virtual bool responseBodyRoom() const = 0;
    // Body bytes with the transfer framing removed (chunked decoded), straight out of the read buffer.
    virtual void responseBody(const char *data, qsizetype size) = 0;
    // The whole answer was handed over.
    virtual void responseComplete() = 0;
    // The exchange failed (see HttpClientFailure).
    virtual void responseFailed(HttpClientFailure failure) = 0;
    // After HttpClientPool::connectFor(): the connection is up (TCP, and TLS for https) and waits for
    // this receiver's request.
    virtual void connectionEstablished() {}
};

} // namespace coreflow
