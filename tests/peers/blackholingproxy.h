#pragma once
// BlackholingProxy: a TCP proxy on 127.0.0.1 that fails the way an operator's network does
// (docs/contract.md §3.3): while passing it forwards bytes both ways; once blackholing, every
// connection (open ones and new ones) has its bytes accepted and dropped in both directions, and
// nothing is ever closed towards the side that connected (no FIN, no RST): the peer sees a socket that
// simply goes quiet. Switching back to passing lets new connections through; the blackholed ones stay
// dead, as after an expired NAT entry. When the connecting side closes a connection the proxy closes
// its other end too (its own descriptors are never kept for a gone client).
// Written from the contract and Qt only: no relay code.
#include <QHostAddress>
#include <QList>
#include <QObject>
#include <QPointer>
#include <QTcpServer>
#include <QTcpSocket>

#include <memory>

namespace coreflow::peers {

class BlackholingProxy : public QObject {
    Q_OBJECT
public:
    BlackholingProxy(QString upstreamHost, quint16 upstreamPort, QObject *parent = nullptr);
    ~BlackholingProxy() override;

    bool listen();
    quint16 port() const { return m_server.serverPort(); }
    void setBlackholing(bool blackholing);
    bool isBlackholing() const { return m_blackholing; }
    // Connections whose connecting side is still open.
    int openConnections() const;
    qint64 droppedBytes() const { return m_dropped; }

private:
    struct Pair {
        QPointer<QTcpSocket> down; // the side that connected to the proxy
        QPointer<QTcpSocket> up;   // the proxy's connection to the upstream
        QByteArray waiting;        // bytes from down before up connected
        bool blackholed = false;
    };
    void onConnection();
    void forwardDown(Pair *pair);
    void forwardUp(Pair *pair);
    void release(Pair *pair);

    QTcpServer m_server;
    QString m_upstreamHost;
    quint16 m_upstreamPort;
    bool m_blackholing = false;
    qint64 m_dropped = 0;
    QList<std::shared_ptr<Pair>> m_pairs;
};

} // namespace coreflow::peers
