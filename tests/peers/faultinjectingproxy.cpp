#include "tests/peers/faultinjectingproxy.h"

#include <sys/socket.h>

namespace coreflow::peers {

namespace {

// An abort that the other end sees as a reset, not a FIN.
void abortWithReset(QTcpSocket *socket)
{
    if (!socket)
        return;
    const qintptr fd = socket->socketDescriptor();
    if (fd >= 0) {
        const linger hard{1, 0};
        ::setsockopt(int(fd), SOL_SOCKET, SO_LINGER, &hard, sizeof hard);
    }
    socket->abort();
}

} // namespace

FaultInjectingProxy::FaultInjectingProxy(QString upstreamHost, quint16 upstreamPort, QObject *parent)
    : QObject(parent), m_upstreamHost(std::move(upstreamHost)), m_upstreamPort(upstreamPort)
{
    connect(&m_server, &QTcpServer::newConnection, this, &FaultInjectingProxy::onConnection);
}

FaultInjectingProxy::~FaultInjectingProxy()
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

bool FaultInjectingProxy::listen() { return m_server.listen(QHostAddress::LocalHost, 0); }

void FaultInjectingProxy::inject(Fault fault)
{
    const QList<std::shared_ptr<Pair>> open = m_pairs;
    for (const auto &pair : open) {
        switch (fault) {
        case Fault::Reset: reset(pair.get()); break;
        case Fault::Truncate: pair->truncateNext = true; break;
        case Fault::Blackhole: pair->blackholed = true; break;
        }
    }
}

int FaultInjectingProxy::openConnections() const
{
    int n = 0;
    for (const auto &pair : m_pairs)
        n += pair->down ? 1 : 0;
    return n;
}

void FaultInjectingProxy::onConnection()
{
    while (QTcpSocket *down = m_server.nextPendingConnection()) {
        ++m_accepted;
        auto pair = std::make_shared<Pair>();
        Pair *p = pair.get();
        pair->down = down;
        m_pairs.append(pair);
        connect(down, &QTcpSocket::readyRead, this, [this, p] { forwardUp(p); });
        connect(down, &QTcpSocket::disconnected, this, [this, p] { release(p); });
        auto *up = new QTcpSocket(this);
        pair->up = up;
        connect(up, &QTcpSocket::connected, this, [p] {
            if (!p->blackholed && p->up && !p->waiting.isEmpty())
                p->up->write(p->waiting);
            p->waiting.clear();
        });
        connect(up, &QTcpSocket::readyRead, this, [this, p] { forwardDown(p); });
        connect(up, &QTcpSocket::disconnected, this, [p] {
            if (!p->blackholed && p->down)
                p->down->disconnectFromHost();
        });
        up->connectToHost(m_upstreamHost, m_upstreamPort);
    }
}

void FaultInjectingProxy::forwardUp(Pair *p)
{
    const QByteArray bytes = p->down->readAll();
    if (p->blackholed)
        return;
    if (p->up && p->up->state() == QAbstractSocket::ConnectedState)
        p->up->write(bytes);
    else
        p->waiting += bytes;
}

void FaultInjectingProxy::forwardDown(Pair *p)
{
    const QByteArray bytes = p->up->readAll();
    if (p->blackholed || !p->down)
        return;
    if (!p->truncateNext) {
        p->down->write(bytes);
        return;
    }
    // Half of this chunk (at least one byte), then a FIN both ways.
    ++m_truncated;
    p->truncateNext = false;
    p->down->write(bytes.left(qMax<qsizetype>(1, bytes.size() / 2)));
    p->up->disconnect(this);
    p->up->abort();
    p->down->disconnectFromHost();
}

void FaultInjectingProxy::reset(Pair *p)
{
    if (p->up) {
        p->up->disconnect(this);
        abortWithReset(p->up);
    }
    if (p->down) {
        p->down->disconnect(this);
        abortWithReset(p->down);
    }
    release(p);
}

void FaultInjectingProxy::release(Pair *p)
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
