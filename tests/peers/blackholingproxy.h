#pragma once
// BlackholingProxy: a TCP proxy on 127.0.0.1 that fails the way an operator's network does
// (docs/contract.md §3.3): while passing it forwards bytes both ways; once blackholing, every
// connection (open ones and new ones) has its bytes accepted and dropped in both directions, and
// nothing is ever closed towards the side that connected (no FIN, no RST): the peer sees a socket that
// simply goes quiet. Switching back to passing lets new connections through; the blackholed ones stay
// dead, as after an expired NAT entry. When the connecting side closes a connection the proxy closes
// its other end too (its own descriptors are never kept for a gone client).
// A thin use of FaultInjectingProxy (its Fault::Blackhole on the open connections, and blackholed
// new connections while blackholing). Written from the contract and Qt only: no relay code.
#include "tests/peers/faultinjectingproxy.h"

namespace coreflow::peers {

class BlackholingProxy : public QObject {
    Q_OBJECT
public:
    BlackholingProxy(QString upstreamHost, quint16 upstreamPort, QObject *parent = nullptr);

    bool listen() { return m_proxy.listen(); }
    quint16 port() const { return m_proxy.port(); }
    void setBlackholing(bool blackholing);
    bool isBlackholing() const { return m_blackholing; }
    // Connections whose connecting side is still open.
    int openConnections() const { return m_proxy.openConnections(); }
    qint64 droppedBytes() const { return m_proxy.droppedBytes(); }

private:
    FaultInjectingProxy m_proxy;
    bool m_blackholing = false;
};

} // namespace coreflow::peers
