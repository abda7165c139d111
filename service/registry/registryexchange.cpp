#include "service/registry/registryexchange.h"

#include "service/registry/bodypump.h"
#include "service/core/logging.h"
#include "shared/contract/httprefusal.h"
#include "service/registry/registryfailureclass.h"
#include "service/registry/wwwauthenticaterewriter.h"
#include "service/transport/httpclientpool.h"

#include "shared/contract/refusalnames.h"
#include "shared/util/clock.h"

namespace coreflow {

RegistryExchange::RegistryExchange(RegistryExchangeSetup setup, std::unique_ptr<ListenerHttpResponder> responder,
                                   HttpClientPool &pool, const WwwAuthenticateRewriter &rewriter, Clock &clock,
                                   QObject *parent)
    : QObject(parent), m_setup(std::move(setup)), m_responder(std::move(responder)), m_pool(pool), m_rewriter(rewriter),
      m_clock(clock)
{
    m_responder->setObserver(this);
}

RegistryExchange::~RegistryExchange()
{
    m_responder->setObserver(nullptr);
    if (m_submitted && !m_upstreamOver)
        m_pool.cancel(this);
}

bool RegistryExchange::socketUsable() const { return m_responder->isConnected(); }

void RegistryExchange::responderWritten()
{
    if (m_pump)
        m_pump->sinkProgress();
}

void RegistryExchange::start()
{
    m_startedMs = m_clock.nowMs();
    if (!socketUsable()) {
        complete();
        return;
    }
    HttpClientRequest request;
    request.method = m_setup.head ? QByteArrayLiteral("HEAD") : QByteArrayLiteral("GET");
    request.target = m_setup.upstreamUrl.toEncoded(QUrl::RemoveScheme | QUrl::RemoveAuthority | QUrl::RemoveFragment);
    if (request.target.isEmpty())
        request.target = "/";
    bool haveUserAgent = false;
    request.headers.reserve(m_setup.headers.size() + 2);
    for (const auto &[name, value] : std::as_const(m_setup.headers)) {
        request.headers.append({name, value});
        haveUserAgent = haveUserAgent || name == "User-Agent";
    }
    if (!haveUserAgent)
        request.headers.append({QByteArrayLiteral("User-Agent"), QByteArrayLiteral("coreflow-relay")});
    // A fixed, neutral Accept-Language: nothing of the relay's locale travels (RegistryHeaders, IP-18).
    request.headers.append({QByteArrayLiteral("Accept-Language"), QByteArray(RegistryHeaders::kRelayAcceptLanguage)});

    m_headerTimer = m_clock.createTimer(this);
    connect(m_headerTimer.get(), &ClockTimer::timeout, this, &RegistryExchange::onHeaderTimeout);
    m_headerTimer->start(m_setup.headerTimeoutMs);
    m_submitted = true;
    m_pool.submit(this, request);
}

void RegistryExchange::responseHead(int status, const HttpHeaderPairs &headers)
{
    if (m_done || m_headersSent)
        return;
    sendHeaders(status, headers);
}

bool RegistryExchange::responseBodyRoom() const
{
    if (m_done)
        return false;
    if (!m_pump)
        return true; // no body expected: whatever arrives is read and dropped
    if (m_setup.watermarkSource)
        m_pump->setWatermark(qMin(m_setup.watermark, m_setup.watermarkSource()));
    if (m_smallestWatermark == 0 || m_pump->watermark() < m_smallestWatermark)
        m_smallestWatermark = m_pump->watermark();
    return m_pump->hasRoom();
}

void RegistryExchange::responseBody(const char *data, qsizetype size)
{
    if (m_pump && !m_done) {
        m_pump->write(data, size);
        m_headerTimer->start(m_setup.headerTimeoutMs); // the body made progress: the idle bound restarts
    }
}

void RegistryExchange::responseComplete()
{
    m_upstreamOver = true;
    if (m_done)
        return;
    if (!m_headersSent) {
        fail(QByteArrayLiteral("Protocol")); // cannot happen: the head always comes first
        return;
    }
    if (m_pump)
        m_pump->finish(); // drained() completes
    else
        complete();
}

void RegistryExchange::responseFailed(HttpClientFailure failure)
{
    m_upstreamOver = true;
    if (m_done)
        return;
    const QByteArray failureClass = registryFailureClass(failure);
    if (!m_headersSent) {
        fail(failureClass);
        return;
    }
    upstreamFailedMidBody(failureClass);
}

void RegistryExchange::upstreamFailedMidBody(const QByteArray &failureClass)
{
    qCWarning(logRegistry, "%s %s %d: registry failed mid-body (%s) after %lld bytes; node connection aborted",
              method(), m_setup.pathClass.constData(), m_status, failureClass.constData(),
              m_pump ? m_pump->bytesRelayed() : 0LL);
    m_done = true;
    m_responder->abort();
    complete();
}

void RegistryExchange::sendHeaders(int status, const HeaderPairs &headers)
{
    m_headerTimer->stop();
    const ReturnedResponseHeaders filtered = RegistryHeaders::returnResponse(headers);
    if (!filtered.ok) {
        fail(filtered.failureClass.isEmpty() ? QByteArrayLiteral("HeadersTooLarge") : filtered.failureClass);
        return;
    }
    if (filtered.droppedForControlCharacters > 0)
        qCWarning(logRegistry, "%s %s: %d registry header(s) with a control character dropped", method(),
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
    HeaderPairs head = filtered.headers;
    for (const QByteArray &challenge : challenges.values)
        head.append({QByteArrayLiteral("WWW-Authenticate"), challenge});
    if (chunked)
        head.append({QByteArrayLiteral("Transfer-Encoding"), QByteArrayLiteral("chunked")});
    m_responder->writeHead(status, head);
    m_headersSent = true;
    qCInfo(logRegistry, "%s %s -> %d (headers relayed after %lld ms)", method(), m_setup.pathClass.constData(),
           status, m_clock.nowMs() - m_startedMs);

    if (noBody)
        return; // responseComplete() completes
    m_pump = new BodyPump(m_responder.get(), chunked ? BodyPump::Framing::Chunked : BodyPump::Framing::Length,
                          m_setup.watermark, this);
    connect(m_pump, &BodyPump::drained, this, &RegistryExchange::complete);
    connect(m_pump, &BodyPump::roomAvailable, this, [this] {
        if (!m_done && !m_upstreamOver)
            m_pool.resume(this);
    });
    if (!m_upstreamOver && !m_done)
        m_headerTimer->start(m_setup.headerTimeoutMs); // the body's idle bound (onHeaderTimeout)
}

void RegistryExchange::onClientGone()
{
    if (m_done)
        return;
    m_done = true;
    const bool upstreamRunning = m_submitted && !m_upstreamOver;
    qCInfo(logRegistry, "%s %s: node left after %lld bytes; %s", method(), m_setup.pathClass.constData(),
           m_pump ? m_pump->bytesRelayed() : 0LL,
           upstreamRunning ? "upstream request aborted" : "upstream request was already over");
    if (upstreamRunning) {
        m_upstreamOver = true;
        m_pool.cancel(this);
    }
    complete();
}

void RegistryExchange::onHeaderTimeout()
{
    if (m_done)
        return;
    if (!m_headersSent) {
        fail("Timeout");
        return;
    }
    if (m_upstreamOver)
        return;
    // Mid-body: a node that is not taking bytes is what holds the registry back (backpressure), not
    // a stalled registry; only a registry silent while the node has room is a failure.
    if (m_pump && !m_pump->hasRoom()) {
        m_headerTimer->start(m_setup.headerTimeoutMs);
        return;
    }
    m_upstreamOver = true;
    m_pool.cancel(this);
    upstreamFailedMidBody(QByteArrayLiteral("Timeout"));
}

void RegistryExchange::fail(const QByteArray &failureClass)
{
    if (m_done)
        return;
    m_done = true;
    if (m_submitted && !m_upstreamOver) {
        m_upstreamOver = true;
        m_pool.cancel(this);
    }
    // An answer over the header bounds is named as such (§17); every other failure is unreachable.
    const QLatin1StringView name = failureClass == "HeadersTooLarge" ? contract::refusal::registryHeadersTooLarge
                                                                     : contract::refusal::registryUnreachable;
    qCWarning(logRegistry, "%s %s -> 502 %s (%s)", method(), m_setup.pathClass.constData(), name.data(),
              failureClass.constData());
    if (socketUsable() && !m_headersSent) {
        m_responder->writeRefusal(
            contract::httpRefusal(502, name, "the registry did not answer (" + failureClass + ")", failureClass),
            !m_setup.head);
    } else if (m_headersSent) {
        m_responder->abort();
    }
    complete();
}

qint64 RegistryExchange::bodyBytesRelayed() const { return m_pump ? m_pump->bytesRelayed() : 0; }

qint64 RegistryExchange::heldBodyBytes() const { return m_pump && !m_done ? m_responder->pendingBytes() : 0; }

void RegistryExchange::complete()
{
    if (m_completed)
        return;
    m_completed = true;
    m_done = true;
    if (m_headerTimer)
        m_headerTimer->stop();
    // The answer is over (a no-op after abort() or the node leaving): the node's connection goes on.
    m_responder->finish();
    if (m_pump && m_pump->isDrained())
        qCInfo(logRegistry, "%s %s %d: body relayed, %lld bytes in %lld ms", method(),
               m_setup.pathClass.constData(), m_status, m_pump->bytesRelayed(), m_clock.nowMs() - m_startedMs);
    Q_EMIT finished();
    deleteLater();
}

} // namespace coreflow
