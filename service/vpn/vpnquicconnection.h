#pragma once
// VpnQuicConnection: one ngtcp2 server connection and its GnuTLS session, owned by VpnQuicServer
// (docs/contract.md §11.3). It reads the packets the server routes to it, writes what ngtcp2 has to
// send, keeps its stream sends alive until acknowledged (ngtcp2 retransmits from them), queues
// datagrams up to the server's bound while the congestion window is closed, and runs ngtcp2's expiry
// on a QTimer of the monotonic clock (a transport timer, not a contract rule).
//
// Loss recovery for datagrams (docs/contract.md §11.8, D-115): ngtcp2 0.12 arms its probe timeout
// only while a packet carrying a PTO-eliciting frame is unacknowledged, and a DATAGRAM frame is none.
// So that a flight of datagrams lost whole cannot hold the congestion window for good, the connection
// puts a MAX_DATA frame (PTO-eliciting, retransmitted when lost) in flight whenever the window is at
// least half full and either no loss-detection timer is armed or half a window of datagram bytes left
// since the last such frame. An idle or lightly used connection (window under half full) sends none.
#include <ngtcp2/ngtcp2.h>
#include <ngtcp2/ngtcp2_crypto.h>

#include <QByteArray>
#include <QObject>
#include <QTimer>
#include <deque>
#include <map>
#include <optional>

namespace coreflow {

class VpnQuicServer;

class VpnQuicConnection : public QObject {
    Q_OBJECT
public:
    VpnQuicConnection(VpnQuicServer &server, quint64 id, const QByteArray &remote);
    ~VpnQuicConnection() override;

    // From the Initial that created it: false when ngtcp2 or GnuTLS could not be set up.
    bool init(const ngtcp2_pkt_hd &initial);
    // One packet routed here; false when the connection is over (the server then reaps it).
    bool read(const uint8_t *data, size_t length);
    // Writes everything ngtcp2 has to send now and re-arms the expiry timer.
    void flush();

    bool appendStream(qint64 streamId, QByteArrayView bytes);
    // 0 sent, 1 queued, -1 too large, -2 queue full.
    int sendDatagram(QByteArrayView payload);
    int maxDatagramPayload() const;
    void closeWithApplicationCode(quint64 code);

    quint64 id() const { return m_id; }
    bool isFinished() const { return m_finished; }
    bool isOpened() const { return m_opened; }
    // True while ngtcp2 reads a packet (its callbacks run): nothing may be written then.
    bool isReading() const { return m_reading; }
    const QByteArray &remote() const { return m_remote; }
    // Set while the server holds it in its list of connections to flush (VpnQuicServer::markDirty).
    bool isMarkedDirty() const { return m_markedDirty; }
    void setMarkedDirty(bool marked) { m_markedDirty = marked; }
    QString remoteText() const;

    // ngtcp2 callbacks (static trampolines in the .cpp call these).
    ngtcp2_conn *conn() const { return m_conn; }
    void onHandshakeCompleted();
    void onStreamData(int64_t streamId, const uint8_t *data, size_t length);
    void onDatagram(const uint8_t *data, size_t length);
    void onStreamAcked(int64_t streamId, uint64_t offset, uint64_t length);
    void onStreamClosed(int64_t streamId);
    int onNewConnectionId(ngtcp2_cid *cid, uint8_t *token, size_t length);
    void onRemoveConnectionId(const ngtcp2_cid *cid);

private:
    struct OutStream {
        std::deque<QByteArray> chunks; // unacknowledged, oldest first; never changed once queued
        uint64_t ackedOffset = 0;      // stream offset of chunks.front()[0]
        size_t writeChunk = 0;         // index in chunks of the next unsent byte
        qsizetype writeOffset = 0;     // offset in that chunk
        qint64 unsentBytes = 0;
    };

    bool writeStreams(ngtcp2_path_storage &ps, uint8_t *buf, size_t bufLength, uint64_t ts);
    bool writeQueuedDatagrams(ngtcp2_path_storage &ps, uint8_t *buf, size_t bufLength, uint64_t ts);
    // Drops the oldest queued datagram, its buffer back to the server's spares.
    void popQueuedDatagram();
    // Before a datagram of that many bytes is written: asks ngtcp2 for a MAX_DATA frame in the next
    // packet when the rule above says one is due.
    void requestLossProbeIfDue(size_t datagramBytes);
    // A packet of that many bytes carrying datagrams (or the probe frame) was handed to the server.
    void datagramPacketWritten(size_t packetBytes);
    void armTimer();
    void expire();
    void finish();

    VpnQuicServer &m_server;
    quint64 m_id;
    QByteArray m_remote; // sockaddr_in
    ngtcp2_crypto_conn_ref m_connRef{};
    ngtcp2_conn *m_conn = nullptr;
    void *m_session = nullptr; // gnutls_session_t
    QTimer m_timer;
    std::map<int64_t, OutStream> m_streams;
    std::deque<QByteArray> m_datagrams;
    ngtcp2_connection_close_error m_lastError{};
    bool m_opened = false;
    bool m_reading = false;
    uint64_t m_armedExpiry = 0; // ngtcp2's expiry the timer was last armed for
    uint64_t m_datagramBytesSinceProbe = 0; // packet bytes written with datagrams since the last probe frame
    bool m_probeUnsent = false;             // a probe frame was asked for and no packet was written since
    std::optional<quint64> m_pendingClose; // asked for while reading: sent once the read returns
    bool m_finished = false;
    bool m_markedDirty = false;
};

} // namespace coreflow
