#include "service/listener/listenerhandshake.h"
#include "service/transport/websocketacceptkey.h"

#include "service/core/logging.h"
#include "shared/contract/refusalnames.h"
#include "shared/contract/httprefusal.h"
#include "service/transport/httpresponsehead.h"

#include "shared/util/clock.h"

namespace coreflow {

ListenerHandshake::ListenerHandshake(TlsConnection *tls, Clock &clock, qsizetype maxHeadLines, RefusalLogBound *refusalLog,
                                     QObject *parent)
    : QObject(parent), m_tls(tls), m_refusalLog(refusalLog), m_timeout(clock.createTimer(this)),
      m_head(HttpMessageParser::Kind::Request, kMaxHeadBytes)
{
    m_head.setMaxHeaderLines(maxHeadLines);
    m_tls->setParent(this);
    m_tls->setReceiver(this);
    connect(m_timeout.get(), &ClockTimer::timeout, this, &ListenerHandshake::onTimeout);
    m_timeout->start(kTimeoutMs);
}

void ListenerHandshake::tlsClosed()
{
    m_done = true;
    deleteLater();
}

ListenerHandshake::~ListenerHandshake() = default;

void ListenerHandshake::onTimeout()
{
    if (m_done)
        return;
    m_done = true;
    qCDebug(logListener) << "connection dropped: no request within" << kTimeoutMs << "ms";
    m_tls->abort(); // closed() deletes this
}

void ListenerHandshake::drop()
{
    if (m_done)
        return;
    m_done = true;
    m_tls->abort(); // closed() deletes this
}

void ListenerHandshake::onReadyRead()
{
    if (!m_done && m_head.readFrom(*m_tls) != HttpHeadReader::Outcome::Waiting)
        decide();
}

void ListenerHandshake::decide()
{
    m_done = true;
    m_timeout->stop();
    const HttpMessageParser &head = m_head.parser();
    const QByteArray &bytes = m_head.bytes();
    const QByteArray upgrade = head.headers().last("upgrade");
    const QByteArray version = head.headers().last("sec-websocket-version");
    const QByteArray key = head.headers().last("sec-websocket-key");
    bool websocket = false;
    for (const QByteArray &token : upgrade.toLower().split(','))
        websocket = websocket || token.trimmed() == "websocket";
    // An oversize header block goes to the HTTP side, whose guard refuses it by name (431).
    websocket = websocket && head.headersDone() && bytes.indexOf("\r\n\r\n") + 4 <= kMaxHeadBytes;
    if (!websocket)
        return handOver();
    const qsizetype query = head.url().indexOf('?');
    const QByteArray path = query < 0 ? head.url() : head.url().left(query);
    if (path != "/") {
        return refuse(404, contract::refusal::pathNotServed, "WebSocket sessions are served at / only");
    }
    const qsizetype headEnd = bytes.indexOf("\r\n\r\n");
    const bool keyOk = key.size() == 24 && key.endsWith("==")
                       && QByteArray::fromBase64Encoding(key, QByteArray::AbortOnBase64DecodingErrors).decoded.size() == 16;
    if (head.method() != HTTP_GET || version != "13" || !keyOk || headEnd < 0) {
        return refuse(400, contract::refusal::requestInvalid,
                      "a WebSocket upgrade needs GET, Sec-WebSocket-Version 13 and a Sec-WebSocket-Key");
    }
    m_tls->write(QByteArrayLiteral("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                                   "Sec-WebSocket-Accept: ")
                 + webSocketAcceptKey(key) + QByteArrayLiteral("\r\n\r\n"));
    if (m_tls->state() == TlsConnection::State::Closed)
        return;
    m_tls->setReceiver(nullptr); // the next holder sets itself
    TlsConnection *tls = m_tls;
    m_tls = nullptr;
    Q_EMIT upgraded(tls, bytes.mid(headEnd + 4));
    deleteLater();
}

void ListenerHandshake::handOver()
{
    m_tls->setReceiver(nullptr); // the next holder sets itself
    TlsConnection *tls = m_tls;
    m_tls = nullptr;
    Q_EMIT httpRequest(tls, m_head.bytes());
    deleteLater();
}

void ListenerHandshake::refuse(int status, QLatin1StringView name, const QByteArray &reason)
{
    // One refusal per connection (it is closed after it): only the relay-wide bound applies.
    if (!m_refusalLog || m_refusalLog->admit(1))
        qCInfo(logListener, "refused a WebSocket upgrade: %d %s (%s)", status, name.data(), reason.constData());
    contract::HttpRefusal refusal = contract::httpRefusal(status, name, reason);
    refusal.headers.append({QByteArrayLiteral("Connection"), QByteArrayLiteral("close")});
    m_tls->write(httpResponseHead(refusal.status, refusal.headers) + refusal.body);
    m_tls->shutdown(); // closed() deletes this
}

} // namespace coreflow
