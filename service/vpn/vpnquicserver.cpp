#include "service/vpn/vpnquicserver.h"

#include "service/vpn/vpnquicconnection.h"

#include <ngtcp2/ngtcp2.h>

#include <gnutls/gnutls.h>

#include <QSocketNotifier>
#include <algorithm>
#include <cstring>
#include <netinet/udp.h>
#include <arpa/inet.h>
#include <cerrno>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace coreflow {

namespace {

constexpr int kBatch = 64;
constexpr int kReceiveBuffer = 2048;
constexpr size_t kServerCidLength = 18;
// UDP GSO takes at most 64 segments per send (UDP_MAX_SEGMENTS).
constexpr int kMaxGsoSegments = 64;
// ... and a UDP datagram's payload limit in all (65535 - 8 - 20), bytes.
constexpr qint64 kMaxGsoBytes = 65507;

QString bindFailureClass(int error)
{
    switch (error) {
    case EADDRINUSE:
        return QStringLiteral("AddressInUse");
    case EADDRNOTAVAIL:
        return QStringLiteral("AddressNotAvailable");
    case EACCES:
    case EPERM:
        return QStringLiteral("PermissionDenied");
    default:
        return QStringLiteral("SocketError");
    }
}

} // namespace

VpnQuicServer::VpnQuicServer(Handler &handler, Limits limits, QObject *parent) : QObject(parent), m_handler(handler), m_limits(limits)
{
    gnutls_priority_t priority = nullptr;
    if (gnutls_priority_init2(&priority, "%DISABLE_TLS13_COMPAT_MODE:NORMAL:-VERS-ALL:+VERS-TLS1.3", nullptr, 0) == 0)
        m_priority = priority;
}

VpnQuicServer::~VpnQuicServer()
{
    close();
    if (m_priority)
        gnutls_priority_deinit(static_cast<gnutls_priority_t>(m_priority)); // sessions hold their own reference
    if (m_credentials)
        gnutls_certificate_free_credentials(static_cast<gnutls_certificate_credentials_t>(m_credentials));
}

std::optional<QString> VpnQuicServer::setCredentials(const QByteArray &certificateChainPem, const Secret &privateKeyPem)
{
    gnutls_certificate_credentials_t credentials = nullptr;
    if (gnutls_certificate_allocate_credentials(&credentials) != 0)
        return QStringLiteral("cannot allocate TLS credentials");
    gnutls_datum_t certificate{reinterpret_cast<unsigned char *>(const_cast<char *>(certificateChainPem.constData())),
                               unsigned(certificateChainPem.size())};
    const QByteArrayView key = privateKeyPem.reveal();
    gnutls_datum_t keyDatum{reinterpret_cast<unsigned char *>(const_cast<char *>(key.data())), unsigned(key.size())};
    const int rv = gnutls_certificate_set_x509_key_mem(credentials, &certificate, &keyDatum, GNUTLS_X509_FMT_PEM);
    if (rv < 0) {
        gnutls_certificate_free_credentials(credentials);
        return QStringLiteral("the listener certificate cannot serve QUIC: %1").arg(QString::fromLatin1(gnutls_strerror_name(rv)));
    }
    if (m_credentials)
        gnutls_certificate_free_credentials(static_cast<gnutls_certificate_credentials_t>(m_credentials));
    m_credentials = credentials;
    return std::nullopt;
}

std::optional<QString> VpnQuicServer::bind(const QHostAddress &address, quint16 port)
{
    if (!m_credentials)
        return QStringLiteral("NoCredentials");
    if (m_fd >= 0)
        return std::nullopt;
    const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return bindFailureClass(errno);
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    sin.sin_port = htons(port);
    sin.sin_addr.s_addr = htonl(address.toIPv4Address());
    if (::bind(fd, reinterpret_cast<const sockaddr *>(&sin), sizeof(sin)) != 0) {
        const int error = errno;
        ::close(fd);
        return bindFailureClass(error);
    }
    // Room for a burst of packets between two turns of the event loop (the kernel caps it at rmem_max).
    const int bufferBytes = 4 * 1024 * 1024;
    (void)::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bufferBytes, sizeof(bufferBytes));
    (void)::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bufferBytes, sizeof(bufferBytes));
    socklen_t length = sizeof(sin);
    ::getsockname(fd, reinterpret_cast<sockaddr *>(&sin), &length);
    m_fd = fd;
    m_port = ntohs(sin.sin_port);
    m_local = QByteArray(reinterpret_cast<const char *>(&sin), sizeof(sin));
    m_notifier = std::make_unique<QSocketNotifier>(fd, QSocketNotifier::Read);
    connect(m_notifier.get(), &QSocketNotifier::activated, this, &VpnQuicServer::readReady);
    return std::nullopt;
}

void VpnQuicServer::close()
{
    m_notifier.reset();
    const auto connections = m_connections;
    m_connections.clear();
    m_byCid.clear();
    m_dirty.clear();
    m_flushing.clear();
    qDeleteAll(connections);
    qDeleteAll(m_finished);
    m_finished.clear();
    if (m_fd >= 0)
        ::close(m_fd);
    m_fd = -1;
    m_port = 0;
}

void VpnQuicServer::readReady()
{
    if (m_fd < 0)
        return;
    static thread_local std::vector<uint8_t> buffers(size_t(kBatch) * kReceiveBuffer);
    mmsghdr messages[kBatch];
    iovec vectors[kBatch];
    sockaddr_in addresses[kBatch];
    m_inRead = true;
    m_batching = true;
    // A bounded number of batches per turn, so one busy socket cannot starve the relay's other work.
    for (int round = 0; round < 16; ++round) {
        for (int i = 0; i < kBatch; ++i) {
            vectors[i] = iovec{buffers.data() + size_t(i) * kReceiveBuffer, kReceiveBuffer};
            messages[i] = mmsghdr{};
            messages[i].msg_hdr.msg_name = &addresses[i];
            messages[i].msg_hdr.msg_namelen = sizeof(sockaddr_in);
            messages[i].msg_hdr.msg_iov = &vectors[i];
            messages[i].msg_hdr.msg_iovlen = 1;
        }
        const int count = ::recvmmsg(m_fd, messages, kBatch, MSG_DONTWAIT, nullptr);
        if (count <= 0)
            break;
        for (int i = 0; i < count; ++i) {
            ++m_counters.packetsReceived;
            if ((messages[i].msg_hdr.msg_flags & MSG_TRUNC) || messages[i].msg_hdr.msg_namelen != sizeof(sockaddr_in)) {
                ++m_counters.undecodable;
                continue;
            }
            uint8_t *data = buffers.data() + size_t(i) * kReceiveBuffer;
            const size_t length = messages[i].msg_len;
            ngtcp2_version_cid vc;
            if (ngtcp2_pkt_decode_version_cid(&vc, data, length, kServerCidLength) != 0) {
                ++m_counters.undecodable;
                continue;
            }
            // A view for the lookup (no copy); a copy only when a connection is made.
            const QByteArray key = QByteArray::fromRawData(reinterpret_cast<const char *>(vc.dcid), qsizetype(vc.dcidlen));
            VpnQuicConnection *connection = m_byCid.value(key);
            if (!connection) {
                ngtcp2_pkt_hd hd;
                if (ngtcp2_accept(&hd, data, length) != 0) {
                    ++m_counters.undecodable;
                    continue;
                }
                if (int(m_connections.size()) >= m_limits.maxConnections) {
                    ++m_counters.connectionLimit;
                    continue;
                }
                const QByteArray remote(reinterpret_cast<const char *>(&addresses[i]), sizeof(sockaddr_in));
                auto created = std::make_unique<VpnQuicConnection>(*this, m_nextId++, remote);
                if (!created->init(hd)) {
                    ++m_counters.undecodable;
                    // Forget the ids it may have registered.
                    for (auto it = m_byCid.begin(); it != m_byCid.end();)
                        it = it.value() == created.get() ? m_byCid.erase(it) : std::next(it);
                    continue;
                }
                connection = created.release();
                m_connections.insert(connection->id(), connection);
                m_byCid.insert(QByteArray(key.constData(), key.size()), connection);
            }
            if (connection->isFinished())
                continue;
            if (!connection->read(data, length)) {
                connectionFinished(connection);
                continue;
            }
            markDirty(connection);
        }
        if (count < kBatch)
            break;
    }
    m_inRead = false;
    flushDirty(); // inside this read's batch: flushes it only at the end below
    flushTx();
    m_batching = false;
}

void VpnQuicServer::markDirty(VpnQuicConnection *connection)
{
    if (connection->isMarkedDirty())
        return;
    connection->setMarkedDirty(true);
    m_dirty.push_back(connection);
}

void VpnQuicServer::forgetDirty(VpnQuicConnection *connection)
{
    if (!connection->isMarkedDirty())
        return;
    connection->setMarkedDirty(false);
    std::erase(m_dirty, connection);
    std::replace(m_flushing.begin(), m_flushing.end(), connection, static_cast<VpnQuicConnection *>(nullptr));
}

void VpnQuicServer::flushDirty()
{
    const bool batch = beginTxBatch();
    m_flushing.swap(m_dirty); // m_dirty is empty (and keeps m_flushing's old capacity)
    for (size_t i = 0; i < m_flushing.size(); ++i) {
        VpnQuicConnection *connection = m_flushing[i];
        if (!connection)
            continue; // finished while an earlier one flushed
        connection->setMarkedDirty(false);
        if (connection->isFinished())
            continue;
        connection->flush();
        if (connection->isFinished())
            connectionFinished(connection);
    }
    m_flushing.clear();
    endTxBatch(batch);
    reapFinished();
}

bool VpnQuicServer::beginTxBatch()
{
    if (m_batching)
        return false;
    m_batching = true;
    return true;
}

void VpnQuicServer::endTxBatch(bool begun)
{
    if (!begun)
        return;
    flushTx();
    m_batching = false;
}

void VpnQuicServer::sendPacket(const QByteArray &remote, const uint8_t *data, size_t length)
{
    if (m_fd < 0)
        return;
    if (m_batching && length <= size_t(kTxSlotBytes) && remote.size() == qsizetype(sizeof(sockaddr_in))) {
        if (m_txCount == kTxBatch)
            flushTx();
        if (m_txBuffer.empty()) {
            m_txBuffer.resize(size_t(kTxBatch) * kTxSlotBytes);
            m_txSlots.resize(size_t(kTxBatch));
        }
        std::memcpy(m_txBuffer.data() + size_t(m_txCount) * kTxSlotBytes, data, length);
        TxSlot &slot = m_txSlots[size_t(m_txCount)];
        slot.length = quint32(length);
        std::memcpy(slot.remote, remote.constData(), sizeof(sockaddr_in));
        ++m_txCount;
        return;
    }
    ssize_t sent;
    do {
        sent = ::sendto(m_fd, data, length, 0, reinterpret_cast<const sockaddr *>(remote.constData()), socklen_t(remote.size()));
    } while (sent < 0 && errno == EINTR);
    if (sent >= 0)
        ++m_counters.packetsSent;
    ++m_counters.sendCalls;
}

uint8_t *VpnQuicServer::txSlot()
{
    if (!m_batching || m_fd < 0)
        return nullptr;
    if (m_txCount == kTxBatch)
        flushTx();
    if (m_txBuffer.empty()) {
        m_txBuffer.resize(size_t(kTxBatch) * kTxSlotBytes);
        m_txSlots.resize(size_t(kTxBatch));
    }
    return m_txBuffer.data() + size_t(m_txCount) * kTxSlotBytes;
}

void VpnQuicServer::commitTxSlot(const QByteArray &remote, size_t length)
{
    uint8_t *data = m_txBuffer.data() + size_t(m_txCount) * kTxSlotBytes;
    if (remote.size() != qsizetype(sizeof(sockaddr_in)) || length > size_t(kTxSlotBytes)) {
        // Not a batchable peer address: it leaves now, on its own (sendPacket copies nothing then).
        const bool batching = m_batching;
        m_batching = false;
        sendPacket(remote, data, length);
        m_batching = batching;
        return;
    }
    TxSlot &slot = m_txSlots[size_t(m_txCount)];
    slot.length = quint32(length);
    std::memcpy(slot.remote, remote.constData(), sizeof(sockaddr_in));
    ++m_txCount;
}

QByteArray VpnQuicServer::takeDatagramBuffer()
{
    if (m_spareDatagrams.empty())
        return QByteArray();
    QByteArray buffer = std::move(m_spareDatagrams.back());
    m_spareDatagrams.pop_back();
    return buffer;
}

void VpnQuicServer::returnDatagramBuffer(QByteArray &&buffer)
{
    if (m_spareDatagrams.size() < kSpareDatagramBuffers && buffer.isDetached())
        m_spareDatagrams.push_back(std::move(buffer));
}

void VpnQuicServer::flushTx()
{
    if (m_txCount == 0 || m_fd < 0) {
        m_txCount = 0;
        return;
    }
    // One mmsghdr per run of packets to the same peer; with UDP GSO a run of equal-sized packets (the
    // last may be shorter) is one message the kernel segments, else one message per packet.
    mmsghdr messages[kTxBatch];
    iovec vectors[kTxBatch];
    alignas(cmsghdr) char controls[kTxBatch][CMSG_SPACE(sizeof(uint16_t))];
    int messageCount = 0;
    int packetsIn[kTxBatch];
    for (int i = 0; i < m_txCount;) {
        const TxSlot &first = m_txSlots[size_t(i)];
        int run = 1;
        if (m_gso) {
            // A GSO send is one UDP datagram to the kernel: at most kMaxGsoBytes in all (EMSGSIZE beyond).
            while (i + run < m_txCount && run < kMaxGsoSegments && qint64(run + 1) * first.length <= kMaxGsoBytes) {
                const TxSlot &next = m_txSlots[size_t(i + run)];
                if (std::memcmp(next.remote, first.remote, sizeof(sockaddr_in)) != 0 || next.length > first.length
                    || m_txSlots[size_t(i + run - 1)].length != first.length)
                    break;
                ++run;
            }
        }
        mmsghdr &message = messages[messageCount];
        message = mmsghdr{};
        message.msg_hdr.msg_name = const_cast<char *>(first.remote);
        message.msg_hdr.msg_namelen = sizeof(sockaddr_in);
        for (int k = 0; k < run; ++k)
            vectors[i + k] = iovec{m_txBuffer.data() + size_t(i + k) * kTxSlotBytes, m_txSlots[size_t(i + k)].length};
        message.msg_hdr.msg_iov = &vectors[i];
        message.msg_hdr.msg_iovlen = size_t(run);
        if (run > 1) {
            message.msg_hdr.msg_control = controls[messageCount];
            message.msg_hdr.msg_controllen = sizeof(controls[messageCount]);
            cmsghdr *cm = CMSG_FIRSTHDR(&message.msg_hdr);
            cm->cmsg_level = SOL_UDP;
            cm->cmsg_type = UDP_SEGMENT;
            cm->cmsg_len = CMSG_LEN(sizeof(uint16_t));
            const uint16_t segment = uint16_t(first.length);
            std::memcpy(CMSG_DATA(cm), &segment, sizeof(segment));
        }
        packetsIn[messageCount] = run;
        ++messageCount;
        i += run;
    }
    int done = 0;
    while (done < messageCount) {
        const unsigned left = unsigned(messageCount - done);
        const int n = m_messageSender ? m_messageSender(m_fd, messages + done, left) : ::sendmmsg(m_fd, messages + done, left, 0);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (m_gso && (errno == EIO || errno == EINVAL || errno == ENOPROTOOPT) && packetsIn[done] > 1) {
                // The kernel or the device refuses GSO: degrade to one message per packet, for good.
                m_gso = false;
                ++m_counters.gsoRefused;
                for (int m = done; m < messageCount; ++m)
                    for (int k = 0; k < packetsIn[m]; ++k) {
                        const iovec &v = messages[m].msg_hdr.msg_iov[k];
                        ssize_t sent;
                        do {
                            sent = ::sendto(m_fd, v.iov_base, v.iov_len, 0, static_cast<const sockaddr *>(messages[m].msg_hdr.msg_name),
                                            sizeof(sockaddr_in));
                        } while (sent < 0 && errno == EINTR);
                        if (sent >= 0)
                            ++m_counters.packetsSent;
                        ++m_counters.sendCalls;
                    }
                break;
            }
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break; // the socket buffer is full: the rest is lost like any UDP loss
            if (packetsIn[done] == 1) {
                ++done; // this one packet is refused (e.g. its peer unreachable): the others still go
                continue;
            }
            // Any other refusal of a GSO message: send that run packet by packet, then go on.
            for (int k = 0; k < packetsIn[done]; ++k) {
                const iovec &v = messages[done].msg_hdr.msg_iov[k];
                if (::sendto(m_fd, v.iov_base, v.iov_len, 0, static_cast<const sockaddr *>(messages[done].msg_hdr.msg_name), sizeof(sockaddr_in)) >= 0)
                    ++m_counters.packetsSent;
                ++m_counters.sendCalls;
            }
            ++done;
            continue;
        }
        for (int k = 0; k < n; ++k)
            m_counters.packetsSent += quint64(packetsIn[done + k]);
        ++m_counters.sendCalls;
        done += n;
    }
    m_txCount = 0;
}

bool VpnQuicServer::sendStream(ConnectionId id, qint64 streamId, QByteArrayView bytes)
{
    VpnQuicConnection *connection = m_connections.value(id);
    if (!connection || connection->isFinished())
        return false;
    if (!connection->appendStream(streamId, bytes))
        return false;
    markDirty(connection);
    if (!m_inRead)
        flushDirty();
    return true;
}

VpnQuicServer::DatagramOutcome VpnQuicServer::sendDatagram(ConnectionId id, QByteArrayView payload)
{
    VpnQuicConnection *connection = m_connections.value(id);
    if (!connection || connection->isFinished() || !connection->isOpened())
        return DatagramOutcome::NoConnection;
    markDirty(connection);
    if (!m_inRead && !m_flushScheduled) {
        m_flushScheduled = true;
        QMetaObject::invokeMethod(
            this,
            [this] {
                m_flushScheduled = false;
                flushDirty();
            },
            Qt::QueuedConnection);
    }
    switch (connection->sendDatagram(payload)) {
    case 0:
        return DatagramOutcome::Sent;
    case 1:
        return DatagramOutcome::Queued;
    case -1:
        ++m_counters.datagramTooLarge;
        return DatagramOutcome::TooLarge;
    default:
        ++m_counters.queueFull;
        return DatagramOutcome::QueueFull;
    }
}

int VpnQuicServer::maxDatagramPayload(ConnectionId id) const
{
    const VpnQuicConnection *connection = m_connections.value(id);
    return connection ? connection->maxDatagramPayload() : 0;
}

void VpnQuicServer::closeConnection(ConnectionId id, quint64 applicationCode)
{
    VpnQuicConnection *connection = m_connections.take(id);
    if (!connection)
        return;
    forgetDirty(connection);
    connection->closeWithApplicationCode(applicationCode);
    for (auto it = m_byCid.begin(); it != m_byCid.end();)
        it = it.value() == connection ? m_byCid.erase(it) : std::next(it);
    m_finished.append(connection);
    reapFinished();
}

void VpnQuicServer::registerConnectionId(const QByteArray &cid, VpnQuicConnection *connection) { m_byCid.insert(cid, connection); }

void VpnQuicServer::unregisterConnectionId(const QByteArray &cid) { m_byCid.remove(cid); }

void VpnQuicServer::connectionFinished(VpnQuicConnection *connection)
{
    if (!m_connections.contains(connection->id()) || m_connections.value(connection->id()) != connection)
        return;
    m_connections.remove(connection->id());
    forgetDirty(connection);
    for (auto it = m_byCid.begin(); it != m_byCid.end();)
        it = it.value() == connection ? m_byCid.erase(it) : std::next(it);
    m_finished.append(connection);
    if (connection->isOpened())
        m_handler.connectionClosed(connection->id());
    reapFinished();
}

void VpnQuicServer::reapFinished()
{
    // Deleted on a later turn: the connection may be on the stack (its timer slot, a callback).
    for (VpnQuicConnection *connection : std::as_const(m_finished))
        connection->deleteLater();
    m_finished.clear();
}

} // namespace coreflow
