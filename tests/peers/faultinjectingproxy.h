#pragma once
// FaultInjectingProxy: a TCP proxy on 127.0.0.1 that breaks its connections on command, the ways a
// network or a crashing peer breaks them, for the fault matrix (docs/contract.md §3.2, §3.3: every
// caller hears a named refusal within its bound, nothing is left behind).
//
//   Fault::Reset      every open connection is aborted on both sides with an RST (SO_LINGER 0)
//   Fault::Truncate   the next chunk travelling toward the connecting side is cut: its first half is
//                     passed, then both sides are closed with a FIN (a frame or answer ends mid-way)
//   Fault::Blackhole  bytes of open connections are accepted and dropped both ways; nothing is closed
//                     toward the connecting side (it sees a socket that goes quiet)
// inject() applies to the connections open now; connections made afterwards pass normally (a peer
// that redials gets through). Written from the contract and Qt only: no relay code.
#include <QList>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QTcpServer>
#include <QTcpSocket>

#include <memory>

namespace coreflow::peers {

class FaultInjectingProxy : public QObject {
    Q_OBJECT
public:
    enum class Fault { Reset, Truncate, Blackhole };

    FaultInjectingProxy(QString upstreamHost, quint16 upstreamPort, QObject *parent = nullptr);
    ~FaultInjectingProxy() override;

    bool listen();
    quint16 port() const { return m_server.serverPort(); }
    void inject(Fault fault);
    // Connections whose connecting side is still open.
    int openConnections() const;
    int acceptedConnections() const { return m_accepted; }
    // Connections Fault::Truncate has cut so far.
    int truncatedConnections() const { return m_truncated; }

private:
    struct Pair {
        QPointer<QTcpSocket> down; // the side that connected to the proxy
        QPointer<QTcpSocket> up;   // the proxy's connection to the upstream
        QByteArray waiting;        // bytes from down before up connected
        bool blackholed = false;
        bool truncateNext = false;
    };
    void onConnection();
    void forwardDown(Pair *pair);
    void forwardUp(Pair *pair);
    void reset(Pair *pair);
    void release(Pair *pair);

    QTcpServer m_server;
    QString m_upstreamHost;
    quint16 m_upstreamPort;
    QList<std::shared_ptr<Pair>> m_pairs;
    int m_accepted = 0;
    int m_truncated = 0;
};

} // namespace coreflow::peers
