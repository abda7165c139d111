#pragma once
// ListenerHttpResponder: the answer channel of one request on a relay listener HTTP connection
// (docs/contract.md §17, D-53). The ListenerHttpHandler receives one per request and owns it until
// the answer is over; answers on one connection go out in request order, so the next request of the
// connection is handed out only after this one's finish().
//
// Writing: writeHead() once (status line with the status's reason phrase, the given header lines in
// order, the blank line; the handler names the framing itself: Content-Length, or
// Transfer-Encoding: chunked with the body framed by the handler), then writeBody() as often as
// needed, then finish(). Nothing is added to the head. Bytes go straight into the connection's TLS
// write queue (no copy beyond what the socket does not take at once).
// Backpressure: pendingBytes() is what the connection still holds to send (bytes); the observer's
// responderWritten() comes each time queued bytes left, so a handler writes while pendingBytes() is
// under its watermark and resumes there.
// Ends: finish() completes the answer (a request that did not ask for keep-alive closes the
// connection after it); abort() closes the connection at once (a body that cannot be completed must
// not look complete); the client leaving calls the observer's responderGone() once, after which
// isConnected() is false and writes are dropped. Deleting a responder before finish() aborts the
// connection.
#include "shared/contract/httprefusal.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QList>
#include <QPair>

namespace coreflow {

class ListenerHttpResponder {
public:
    class Observer {
    public:
        virtual ~Observer() = default;
        virtual void responderWritten() = 0;
        virtual void responderGone() = 0;
    };

    virtual ~ListenerHttpResponder() = default;

    virtual void setObserver(Observer *observer) = 0;
    virtual bool isConnected() const = 0;
    virtual void writeHead(int status, const QList<QPair<QByteArray, QByteArray>> &headers) = 0;
    virtual void writeBody(QByteArrayView bytes) = 0;
    virtual qint64 pendingBytes() const = 0;
    virtual void finish() = 0;
    virtual void abort() = 0;

    // A refusal (contract::httpRefusal, contract §17): its head, then its body unless withBody is
    // false (the answer to a HEAD). Does not finish() the answer.
    void writeRefusal(const contract::HttpRefusal &refusal, bool withBody = true)
    {
        writeHead(refusal.status, refusal.headers);
        if (withBody)
            writeBody(refusal.body);
    }
};

} // namespace coreflow
