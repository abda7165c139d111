#pragma once
// VpnQuicServer: the managed VPN hub's QUIC v1 endpoint (docs/contract.md §11.3): one unprivileged UDP
// socket, ngtcp2 server connections with GnuTLS TLS 1.3 (the listener's certificate and key, ALPN
// coreflow-vpn/1 mandatory), QUIC DATAGRAM frames (RFC 9221, max_datagram_frame_size 65535 both
// ways). It knows nothing of Noise, members or packets: it hands a connection's bidirectional stream
// bytes and its datagrams to a Handler, and sends stream bytes, datagrams and application closes.
//
// Runs on the relay's thread (a QSocketNotifier on the socket, recvmmsg batches of up to 64 packets);
// no extra thread. ngtcp2's own timers (loss recovery, ACK delay, idle timeout) run on the monotonic
// clock and a QTimer per connection: they are transport timers, not contract rules (the hub's rules —
// expiry, rekey — run on the injected Clock).
//
// Bounds: at most Limits::maxConnections connections (an Initial beyond it is dropped and counted
// `connection-limit`); per connection at most Limits::maxQueuedDatagrams datagrams wait for
// congestion window (more are dropped, `queue-full`) and at most 64 KiB of unsent stream bytes. A
// datagram whose DATAGRAM frame would not fit the current path's UDP payload (ngtcp2's PMTUD, from
// 1200 bytes up to 1452) is dropped and counted `datagram-too-large`. Bad packets cost only their
// sender: they are dropped without a log line (counted `undecodable`).
#include "shared/secret.h"

#include <QByteArray>
#include <QHash>
#include <QHostAddress>
#include <QObject>
#include <QString>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

class QSocketNotifier;
struct mmsghdr;

namespace coreflow {

class VpnQuicConnection;

class VpnQuicServer : public QObject {
    Q_OBJECT
public:
    using ConnectionId = quint64;

    struct Limits {
        int maxConnections = 1024;
        int maxQueuedDatagrams = 256; // per connection, waiting for congestion window
        qint64 idleTimeoutMs = 30000; // QUIC max_idle_timeout
    };

    // What the server hands up. Calls come from inside the socket's read (or a timer); a handler may
    // call back into the server (send, close) from them.
    class Handler {
    public:
        virtual ~Handler() = default;
        // The TLS handshake completed (ALPN agreed). remote: "ip:port".
        virtual void connectionOpened(ConnectionId id, const QString &remote) = 0;
        // Bytes in order on a client bidirectional stream (stream 0 first).
        virtual void streamReceived(ConnectionId id, qint64 streamId, QByteArrayView bytes) = 0;
        virtual void datagramReceived(ConnectionId id, QByteArrayView payload) = 0;
        // The connection is gone (closed by either side, idle, or a transport error). Not called for a
        // connection the handler closed itself with closeConnection().
        virtual void connectionClosed(ConnectionId id) = 0;
    };

    enum class DatagramOutcome { Sent, Queued, TooLarge, QueueFull, NoConnection };

    struct Counters {
        quint64 datagramTooLarge = 0;
        quint64 queueFull = 0;
        quint64 connectionLimit = 0;
        quint64 undecodable = 0;
        quint64 packetsReceived = 0;
        quint64 packetsSent = 0;
        quint64 sendCalls = 0;  // sendto/sendmmsg calls: packetsSent / sendCalls is the batching gained
        quint64 gsoRefused = 0; // 1 once the kernel refused UDP_SEGMENT (then one message per packet)
        quint64 lossProbes = 0; // MAX_DATA frames put in flight so a lost flight of datagrams is detected (§11.8, D-115)
    };

    VpnQuicServer(Handler &handler, Limits limits, QObject *parent = nullptr);
    ~VpnQuicServer() override;

    // The TLS identity: a PEM chain (leaf first) and its private key (PEM, in a Secret; the bytes go to
    // GnuTLS only). Returns why it cannot be used, or nullopt.
    std::optional<QString> setCredentials(const QByteArray &certificateChainPem, const Secret &privateKeyPem);

    // Binds the UDP socket. Returns nullopt, or a value-free failure class: "AddressInUse",
    // "AddressNotAvailable", "PermissionDenied", "SocketError", "NoCredentials".
    std::optional<QString> bind(const QHostAddress &address, quint16 port);
    bool isBound() const { return m_fd >= 0; }
    quint16 boundPort() const { return m_port; }
    // Closes every connection (no close frame) and the socket.
    void close();

    // Appends bytes to a server-side send on that stream (ordered, reliable). false when no such
    // connection or the stream's unsent bytes would exceed 64 KiB.
    bool sendStream(ConnectionId id, qint64 streamId, QByteArrayView bytes);
    DatagramOutcome sendDatagram(ConnectionId id, QByteArrayView payload);
    // The largest datagram payload the connection's current path carries now (bytes); 0 without one.
    int maxDatagramPayload(ConnectionId id) const;
    // Sends CONNECTION_CLOSE with an application error code (docs/contract.md §11.7) and forgets the
    // connection at once; the handler is not told.
    void closeConnection(ConnectionId id, quint64 applicationCode);

    int connectionCount() const { return int(m_connections.size()); }
    // Test seam: what flushTx() hands its messages to, as sendmmsg(2) without flags would take them;
    // empty: ::sendmmsg. A test refuses UDP_SEGMENT with it (EIO) to check the fallback (§11.8).
    using MessageSender = std::function<int(int fd, ::mmsghdr *messages, unsigned count)>;
    void setMessageSender(MessageSender sender) { m_messageSender = std::move(sender); }
    const Counters &counters() const { return m_counters; }

    // --- used by VpnQuicConnection ---
    void sendPacket(const QByteArray &remote, const uint8_t *data, size_t length);
    // Inside a batch: the next outgoing slot (kTxSlotBytes long) for a packet to be written in place,
    // so it is not copied from a buffer of the connection's (issue 21); nullptr outside a batch (then
    // write elsewhere and use sendPacket). A slot is used by commitTxSlot() before any other send.
    uint8_t *txSlot();
    static constexpr size_t txSlotBytes() { return kTxSlotBytes; }
    // The packet written into txSlot() is `length` bytes for remote: it leaves with the batch.
    void commitTxSlot(const QByteArray &remote, size_t length);
    // Buffers for datagrams a connection queues, their capacity kept when they come back, so a queued
    // datagram is a copy into a buffer already held, not an allocation (issue 21). At most
    // kSpareDatagramBuffers come back; the rest are freed.
    QByteArray takeDatagramBuffer();
    void returnDatagramBuffer(QByteArray &&buffer);
    void registerConnectionId(const QByteArray &cid, VpnQuicConnection *connection);
    void unregisterConnectionId(const QByteArray &cid);
    void connectionFinished(VpnQuicConnection *connection);
    // Packets sent between these two calls leave together (sendmmsg, GSO) at the end; nested calls
    // leave it to the outermost. Used by a connection's timer so a burst it releases is one syscall.
    bool beginTxBatch();
    void endTxBatch(bool begun);
    Handler &handler() { return m_handler; }
    Counters &mutableCounters() { return m_counters; }
    const Limits &limits() const { return m_limits; }
    void *tlsCredentials() const { return m_credentials; }
    // One TLS 1.3-only priority cache (gnutls_priority_t) every session references: a session parsing
    // its own priority string keeps about 8 KiB per connection (issue 21, D-119). nullptr if it failed.
    void *tlsPriority() const { return m_priority; }
    const QByteArray &localAddress() const { return m_local; }

private:
    void readReady();
    void handlePacket(const QByteArray &remote, uint8_t *data, size_t length);
    void reapFinished();
    // Remembers a connection to flush at the end of the read turn (or of the queued flush): once.
    void markDirty(VpnQuicConnection *connection);
    void forgetDirty(VpnQuicConnection *connection);
    void flushDirty();
    // Sends what sendPacket() collected during a read turn or a batch (a timer's or a queued flush):
    // sendmmsg, one message per run of packets to the same peer with UDP GSO (UDP_SEGMENT) while the
    // kernel takes it, else one per packet.
    void flushTx();

    Handler &m_handler;
    Limits m_limits;
    int m_fd = -1;
    quint16 m_port = 0;
    QByteArray m_local; // sockaddr_in of the bound socket
    std::unique_ptr<QSocketNotifier> m_notifier;
    void *m_credentials = nullptr; // gnutls_certificate_credentials_t
    void *m_priority = nullptr;    // gnutls_priority_t
    ConnectionId m_nextId = 1;
    QHash<ConnectionId, VpnQuicConnection *> m_connections;
    QHash<QByteArray, VpnQuicConnection *> m_byCid;
    QList<VpnQuicConnection *> m_finished;
    // Written to during a read: flushed (timers re-armed) at its end. A vector with a mark on each
    // connection instead of a set: one hash insert per packet was the read path's largest own cost.
    std::vector<VpnQuicConnection *> m_dirty;
    std::vector<VpnQuicConnection *> m_flushing; // m_dirty's contents while they are flushed (capacity kept)
    bool m_inRead = false;
    bool m_flushScheduled = false;
    // Outgoing packets of the current read turn (at most kTxBatch, kTxSlotBytes each).
    static constexpr int kTxBatch = 64;
    static constexpr int kTxSlotBytes = 1500;
    struct TxSlot {
        quint32 length = 0;
        char remote[16] = {}; // sockaddr_in
    };
    std::vector<uint8_t> m_txBuffer;
    std::vector<TxSlot> m_txSlots;
    int m_txCount = 0;
    bool m_batching = false;
    static constexpr std::size_t kSpareDatagramBuffers = 256;
    std::vector<QByteArray> m_spareDatagrams;
    bool m_gso = true; // cleared for good when the kernel refuses UDP_SEGMENT
    MessageSender m_messageSender;
    Counters m_counters;
};

} // namespace coreflow
