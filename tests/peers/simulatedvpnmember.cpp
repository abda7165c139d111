#include "tests/peers/simulatedvpnmember.h"

#include "tests/peers/peernoiseinitiator.h"

#include <ngtcp2/ngtcp2.h>
#include <ngtcp2/ngtcp2_crypto.h>
#include <ngtcp2/ngtcp2_crypto_gnutls.h>

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>

#include <QSocketNotifier>
#include <QtEndian>
#include <arpa/inet.h>
#include <chrono>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace coreflow::peers {

namespace {

uint64_t nowNs()
{
    return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

SimulatedVpnMember *member(void *userData) { return static_cast<SimulatedVpnMember *>(userData); }
ngtcp2_conn *asConn(void *p) { return static_cast<ngtcp2_conn *>(p); }

ngtcp2_conn *connOfRef(ngtcp2_crypto_conn_ref *ref) { return asConn(static_cast<SimulatedVpnMember *>(ref->user_data)->conn()); }

void randomFill(uint8_t *dest, size_t length, const ngtcp2_rand_ctx *) { (void)gnutls_rnd(GNUTLS_RND_RANDOM, dest, length); }

int newConnectionId(ngtcp2_conn *, ngtcp2_cid *cid, uint8_t *token, size_t length, void *)
{
    (void)gnutls_rnd(GNUTLS_RND_RANDOM, cid->data, length);
    cid->datalen = length;
    (void)gnutls_rnd(GNUTLS_RND_RANDOM, token, NGTCP2_STATELESS_RESET_TOKENLEN);
    return 0;
}

int handshakeCompleted(ngtcp2_conn *, void *userData)
{
    member(userData)->onHandshakeCompleted();
    return 0;
}

int recvStreamData(ngtcp2_conn *conn, uint32_t, int64_t streamId, uint64_t, const uint8_t *data, size_t length, void *userData, void *)
{
    ngtcp2_conn_extend_max_stream_offset(conn, streamId, length);
    ngtcp2_conn_extend_max_offset(conn, length);
    member(userData)->onStreamData(streamId, QByteArray(reinterpret_cast<const char *>(data), qsizetype(length)));
    return 0;
}

int recvDatagram(ngtcp2_conn *, uint32_t, const uint8_t *data, size_t length, void *userData)
{
    member(userData)->onDatagram(QByteArray(reinterpret_cast<const char *>(data), qsizetype(length)));
    return 0;
}

} // namespace

SimulatedVpnMember::SimulatedVpnMember(Options options, QObject *parent) : QObject(parent), m_options(std::move(options))
{
    if (m_options.staticPrivateKey.isEmpty())
        m_options.staticPrivateKey = PeerNoiseInitiator::newPrivateKey();
    m_timer.setSingleShot(true);
    connect(&m_timer, &QTimer::timeout, this, &SimulatedVpnMember::expire);
}

SimulatedVpnMember::~SimulatedVpnMember()
{
    m_notifier.reset();
    if (m_conn)
        ngtcp2_conn_del(asConn(m_conn));
    if (m_session)
        gnutls_deinit(static_cast<gnutls_session_t>(m_session));
    if (m_credentials)
        gnutls_certificate_free_credentials(static_cast<gnutls_certificate_credentials_t>(m_credentials));
    if (m_fd >= 0)
        ::close(m_fd);
}

QByteArray SimulatedVpnMember::publicKey() const { return PeerNoiseInitiator::publicKeyOf(m_options.staticPrivateKey); }

bool SimulatedVpnMember::dial()
{
    m_fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (m_fd < 0)
        return false;
    sockaddr_in remote{};
    remote.sin_family = AF_INET;
    remote.sin_port = htons(m_options.hubPort);
    remote.sin_addr.s_addr = htonl(m_options.hubAddress.toIPv4Address());
    if (::connect(m_fd, reinterpret_cast<const sockaddr *>(&remote), sizeof(remote)) != 0)
        return false;
    sockaddr_in local{};
    socklen_t length = sizeof(local);
    ::getsockname(m_fd, reinterpret_cast<sockaddr *>(&local), &length);
    m_local = QByteArray(reinterpret_cast<const char *>(&local), sizeof(local));
    m_remote = QByteArray(reinterpret_cast<const char *>(&remote), sizeof(remote));
    const int bufferBytes = 4 * 1024 * 1024;
    (void)::setsockopt(m_fd, SOL_SOCKET, SO_RCVBUF, &bufferBytes, sizeof(bufferBytes));

    gnutls_certificate_credentials_t credentials = nullptr;
    gnutls_certificate_allocate_credentials(&credentials);
    m_credentials = credentials;
    gnutls_session_t session = nullptr;
    if (gnutls_init(&session, GNUTLS_CLIENT | GNUTLS_NO_END_OF_EARLY_DATA) != 0)
        return false;
    m_session = session;
    if (ngtcp2_crypto_gnutls_configure_client_session(session) != 0)
        return false;
    gnutls_priority_set_direct(session, "%DISABLE_TLS13_COMPAT_MODE:NORMAL:-VERS-ALL:+VERS-TLS1.3", nullptr);
    m_connRef.get_conn = connOfRef;
    m_connRef.user_data = this;
    gnutls_session_set_ptr(session, &m_connRef);
    gnutls_credentials_set(session, GNUTLS_CRD_CERTIFICATE, credentials);
    gnutls_datum_t alpn{reinterpret_cast<unsigned char *>(m_options.alpn.data()), unsigned(m_options.alpn.size())};
    gnutls_alpn_set_protocols(session, &alpn, 1, GNUTLS_ALPN_MANDATORY);
    gnutls_server_name_set(session, GNUTLS_NAME_DNS, "localhost", 9);

    ngtcp2_callbacks callbacks{};
    callbacks.client_initial = ngtcp2_crypto_client_initial_cb;
    callbacks.recv_crypto_data = ngtcp2_crypto_recv_crypto_data_cb;
    callbacks.handshake_completed = handshakeCompleted;
    callbacks.encrypt = ngtcp2_crypto_encrypt_cb;
    callbacks.decrypt = ngtcp2_crypto_decrypt_cb;
    callbacks.hp_mask = ngtcp2_crypto_hp_mask_cb;
    callbacks.recv_stream_data = recvStreamData;
    callbacks.recv_retry = ngtcp2_crypto_recv_retry_cb;
    callbacks.rand = randomFill;
    callbacks.get_new_connection_id = newConnectionId;
    callbacks.update_key = ngtcp2_crypto_update_key_cb;
    callbacks.delete_crypto_aead_ctx = ngtcp2_crypto_delete_crypto_aead_ctx_cb;
    callbacks.delete_crypto_cipher_ctx = ngtcp2_crypto_delete_crypto_cipher_ctx_cb;
    callbacks.recv_datagram = recvDatagram;
    callbacks.get_path_challenge_data = ngtcp2_crypto_get_path_challenge_data_cb;
    callbacks.version_negotiation = ngtcp2_crypto_version_negotiation_cb;

    ngtcp2_cid dcid, scid;
    dcid.datalen = NGTCP2_MIN_INITIAL_DCIDLEN;
    gnutls_rnd(GNUTLS_RND_RANDOM, dcid.data, dcid.datalen);
    scid.datalen = 8;
    gnutls_rnd(GNUTLS_RND_RANDOM, scid.data, scid.datalen);
    ngtcp2_settings settings;
    ngtcp2_settings_default(&settings);
    settings.initial_ts = nowNs();
    if (m_options.fixedUdpPayload > 0) {
        settings.max_tx_udp_payload_size = size_t(m_options.fixedUdpPayload);
        settings.no_tx_udp_payload_size_shaping = 1;
        settings.no_pmtud = 1;
    }
    ngtcp2_transport_params params;
    ngtcp2_transport_params_default(&params);
    params.initial_max_streams_bidi = 0;
    params.initial_max_streams_uni = 0;
    params.initial_max_stream_data_bidi_local = 64 * 1024;
    params.initial_max_data = 1024 * 1024;
    params.max_idle_timeout = 30 * NGTCP2_SECONDS;
    params.max_datagram_frame_size = 65535;
    ngtcp2_path path{};
    path.local.addr = reinterpret_cast<ngtcp2_sockaddr *>(m_local.data());
    path.local.addrlen = ngtcp2_socklen(m_local.size());
    path.remote.addr = reinterpret_cast<ngtcp2_sockaddr *>(m_remote.data());
    path.remote.addrlen = ngtcp2_socklen(m_remote.size());
    ngtcp2_conn *conn = nullptr;
    if (ngtcp2_conn_client_new(&conn, &dcid, &scid, &path, NGTCP2_PROTO_VER_V1, &callbacks, &settings, &params, nullptr, this) != 0)
        return false;
    m_conn = conn;
    ngtcp2_conn_set_tls_native_handle(conn, session);
    m_notifier = std::make_unique<QSocketNotifier>(m_fd, QSocketNotifier::Read);
    connect(m_notifier.get(), &QSocketNotifier::activated, this, &SimulatedVpnMember::readSocket);
    writeOut();
    return true;
}

void SimulatedVpnMember::handshake()
{
    if (!m_connected || m_handshakeStarted)
        return;
    m_handshakeStarted = true;
    m_noise = std::make_unique<PeerNoiseInitiator>(m_options.staticPrivateKey, m_options.hubPublicKey);
    // §11.4: message 1's payload is a TAI64N timestamp greater than any this key sent before.
    QByteArray timestamp;
    if (m_options.timestamp) {
        timestamp = m_options.timestamp();
    } else {
        const qint64 nowNs = qint64(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
        m_lastTimestampNs = qMax(nowNs, m_lastTimestampNs + 1);
        timestamp = tai64n(m_lastTimestampNs);
    }
    const QByteArray message = m_noise->writeMessage1(timestamp);
    QByteArray framed(2, '\0');
    qToBigEndian<quint16>(quint16(message.size()), framed.data());
    framed += message;
    m_lastMessage1Frame = framed;
    m_awaitingMessage2 = true;
    sendRawStream(m_handshakeStream, framed);
}

void SimulatedVpnMember::rekey()
{
    if (!m_handshakeDone)
        return;
    m_handshakeStream += 4;
    m_handshakeStarted = false;
    handshake();
}

void SimulatedVpnMember::sendRawStream(qint64 streamId, const QByteArray &bytes)
{
    if (!m_conn || m_closed)
        return;
    // Opens client bidirectional streams in order up to the one asked for.
    int64_t opened = -1;
    bool known = false;
    for (const PendingStream &s : std::as_const(m_pendingStreams))
        known = known || s.streamId == streamId;
    while (!known) {
        if (ngtcp2_conn_open_bidi_stream(asConn(m_conn), &opened, nullptr) != 0)
            break;
        if (opened >= streamId)
            break;
    }
    m_pendingStreams.append(PendingStream{streamId, bytes, 0});
    writeOut();
}

void SimulatedVpnMember::sendPacket(const QByteArray &ipv4Packet)
{
    if (m_sendKey.isEmpty())
        return;
    QByteArray datagram(8, '\0');
    qToBigEndian<quint64>(m_sendCounter, datagram.data());
    datagram += PeerNoiseInitiator::seal(m_sendKey, m_sendCounter, QByteArray(), ipv4Packet);
    ++m_sendCounter;
    sendRawDatagram(datagram);
}

void SimulatedVpnMember::sendRawDatagram(const QByteArray &payload)
{
    m_lastDatagram = payload;
    m_pendingDatagrams.append(payload);
    writeOut();
}

void SimulatedVpnMember::closeConnection()
{
    if (!m_conn || m_closed)
        return;
    ngtcp2_connection_close_error error;
    ngtcp2_connection_close_error_set_application_error(&error, 0, nullptr, 0);
    uint8_t buf[1500];
    ngtcp2_path_storage ps;
    ngtcp2_path_storage_zero(&ps);
    ngtcp2_pkt_info pi{};
    const ngtcp2_ssize n = ngtcp2_conn_write_connection_close(asConn(m_conn), &ps.path, &pi, buf, sizeof(buf), &error, nowNs());
    if (n > 0)
        (void)::send(m_fd, buf, size_t(n), 0);
    markClosed();
}

QByteArray SimulatedVpnMember::tai64n(qint64 unixNanoseconds)
{
    QByteArray stamp(12, '\0');
    qToBigEndian<quint64>((quint64(1) << 62) + 10 + quint64(unixNanoseconds / 1000000000), stamp.data());
    qToBigEndian<quint32>(quint32(unixNanoseconds % 1000000000), stamp.data() + 8);
    return stamp;
}

QByteArray SimulatedVpnMember::ipv4Packet(const QHostAddress &source, const QHostAddress &destination, int size, char fill)
{
    QByteArray packet(size, fill);
    packet[0] = char(0x45);
    packet[1] = 0;
    qToBigEndian<quint16>(quint16(size), packet.data() + 2);
    qToBigEndian<quint32>(0, packet.data() + 4);
    packet[8] = 64;
    packet[9] = 17; // UDP
    qToBigEndian<quint16>(0, packet.data() + 10);
    qToBigEndian<quint32>(source.toIPv4Address(), packet.data() + 12);
    qToBigEndian<quint32>(destination.toIPv4Address(), packet.data() + 16);
    return packet;
}

void SimulatedVpnMember::onHandshakeCompleted()
{
    m_connected = true;
    QMetaObject::invokeMethod(this, [this] { Q_EMIT connected(); }, Qt::QueuedConnection);
}

void SimulatedVpnMember::onStreamData(qint64 streamId, const QByteArray &bytes)
{
    QByteArray &held = m_streamBytes[streamId];
    held += bytes;
    if (!m_noise || !m_awaitingMessage2 || streamId != m_handshakeStream || held.size() < 2)
        return;
    const int length = qFromBigEndian<quint16>(held.constData());
    if (held.size() < 2 + length)
        return;
    if (!m_noise->readMessage2(held.mid(2, length)))
        return;
    m_awaitingMessage2 = false;
    if (m_handshakeDone)
        ++m_rekeys;
    m_sendKey = m_noise->sendKey();
    m_receiveKey = m_noise->receiveKey();
    m_sendCounter = 0;
    m_handshakeDone = true;
    QMetaObject::invokeMethod(this, [this] { Q_EMIT handshakeDone(); }, Qt::QueuedConnection);
}

void SimulatedVpnMember::onDatagram(const QByteArray &bytes)
{
    m_rawDatagrams.append(bytes);
    if (m_receiveKey.isEmpty() || bytes.size() < 8 + 16)
        return;
    const quint64 counter = qFromBigEndian<quint64>(bytes.constData());
    auto packet = PeerNoiseInitiator::open(m_receiveKey, counter, QByteArray(), bytes.mid(8));
    if (!packet)
        return;
    m_received.append(*packet);
    const QByteArray copy = *packet;
    QMetaObject::invokeMethod(this, [this, copy] { Q_EMIT packetReceived(copy); }, Qt::QueuedConnection);
}

void SimulatedVpnMember::readSocket()
{
    if (!m_conn || m_closed)
        return;
    uint8_t buf[65536];
    for (;;) {
        const ssize_t n = ::recv(m_fd, buf, sizeof(buf), MSG_DONTWAIT);
        if (n < 0)
            break;
        if (m_discardIncoming)
            continue;
        ngtcp2_path path{};
        path.local.addr = reinterpret_cast<ngtcp2_sockaddr *>(m_local.data());
        path.local.addrlen = ngtcp2_socklen(m_local.size());
        path.remote.addr = reinterpret_cast<ngtcp2_sockaddr *>(m_remote.data());
        path.remote.addrlen = ngtcp2_socklen(m_remote.size());
        ngtcp2_pkt_info pi{};
        const int rv = ngtcp2_conn_read_pkt(asConn(m_conn), &path, &pi, buf, size_t(n), nowNs());
        if (rv != 0) {
            const ngtcp2_connection_close_error *error = nullptr;
            ngtcp2_connection_close_error received;
            ngtcp2_conn_get_connection_close_error(asConn(m_conn), &received);
            error = &received;
            if (error->type == NGTCP2_CONNECTION_CLOSE_ERROR_CODE_TYPE_APPLICATION)
                m_closeCode = error->error_code;
            markClosed();
            return;
        }
    }
    writeOut();
}

void SimulatedVpnMember::writeOut()
{
    if (!m_conn || m_closed)
        return;
    ngtcp2_conn *conn = asConn(m_conn);
    uint8_t buf[65536];
    ngtcp2_path_storage ps;
    ngtcp2_path_storage_zero(&ps);
    const uint64_t ts = nowNs();
    // Datagrams first (they wait for the handshake), then streams and acknowledgements.
    while (!m_pendingDatagrams.isEmpty() && m_connected) {
        const QByteArray &front = m_pendingDatagrams.front();
        ngtcp2_vec vec{reinterpret_cast<uint8_t *>(const_cast<char *>(front.constData())), size_t(front.size())};
        int accepted = 0;
        ngtcp2_pkt_info pi{};
        const ngtcp2_ssize n = ngtcp2_conn_writev_datagram(conn, &ps.path, &pi, buf, sizeof(buf), &accepted, 0, 0, &vec, 1, ts);
        if (n < 0) {
            m_pendingDatagrams.pop_front();
            continue;
        }
        if (n == 0)
            break;
        (void)::send(m_fd, buf, size_t(n), 0);
        if (accepted)
            m_pendingDatagrams.pop_front();
    }
    for (int guard = 0; guard < 1024; ++guard) {
        PendingStream *stream = nullptr;
        for (PendingStream &s : m_pendingStreams)
            if (s.written < s.bytes.size()) {
                stream = &s;
                break;
            }
        ngtcp2_vec vec{};
        if (stream) {
            vec.base = reinterpret_cast<uint8_t *>(stream->bytes.data()) + stream->written;
            vec.len = size_t(stream->bytes.size() - stream->written);
        }
        ngtcp2_ssize written = -1;
        ngtcp2_pkt_info pi{};
        const ngtcp2_ssize n = ngtcp2_conn_writev_stream(conn, &ps.path, &pi, buf, sizeof(buf), &written, stream ? NGTCP2_WRITE_STREAM_FLAG_MORE : 0,
                                                         stream ? stream->streamId : -1, stream ? &vec : nullptr, stream ? 1 : 0, ts);
        if (written > 0 && stream)
            stream->written += written;
        if (n == NGTCP2_ERR_WRITE_MORE)
            continue;
        if (n < 0) {
            if (stream && (n == NGTCP2_ERR_STREAM_DATA_BLOCKED || n == NGTCP2_ERR_STREAM_NOT_FOUND || n == NGTCP2_ERR_STREAM_SHUT_WR)) {
                stream->written = stream->bytes.size(); // give up on it
                continue;
            }
            markClosed();
            return;
        }
        if (n == 0)
            break;
        (void)::send(m_fd, buf, size_t(n), 0);
    }
    ngtcp2_conn_update_pkt_tx_time(conn, ts);
    const uint64_t expiry = ngtcp2_conn_get_expiry(conn);
    if (expiry != UINT64_MAX) {
        const uint64_t now = nowNs();
        m_timer.start(expiry <= now ? 0 : int((expiry - now) / NGTCP2_MILLISECONDS + 1));
    }
}

void SimulatedVpnMember::expire()
{
    if (!m_conn || m_closed)
        return;
    if (ngtcp2_conn_handle_expiry(asConn(m_conn), nowNs()) != 0) {
        markClosed();
        return;
    }
    writeOut();
}

void SimulatedVpnMember::markClosed()
{
    if (m_closed)
        return;
    m_closed = true;
    m_timer.stop();
    QMetaObject::invokeMethod(this, [this] { Q_EMIT closed(); }, Qt::QueuedConnection);
}

} // namespace coreflow::peers
