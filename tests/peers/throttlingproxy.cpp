#include "tests/peers/throttlingproxy.h"

#include <QTimerEvent>

#include <utility>

namespace coreflow::peers {

ThrottlingProxy::ThrottlingProxy(QString upstreamHost, quint16 upstreamPort, qint64 bytesPerSecond, QObject *parent)
    : QObject(parent), m_upstreamHost(std::move(upstreamHost)), m_upstreamPort(upstreamPort), m_bytesPerSecond(bytesPerSecond)
{
    connect(&m_server, &QTcpServer::newConnection, this, &ThrottlingProxy::onConnection);
}

ThrottlingProxy::~ThrottlingProxy()
{
    const auto pairs = std::exchange(m_pairs, {}); // abort() emits disconnected(), which releases
    for (const auto &pair : pairs) {
        for (QTcpSocket *socket : {pair->down.data(), pair->up.data()}) {
            if (socket) {
                socket->disconnect(this);
                socket->abort();
            }
        }
    }
}

bool ThrottlingProxy::listen()
{
    if (!m_server.listen(QHostAddress::LocalHost, 0))
        return false;
    m_tick.start(kTickMs, this);
    return true;
}

void ThrottlingProxy::onConnection()
{
    while (QTcpSocket *down = m_server.nextPendingConnection()) {
        auto pair = std::make_shared<Pair>();
        pair->down = down;
        down->setParent(this);
        // What the proxy holds unread stays small: the rest waits in the sender's socket.
        down->setReadBufferSize(64 * 1024);
        auto *up = new QTcpSocket(this);
        pair->up = up;
        Pair *raw = pair.get();
        m_pairs.append(pair);
        connect(up, &QTcpSocket::connected, this, [raw] { raw->upConnected = true; });
        connect(up, &QTcpSocket::readyRead, this, [raw] {
            if (raw->down && raw->up)
                raw->down->write(raw->up->readAll());
        });
        connect(down, &QTcpSocket::disconnected, this, [this, raw] { release(raw); });
        connect(up, &QTcpSocket::disconnected, this, [this, raw] { release(raw); });
        up->connectToHost(m_upstreamHost, m_upstreamPort);
    }
}

void ThrottlingProxy::timerEvent(QTimerEvent *event)
{
    if (event->timerId() != m_tick.timerId())
        return QObject::timerEvent(event);
    const qint64 perTick = m_bytesPerSecond * kTickMs / 1000;
    if (perTick <= 0)
        return;
    for (const auto &pair : m_pairs) {
        if (!pair->down || !pair->up || !pair->upConnected)
            continue;
        // Each connection gets the whole rate: the tests use one.
        const QByteArray bytes = pair->down->read(perTick);
        if (!bytes.isEmpty()) {
            pair->up->write(bytes);
            m_passedUp += bytes.size();
        }
    }
}

void ThrottlingProxy::release(Pair *pair)
{
    if (pair->down)
        pair->down->disconnectFromHost();
    if (pair->up)
        pair->up->disconnectFromHost();
    for (qsizetype i = 0; i < m_pairs.size(); ++i) {
        if (m_pairs[i].get() == pair) {
            auto keep = m_pairs.takeAt(i);
            if (keep->down)
                keep->down->deleteLater();
            if (keep->up)
                keep->up->deleteLater();
            return;
        }
    }
}

} // namespace coreflow::peers
