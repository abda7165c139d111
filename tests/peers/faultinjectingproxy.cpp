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

void FaultInjectingProxy::injectAfter(Fault fault, Direction direction, qint64 bytes)
{
    m_armed = Armed{fault, direction, qMax<qint64>(0, bytes)};
    for (const auto &pair : m_pairs)
        pair->armedCount[0] = pair->armedCount[1] = 0;
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
        pair->blackholed = m_blackholeNew;
        m_pairs.append(pair);
        connect(down, &QTcpSocket::readyRead, this, [this, p] { forward(p, Direction::TowardUpstream, p->down->readAll()); });
        connect(down, &QTcpSocket::disconnected, this, [this, p] { release(p); });
        if (!pair->blackholed)
            dialUpstream(p); // a blackholed one is accepted, never answered, never closed
    }
}

void FaultInjectingProxy::dialUpstream(Pair *p)
{
    auto *up = new QTcpSocket(this);
    p->up = up;
    connect(up, &QTcpSocket::connected, this, [p] {
        if (!p->blackholed && p->up && !p->waiting.isEmpty())
            p->up->write(p->waiting);
        p->waiting.clear();
    });
    connect(up, &QTcpSocket::readyRead, this, [this, p] { forward(p, Direction::TowardConnecting, p->up->readAll()); });
    connect(up, &QTcpSocket::disconnected, this, [p] {
        // Upstream went: passed on while passing, swallowed while blackholed.
        if (!p->blackholed && p->down)
            p->down->disconnectFromHost();
    });
    up->connectToHost(m_upstreamHost, m_upstreamPort);
}

void FaultInjectingProxy::forward(Pair *p, Direction direction, QByteArray bytes)
{
    if (p->blackholed) {
        m_dropped += bytes.size();
        return;
    }
    if (m_armed && m_armed->direction == direction) {
        qint64 &moved = p->armedCount[int(direction)];
        if (moved + bytes.size() >= m_armed->bytes) {
            const Fault fault = m_armed->fault;
            const qsizetype passed = qsizetype(m_armed->bytes - moved);
            m_armed.reset();
            ++m_armedApplied;
            switch (fault) {
            case Fault::Truncate: return truncate(p, direction, bytes.left(passed));
            case Fault::Reset:
                write(p, direction, bytes.left(passed));
                return resetOnceFlushed(p, direction);
            case Fault::Blackhole:
                write(p, direction, bytes.left(passed));
                m_dropped += bytes.size() - passed;
                p->blackholed = true;
                return;
            }
        }
        moved += bytes.size();
    }
    if (direction == Direction::TowardConnecting && p->truncateNext) {
        // Half of this chunk (at least one byte), then a FIN both ways.
        p->truncateNext = false;
        return truncate(p, direction, bytes.left(qMax<qsizetype>(1, bytes.size() / 2)));
    }
    write(p, direction, bytes);
}

void FaultInjectingProxy::write(Pair *p, Direction direction, const QByteArray &bytes)
{
    if (bytes.isEmpty())
        return;
    if (direction == Direction::TowardConnecting) {
        if (p->down)
            p->down->write(bytes);
    } else if (p->up && p->up->state() == QAbstractSocket::ConnectedState) {
        p->up->write(bytes);
    } else {
        p->waiting += bytes;
    }
}

void FaultInjectingProxy::truncate(Pair *p, Direction direction, const QByteArray &passed)
{
    ++m_truncated;
    write(p, direction, passed);
    if (direction == Direction::TowardConnecting) {
        if (p->up) {
            p->up->disconnect(this);
            p->up->abort();
        }
        if (p->down)
            p->down->disconnectFromHost(); // its disconnected() releases the pair
        return;
    }
    // Toward the upstream: it gets the passed bytes and then a FIN, the connecting side a FIN too.
    if (QTcpSocket *up = p->up.data()) {
        up->disconnect(this);
        p->up = nullptr;
        connect(up, &QTcpSocket::disconnected, up, &QObject::deleteLater);
        up->disconnectFromHost();
    }
    if (p->down)
        p->down->disconnectFromHost(); // its disconnected() releases the pair
}

void FaultInjectingProxy::resetOnceFlushed(Pair *p, Direction direction)
{
    // An RST discards what is still unsent: the bytes passed must have left first.
    p->blackholed = true; // anything more is dropped meanwhile
    QTcpSocket *to = direction == Direction::TowardConnecting ? p->down.data() : p->up.data();
    if (!to || to->bytesToWrite() == 0)
        return reset(p);
    connect(to, &QTcpSocket::bytesWritten, this, [this, p, to] {
        if (to->bytesToWrite() == 0)
            reset(p);
    });
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
