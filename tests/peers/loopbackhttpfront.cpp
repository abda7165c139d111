#include "tests/peers/loopbackhttpfront.h"

#include <QLoggingCategory>
#include <QPointer>
#include <QSslServer>
#include <QSslSocket>
#include <QTcpSocket>

Q_LOGGING_CATEGORY(lcPeersFront, "coreflow.peers.cloudly.front")

namespace coreflow::peers {

LoopbackHttpFront::LoopbackHttpFront(const QSslConfiguration &tls, QObject *parent)
    : QObject(parent), m_server(new QSslServer(this))
{
    m_server->setSslConfiguration(tls);
    connect(m_server, &QTcpServer::pendingConnectionAvailable, this, [this] {
        while (m_server->hasPendingConnections()) {
            auto *socket = qobject_cast<QSslSocket *>(m_server->nextPendingConnection());
            if (socket)
                onEncrypted(socket);
        }
    });
    connect(m_server, &QSslServer::errorOccurred, this, [](QSslSocket *, QAbstractSocket::SocketError error) {
        qCInfo(lcPeersFront) << "TLS connection failed:" << error;
    });
}

LoopbackHttpFront::~LoopbackHttpFront() = default;

bool LoopbackHttpFront::listen(const QHostAddress &address, quint16 port)
{
    return m_server->listen(address, port);
}

void LoopbackHttpFront::close() { m_server->close(); }

bool LoopbackHttpFront::isListening() const { return m_server->isListening(); }

quint16 LoopbackHttpFront::port() const { return m_server->serverPort(); }

QString LoopbackHttpFront::errorString() const { return m_server->errorString(); }

void LoopbackHttpFront::setPassthrough(quint16 backendPort, const QStringList &extraPaths)
{
    m_backendPort = backendPort;
    m_extraPaths = extraPaths;
}

void LoopbackHttpFront::onEncrypted(QSslSocket *socket)
{
    connect(socket, &QIODevice::readyRead, this, [this, socket] { route(socket); });
    connect(socket, &QAbstractSocket::disconnected, socket, &QObject::deleteLater);
    if (socket->bytesAvailable() > 0)
        route(socket);
}

void LoopbackHttpFront::route(QSslSocket *socket)
{
    const QByteArray head = socket->peek(kMaxRequestLineBytes);
    const qsizetype end = head.indexOf("\r\n");
    if (end < 0) {
        if (head.size() >= kMaxRequestLineBytes)
            socket->abort();
        return; // the request line is not complete yet
    }
    socket->disconnect(this);
    disconnect(socket, &QAbstractSocket::disconnected, socket, &QObject::deleteLater);
    const QList<QByteArray> parts = head.left(end).split(' ');
    const QByteArray target = parts.size() == 3 ? parts.at(1) : QByteArray();
    const QString path = QString::fromLatin1(target.left(target.indexOf('?') < 0 ? target.size() : target.indexOf('?')));
    const bool registryPath = path == QLatin1String("/v2") || path.startsWith(QLatin1String("/v2/"))
        || m_extraPaths.contains(path);
    if (m_backendPort != 0 && registryPath) {
        m_pipedPaths.append(path);
        pipe(socket);
        return;
    }
    ++m_upgrades;
    Q_EMIT upgradeRequested(socket);
}

void LoopbackHttpFront::pipe(QSslSocket *socket)
{
    socket->setParent(this);
    auto *backend = new QTcpSocket(socket);
    QPointer<QSslSocket> client(socket);
    connect(backend, &QAbstractSocket::connected, socket, [socket, backend] {
        backend->write(socket->readAll());
        connect(socket, &QIODevice::readyRead, backend, [socket, backend] { backend->write(socket->readAll()); });
    });
    connect(backend, &QIODevice::readyRead, socket, [socket, backend] { socket->write(backend->readAll()); });
    auto finish = [client, backend] {
        if (!client || client->state() != QAbstractSocket::ConnectedState)
            return;
        client->write(backend->readAll());
        client->disconnectFromHost(); // after what is still to be written
    };
    connect(backend, &QAbstractSocket::disconnected, socket, finish);
    connect(backend, &QAbstractSocket::errorOccurred, socket, [finish](QAbstractSocket::SocketError) { finish(); });
    connect(socket, &QAbstractSocket::disconnected, socket, [socket, backend] {
        backend->abort();
        socket->deleteLater();
    });
    backend->connectToHost(QHostAddress::LocalHost, m_backendPort);
}

} // namespace coreflow::peers
