#pragma once
// reservedLoopbackPort(): a free 127.0.0.1 TCP port for a peer or relay that binds it later. Picked
// below the kernel's ephemeral range (32768-60999 on Linux), so no port-0 bind of a test running in
// parallel can take it meanwhile; falls back to a kernel-chosen port. 0 when nothing is free.
#include <QHostAddress>
#include <QRandomGenerator>
#include <QTcpServer>

namespace coreflow::test {

inline quint16 reservedLoopbackPort()
{
    for (int attempt = 0; attempt < 200; ++attempt) {
        const auto port = quint16(QRandomGenerator::global()->bounded(20000, 32000));
        QTcpServer probe;
        if (probe.listen(QHostAddress::LocalHost, port))
            return port;
    }
    QTcpServer probe;
    return probe.listen(QHostAddress::LocalHost, 0) ? probe.serverPort() : 0;
}

} // namespace coreflow::test
