#include "registryproxy.h"

#include "listenerrequestguard.h"
#include "registryexchange.h"
#include "registryheaders.h"
#include "registrylog.h"
#include "registryrefusal.h"
#include "upstreampool.h"
#include "wwwauthenticaterewriter.h"

#include <QHttpServerRequest>
#include <QHttpServerResponder>
#include <QSslConfiguration>
#include <QTcpSocket>

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

const char *methodName(QHttpServerRequest::Method m)
{
    switch (m) {
    case QHttpServerRequest::Method::Get: return "GET";
    case QHttpServerRequest::Method::Head: return "HEAD";
    case QHttpServerRequest::Method::Put: return "PUT";
    case QHttpServerRequest::Method::Post: return "POST";
    case QHttpServerRequest::Method::Delete: return "DELETE";
    case QHttpServerRequest::Method::Patch: return "PATCH";
    case QHttpServerRequest::Method::Options: return "OPTIONS";
    case QHttpServerRequest::Method::Connect: return "CONNECT";
    case QHttpServerRequest::Method::Trace: return "TRACE";
    default: return "UNKNOWN";
    }
}

bool hasDotSegment(const QString &encodedPath)
{
    const QList<QStringView> segments = QStringView(encodedPath).split(QLatin1Char('/'));
    for (QStringView segment : segments) {
        const QByteArray decoded = QByteArray::fromPercentEncoding(segment.toUtf8());
        if (decoded == "." || decoded == "..")
            return true;
    }
    return false;
}

// %2F and %5C would let a segment decode into a path separator upstream ("/v2/..%2F..%2Fadmin"), %00
// and the other encoded control characters (%00-%1F, %7F) have no place in a registry path; a raw
// control character or backslash is refused too (QUrl normally encodes them).
bool hasRefusedEncoding(const QString &encodedPath)
{
    for (qsizetype i = 0; i < encodedPath.size(); ++i) {
        const char16_t c = encodedPath.at(i).unicode();
        if (c < 0x20 || c == 0x7f || c == u'\\')
            return true;
        if (c != u'%')
            continue;
        if (i + 2 >= encodedPath.size())
            return true; // a truncated escape
        const QByteArray hex = encodedPath.mid(i + 1, 2).toLatin1();
        bool ok = false;
        const int byte = hex.toInt(&ok, 16);
        if (!ok)
            return true;
        if (byte == 0x2f || byte == 0x5c || byte < 0x20 || byte == 0x7f)
            return true;
    }
    return false;
}

bool hasBody(const QHttpServerRequest &request)
{
    if (!request.body().isEmpty())
        return true;
    if (!request.value("transfer-encoding").isEmpty())
        return true;
    const QByteArray length = request.value("content-length").trimmed();
    return !length.isEmpty() && length != "0";
}

// Answers a refusal in the registry API's error shape; a HEAD gets the headers and no body.
void refuse(QHttpServerResponder &responder, bool head, QHttpServerResponder::StatusCode status,
            QLatin1StringView code, QLatin1StringView name, const QByteArray &reason, bool allowHeader = false)
{
    const QByteArray body = RegistryRefusal::body(code, name, reason);
    responder.writeStatusLine(status);
    responder.writeHeader("Content-Type", "application/json");
    responder.writeHeader("Content-Length", QByteArray::number(body.size()));
    responder.writeHeader("Docker-Distribution-API-Version", "registry/2.0");
    if (allowHeader)
        responder.writeHeader("Allow", "GET, HEAD");
    responder.writeBody(head ? QByteArray() : body);
}

} // namespace

RegistryProxy::RegistryProxy(QUrl cloudlyUrl, QUrl relayOrigin, QList<QSslCertificate> extraCaCertificates,
                             Clock &clock, QObject *parent)
    : QObject(parent), m_registryOrigin(originOf(cloudlyUrl)), m_relayOrigin(originOf(relayOrigin)), m_clock(clock)
{
    QSslConfiguration tls = QSslConfiguration::defaultConfiguration();
    if (!extraCaCertificates.isEmpty())
        tls.addCaCertificates(extraCaCertificates);
    tls.setAllowedNextProtocols({QByteArrayLiteral("http/1.1")});
    m_pool = std::make_unique<UpstreamPool>(m_registryOrigin, tls);
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

void RegistryProxy::handleHttp(const QHttpServerRequest &request, QHttpServerResponder &&responder)
{
    // Everything needed later is copied now: Qt reuses the request object for the connection's next
    // request.
    PendingRequest pending;
    pending.method = request.method();
    pending.url = request.url();
    pending.headers = request.headers();
    pending.hasBody = hasBody(request);
    pending.responder = std::make_unique<QHttpServerResponder>(std::move(responder));
    QTcpSocket *socket = pending.responder->socket();
    if (!socket)
        return;

    auto it = m_connections.find(socket);
    if (it == m_connections.end()) {
        it = m_connections.emplace(socket, Connection{}).first;
        // QObject::destroyed: the socket is no longer a QTcpSocket here; only its address is used.
        connect(socket, &QObject::destroyed, this, [this, socket] { m_connections.erase(socket); });
    }
    if (!it->second.busy && it->second.queue.empty()) {
        process(socket, std::move(pending));
        return;
    }
    // Pipelined behind an answer still in progress: answered in order once that one is over.
    if (it->second.queue.size() >= std::size_t(kMaxPipelinedRequests)) {
        qCWarning(lcRegistry, "more than %d pipelined requests on one connection: connection closed",
                  kMaxPipelinedRequests);
        it->second.queue.clear();
        socket->abort();
        return;
    }
    it->second.queue.push_back(std::move(pending));
    socket->setProperty(ListenerRequestGuard::kAnswerInProgressProperty, true);
}

void RegistryProxy::runQueued(QTcpSocket *socket)
{
    auto it = m_connections.find(socket);
    while (it != m_connections.end() && !it->second.busy && !it->second.queue.empty()) {
        PendingRequest next = std::move(it->second.queue.front());
        it->second.queue.pop_front();
        process(socket, std::move(next));
        it = m_connections.find(socket);
    }
}

void RegistryProxy::process(QTcpSocket *socket, PendingRequest pending)
{
    using Status = QHttpServerResponder::StatusCode;
    namespace refusal = contract::refusal;
    QHttpServerResponder &responder = *pending.responder;
    const QUrl &url = pending.url;
    const QString path = url.path(QUrl::FullyEncoded);
    const QHttpServerRequest::Method method = pending.method;
    const bool head = method == QHttpServerRequest::Method::Head;
    const bool underV2 = path == QLatin1String("/v2") || path.startsWith(QLatin1String("/v2/"));
    const bool tokenPath = !underV2 && m_tokenPaths.contains(path);
    const QByteArray cls = pathClass(path, tokenPath);

    if (socket->state() != QAbstractSocket::ConnectedState)
        return;
    if ((!underV2 && !tokenPath) || hasDotSegment(path) || hasRefusedEncoding(path)) {
        if (refusalLogAllowed())
            qCInfo(lcRegistry, "%s %s -> 404 %s", methodName(method), cls.constData(), refusal::pathNotServed.data());
        refuse(responder, head, Status::NotFound, QLatin1StringView("UNSUPPORTED"), refusal::pathNotServed,
               "this listener serves the image pull API under /v2/ and the WebSocket upgrade at /");
        return;
    }
    if (method != QHttpServerRequest::Method::Get && !head) {
        if (refusalLogAllowed())
            qCInfo(lcRegistry, "%s %s -> 405 %s", methodName(method), cls.constData(),
               refusal::registryMethodRefused.data());
        refuse(responder, false, Status::MethodNotAllowed, QLatin1StringView("UNSUPPORTED"),
               refusal::registryMethodRefused, "only GET and HEAD are forwarded; a registry write is not relayed",
               true);
        return;
    }
    if (pending.hasBody) {
        if (refusalLogAllowed())
            qCInfo(lcRegistry, "%s %s -> 400 %s (request body)", methodName(method), cls.constData(),
               refusal::requestInvalid.data());
        refuse(responder, head, Status::BadRequest, QLatin1StringView("UNSUPPORTED"), refusal::requestInvalid,
               "a pull carries no request body");
        return;
    }
    ForwardedRequestHeaders headers = RegistryHeaders::forwardRequest(pending.headers);
    if (!headers.ok) {
        if (refusalLogAllowed())
            qCInfo(lcRegistry, "%s %s -> 400 %s (%s)", methodName(method), cls.constData(),
               refusal::requestInvalid.data(), headers.why.constData());
        refuse(responder, head, Status::BadRequest, QLatin1StringView("UNSUPPORTED"), refusal::requestInvalid,
               headers.why);
        return;
    }

    QUrl upstream = m_registryOrigin;
    upstream.setPath(path, QUrl::StrictMode);
    if (url.hasQuery())
        upstream.setQuery(url.query(QUrl::FullyEncoded), QUrl::StrictMode);
    if (!upstream.isValid()) {
        refuse(responder, head, Status::NotFound, QLatin1StringView("UNSUPPORTED"), refusal::pathNotServed,
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
    // Fixed for the exchange when it starts (the socket's read buffer), from the budget's share then.
    setup.upstreamReadBuffer = qBound(kMinShareBytes, m_budget / (2 * qMax(1, m_active + 1)),
                                      qMax(kMinShareBytes, m_upstreamReadBuffer));
    auto *exchange = new RegistryExchange(std::move(setup), std::move(responder), *m_pool, *m_rewriter, m_clock, this);
    ++m_active;
    auto it = m_connections.find(socket);
    if (it != m_connections.end())
        it->second.busy = true;
    socket->setProperty(ListenerRequestGuard::kAnswerInProgressProperty, true);
    connect(exchange, &RegistryExchange::challengesSeen, this, &RegistryProxy::noteChallenges);
    connect(exchange, &RegistryExchange::finished, this, [this, socket] {
        --m_active;
        auto c = m_connections.find(socket);
        if (c != m_connections.end()) {
            c->second.busy = false;
            if (c->second.queue.empty())
                socket->setProperty(ListenerRequestGuard::kAnswerInProgressProperty, false);
            else {
                // Later, not from inside the exchange's own signal.
                QMetaObject::invokeMethod(this, [this, socket] { runQueued(socket); }, Qt::QueuedConnection);
            }
        }
        Q_EMIT exchangeFinished();
    });
    exchange->start();
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
        qCInfo(lcRegistry, "%lld more refused requests were not logged in the last second", qint64(m_refusalsNotLogged));
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
        qCInfo(lcRegistry, "one more realm path now served (learned from a rewritten challenge)");
    }
    for (const QString &origin : foreignOrigins) {
        if (m_loggedForeignOrigins.contains(origin))
            continue;
        if (m_loggedForeignOrigins.size() < kMaxRememberedForeignOrigins)
            m_loggedForeignOrigins.insert(origin);
        qCWarning(lcRegistry,
                  "registry challenge realm names %s, not Cloudly's origin %s: left unrewritten, so nodes "
                  "leave the cluster for their pull token there. If that origin is Cloudly under another "
                  "name, CLOUDLY_URL names Cloudly differently from the public origin its realm is composed "
                  "from; set CLOUDLY_URL to that origin.",
                  qUtf8Printable(origin), qUtf8Printable(WwwAuthenticateRewriter::originString(m_registryOrigin)));
    }
}

} // namespace coreflow
