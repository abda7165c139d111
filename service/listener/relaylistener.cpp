#include "relaylistener.h"

#include "app/logging.h"
#include "contract/envelope.h"
#include "contract/refusalnames.h"
#include "registry/listenerrequestguard.h"

#include <QHostInfo>
#include <QHttpServerResponder>
#include <QJsonArray>
#include <QSslServer>

namespace coreflow {

namespace {
bool isWebSocketUpgrade(const QHttpServerRequest &request)
{
    return request.value(QByteArrayLiteral("upgrade")).compare(QByteArrayLiteral("websocket"), Qt::CaseInsensitive) == 0;
}

QByteArray registryStyleError(const contract::Refusal &refusal)
{
    return contract::Envelope::compact(QJsonObject{
        {QStringLiteral("errors"), QJsonArray{QJsonObject{{QStringLiteral("code"), QStringLiteral("UNSUPPORTED")},
                                                          {QStringLiteral("message"), refusal.text()}}}}});
}
} // namespace

RelayListener::RelayListener(QObject *parent) : QAbstractHttpServer(parent)
{
    connect(this, &QAbstractHttpServer::newWebSocketConnection, this, [this] {
        while (hasPendingWebSocketConnections()) {
            std::unique_ptr<QWebSocket> socket = nextPendingWebSocketConnection();
            if (socket)
                Q_EMIT nodeSocketAccepted(socket.release());
        }
    });
}

RelayListener::~RelayListener() = default;

std::optional<contract::Refusal> RelayListener::listen(const QString &hostname, quint16 port, const QSslConfiguration &tls)
{
    auto failed = [&](const QString &why) {
        return contract::Refusal{QString(contract::refusal::listenerBindFailed),
                                 QStringLiteral("cannot listen on %1:%2: %3").arg(hostname).arg(port).arg(why)};
    };
    QHostAddress address(hostname);
    if (address.isNull()) {
        const QHostInfo info = QHostInfo::fromName(hostname);
        if (info.error() != QHostInfo::NoError || info.addresses().isEmpty())
            return failed(QStringLiteral("the name does not resolve"));
        address = info.addresses().first();
    }
    auto *server = new QSslServer(this);
    server->setSslConfiguration(tls);
    server->setHandshakeTimeout(10000);
    if (!server->listen(address, port)) {
        const QString why = server->errorString();
        delete server;
        return failed(why);
    }
    // Frames are small request/answer pairs: without TCP_NODELAY, Nagle holds an answer back until the
    // peer's delayed ACK (milliseconds of added latency per hop; bench/README.md).
    // The guard bounds what a connection may send before its request is handled (a header block of at
    // most 64 KiB, no body): QAbstractHttpServer 6.4 would buffer a whole body first. It must be
    // connected before QAbstractHttpServer connects to the socket, which is after the handshake.
    connect(server, &QSslServer::startedEncryptionHandshake, this, [this](QSslSocket *socket) {
        socket->setSocketOption(QAbstractSocket::LowDelayOption, 1);
        ListenerRequestGuard::attach(socket, this);
    });
    connect(server, &QSslServer::errorOccurred, this, [](QSslSocket *, QAbstractSocket::SocketError error) {
        qCDebug(logListener) << "TLS connection failed during handshake:" << error;
    });
    bind(server);
    m_server = server;
    m_boundAddress = hostname;
    m_boundPort = server->serverPort();
    qCInfo(logListener).noquote() << "listening on" << QStringLiteral("%1:%2").arg(hostname).arg(m_boundPort);
    return std::nullopt;
}

void RelayListener::close()
{
    if (m_server) {
        m_server->close();
        m_server->deleteLater();
        m_server = nullptr;
        qCInfo(logListener) << "listener closed";
    }
}

bool RelayListener::isListening() const { return m_server && m_server->isListening(); }

bool RelayListener::handleRequest(const QHttpServerRequest &request, QTcpSocket *socket)
{
    if (isWebSocketUpgrade(request)) {
        // true: QAbstractHttpServer completes the upgrade and emits newWebSocketConnection.
        // false: missingHandler answers the refusal and the connection closes before any 101.
        return request.url().path() == QLatin1String("/");
    }
    if (m_httpHandler) {
        m_httpHandler->handleHttp(request, makeResponder(request, socket));
        return true;
    }
    const contract::Refusal refusal{QString(contract::refusal::pathNotServed),
                                    QStringLiteral("this listener serves the node WebSocket at / and image pulls under /v2/")};
    makeResponder(request, socket).write(registryStyleError(refusal), "application/json", QHttpServerResponder::StatusCode::NotFound);
    return true;
}

void RelayListener::missingHandler(const QHttpServerRequest &request, QTcpSocket *socket)
{
    const contract::Refusal refusal{QString(contract::refusal::pathNotServed),
                                    QStringLiteral("WebSocket sessions are served at / only")};
    qCInfo(logListener) << "refused a WebSocket upgrade outside /";
    makeResponder(request, socket).write(registryStyleError(refusal), "application/json", QHttpServerResponder::StatusCode::NotFound);
}

} // namespace coreflow
