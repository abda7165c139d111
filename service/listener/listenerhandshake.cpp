#include "service/listener/listenerhandshake.h"
#include "service/transport/websocketacceptkey.h"

#include "service/core/logging.h"
#include "shared/contract/refusalnames.h"
#include "shared/contract/httprefusalbody.h"

#include <QCryptographicHash>
#include <QTimerEvent>

#include "service/transport/httpheadercollector.h"

#include <http_parser.h>

namespace coreflow {

struct ListenerHandshake::Head {
    http_parser parser{};
    http_parser_settings settings{};
    QByteArray url;
    HttpHeaderCollector headers;
    bool complete = false;
};

ListenerHandshake::ListenerHandshake(TlsConnection *tls, QObject *parent) : QObject(parent), m_tls(tls), m_head(new Head)
{
    m_tls->setParent(this);
    http_parser_init(&m_head->parser, HTTP_REQUEST);
    m_head->parser.data = m_head.get();
    http_parser_settings_init(&m_head->settings);
    m_head->settings.on_url = [](http_parser *p, const char *at, size_t length) {
        static_cast<Head *>(p->data)->url.append(at, qsizetype(length));
        return 0;
    };
    HttpHeaderCollector::install<Head, &Head::headers>(m_head->settings);
    m_head->settings.on_headers_complete = [](http_parser *p) {
        auto *head = static_cast<Head *>(p->data);
        head->headers.finish();
        head->complete = true;
        http_parser_pause(p, 1);
        return 0;
    };
    m_tls->setReceiver(this);
    m_timeout.start(kTimeoutMs, this);
}

void ListenerHandshake::tlsClosed()
{
    m_done = true;
    deleteLater();
}

ListenerHandshake::~ListenerHandshake() = default;

void ListenerHandshake::timerEvent(QTimerEvent *event)
{
    if (event->timerId() != m_timeout.timerId())
        return QObject::timerEvent(event);
    m_timeout.stop();
    if (m_done)
        return;
    m_done = true;
    qCDebug(logListener) << "connection dropped: no request within" << kTimeoutMs << "ms";
    m_tls->abort(); // closed() deletes this
}

void ListenerHandshake::onReadyRead()
{
    char buffer[16 * 1024];
    while (!m_done) {
        const qsizetype n = m_tls->read(buffer, qsizetype(sizeof buffer));
        if (n <= 0)
            return;
        m_bytes.append(buffer, n);
        if (!m_head->complete && HTTP_PARSER_ERRNO(&m_head->parser) == HPE_OK)
            http_parser_execute(&m_head->parser, &m_head->settings, buffer, size_t(n));
        if (m_head->complete || HTTP_PARSER_ERRNO(&m_head->parser) != HPE_OK || m_bytes.size() > kMaxHeadBytes)
            return decide();
    }
}

void ListenerHandshake::decide()
{
    m_done = true;
    m_timeout.stop();
    const Head &head = *m_head;
    const QByteArray upgrade = head.headers.last("upgrade");
    const QByteArray version = head.headers.last("sec-websocket-version");
    const QByteArray key = head.headers.last("sec-websocket-key");
    bool websocket = false;
    for (const QByteArray &token : upgrade.toLower().split(','))
        websocket = websocket || token.trimmed() == "websocket";
    // An oversize header block goes to the HTTP side, whose guard refuses it by name (431).
    websocket = websocket && head.complete && m_bytes.indexOf("\r\n\r\n") + 4 <= kMaxHeadBytes;
    if (!websocket)
        return handOver();
    const qsizetype query = head.url.indexOf('?');
    const QByteArray path = query < 0 ? head.url : head.url.left(query);
    if (path != "/") {
        qCInfo(logListener) << "refused a WebSocket upgrade outside /";
        return refuse(404, "Not Found", contract::refusal::pathNotServed, "WebSocket sessions are served at / only");
    }
    const qsizetype headEnd = m_bytes.indexOf("\r\n\r\n");
    const bool keyOk = key.size() == 24 && key.endsWith("==")
                       && QByteArray::fromBase64Encoding(key, QByteArray::AbortOnBase64DecodingErrors).decoded.size() == 16;
    if (head.parser.method != HTTP_GET || version != "13" || !keyOk || headEnd < 0) {
        return refuse(400, "Bad Request", contract::refusal::requestInvalid,
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
    Q_EMIT upgraded(tls, m_bytes.mid(headEnd + 4));
    deleteLater();
}

void ListenerHandshake::handOver()
{
    m_tls->setReceiver(nullptr); // the next holder sets itself
    TlsConnection *tls = m_tls;
    m_tls = nullptr;
    Q_EMIT httpRequest(tls, m_bytes);
    deleteLater();
}

void ListenerHandshake::refuse(int status, const QByteArray &statusText, QLatin1StringView name, const QByteArray &reason)
{
    const QByteArray body = contract::httpRefusalBody(QLatin1StringView("UNSUPPORTED"), name, reason);
    m_tls->write("HTTP/1.1 " + QByteArray::number(status) + ' ' + statusText
                 + "\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: "
                 + QByteArray::number(body.size()) + "\r\n\r\n" + body);
    m_tls->shutdown(); // closed() deletes this
}

} // namespace coreflow
