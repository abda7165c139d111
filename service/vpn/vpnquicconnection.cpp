#include "service/vpn/vpnquicconnection.h"

#include "service/vpn/vpnquicserver.h"

#include <ngtcp2/ngtcp2_crypto_gnutls.h>

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>

#include <QHostAddress>
#include <arpa/inet.h>
#include <chrono>
#include <cstring>
#include <netinet/in.h>

namespace coreflow {

namespace {

constexpr size_t kServerCidLength = 18;
constexpr qint64 kMaxUnsentStreamBytes = 64 * 1024;
constexpr size_t kPacketBuffer = 1500;
// The member's connection-level stream credit (initial_max_data), bytes. ngtcp2's window auto-tuning
// stays off (settings.max_window 0), so the window ngtcp2 compares with is this one.
constexpr uint64_t kConnectionWindow = 256 * 1024;
// What one loss probe raises that credit by, bytes: ngtcp2 0.12 writes MAX_DATA once the unsent
// increase exceeds half the window, so a whole window makes the very next packet carry the frame.
constexpr uint64_t kProbeCreditStep = kConnectionWindow;
// Short header (1) + longest connection id (20) + packet number (4) + AEAD tag (16) + DATAGRAM frame
// type and a 2-byte length (3): what a DATAGRAM frame costs in a 1-RTT packet beside its payload.
constexpr int kDatagramPacketOverhead = 1 + 20 + 4 + 16 + 3;
const QByteArrayView kAlpn = "coreflow-vpn/1";

uint64_t timestampNs()
{
    return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

VpnQuicConnection *self(void *userData) { return static_cast<VpnQuicConnection *>(userData); }

ngtcp2_conn *connFromRef(ngtcp2_crypto_conn_ref *ref) { return static_cast<VpnQuicConnection *>(ref->user_data)->conn(); }

void randomBytes(uint8_t *dest, size_t length, const ngtcp2_rand_ctx *) { (void)gnutls_rnd(GNUTLS_RND_RANDOM, dest, length); }

int onHandshakeCompleted(ngtcp2_conn *, void *userData)
{
    self(userData)->onHandshakeCompleted();
    return 0;
}

int onRecvStreamData(ngtcp2_conn *, uint32_t, int64_t streamId, uint64_t, const uint8_t *data, size_t length, void *userData, void *)
{
    self(userData)->onStreamData(streamId, data, length);
    return 0;
}

int onAckedStreamData(ngtcp2_conn *, int64_t streamId, uint64_t offset, uint64_t length, void *userData, void *)
{
    self(userData)->onStreamAcked(streamId, offset, length);
    return 0;
}

int onStreamClose(ngtcp2_conn *, uint32_t, int64_t streamId, uint64_t, void *userData, void *)
{
    self(userData)->onStreamClosed(streamId);
    return 0;
}

int onRecvDatagram(ngtcp2_conn *, uint32_t, const uint8_t *data, size_t length, void *userData)
{
    self(userData)->onDatagram(data, length);
    return 0;
}

int onGetNewConnectionId(ngtcp2_conn *, ngtcp2_cid *cid, uint8_t *token, size_t length, void *userData)
{
    return self(userData)->onNewConnectionId(cid, token, length);
}

int onRemoveConnectionId(ngtcp2_conn *, const ngtcp2_cid *cid, void *userData)
{
    self(userData)->onRemoveConnectionId(cid);
    return 0;
}

// The client's ALPN must be ours (docs/contract.md §11.3); GnuTLS has selected it by now or failed.
int checkClientHello(gnutls_session_t session, unsigned int, unsigned, unsigned int, const gnutls_datum_t *)
{
    gnutls_datum_t selected{};
    if (gnutls_alpn_get_selected_protocol(session, &selected) != 0)
        return -1;
    if (QByteArrayView(reinterpret_cast<const char *>(selected.data), qsizetype(selected.size)) != kAlpn)
        return -1;
    return 0;
}

QByteArray cidKey(const uint8_t *data, size_t length) { return QByteArray(reinterpret_cast<const char *>(data), qsizetype(length)); }

} // namespace

VpnQuicConnection::VpnQuicConnection(VpnQuicServer &server, quint64 id, const QByteArray &remote)
    : m_server(server), m_id(id), m_remote(remote)
{
    m_timer.setSingleShot(true);
    m_timer.setTimerType(Qt::PreciseTimer);
    connect(&m_timer, &QTimer::timeout, this, &VpnQuicConnection::expire);
    ngtcp2_connection_close_error_default(&m_lastError);
}

VpnQuicConnection::~VpnQuicConnection()
{
    if (m_conn)
        ngtcp2_conn_del(m_conn);
    if (m_session)
        gnutls_deinit(static_cast<gnutls_session_t>(m_session));
}

QString VpnQuicConnection::remoteText() const
{
    const auto *sin = reinterpret_cast<const sockaddr_in *>(m_remote.constData());
    return QStringLiteral("%1:%2").arg(QHostAddress(ntohl(sin->sin_addr.s_addr)).toString()).arg(ntohs(sin->sin_port));
}

bool VpnQuicConnection::init(const ngtcp2_pkt_hd &initial)
{
    ngtcp2_callbacks callbacks{};
    callbacks.recv_client_initial = ngtcp2_crypto_recv_client_initial_cb;
    callbacks.recv_crypto_data = ngtcp2_crypto_recv_crypto_data_cb;
    callbacks.handshake_completed = coreflow::onHandshakeCompleted;
    callbacks.encrypt = ngtcp2_crypto_encrypt_cb;
    callbacks.decrypt = ngtcp2_crypto_decrypt_cb;
    callbacks.hp_mask = ngtcp2_crypto_hp_mask_cb;
    callbacks.recv_stream_data = onRecvStreamData;
    callbacks.acked_stream_data_offset = onAckedStreamData;
    callbacks.stream_close = onStreamClose;
    callbacks.rand = randomBytes;
    callbacks.get_new_connection_id = onGetNewConnectionId;
    callbacks.remove_connection_id = coreflow::onRemoveConnectionId;
    callbacks.update_key = ngtcp2_crypto_update_key_cb;
    callbacks.delete_crypto_aead_ctx = ngtcp2_crypto_delete_crypto_aead_ctx_cb;
    callbacks.delete_crypto_cipher_ctx = ngtcp2_crypto_delete_crypto_cipher_ctx_cb;
    callbacks.recv_datagram = onRecvDatagram;
    callbacks.get_path_challenge_data = ngtcp2_crypto_get_path_challenge_data_cb;
    callbacks.version_negotiation = ngtcp2_crypto_version_negotiation_cb;

    ngtcp2_cid scid;
    scid.datalen = kServerCidLength;
    if (gnutls_rnd(GNUTLS_RND_RANDOM, scid.data, scid.datalen) != 0)
        return false;

    ngtcp2_settings settings;
    ngtcp2_settings_default(&settings);
    settings.initial_ts = timestampNs();
    settings.max_window = 0; // no auto-tuning: kProbeCreditStep relies on a fixed window (D-115)

    ngtcp2_transport_params params;
    ngtcp2_transport_params_default(&params);
    params.initial_max_stream_data_bidi_local = 64 * 1024;
    params.initial_max_stream_data_bidi_remote = 64 * 1024;
    params.initial_max_data = kConnectionWindow;
    params.initial_max_streams_bidi = 4;
    params.initial_max_streams_uni = 0;
    params.max_idle_timeout = uint64_t(m_server.limits().idleTimeoutMs) * NGTCP2_MILLISECONDS;
    params.active_connection_id_limit = 2;
    params.max_datagram_frame_size = 65535; // docs/contract.md §11.3 (RFC 9221)
    params.original_dcid = initial.dcid;
    params.stateless_reset_token_present = 1;
    if (gnutls_rnd(GNUTLS_RND_RANDOM, params.stateless_reset_token, sizeof(params.stateless_reset_token)) != 0)
        return false;

    ngtcp2_path path{};
    path.local.addr = reinterpret_cast<ngtcp2_sockaddr *>(const_cast<char *>(m_server.localAddress().constData()));
    path.local.addrlen = ngtcp2_socklen(m_server.localAddress().size());
    path.remote.addr = reinterpret_cast<ngtcp2_sockaddr *>(m_remote.data());
    path.remote.addrlen = ngtcp2_socklen(m_remote.size());

    if (ngtcp2_conn_server_new(&m_conn, &initial.scid, &scid, &path, initial.version, &callbacks, &settings, &params, nullptr, this) != 0) {
        m_conn = nullptr;
        return false;
    }

    gnutls_session_t session = nullptr;
    if (gnutls_init(&session, GNUTLS_SERVER | GNUTLS_NO_AUTO_SEND_TICKET | GNUTLS_NO_END_OF_EARLY_DATA) != 0)
        return false;
    m_session = session;
    if (!m_server.tlsPriority() || gnutls_priority_set(session, static_cast<gnutls_priority_t>(m_server.tlsPriority())) != 0)
        return false;
    gnutls_handshake_set_hook_function(session, GNUTLS_HANDSHAKE_CLIENT_HELLO, GNUTLS_HOOK_POST, checkClientHello);
    if (ngtcp2_crypto_gnutls_configure_server_session(session) != 0)
        return false;
    m_connRef.get_conn = connFromRef;
    m_connRef.user_data = this;
    gnutls_session_set_ptr(session, &m_connRef);
    if (gnutls_credentials_set(session, GNUTLS_CRD_CERTIFICATE, static_cast<gnutls_certificate_credentials_t>(m_server.tlsCredentials())) != 0)
        return false;
    gnutls_datum_t alpn{reinterpret_cast<unsigned char *>(const_cast<char *>(kAlpn.data())), unsigned(kAlpn.size())};
    gnutls_alpn_set_protocols(session, &alpn, 1, GNUTLS_ALPN_MANDATORY | GNUTLS_ALPN_SERVER_PRECEDENCE);
    ngtcp2_conn_set_tls_native_handle(m_conn, session);

    m_server.registerConnectionId(cidKey(scid.data, scid.datalen), this);
    return true;
}

bool VpnQuicConnection::read(const uint8_t *data, size_t length)
{
    if (m_finished)
        return false;
    ngtcp2_path path{};
    path.local.addr = reinterpret_cast<ngtcp2_sockaddr *>(const_cast<char *>(m_server.localAddress().constData()));
    path.local.addrlen = ngtcp2_socklen(m_server.localAddress().size());
    path.remote.addr = reinterpret_cast<ngtcp2_sockaddr *>(m_remote.data());
    path.remote.addrlen = ngtcp2_socklen(m_remote.size());
    ngtcp2_pkt_info pi{};
    m_reading = true;
    const int rv = ngtcp2_conn_read_pkt(m_conn, &path, &pi, data, length, timestampNs());
    m_reading = false;
    if (m_pendingClose) {
        const quint64 code = *m_pendingClose;
        m_pendingClose.reset();
        closeWithApplicationCode(code);
        return false;
    }
    if (rv == 0)
        return true;
    if (rv == NGTCP2_ERR_DRAINING || rv == NGTCP2_ERR_CLOSING) {
        finish();
        return false;
    }
    if (rv == NGTCP2_ERR_CRYPTO)
        ngtcp2_connection_close_error_set_transport_error_tls_alert(&m_lastError, ngtcp2_conn_get_tls_alert(m_conn), nullptr, 0);
    else
        ngtcp2_connection_close_error_set_transport_error_liberr(&m_lastError, rv, nullptr, 0);
    // Tell the peer why, once, and forget the connection.
    ngtcp2_path_storage ps;
    ngtcp2_path_storage_zero(&ps);
    ngtcp2_pkt_info outInfo{};
    uint8_t buf[kPacketBuffer];
    const ngtcp2_ssize n = ngtcp2_conn_write_connection_close(m_conn, &ps.path, &outInfo, buf, sizeof(buf), &m_lastError, timestampNs());
    if (n > 0)
        m_server.sendPacket(m_remote, buf, size_t(n));
    finish();
    return false;
}

bool VpnQuicConnection::appendStream(qint64 streamId, QByteArrayView bytes)
{
    if (m_finished)
        return false;
    OutStream &stream = m_streams[streamId];
    if (stream.unsentBytes + bytes.size() > kMaxUnsentStreamBytes)
        return false;
    stream.chunks.emplace_back(bytes.data(), bytes.size());
    stream.unsentBytes += bytes.size();
    return true;
}

int VpnQuicConnection::maxDatagramPayload() const
{
    if (!m_conn || m_finished)
        return 0;
    return int(ngtcp2_conn_get_path_max_tx_udp_payload_size(m_conn)) - kDatagramPacketOverhead;
}

int VpnQuicConnection::sendDatagram(QByteArrayView payload)
{
    if (payload.size() > maxDatagramPayload())
        return -1;
    if (m_datagrams.empty() && !m_reading) {
        uint8_t buf[kPacketBuffer];
        ngtcp2_path_storage ps;
        ngtcp2_path_storage_zero(&ps);
        ngtcp2_pkt_info pi{};
        ngtcp2_vec vec{reinterpret_cast<uint8_t *>(const_cast<char *>(payload.data())), size_t(payload.size())};
        requestLossProbeIfDue(size_t(payload.size()));
        for (int attempt = 0; attempt < 2; ++attempt) {
            int accepted = 0;
            // In a batch the packet is written straight into its outgoing slot (no copy).
            uint8_t *slot = m_server.txSlot();
            uint8_t *out = slot ? slot : buf;
            const size_t outLength = slot ? VpnQuicServer::txSlotBytes() : sizeof(buf);
            const ngtcp2_ssize n = ngtcp2_conn_writev_datagram(m_conn, &ps.path, &pi, out, outLength, &accepted, 0, 0, &vec, 1, timestampNs());
            if (n < 0) {
                if (ngtcp2_err_is_fatal(int(n)))
                    return -2;
                break;
            }
            if (n == 0)
                break; // congestion or pacing: queue it
            if (slot)
                m_server.commitTxSlot(m_remote, size_t(n));
            else
                m_server.sendPacket(m_remote, buf, size_t(n));
            datagramPacketWritten(size_t(n));
            if (accepted)
                return 0;
        }
    }
    if (int(m_datagrams.size()) >= m_server.limits().maxQueuedDatagrams)
        return -2;
    QByteArray queued = m_server.takeDatagramBuffer();
    queued.resize(payload.size());
    std::memcpy(queued.data(), payload.data(), size_t(payload.size()));
    m_datagrams.push_back(std::move(queued));
    return 1;
}

void VpnQuicConnection::closeWithApplicationCode(quint64 code)
{
    if (m_finished || !m_conn)
        return;
    if (m_reading) {
        m_pendingClose = code;
        return;
    }
    ngtcp2_connection_close_error error;
    ngtcp2_connection_close_error_set_application_error(&error, code, nullptr, 0);
    ngtcp2_path_storage ps;
    ngtcp2_path_storage_zero(&ps);
    ngtcp2_pkt_info pi{};
    uint8_t buf[kPacketBuffer];
    const ngtcp2_ssize n = ngtcp2_conn_write_connection_close(m_conn, &ps.path, &pi, buf, sizeof(buf), &error, timestampNs());
    if (n > 0)
        m_server.sendPacket(m_remote, buf, size_t(n));
    finish();
}

void VpnQuicConnection::flush()
{
    if (m_finished)
        return;
    uint8_t buf[kPacketBuffer];
    ngtcp2_path_storage ps;
    ngtcp2_path_storage_zero(&ps);
    const uint64_t ts = timestampNs();
    if (!writeQueuedDatagrams(ps, buf, sizeof(buf), ts))
        return;
    if (!writeStreams(ps, buf, sizeof(buf), ts))
        return;
    ngtcp2_conn_update_pkt_tx_time(m_conn, ts);
    armTimer();
}

bool VpnQuicConnection::writeQueuedDatagrams(ngtcp2_path_storage &ps, uint8_t *buf, size_t bufLength, uint64_t ts)
{
    while (!m_datagrams.empty()) {
        const QByteArray &front = m_datagrams.front();
        ngtcp2_vec vec{reinterpret_cast<uint8_t *>(const_cast<char *>(front.constData())), size_t(front.size())};
        requestLossProbeIfDue(size_t(front.size()));
        ngtcp2_pkt_info pi{};
        int accepted = 0;
        uint8_t *slot = m_server.txSlot(); // in a batch: written in place (no copy)
        const ngtcp2_ssize n = ngtcp2_conn_writev_datagram(m_conn, &ps.path, &pi, slot ? slot : buf,
                                                           slot ? VpnQuicServer::txSlotBytes() : bufLength, &accepted, 0, 0, &vec, 1, ts);
        if (n < 0) {
            if (ngtcp2_err_is_fatal(int(n))) {
                finish();
                return false;
            }
            popQueuedDatagram(); // this one cannot be sent (e.g. no longer fits): dropped
            continue;
        }
        if (n == 0)
            return true;
        if (slot)
            m_server.commitTxSlot(m_remote, size_t(n));
        else
            m_server.sendPacket(m_remote, buf, size_t(n));
        datagramPacketWritten(size_t(n));
        if (accepted)
            popQueuedDatagram();
    }
    return true;
}

void VpnQuicConnection::popQueuedDatagram()
{
    m_server.returnDatagramBuffer(std::move(m_datagrams.front()));
    m_datagrams.pop_front();
}

bool VpnQuicConnection::writeStreams(ngtcp2_path_storage &ps, uint8_t *buf, size_t bufLength, uint64_t ts)
{
    QList<int64_t> blocked;
    for (int guard = 0; guard < 4096; ++guard) {
        int64_t streamId = -1;
        OutStream *stream = nullptr;
        for (auto &[id, s] : m_streams) {
            if (s.unsentBytes > 0 && !blocked.contains(id)) {
                streamId = id;
                stream = &s;
                break;
            }
        }
        ngtcp2_vec vec{};
        size_t vecCount = 0;
        if (stream) {
            const QByteArray &chunk = stream->chunks[stream->writeChunk];
            vec.base = reinterpret_cast<uint8_t *>(const_cast<char *>(chunk.constData())) + stream->writeOffset;
            vec.len = size_t(chunk.size() - stream->writeOffset);
            vecCount = 1;
        }
        ngtcp2_ssize written = -1;
        ngtcp2_pkt_info pi{};
        const ngtcp2_ssize n = ngtcp2_conn_writev_stream(m_conn, &ps.path, &pi, buf, bufLength, &written,
                                                         stream ? NGTCP2_WRITE_STREAM_FLAG_MORE : 0, streamId,
                                                         vecCount ? &vec : nullptr, vecCount, ts);
        if (written > 0 && stream) {
            stream->writeOffset += written;
            stream->unsentBytes -= written;
            if (stream->writeOffset == stream->chunks[stream->writeChunk].size()) {
                ++stream->writeChunk;
                stream->writeOffset = 0;
            }
        }
        if (n == NGTCP2_ERR_WRITE_MORE)
            continue;
        if (n == NGTCP2_ERR_STREAM_DATA_BLOCKED || n == NGTCP2_ERR_STREAM_SHUT_WR || n == NGTCP2_ERR_STREAM_NOT_FOUND) {
            blocked.append(streamId);
            continue;
        }
        if (n < 0) {
            ngtcp2_connection_close_error_set_transport_error_liberr(&m_lastError, int(n), nullptr, 0);
            finish();
            return false;
        }
        if (n == 0)
            return true;
        m_server.sendPacket(m_remote, buf, size_t(n));
    }
    return true;
}

void VpnQuicConnection::requestLossProbeIfDue(size_t datagramBytes)
{
    // docs/contract.md §11.8, D-115. A stall needs the window full and no timer: a flight that
    // leaves half the window free cannot close it, so nothing is added below half.
    if (m_probeUnsent)
        return;
    ngtcp2_conn_stat stat;
    ngtcp2_conn_get_conn_stat(m_conn, &stat);
    const uint64_t halfWindow = stat.cwnd / 2;
    if (stat.bytes_in_flight + datagramBytes < halfWindow)
        return;
    // A timer armed by a probe frame (or stream data) sent within the last half window is enough:
    // a lost flight that fills the window then holds that frame too, and its probe timeout fires.
    const bool lossTimerArmed = stat.loss_detection_timer != UINT64_MAX;
    if (lossTimerArmed && m_datagramBytesSinceProbe < halfWindow)
        return;
    ngtcp2_conn_extend_max_offset(m_conn, kProbeCreditStep);
    m_probeUnsent = true;
    m_datagramBytesSinceProbe = 0;
    ++m_server.mutableCounters().lossProbes;
}

void VpnQuicConnection::datagramPacketWritten(size_t packetBytes)
{
    m_probeUnsent = false;
    m_datagramBytesSinceProbe += packetBytes;
}

void VpnQuicConnection::armTimer()
{
    const uint64_t expiry = ngtcp2_conn_get_expiry(m_conn);
    // Re-arming a QTimer re-registers it with the event dispatcher: skip it when nothing moved.
    if (expiry == m_armedExpiry && (expiry == UINT64_MAX || m_timer.isActive()))
        return;
    m_armedExpiry = expiry;
    if (expiry == UINT64_MAX) {
        m_timer.stop();
        return;
    }
    const uint64_t now = timestampNs();
    const qint64 delayMs = expiry <= now ? 0 : qint64((expiry - now + NGTCP2_MILLISECONDS - 1) / NGTCP2_MILLISECONDS);
    m_timer.start(int(qMin<qint64>(delayMs, 24 * 3600 * 1000)));
}

void VpnQuicConnection::expire()
{
    if (m_finished)
        return;
    const int rv = ngtcp2_conn_handle_expiry(m_conn, timestampNs());
    if (rv != 0) {
        // Idle timeout or a fatal timer outcome: the connection is over.
        finish();
        m_server.connectionFinished(this);
        return;
    }
    // A pacing or ACK-delay timer releases a burst: one sendmmsg for it, not a sendto per packet.
    const bool batch = m_server.beginTxBatch();
    flush();
    const bool finished = m_finished;
    m_server.endTxBatch(batch);
    if (finished)
        m_server.connectionFinished(this);
}

void VpnQuicConnection::finish()
{
    if (m_finished)
        return;
    m_finished = true;
    m_timer.stop();
}

void VpnQuicConnection::onHandshakeCompleted()
{
    m_opened = true;
    m_server.handler().connectionOpened(m_id, remoteText());
}

void VpnQuicConnection::onStreamData(int64_t streamId, const uint8_t *data, size_t length)
{
    ngtcp2_conn_extend_max_stream_offset(m_conn, streamId, length);
    ngtcp2_conn_extend_max_offset(m_conn, length);
    if (length > 0 && !m_finished)
        m_server.handler().streamReceived(m_id, streamId, QByteArrayView(reinterpret_cast<const char *>(data), qsizetype(length)));
}

void VpnQuicConnection::onDatagram(const uint8_t *data, size_t length)
{
    if (!m_finished)
        m_server.handler().datagramReceived(m_id, QByteArrayView(reinterpret_cast<const char *>(data), qsizetype(length)));
}

void VpnQuicConnection::onStreamAcked(int64_t streamId, uint64_t offset, uint64_t length)
{
    auto it = m_streams.find(streamId);
    if (it == m_streams.end())
        return;
    OutStream &stream = it->second;
    const uint64_t ackedEnd = offset + length;
    while (!stream.chunks.empty() && stream.writeChunk > 0 && stream.ackedOffset + uint64_t(stream.chunks.front().size()) <= ackedEnd) {
        stream.ackedOffset += uint64_t(stream.chunks.front().size());
        stream.chunks.pop_front();
        --stream.writeChunk;
    }
}

void VpnQuicConnection::onStreamClosed(int64_t streamId)
{
    m_streams.erase(streamId);
    if (!ngtcp2_conn_is_local_stream(m_conn, streamId))
        ngtcp2_conn_extend_max_streams_bidi(m_conn, 1);
}

int VpnQuicConnection::onNewConnectionId(ngtcp2_cid *cid, uint8_t *token, size_t length)
{
    if (gnutls_rnd(GNUTLS_RND_RANDOM, cid->data, length) != 0)
        return NGTCP2_ERR_CALLBACK_FAILURE;
    cid->datalen = length;
    if (gnutls_rnd(GNUTLS_RND_RANDOM, token, NGTCP2_STATELESS_RESET_TOKENLEN) != 0)
        return NGTCP2_ERR_CALLBACK_FAILURE;
    m_server.registerConnectionId(cidKey(cid->data, cid->datalen), this);
    return 0;
}

void VpnQuicConnection::onRemoveConnectionId(const ngtcp2_cid *cid) { m_server.unregisterConnectionId(cidKey(cid->data, cid->datalen)); }

} // namespace coreflow
