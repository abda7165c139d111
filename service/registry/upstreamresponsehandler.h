#pragma once
// UpstreamResponseHandler: what receives one registry answer from the relay's upstream client
// (UpstreamPool / UpstreamConnection). RegistryExchange implements it. All calls come on the thread
// that owns the pool (the relay's main thread), never re-entrantly from inside one another.
//
// Order for one request: zero or one upstreamHead(), then zero or more upstreamBody(), then exactly one
// of upstreamComplete() or upstreamFailed(); nothing after that. upstreamFailed() may come before any
// upstreamHead() (no answer: refused, unreachable, TLS, closed, unparsable) or mid-body.
#include "service/registry/registryheaders.h"

#include <QByteArray>

namespace coreflow {

class UpstreamResponseHandler {
public:
    virtual ~UpstreamResponseHandler() = default;

    // Status line and header block, as the registry sent them (no filtering yet).
    virtual void upstreamHead(int status, const HeaderPairs &headers) = 0;
    // Backpressure: body bytes are read from the registry only while this is true. When it turns true
    // again the handler calls UpstreamPool::resume(). Asked before every read (at most
    // UpstreamConnection::kReadChunkBytes are handed over per read).
    virtual bool upstreamBodyRoom() const = 0;
    // Body bytes with the transfer framing removed (chunked decoded).
    virtual void upstreamBody(const char *data, qsizetype size) = 0;
    // The whole answer was handed over.
    virtual void upstreamComplete() = 0;
    // The exchange with the registry failed. failureClass: a failure class (contract §17)
    // (ConnectionRefused, HostNotFound, Timeout, TlsHandshake, RemoteClosed, Proxy, Protocol,
    // HeadersTooLarge, Network); never an error message.
    virtual void upstreamFailed(const QByteArray &failureClass) = 0;
};

} // namespace coreflow
