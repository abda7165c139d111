#pragma once
// RegistryExchange: one node request forwarded to the registry and its answer streamed back (rules
// IP-01, IP-04, IP-06, IP-07, IP-12..IP-17, IP-19, IP-21, IP-22). Created by RegistryProxy after it
// has accepted the method, path and headers; deletes itself when done.
//
// Sequence:
//  1. GET/HEAD <path>?<query> to the registry through the HttpClientPool (the relay's own HTTP/1.1
//     client: keep-alive connections, no redirect following, no cookies, no cache), with the allowed
//     node headers (RegistryHeaders), a User-Agent (coreflow-relay unless the node sent one) and
//     Accept-Language: * (IP-18); the registry is read only while the node's side has room
//     (backpressure to the registry).
//  2. As soon as the registry's status line and headers arrive (HttpResponseReceiver::responseHead),
//     they are filtered (RegistryHeaders::returnResponse), the WWW-Authenticate realm rewritten
//     (WwwAuthenticateRewriter) and written to the node through the responder (the listener's
//     ListenerHttpResponder: straight into the node's TLS connection); the body is not waited for.
//  3. The body is written by BodyPump as it arrives (Length framing under the registry's
//     Content-Length, Chunked framing when there is none); the upstream is read only while the pump
//     has room. No body for HEAD, 1xx, 204, 304.
//  4. The node leaving (ListenerHttpResponder::Observer::responderGone) aborts the upstream request
//     at once (its connection is closed, never reused).
//  The answer ends with the responder's finish() (the node's connection goes on to its next
//  request) or, when it cannot be completed, abort().
//  5. No answer from the registry: 502 registry-unreachable with the failure class
//     (registryFailureClass), when the headers
//     have not been sent yet; a failure mid-body aborts the node's connection (the body cannot be
//     completed, and a truncated body must not look complete). No registry status line within
//     headerTimeoutMs (measured on the injected Clock) is the class Timeout.
#include "service/registry/registryheaders.h"
#include "service/transport/httpresponsereceiver.h"

#include "service/listener/listenerhttpresponder.h"

#include <QObject>
#include <QUrl>
#include <functional>
#include <memory>

namespace coreflow {

class BodyPump;
class Clock;
class ClockTimer;
class HttpClientPool;
class WwwAuthenticateRewriter;
struct WwwAuthenticateRewrite;

struct RegistryExchangeSetup {
    QUrl upstreamUrl;          // registry origin + the node's path and query, unchanged
    HeaderPairs headers;       // RegistryHeaders::forwardRequest(...).headers
    bool head = false;         // HEAD (else GET)
    QByteArray pathClass;      // for logs: base, manifest, blob, tags, token, other
    qint64 headerTimeoutMs = 0;
    qint64 watermark = 0;      // BodyPump watermark, bytes (the most; see watermarkSource)
    // When set, asked for the current watermark before every upstream read (a shared in-flight
    // budget); the result is capped at `watermark`.
    std::function<qint64()> watermarkSource;
};

class RegistryExchange : public QObject, private HttpResponseReceiver, private ListenerHttpResponder::Observer {
    Q_OBJECT
public:
    RegistryExchange(RegistryExchangeSetup setup, std::unique_ptr<ListenerHttpResponder> responder, HttpClientPool &pool,
                     const WwwAuthenticateRewriter &rewriter, Clock &clock, QObject *parent = nullptr);
    ~RegistryExchange() override;

    void start();
    // Body bytes handed to the node so far (BodyPump::bytesRelayed(); 0 before the head).
    qint64 bodyBytesRelayed() const;
    // Body bytes the node's connection still holds to send (its TLS write queue), bytes; 0 before the
    // head and once the exchange is over. BodyPump bounds it by the watermark plus one upstream read.
    qint64 heldBodyBytes() const;
    // The smallest node-connection watermark this exchange's body pump read before an upstream read,
    // bytes (the shared in-flight budget's share, §17); 0 before the first body read.
    qint64 smallestWatermarkRead() const { return m_smallestWatermark; }

Q_SIGNALS:
    // The registry's challenges were rewritten: realm paths now served, third-party realm origins.
    void challengesSeen(const QList<QString> &rewrittenRealmPaths, const QList<QString> &foreignOrigins);
    // Emitted once when the exchange is over (answered, failed, or the node left).
    void finished();

private:
    // HttpResponseReceiver
    void responseHead(int status, const HttpHeaderPairs &headers) override;
    bool responseBodyRoom() const override;
    void responseBody(const char *data, qsizetype size) override;
    void responseComplete() override;
    void responseFailed(HttpClientFailure failure) override;

    // ListenerHttpResponder::Observer
    void responderWritten() override;
    void responderGone() override { onClientGone(); }

    void onClientGone();
    // Before the head: no status line within headerTimeoutMs is a 502 Timeout. After it: no body
    // byte for headerTimeoutMs while the node has room aborts the node's connection (class Timeout).
    void onHeaderTimeout();
    void upstreamFailedMidBody(const QByteArray &failureClass);
    void sendHeaders(int status, const HeaderPairs &headers);
    void fail(const QByteArray &failureClass);
    void complete();
    bool socketUsable() const;
    const char *method() const { return m_setup.head ? "HEAD" : "GET"; }

    RegistryExchangeSetup m_setup;
    std::unique_ptr<ListenerHttpResponder> m_responder;
    mutable qint64 m_smallestWatermark = 0; // see smallestWatermarkRead()
    HttpClientPool &m_pool;
    const WwwAuthenticateRewriter &m_rewriter;
    Clock &m_clock;
    bool m_submitted = false;    // the request is with the pool (withdrawn with cancel unless over)
    std::unique_ptr<ClockTimer> m_headerTimer;
    BodyPump *m_pump = nullptr;
    qint64 m_startedMs = 0;
    int m_status = 0;
    bool m_headersSent = false;
    bool m_upstreamOver = false; // the pool delivered responseComplete or responseFailed
    bool m_done = false;
    bool m_completed = false;
};

} // namespace coreflow
