#include "registryexchange.h"

#include "bodypump.h"
#include "registrylog.h"
#include "registryrefusal.h"
#include "upstreampool.h"
#include "wwwauthenticaterewriter.h"

#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QTcpSocket>

#include "shared/contract/refusalnames.h"
#include "shared/util/clock.h"

namespace coreflow {

RegistryExchange::RegistryExchange(RegistryExchangeSetup setup, QHttpServerResponder &&responder,
                                   UpstreamPool &pool, const WwwAuthenticateRewriter &rewriter, Clock &clock,
                                   QObject *parent)
    : QObject(parent), m_setup(std::move(setup)), m_pool(pool), m_rewriter(rewriter), m_clock(clock)
{
    m_responder.emplace(std::move(responder));
    m_socket = m_responder->socket();
}

RegistryExchange::~RegistryExchange()
{
    if (m_reply) {
        m_reply->disconnect(this);
        if (!m_replyFinished)
            m_reply->abort();
        delete m_reply.data();
    }
    if (m_manager)
        m_pool.release(m_manager);
}

bool RegistryExchange::socketUsable() const
{
    return m_socket && m_socket->state() == QAbstractSocket::ConnectedState;
}

void RegistryExchange::start()
{
    m_startedMs = m_clock.nowMs();
    if (!socketUsable()) {
        complete();
        return;
    }
    connect(m_socket, &QAbstractSocket::disconnected, this, &RegistryExchange::onClientGone);
    connect(m_socket, &QObject::destroyed, this, &RegistryExchange::onClientGone);

    QNetworkRequest request(m_setup.upstreamUrl);
    request.setAttribute(QNetworkRequest::Http2AllowedAttribute, false);
    request.setAttribute(QNetworkRequest::RedirectPolicyAttribute, QNetworkRequest::ManualRedirectPolicy);
    request.setAttribute(QNetworkRequest::CookieLoadControlAttribute, QNetworkRequest::Manual);
    request.setAttribute(QNetworkRequest::CookieSaveControlAttribute, QNetworkRequest::Manual);
    request.setAttribute(QNetworkRequest::AuthenticationReuseAttribute, QNetworkRequest::Manual);
    // No cache is installed on the pool's managers, so nothing is cached or served from a cache (IP-06).
    // PreferNetwork, not AlwaysNetwork: AlwaysNetwork makes Qt add Cache-Control and Pragma upstream,
    // which the node did not send (IP-18).
    request.setAttribute(QNetworkRequest::CacheLoadControlAttribute, QNetworkRequest::PreferNetwork);
    request.setAttribute(QNetworkRequest::CacheSaveControlAttribute, false);
    request.setSslConfiguration(m_pool.tlsConfiguration());
    bool haveUserAgent = false;
    for (const auto &[name, value] : std::as_const(m_setup.headers)) {
        request.setRawHeader(name, value);
        haveUserAgent = haveUserAgent || name == "User-Agent";
    }
    if (!haveUserAgent)
        request.setRawHeader("User-Agent", "coreflow-relay");
    // Qt's HTTP client always sends an Accept-Language (the host's locale when none is set): a fixed,
    // neutral value instead (RegistryHeaders, IP-18).
    request.setRawHeader("Accept-Language", RegistryHeaders::kRelayAcceptLanguage);

    m_manager = m_pool.acquire();
    m_reply = m_setup.head ? m_manager->head(request) : m_manager->get(request);
    m_reply->setReadBufferSize(m_setup.upstreamReadBuffer > 0 ? m_setup.upstreamReadBuffer : kUpstreamReadBuffer);
    connect(m_reply, &QNetworkReply::metaDataChanged, this, &RegistryExchange::onMetaDataChanged);
    connect(m_reply, &QNetworkReply::finished, this, &RegistryExchange::onReplyFinished);

    m_headerTimer = m_clock.createTimer(this);
    connect(m_headerTimer.get(), &ClockTimer::timeout, this, &RegistryExchange::onHeaderTimeout);
    m_headerTimer->start(m_setup.headerTimeoutMs);
}

void RegistryExchange::onMetaDataChanged()
{
    if (m_done || m_headersSent || !m_reply)
        return;
    const QVariant status = m_reply->attribute(QNetworkRequest::HttpStatusCodeAttribute);
    if (!status.isValid())
        return;
    sendHeaders(status.toInt());
}

void RegistryExchange::sendHeaders(int status)
{
    m_headerTimer->stop();
    const ReturnedResponseHeaders filtered = RegistryHeaders::returnResponse(m_reply->rawHeaderPairs());
    if (!filtered.ok) {
        fail(filtered.failureClass.isEmpty() ? QByteArrayLiteral("HeadersTooLarge") : filtered.failureClass);
        return;
    }
    if (filtered.droppedForControlCharacters > 0)
        qCWarning(lcRegistry, "%s %s: %d registry header(s) with a control character dropped", method(),
                  m_setup.pathClass.constData(), filtered.droppedForControlCharacters);
    const WwwAuthenticateRewrite challenges = m_rewriter.rewrite(filtered.wwwAuthenticate);
    if (!challenges.rewrittenRealmPaths.isEmpty() || !challenges.foreignRealmOrigins.isEmpty())
        Q_EMIT challengesSeen(challenges.rewrittenRealmPaths, challenges.foreignRealmOrigins);

    if (!socketUsable()) {
        onClientGone();
        return;
    }
    const bool noBody = m_setup.head || status == 204 || status == 304 || (status >= 100 && status < 200);
    const bool chunked = !noBody && filtered.contentLength < 0;

    m_status = status;
    m_responder->writeStatusLine(QHttpServerResponder::StatusCode(status));
    for (const auto &[name, value] : filtered.headers)
        m_responder->writeHeader(name, value);
    for (const QByteArray &challenge : challenges.values)
        m_responder->writeHeader(QByteArrayLiteral("WWW-Authenticate"), challenge);
    if (chunked)
        m_responder->writeHeader(QByteArrayLiteral("Transfer-Encoding"), QByteArrayLiteral("chunked"));
    m_responder->writeBody("", 0); // ends the header block
    m_headersSent = true;
    qCInfo(lcRegistry, "%s %s -> %d (headers relayed after %lld ms)", method(), m_setup.pathClass.constData(),
           status, m_clock.nowMs() - m_startedMs);

    if (noBody) {
        if (m_replyFinished)
            complete();
        return;
    }
    m_pump = new BodyPump(m_reply, m_socket, chunked ? BodyPump::Framing::Chunked : BodyPump::Framing::Length,
                          m_setup.watermark, this);
    connect(m_pump, &BodyPump::drained, this, &RegistryExchange::complete);
    m_pump->start();
    if (m_replyFinished && !m_done)
        m_pump->sourceFinished();
}

void RegistryExchange::onReplyFinished()
{
    if (m_done || !m_reply)
        return;
    m_replyFinished = true;
    const QNetworkReply::NetworkError error = m_reply->error();
    const bool transportFailure = RegistryRefusal::isTransportFailure(error);
    if (!m_headersSent) {
        const QVariant status = m_reply->attribute(QNetworkRequest::HttpStatusCodeAttribute);
        if (status.isValid() && !transportFailure) {
            sendHeaders(status.toInt()); // completes or starts the pump, which sees the source finished
            return;
        }
        fail(RegistryRefusal::failureClass(error == QNetworkReply::NoError ? QNetworkReply::ProtocolFailure : error));
        return;
    }
    if (transportFailure) {
        qCWarning(lcRegistry, "%s %s %d: registry failed mid-body (%s) after %lld bytes; node connection aborted",
                  method(), m_setup.pathClass.constData(), m_status,
                  RegistryRefusal::failureClass(error).constData(), m_pump ? m_pump->bytesRelayed() : 0LL);
        m_done = true;
        if (m_socket)
            m_socket->abort();
        complete();
        return;
    }
    if (m_pump)
        m_pump->sourceFinished();
    else
        complete();
}

void RegistryExchange::onClientGone()
{
    if (m_done)
        return;
    m_done = true;
    const bool upstreamRunning = m_reply && !m_replyFinished;
    qCInfo(lcRegistry, "%s %s: node left after %lld bytes; %s", method(), m_setup.pathClass.constData(),
           m_pump ? m_pump->bytesRelayed() : 0LL,
           upstreamRunning ? "upstream request aborted" : "upstream request was already over");
    if (upstreamRunning) {
        m_reply->disconnect(this);
        m_reply->abort();
    }
    complete();
}

void RegistryExchange::onHeaderTimeout()
{
    if (m_done || m_headersSent)
        return;
    fail("Timeout");
}

void RegistryExchange::fail(const QByteArray &failureClass)
{
    if (m_done)
        return;
    m_done = true;
    if (m_reply && !m_replyFinished) {
        m_reply->disconnect(this);
        m_reply->abort();
    }
    qCWarning(lcRegistry, "%s %s -> 502 %s (%s)", method(), m_setup.pathClass.constData(),
              contract::refusal::registryUnreachable.data(), failureClass.constData());
    if (socketUsable() && !m_headersSent) {
        const QByteArray body = RegistryRefusal::body(QLatin1StringView("UNAVAILABLE"),
                                                      contract::refusal::registryUnreachable,
                                                      "the registry did not answer (" + failureClass + ")",
                                                      failureClass);
        m_responder->writeStatusLine(QHttpServerResponder::StatusCode::BadGateway);
        m_responder->writeHeader("Content-Type", "application/json");
        m_responder->writeHeader("Content-Length", QByteArray::number(body.size()));
        m_responder->writeHeader("Docker-Distribution-API-Version", "registry/2.0");
        m_responder->writeBody(m_setup.head ? QByteArray() : body);
    } else if (m_socket && m_headersSent) {
        m_socket->abort();
    }
    complete();
}

void RegistryExchange::complete()
{
    if (m_completed)
        return;
    m_completed = true;
    m_done = true;
    if (m_headerTimer)
        m_headerTimer->stop();
    if (m_socket)
        m_socket->disconnect(this);
    if (m_pump && m_pump->isDrained())
        qCInfo(lcRegistry, "%s %s %d: body relayed, %lld bytes in %lld ms", method(),
               m_setup.pathClass.constData(), m_status, m_pump->bytesRelayed(), m_clock.nowMs() - m_startedMs);
    Q_EMIT finished();
    deleteLater();
}

} // namespace coreflow
