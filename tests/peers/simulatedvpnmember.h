#pragma once
// SimulatedVpnMember: a cluster node's side of the managed VPN hub (docs/contract.md §11.3..§11.7),
// written from the contract with its own ngtcp2 client (GnuTLS, ALPN coreflow-vpn/1, DATAGRAM frames
// with max_datagram_frame_size 65535) and its own Noise IK initiator (PeerNoiseInitiator). Nothing of
// service/ or shared/.
//
// dial() opens the QUIC connection; once it is up (connected()), handshake() sends Noise message 1 on
// stream 0 (u16 big-endian length + bytes; its payload the 12-byte TAI64N timestamp) and reads message 2 there (handshakeDone()). sendPacket()
// seals one IPv4 packet into a datagram (u64 big-endian counter + ChaCha20-Poly1305 of the packet,
// empty associated data); packetReceived() hands up what the hub relayed to it, opened. The raw
// methods serve transport tests and hostile cases (a replayed datagram, bytes on another stream).
#include <ngtcp2/ngtcp2_crypto.h>

#include <QByteArray>
#include <QHash>
#include <QHostAddress>
#include <QObject>
#include <QTimer>
#include <functional>
#include <memory>
#include <optional>

class QSocketNotifier;

namespace coreflow::peers {

class PeerNoiseInitiator;

class SimulatedVpnMember : public QObject {
    Q_OBJECT
public:
    struct Options {
        QHostAddress hubAddress = QHostAddress::LocalHost;
        quint16 hubPort = 0;
        QByteArray alpn = QByteArrayLiteral("coreflow-vpn/1");
        QByteArray staticPrivateKey;  // 32 bytes; a fresh one when empty
        QByteArray hubPublicKey;      // 32 bytes (relay.vpnHub.publicKey, decoded)
        // §11.4: the 12-byte TAI64N timestamp message 1 carries; empty: the member's wall clock
        // (kept strictly increasing across this member's handshakes).
        std::function<QByteArray()> timestamp;
        // UDP payload this member sends from the first packet on (no ngtcp2 shaping to 1200, no
        // probing), bytes; 0: ngtcp2's default (1200, raised by path MTU discovery).
        int fixedUdpPayload = 0;
    };

    explicit SimulatedVpnMember(Options options, QObject *parent = nullptr);
    ~SimulatedVpnMember() override;

    bool dial();
    void handshake();
    // §11.6: a new handshake on the next client bidirectional stream of the same connection; the new
    // keys replace the old ones once message 2 arrived (rekeyCount() counts them).
    void rekey();
    int rekeyCount() const { return m_rekeys; }
    void sendPacket(const QByteArray &ipv4Packet);
    // The last handshake frame sent (u16 length + message 1), verbatim (for a replay).
    QByteArray lastMessage1Frame() const { return m_lastMessage1Frame; }
    // §11.4: TAI64N of a Unix time in nanoseconds (2^62 + 10 + seconds, big-endian; then nanoseconds).
    static QByteArray tai64n(qint64 unixNanoseconds);
    // The last datagram sent, verbatim (for a replay).
    QByteArray lastDatagram() const { return m_lastDatagram; }
    void sendRawDatagram(const QByteArray &payload);
    // While set, every UDP packet from the hub is read off the socket and thrown away unseen (a
    // member behind a lossy path): nothing is acknowledged, nothing is delivered.
    void setDiscardIncoming(bool discard) { m_discardIncoming = discard; }
    void sendRawStream(qint64 streamId, const QByteArray &bytes);
    void closeConnection();

    QByteArray publicKey() const;
    // The transport keys in use, send key then receive key (32 bytes each; empty before message 2):
    // the hub holds the same two, so key canaries look for them.
    QByteArray transportKeys() const { return m_sendKey + m_receiveKey; }
    bool isConnected() const { return m_connected; }
    bool isClosed() const { return m_closed; }
    bool isHandshakeDone() const { return m_handshakeDone; }
    // The application error code of the CONNECTION_CLOSE the hub sent; nullopt while none came.
    std::optional<quint64> closeCode() const { return m_closeCode; }
    QList<QByteArray> receivedPackets() const { return m_received; }
    QList<QByteArray> rawDatagrams() const { return m_rawDatagrams; }
    QByteArray rawStreamBytes(qint64 streamId) const { return m_streamBytes.value(streamId); }

    // A well-formed IPv4 header (20 bytes, no options) with this source and destination and `size`
    // bytes in all; the payload is filled with `fill`.
    static QByteArray ipv4Packet(const QHostAddress &source, const QHostAddress &destination, int size, char fill = 'x');

    // ngtcp2 callbacks
    void onHandshakeCompleted();
    void onStreamData(qint64 streamId, const QByteArray &bytes);
    void onDatagram(const QByteArray &bytes);
    void *conn() const { return m_conn; }

Q_SIGNALS:
    void connected();
    void handshakeDone();
    void packetReceived(const QByteArray &packet);
    void closed();

private:
    void readSocket();
    void writeOut();
    void expire();
    void markClosed();

    Options m_options;
    int m_fd = -1;
    QByteArray m_local;
    QByteArray m_remote;
    std::unique_ptr<QSocketNotifier> m_notifier;
    QTimer m_timer;
    void *m_conn = nullptr;    // ngtcp2_conn *
    void *m_session = nullptr; // gnutls_session_t
    void *m_credentials = nullptr;
    ngtcp2_crypto_conn_ref m_connRef{};
    std::unique_ptr<PeerNoiseInitiator> m_noise;
    struct PendingStream {
        qint64 streamId;
        QByteArray bytes;
        qsizetype written = 0;
    };
    QList<PendingStream> m_pendingStreams; // kept until the connection ends (ngtcp2 retransmits from them)
    QList<QByteArray> m_pendingDatagrams;
    QHash<qint64, QByteArray> m_streamBytes;
    QByteArray m_sendKey;
    QByteArray m_receiveKey;
    quint64 m_sendCounter = 0;
    QByteArray m_lastDatagram;
    QByteArray m_lastMessage1Frame;
    qint64 m_lastTimestampNs = 0;
    QList<QByteArray> m_received;
    QList<QByteArray> m_rawDatagrams;
    bool m_connected = false;
    bool m_closed = false;
    bool m_discardIncoming = false;
    bool m_handshakeDone = false;
    bool m_handshakeStarted = false;
    qint64 m_handshakeStream = 0;
    bool m_awaitingMessage2 = false;
    int m_rekeys = 0;
    std::optional<quint64> m_closeCode;
};

} // namespace coreflow::peers
