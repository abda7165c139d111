#include "service/registry/registryproxy.h"

#include "service/registry/registryexchange.h"
#include "service/registry/registryfailureclass.h"
#include "service/registry/registryheaders.h"
#include "service/registry/registrypathfilter.h"
#include "service/core/logging.h"
#include "shared/contract/httprefusal.h"
#include "service/registry/wwwauthenticaterewriter.h"
#include "service/transport/httpclientpool.h"
#include "service/transport/tlsclientcontext.h"
#include "shared/contract/refusalnames.h"
#include "shared/util/clock.h"

namespace coreflow {

namespace {

QUrl originOf(const QUrl &url)
{
    QUrl origin;
    QString scheme = url.scheme().toLower();
    if (scheme == QLatin1String("wss"))
        scheme = QStringLiteral("https");
    else if (scheme == QLatin1String("ws"))
        scheme = QStringLiteral("http");
    origin.setScheme(scheme);
    origin.setHost(url.host());
    origin.setPort(url.port());
    return origin;
}

// Answers a refusal in the registry API's error shape (contract::httpRefusal); a HEAD gets the
// headers and no body.
void refuse(ListenerHttpResponder &responder, bool head, int status, QLatin1StringView name, const QByteArray &reason,
            bool allowHeader = false)
{
    responder.writeRefusal(
        contract::httpRefusal(status, name, reason, {},
                              allowHeader ? HeaderPairs{{QByteArrayLiteral("Allow"), QByteArrayLiteral("GET, HEAD")}}
                                          : HeaderPairs{}),
        !head);
    responder.finish();
}

} // namespace

RegistryProxy::RegistryProxy(QUrl cloudlyUrl, QUrl relayOrigin, QList<QSslCertificate> extraCaCertificates,
                             Clock &clock, QObject *parent)
    : QObject(parent), m_registryOrigin(originOf(cloudlyUrl)), m_relayOrigin(originOf(relayOrigin)), m_clock(clock)
{
    std::shared_ptr<const TlsClientContext> tls;
    auto context = TlsClientContext::create(extraCaCertificates);
    if (context.ok())
        tls = context.value();
    else // every https pull then fails as TlsHandshake (502); the line names what failed, never key material
        qCWarning(logRegistry, "no TLS client context for the registry connection: %s",
                  qUtf8Printable(context.refusal().reason));
    m_pool = std::make_unique<HttpClientPool>(m_registryOrigin, std::move(tls), kUpstreamLimits, m_clock);
    connect(m_pool.get(), &HttpClientPool::requestRetried, this, [](HttpClientFailure failure) {
        qCInfo(logRegistry, "a kept-alive registry connection was closed under a request (%s): sent again on a new one",
               registryFailureClass(failure).constData());
    });
    m_rewriter = std::make_unique<WwwAuthenticateRewriter>(m_registryOrigin, m_relayOrigin);
}

RegistryProxy::~RegistryProxy()
{
    // Exchanges withdraw their requests from the pool: delete them while the pool is alive.
    const auto exchanges = findChildren<RegistryExchange *>(Qt::FindDirectChildrenOnly);
    for (RegistryExchange *exchange : exchanges)
        delete exchange;
}

QByteArray RegistryProxy::pathClass(const QString &encodedPath, bool isTokenPath)
{
    if (isTokenPath)
        return "token";
    if (encodedPath == QLatin1String("/v2") || encodedPath == QLatin1String("/v2/"))
        return "base";
    if (!encodedPath.startsWith(QLatin1String("/v2/")))
        return "outside";
    if (encodedPath == QLatin1String("/v2/_catalog"))
        return "catalog";
    if (encodedPath.endsWith(QLatin1String("/tags/list")))
        return "tags";
    if (encodedPath.contains(QLatin1String("/blobs/uploads")))
        return "blob-upload";
    if (encodedPath.contains(QLatin1String("/blobs/")))
        return "blob";
    if (encodedPath.contains(QLatin1String("/manifests/")))
        return "manifest";
    return "other";
}

ListenerHeaderLineBound RegistryProxy::headerLineBound() const
{
    return {RegistryHeaders::kMaxLines, 431, contract::refusal::registryHeadersTooLarge, QByteArrayLiteral("too many request header lines")};
}

void RegistryProxy::handleHttp(const ListenerHttpRequest &request, std::unique_ptr<ListenerHttpResponder> responder)
{
    namespace refusal = contract::refusal;
    const QUrl &url = request.url;
    const QString path = url.path(QUrl::FullyEncoded);
    const char *method = request.method.constData();
    const bool head = request.method == "HEAD";
    const bool underV2 = RegistryPathFilter::isUnderV2(path);
    const bool tokenPath = !underV2 && m_tokenPaths.contains(path);
    const QByteArray cls = pathClass(path, tokenPath);

    if (!responder->isConnected())
        return;
    if (!RegistryPathFilter::isServed(path, tokenPath)) {
        if (refusalLogAllowed())
            qCInfo(logRegistry, "%s %s -> 404 %s", method, cls.constData(), refusal::pathNotServed.data());
        refuse(*responder, head, 404, refusal::pathNotServed,
               "this listener serves the image pull API under /v2/ and the WebSocket upgrade at /");
        return;
    }
    if (request.method != "GET" && !head) {
        if (refusalLogAllowed())
            qCInfo(logRegistry, "%s %s -> 405 %s", method, cls.constData(), refusal::registryMethodRefused.data());
        refuse(*responder, false, 405, refusal::registryMethodRefused,
               "only GET and HEAD are forwarded; a registry write is not relayed", true);
        return;
    }
    if (request.hasBody) {
        if (refusalLogAllowed())
            qCInfo(logRegistry, "%s %s -> 400 %s (request body)", method, cls.constData(), refusal::requestInvalid.data());
        refuse(*responder, head, 400, refusal::requestInvalid,
               "a pull carries no request body");
        return;
    }
    ForwardedRequestHeaders headers = RegistryHeaders::forwardRequest(request.headers);
    if (!headers.ok) {
        const int status = headers.tooLarge ? 431 : 400;
        const QLatin1StringView name = headers.tooLarge ? refusal::registryHeadersTooLarge : refusal::requestInvalid;
        if (refusalLogAllowed())
            qCInfo(logRegistry, "%s %s -> %d %s (%s)", method, cls.constData(), status, name.data(), headers.why.constData());
        refuse(*responder, head, status, name, headers.why);
        return;
    }

    QUrl upstream = m_registryOrigin;
    upstream.setPath(path, QUrl::StrictMode);
    if (url.hasQuery())
        upstream.setQuery(url.query(QUrl::FullyEncoded), QUrl::StrictMode);
    if (!upstream.isValid()) {
        refuse(*responder, head, 404, refusal::pathNotServed,
               "the path is not a valid URL path");
        return;
    }

    RegistryExchangeSetup setup;
    setup.upstreamUrl = upstream;
    setup.headers = std::move(headers.headers);
    setup.head = head;
    setup.pathClass = cls;
    setup.headerTimeoutMs = m_headerTimeoutMs;
    setup.watermark = m_watermark;
    setup.watermarkSource = [this] { return sharedWatermark(); };
    auto *exchange = new RegistryExchange(std::move(setup), std::move(responder), *m_pool, *m_rewriter, m_clock, this);
    ++m_active;
    m_running.insert(exchange);
    ++m_requestsRelayed;
    connect(exchange, &RegistryExchange::challengesSeen, this, &RegistryProxy::noteChallenges);
    connect(exchange, &RegistryExchange::finished, this, [this, exchange] {
        --m_active;
        m_running.remove(exchange);
        const qint64 read = exchange->smallestWatermarkRead();
        if (read != 0 && (m_smallestWatermarkRead == 0 || read < m_smallestWatermarkRead))
            m_smallestWatermarkRead = read;
        m_bodyBytesRelayed += exchange->bodyBytesRelayed();
        Q_EMIT exchangeFinished();
    });
    exchange->start();
}

qint64 RegistryProxy::heldBodyBytes() const
{
    qint64 held = 0;
    for (const RegistryExchange *exchange : m_running)
        held += exchange->heldBodyBytes();
    return held;
}

qint64 RegistryProxy::sharedWatermark() const
{
    return qBound(kMinShareBytes, m_budget / qMax(1, m_active), qMax(kMinShareBytes, m_watermark));
}

bool RegistryProxy::refusalLogAllowed()
{
    // At most one refusal line per second; the lines held back are counted in the next one's log.
    if (m_refusalLog.isValid() && m_refusalLog.elapsed() < kRefusalLogIntervalMs) {
        ++m_refusalsNotLogged;
        return false;
    }
    if (m_refusalsNotLogged > 0)
        qCInfo(logRegistry, "%lld more refused requests were not logged in the last second", qint64(m_refusalsNotLogged));
    m_refusalsNotLogged = 0;
    m_refusalLog.start();
    return true;
}

void RegistryProxy::noteChallenges(const QList<QString> &rewrittenRealmPaths, const QList<QString> &foreignOrigins)
{
    for (const QString &p : rewrittenRealmPaths) {
        if (p == QLatin1String("/v2") || p.startsWith(QLatin1String("/v2/")) || m_tokenPaths.contains(p))
            continue;
        m_tokenPaths.append(p);
        while (m_tokenPaths.size() > kMaxTokenPaths)
            m_tokenPaths.removeFirst();
        // A fixed line: neither the path nor any token, challenge or header value is printed.
        qCInfo(logRegistry, "one more realm path now served (learned from a rewritten challenge)");
    }
    for (const QString &origin : foreignOrigins) {
        if (m_loggedForeignOrigins.contains(origin))
            continue;
        if (m_loggedForeignOrigins.size() < kMaxRememberedForeignOrigins)
            m_loggedForeignOrigins.insert(origin);
        qCWarning(logRegistry,
                  "registry challenge realm names %s, not Cloudly's origin %s: left unrewritten, so nodes "
                  "leave the cluster for their pull token there. If that origin is Cloudly under another "
                  "name, CLOUDLY_URL names Cloudly differently from the public origin its realm is composed "
                  "from; set CLOUDLY_URL to that origin.",
                  qUtf8Printable(origin), qUtf8Printable(WwwAuthenticateRewriter::originString(m_registryOrigin)));
    }
}

} // namespace coreflow
