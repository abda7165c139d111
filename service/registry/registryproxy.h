#pragma once
// RegistryProxy: the cluster's image pull endpoint (docs/contract.md §17, rules
// IP-01..IP-22). The relay listener hands it every plain HTTP request on its one TLS port (everything
// but the WebSocket upgrade at "/"); it forwards pulls to the registry Cloudly publishes and streams
// the answers back.
//
// What is served (checked in this order; refusals use the registry API's error shape, see
// contract::httpRefusal, and a HEAD refusal carries the headers but no body):
//   1. path: "/v2" or under "/v2/", or exactly a token realm path (below); otherwise
//      404 path-not-served (IP-03). A path with a "." or ".." segment (also percent-encoded) is
//      path-not-served too: it could name a path outside /v2/ on Cloudly's origin. So is a path with
//      an encoded slash or backslash (%2F, %5C, any case: "/v2/..%2F..%2Fadmin" would be one segment
//      here and a climb upstream), an encoded control character (%00-%1F, %7F), a raw control
//      character or backslash (Qt has already re-encoded a malformed escape such as "%zz" as "%25zz").
//   2. method: GET or HEAD; otherwise 405 registry-method-refused, Allow: GET, HEAD (IP-02). Nothing
//      is forwarded.
//   3. body: a pull carries none; a request with a body is 400 request-invalid. Behind the relay's
//      own listener a body never gets this far: ListenerHttpConnection refuses it (413) as soon as
//      the header block announces it, before a body byte is read.
//   4. headers: allow-listed and bounded (RegistryHeaders); over a bound is 400 request-invalid.
//   Then the exchange is forwarded (RegistryExchange) to <registry origin><path>?<query>, path and
//   query unchanged (IP-07). Every GET/HEAD under /v2/ is forwarded (IP-01): manifests, blobs
//   (Range passes), tags list, and whatever else the registry serves for reading; the relay decides
//   nothing about who may pull what (IP-05) and caches nothing (IP-06).
//
// The registry is CLOUDLY_URL's origin (IP-20): scheme (wss -> https, ws -> http), host and port of
// cloudlyUrl; its path is ignored (this is the one place that maps CLOUDLY_URL to the registry). The
// connections to it are the relay's own (HttpClientPool: HTTP/1.1 keep-alive on the relay's own OpenSSL
// transport in this thread, under kUpstreamLimits), trusting the system CAs plus extraCaCertificates
// (TlsClientContext).
//
// Token realm path (decision): the relay serves the realm path it has itself rewritten. Each realm
// whose origin is Cloudly's is rewritten to the relay's origin (WwwAuthenticateRewriter) and its path
// is remembered (at most kMaxTokenPaths distinct paths, oldest forgotten first); a GET/HEAD of a
// remembered path is forwarded to Cloudly the same way, untouched. A node always meets the challenge
// (GET /v2/ -> 401) before it follows the realm, so the path is known by then; after a relay restart a
// node holding an old challenge gets path-not-served once and starts over from /v2/, as clients do on
// any token failure. Only GET/HEAD token requests are served (a POST OAuth2 token request carries a
// body; pulls use GET).
//
// Third-party realms: left untouched (IP-10) and logged once per distinct origin (IP-11; at most
// kMaxRememberedForeignOrigins remembered, past that each is logged again).
//
// Pipelining: answers on one connection go out in request order; the listener hands a connection's
// next request over only after the answer before it finished (ListenerHttpConnection: at most 16
// wait per connection).
//
// Logging: category coreflow.registry; method, path class and status only (IP-22).
#include "service/listener/listenerhttphandler.h"
#include "service/transport/httpclientlimits.h"

#include <QList>
#include <QElapsedTimer>
#include <QObject>
#include <QSet>
#include <QSslCertificate>
#include <QStringList>
#include <QUrl>
#include <memory>

namespace coreflow {

class Clock;
class HttpClientPool;
class RegistryExchange;
class WwwAuthenticateRewriter;

class RegistryProxy : public QObject, public ListenerHttpHandler {
    Q_OBJECT
public:
    static constexpr qint64 kDefaultHeaderTimeoutMs = 30'000;  // registry status line must arrive by then
    static constexpr qint64 kRefusalLogIntervalMs = 1000;      // refusal log lines: at most one per interval
    static constexpr qint64 kDefaultWatermarkBytes = 512 * 1024;         // node connection, per exchange, at most
    // In-flight memory budget shared by the running exchanges, bytes: each exchange's node-connection
    // watermark is the budget / running exchanges (re-read before every upstream read), within
    // [kMinShareBytes, kDefaultWatermarkBytes]. One pull gets the full 512 KiB; 200 concurrent pulls
    // get 80 KiB each, so memory stays flat as pulls are added. The upstream side holds nothing of its
    // own beyond OpenSSL's one record of read-ahead: it is read only while the node's side has room.
    static constexpr qint64 kDefaultInFlightBudgetBytes = 16 * 1024 * 1024;
    static constexpr qint64 kMinShareBytes = 32 * 1024;
    // The upstream client's bounds (docs/contract.md §17): at most 256 connections to the registry,
    // 64 kept idle for 30000 ms each; an answer over 128 header lines fails as HeadersTooLarge before
    // RegistryHeaders' own bound of kMaxLines sees it.
    static constexpr HttpClientLimits kUpstreamLimits{
        .maxConnections = 256, .maxIdleConnections = 64, .idleTimeoutMs = 30'000, .maxHeaderLines = 128};
    static constexpr int kMaxTokenPaths = 16;
    static constexpr int kMaxRememberedForeignOrigins = 256;

    // cloudlyUrl: CLOUDLY_URL (wss/ws or https/http); its origin is the registry (wss -> https, ws -> http). relayOrigin: the origin nodes dial
    // ("https://host[:port]"), which rewritten realms name. extraCaCertificates: trusted for the
    // registry connection in addition to the system CAs.
    RegistryProxy(QUrl cloudlyUrl, QUrl relayOrigin, QList<QSslCertificate> extraCaCertificates, Clock &clock,
                  QObject *parent = nullptr);
    ~RegistryProxy() override;

    void handleHttp(const ListenerHttpRequest &request, std::unique_ptr<ListenerHttpResponder> responder) override;
    // RegistryHeaders::kMaxLines (32) lines, 431 registry-headers-too-large, applied by the listener
    // while a request's header block arrives (docs/contract.md §17, D-60).
    ListenerHeaderLineBound headerLineBound() const override;

    QUrl registryOrigin() const { return m_registryOrigin; }
    QStringList tokenRealmPaths() const { return m_tokenPaths; }
    int activeExchanges() const { return m_active; }
    // Σ RegistryExchange::heldBodyBytes() of the running exchanges, bytes: what the pulls hold in node
    // connections now. Each is bounded by sharedWatermark() plus one upstream read
    // (HttpClientConnection::kReadChunkBytes), so the sum stays near the in-flight budget.
    qint64 heldBodyBytes() const;
    // The smallest watermark any exchange's body pump read since start (RegistryExchange::
    // smallestWatermarkRead(), taken when each exchange ends), bytes; 0 before any body was read.
    qint64 smallestWatermarkRead() const { return m_smallestWatermarkRead; }
    // Since start (docs/contract.md §18.1 counters): requests relayed to the registry, and the body
    // bytes of their answers handed to nodes (counted when an exchange ends).
    qint64 requestsRelayed() const { return m_requestsRelayed; }
    qint64 bodyBytesRelayed() const { return m_bodyBytesRelayed; }
    // The node-connection watermark each running exchange reads now, bytes: the in-flight budget
    // divided among activeExchanges(), within [kMinShareBytes, the watermark].
    qint64 sharedWatermark() const;
    void setUpstreamHeaderTimeoutMs(qint64 ms) { m_headerTimeoutMs = ms; }
    void setWatermarkBytes(qint64 bytes) { m_watermark = bytes; }
    void setInFlightBudgetBytes(qint64 bytes) { m_budget = bytes; }

    // Log class of a path: base, manifest, blob, blob-upload, tags, catalog, other (under /v2/), token,
    // outside. Never the repository name or digest.
    static QByteArray pathClass(const QString &encodedPath, bool isTokenPath);

Q_SIGNALS:
    void exchangeFinished();

private:
    bool refusalLogAllowed();
    void noteChallenges(const QList<QString> &rewrittenRealmPaths, const QList<QString> &foreignOrigins);

    QUrl m_registryOrigin;
    QUrl m_relayOrigin;
    Clock &m_clock;
    std::unique_ptr<HttpClientPool> m_pool;
    std::unique_ptr<WwwAuthenticateRewriter> m_rewriter;
    QStringList m_tokenPaths;
    QSet<QString> m_loggedForeignOrigins;
    QElapsedTimer m_refusalLog;          // refusal log lines: at most one per kRefusalLogIntervalMs
    qint64 m_refusalsNotLogged = 0;
    qint64 m_headerTimeoutMs = kDefaultHeaderTimeoutMs;
    qint64 m_watermark = kDefaultWatermarkBytes;
    qint64 m_budget = kDefaultInFlightBudgetBytes;
    int m_active = 0;
    QSet<RegistryExchange *> m_running; // for heldBodyBytes(); removed on finished()
    qint64 m_smallestWatermarkRead = 0;
    qint64 m_requestsRelayed = 0;
    qint64 m_bodyBytesRelayed = 0;
};

} // namespace coreflow
