#include "listenerhttpserver.h"

#include "app/logging.h"
#include "bridgedhttpconnection.h"
#include "contract/refusalnames.h"
#include "registry/listenerrequestguard.h"
#include "registry/registryrefusal.h"
#include "sockethandoffserver.h"

#include <QHttpServerResponder>
#include <QTcpSocket>

#include <sys/socket.h>
#include <unistd.h>

namespace coreflow {

namespace {
bool isWebSocketUpgrade(const QHttpServerRequest &request)
{
    return request.value(QByteArrayLiteral("upgrade")).compare(QByteArrayLiteral("websocket"), Qt::CaseInsensitive) == 0;
}
} // namespace

ListenerHttpServer::ListenerHttpServer(QObject *parent) : QAbstractHttpServer(parent), m_handoff(new SocketHandoffServer(this))
{
    m_handoff->attachTo(this); // connections come from adopt() only
}

ListenerHttpServer::~ListenerHttpServer() = default;

void ListenerHttpServer::adopt(TlsConnection *tls, const QByteArray &bytesSoFar)
{
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, pair) != 0) {
        qCWarning(logListener) << "cannot bridge an HTTP request: no socket pair";
        tls->abort();
        tls->deleteLater();
        return;
    }
    auto *qtSide = new QTcpSocket(m_handoff);
    if (!qtSide->setSocketDescriptor(pair[1])) {
        qCWarning(logListener) << "cannot bridge an HTTP request:" << qtSide->errorString();
        delete qtSide;
        ::close(pair[0]);
        ::close(pair[1]);
        tls->abort();
        tls->deleteLater();
        return;
    }
    ListenerRequestGuard::attach(qtSide, this);
    m_handoff->handOff(qtSide);
    new BridgedHttpConnection(tls, pair[0], bytesSoFar, this);
}

bool ListenerHttpServer::handleRequest(const QHttpServerRequest &request, QTcpSocket *socket)
{
    if (isWebSocketUpgrade(request))
        return false; // missingHandler refuses it: sessions start on a new connection at "/"
    if (m_httpHandler) {
        m_httpHandler->handleHttp(request, makeResponder(request, socket));
        return true;
    }
    makeResponder(request, socket).write(RegistryRefusal::body(QLatin1StringView("UNSUPPORTED"), contract::refusal::pathNotServed,
                                                               "this listener serves the node WebSocket at / and image pulls under /v2/"),
                                         "application/json", QHttpServerResponder::StatusCode::NotFound);
    return true;
}

void ListenerHttpServer::missingHandler(const QHttpServerRequest &, QTcpSocket *socket)
{
    // Only a WebSocket upgrade arrives here (a later request on a kept-alive HTTP connection). An
    // answer now could overtake answers to earlier pipelined requests, so the connection is closed
    // without one; sessions start on a new connection at "/".
    qCInfo(logListener) << "WebSocket upgrade on an HTTP connection: connection closed (sessions start on a new connection at /)";
    socket->abort();
}

} // namespace coreflow
