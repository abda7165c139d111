#pragma once
// FaultInjectingProxy: a TCP proxy on 127.0.0.1 that breaks its connections on command, the ways a
// network or a crashing peer breaks them, for the fault matrix (docs/contract.md §3.2, §3.3: every
// caller hears a named refusal within its bound, nothing is left behind).
//
//   Fault::Reset      the connection is aborted on both sides with an RST (SO_LINGER 0)
//   Fault::Truncate   the next chunk travelling the fault's way (toward the connecting side unless
//                     armed otherwise) is cut: its first half is passed, then both sides are closed
//                     with a FIN (a frame, an answer or a body ends mid-way)
//   Fault::Blackhole  bytes are accepted and dropped both ways; nothing is closed toward the connecting
//                     side (it sees a socket that goes quiet)
// inject() applies to the connections open now; connections made afterwards pass normally (a peer
// that redials gets through). injectAfter() arms one fault for mid-stream: the first connection (open
// now or made later) on which `bytes` more bytes have travelled in the given direction passes exactly
// those bytes and then takes the fault (Truncate then cuts right there; Reset waits until the passed
// bytes have left the proxy, since an RST discards what is unsent). setBlackholeNewConnections()
// makes every connection accepted from then on a blackholed one: accepted, never dialled upstream,
// never answered, never closed (an expired NAT entry). When the connecting side closes a connection
// the proxy closes its other end too (its own descriptors are never kept for a gone client).
// Written from the contract and Qt only: no relay code.
#include <QList>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QTcpServer>
#include <QTcpSocket>

#include <memory>
#include <optional>

namespace coreflow::peers {

class FaultInjectingProxy : public QObject {
    Q_OBJECT
public:
    enum class Fault { Reset, Truncate, Blackhole };
    enum class Direction { TowardConnecting, TowardUpstream };

    FaultInjectingProxy(QString upstreamHost, quint16 upstreamPort, QObject *parent = nullptr);
    ~FaultInjectingProxy() override;

    bool listen();
    quint16 port() const { return m_server.serverPort(); }
    void inject(Fault fault);
    void injectAfter(Fault fault, Direction direction, qint64 bytes);
    bool isArmed() const { return m_armed.has_value(); }
    void setBlackholeNewConnections(bool blackhole) { m_blackholeNew = blackhole; }
    // Connections whose connecting side is still open.
    int openConnections() const;
    int acceptedConnections() const { return m_accepted; }
    // Connections Fault::Truncate has cut so far.
    int truncatedConnections() const { return m_truncated; }
    // Connections an armed fault (injectAfter) has hit so far.
    int armedFaultsApplied() const { return m_armedApplied; }
    // Bytes a blackhole swallowed, both ways.
    qint64 droppedBytes() const { return m_dropped; }

private:
    struct Pair {
        QPointer<QTcpSocket> down; // the side that connected to the proxy
        QPointer<QTcpSocket> up;   // the proxy's connection to the upstream
        QByteArray waiting;        // bytes from down before up connected
        bool blackholed = false;
        bool truncateNext = false;
        qint64 armedCount[2] = {0, 0}; // bytes moved each way since the fault was armed
    };
    struct Armed {
        Fault fault;
        Direction direction;
        qint64 bytes;
    };
    void onConnection();
    void dialUpstream(Pair *pair);
    // Bytes read from one side, to be written to the other (direction names where they go).
    void forward(Pair *pair, Direction direction, QByteArray bytes);
    void write(Pair *pair, Direction direction, const QByteArray &bytes);
    void truncate(Pair *pair, Direction direction, const QByteArray &bytes);
    void resetOnceFlushed(Pair *pair, Direction direction);
    void reset(Pair *pair);
    void release(Pair *pair);

    QTcpServer m_server;
    QString m_upstreamHost;
    quint16 m_upstreamPort;
    QList<std::shared_ptr<Pair>> m_pairs;
    std::optional<Armed> m_armed;
    bool m_blackholeNew = false;
    int m_accepted = 0;
    int m_truncated = 0;
    int m_armedApplied = 0;
    qint64 m_dropped = 0;
};

} // namespace coreflow::peers
