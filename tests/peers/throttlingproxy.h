#pragma once
// ThrottlingProxy: a TCP proxy on 127.0.0.1 in front of one upstream, passing bytes toward the
// upstream at most bytesPerSecond (a WAN uplink) and back toward the connecting side unthrottled.
// It reads the connecting side only as fast as it passes bytes on (a small read buffer), so the
// sender's TCP window closes as it would on a slow link; nothing is dropped or reordered. A rate of 0
// passes nothing toward the upstream until the rate is raised. Closing either side closes the other.
// Written from Qt only: no relay code.
#include <QBasicTimer>
#include <QList>
#include <QObject>
#include <QPointer>
#include <QTcpServer>
#include <QTcpSocket>

#include <memory>

namespace coreflow::peers {

class ThrottlingProxy : public QObject {
    Q_OBJECT
public:
    ThrottlingProxy(QString upstreamHost, quint16 upstreamPort, qint64 bytesPerSecond, QObject *parent = nullptr);
    ~ThrottlingProxy() override;

    bool listen();
    quint16 port() const { return m_server.serverPort(); }
    void setBytesPerSecond(qint64 bytesPerSecond) { m_bytesPerSecond = bytesPerSecond; }
    // Bytes passed toward the upstream so far, all connections.
    qint64 passedUpBytes() const { return m_passedUp; }

protected:
    void timerEvent(QTimerEvent *event) override;

private:
    struct Pair {
        QPointer<QTcpSocket> down; // the side that connected to the proxy
        QPointer<QTcpSocket> up;   // the proxy's connection to the upstream
        bool upConnected = false;
    };
    static constexpr int kTickMs = 10;
    void onConnection();
    void release(Pair *pair);

    QTcpServer m_server;
    QString m_upstreamHost;
    quint16 m_upstreamPort;
    qint64 m_bytesPerSecond;
    qint64 m_passedUp = 0;
    QBasicTimer m_tick;
    QList<std::shared_ptr<Pair>> m_pairs;
};

} // namespace coreflow::peers
