#include "testrelaylistener.h"

#include "service/listener/listenerhttphandler.h"

#include <QHostAddress>
#include <QHttpServerRequest>
#include <QWebSocket>

namespace coreflow::test {

TestRelayListener::TestRelayListener(const QSslCertificate &certificate, const QSslKey &key, QObject *parent)
    : QAbstractHttpServer(parent)
{
    sslSetup(certificate, key);
    connect(this, &QAbstractHttpServer::newWebSocketConnection, this, &TestRelayListener::acceptWebSockets);
    m_port = listen(QHostAddress::LocalHost, 0);
}

TestRelayListener::~TestRelayListener() = default;

bool TestRelayListener::handleRequest(const QHttpServerRequest &request, QTcpSocket *socket)
{
    if (request.value("upgrade").compare("websocket", Qt::CaseInsensitive) == 0)
        return request.url().path() == QLatin1String("/");
    if (!m_handler)
        return false;
    m_handler->handleHttp(request, makeResponder(request, socket));
    return true;
}

void TestRelayListener::missingHandler(const QHttpServerRequest &, QTcpSocket *) {}

void TestRelayListener::acceptWebSockets()
{
    while (hasPendingWebSocketConnections()) {
        std::unique_ptr<QWebSocket> ws = nextPendingWebSocketConnection();
        QWebSocket *raw = ws.get();
        connect(raw, &QWebSocket::textMessageReceived, raw, [raw](const QString &m) { raw->sendTextMessage(m); });
        connect(raw, &QWebSocket::binaryMessageReceived, raw,
                [raw](const QByteArray &m) { raw->sendBinaryMessage(m); });
        m_webSockets.push_back(std::move(ws));
    }
}

} // namespace coreflow::test
