#include "service/corestore/corestorehttpexchange.h"

#include "service/transport/httpclientpool.h"
#include "shared/contract/refusalnames.h"
#include "shared/util/clock.h"

namespace coreflow {

CorestoreHttpExchange::CorestoreHttpExchange(HttpClientPool &pool, Clock &clock, qint64 timeoutMs, qsizetype maxBodyBytes, QObject *parent)
    : QObject(parent), m_pool(pool), m_timer(clock.createTimer(this)), m_timeoutMs(timeoutMs), m_maxBodyBytes(maxBodyBytes)
{
    connect(m_timer.get(), &ClockTimer::timeout, this,
            [this] { failWith(QStringLiteral("timeout after %1 ms").arg(m_timeoutMs), true); });
}

CorestoreHttpExchange::~CorestoreHttpExchange()
{
    if (m_running)
        m_pool.cancel(this);
}

void CorestoreHttpExchange::start(const HttpClientRequest &request)
{
    m_running = true;
    m_timer->start(m_timeoutMs);
    m_pool.submit(this, request);
}

void CorestoreHttpExchange::abandon()
{
    m_timer->stop();
    if (m_running) {
        m_running = false;
        m_pool.cancel(this);
    }
}

QString CorestoreHttpExchange::failureWord(HttpClientFailure failure)
{
    switch (failure) {
    case HttpClientFailure::HostNotFound:
        return QStringLiteral("host not found");
    case HttpClientFailure::ConnectionRefused:
        return QStringLiteral("connection refused");
    case HttpClientFailure::Network:
        return QStringLiteral("network failure");
    case HttpClientFailure::TlsHandshake:
        return QStringLiteral("TLS handshake failed");
    case HttpClientFailure::RemoteClosed:
        return QStringLiteral("connection closed");
    case HttpClientFailure::Protocol:
        return QStringLiteral("unreadable answer");
    case HttpClientFailure::HeadersTooLarge:
        return QStringLiteral("headers-too-large");
    }
    return QStringLiteral("network failure");
}

void CorestoreHttpExchange::responseHead(int status, const HttpHeaderPairs &headers)
{
    m_status = status;
    for (const auto &header : headers) {
        if (header.first.compare("content-length", Qt::CaseInsensitive) != 0)
            continue;
        bool ok = false;
        const qint64 length = header.second.toLongLong(&ok);
        if (ok && length > m_maxBodyBytes)
            return failWith(QStringLiteral("%1 (over %2 bytes)").arg(QLatin1StringView(contract::refusal::answerTooLarge)).arg(m_maxBodyBytes), true);
        if (ok && length > 0)
            m_body.reserve(qsizetype(length));
    }
}

void CorestoreHttpExchange::responseBody(const char *data, qsizetype size)
{
    if (!m_running)
        return;
    if (m_body.size() + size > m_maxBodyBytes)
        return failWith(QStringLiteral("%1 (over %2 bytes)").arg(QLatin1StringView(contract::refusal::answerTooLarge)).arg(m_maxBodyBytes), true);
    m_body.append(data, size);
}

void CorestoreHttpExchange::responseComplete()
{
    if (!m_running)
        return;
    m_running = false;
    m_timer->stop();
    Q_EMIT finished();
}

void CorestoreHttpExchange::responseFailed(HttpClientFailure failure)
{
    if (!m_running)
        return;
    m_running = false;
    failWith(failureWord(failure), false);
}

void CorestoreHttpExchange::failWith(const QString &failureClass, bool withdraw)
{
    m_timer->stop();
    if (withdraw && m_running)
        m_pool.cancel(this);
    m_running = false;
    m_failureClass = failureClass;
    m_body.clear();
    Q_EMIT finished();
}

} // namespace coreflow
