#include "tests/peers/blackholingproxy.h"

namespace coreflow::peers {

BlackholingProxy::BlackholingProxy(QString upstreamHost, quint16 upstreamPort, QObject *parent)
    : QObject(parent), m_upstreamHost(std::move(upstreamHost)), m_upstreamPort(upstreamPort)
{
    connect(&m_server, &QTcpServer::newConnection, this, &BlackholingProxy::onConnection);
}

BlackholingProxy::~BlackholingProxy()
{
    for (const auto &pair : m_pairs) {
        if (pair->down)
            pair->down->disconnect(this);
        if (pair->up)
            pair->up->disconnect(this);
        delete pair->down.data();
        delete pair->up.data();
    }
}

bool BlackholingProxy::listen() { return m_server.listen(QHostAddress::LocalHost, 0); }

void BlackholingProxy::setBlackholing(bool blackholing)
{
    m_blackholing = blackholing;
    if (blackholing)
        for (const auto &pair : m_pairs)
            pair->blackholed = true;
}

int BlackholingProxy::openConnections() const
{
    int n = 0;
    for (const auto &pair : m_pairs)
        n += pair->down ? 1 : 0;
    return n;
}

void BlackholingProxy::onConnection()
{
    while (QTcpSocket *down = m_server.nextPendingConnection()) {
        auto pair = std::make_shared<Pair>();
        Pair *p = pair.get();
        pair->down = down;
        pair->blackholed = m_blackholing;
        m_pairs.append(pair);
        connect(down, &QTcpSocket::readyRead, this, [this, p] { forwardUp(p); });
        connect(down, &QTcpSocket::disconnected, this, [this, p] { release(p); });
        if (pair->blackholed)
            continue; // accepted, never answered, never closed
        auto *up = new QTcpSocket(this);
        pair->up = up;
        connect(up, &QTcpSocket::connected, this, [this, p] {
            if (!p->blackholed && p->up && !p->waiting.isEmpty())
                p->up->write(p->waiting);
            p->waiting.clear();
        });
        connect(up, &QTcpSocket::readyRead, this, [this, p] { forwardDown(p); });
        connect(up, &QTcpSocket::disconnected, this, [p] {
            // Upstream went: passed on while passing, swallowed while blackholed.
            if (!p->blackholed && p->down)
                p->down->disconnectFromHost();
        });
        up->connectToHost(m_upstreamHost, m_upstreamPort);
    }
}

void BlackholingProxy::forwardUp(Pair *p)
{
    const QByteArray bytes = p->down->readAll();
    if (p->blackholed) {
        m_dropped += bytes.size();
        return;
    }
    if (p->up && p->up->state() == QAbstractSocket::ConnectedState)
        p->up->write(bytes);
    else
        p->waiting += bytes;
}

void BlackholingProxy::forwardDown(Pair *p)
{
    const QByteArray bytes = p->up->readAll();
    if (p->blackholed) {
        m_dropped += bytes.size();
        return;
    }
    if (p->down)
        p->down->write(bytes);
}

void BlackholingProxy::release(Pair *p)
{
    for (qsizetype i = 0; i < m_pairs.size(); ++i) {
        if (m_pairs.at(i).get() != p)
            continue;
        std::shared_ptr<Pair> pair = m_pairs.takeAt(i);
        if (pair->up) {
            pair->up->disconnect(this);
            pair->up->abort();
            pair->up->deleteLater();
        }
        if (pair->down) {
            pair->down->disconnect(this);
            pair->down->deleteLater();
        }
        return;
    }
}

} // namespace coreflow::peers
