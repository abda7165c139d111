#include "tests/peers/blackholingproxy.h"

namespace coreflow::peers {

BlackholingProxy::BlackholingProxy(QString upstreamHost, quint16 upstreamPort, QObject *parent)
    : QObject(parent), m_proxy(std::move(upstreamHost), upstreamPort)
{
}

void BlackholingProxy::setBlackholing(bool blackholing)
{
    m_blackholing = blackholing;
    m_proxy.setBlackholeNewConnections(blackholing);
    if (blackholing)
        m_proxy.inject(FaultInjectingProxy::Fault::Blackhole);
}

} // namespace coreflow::peers
