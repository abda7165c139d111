#include "service/vpn/vpnhub.h"

#include "service/core/logging.h"
#include "service/vpn/clustervpnnetwork.h"
#include "service/vpn/noisekeypair.h"
#include "service/vpn/vpndatagramopener.h"
#include "service/vpn/vpndatagramsealer.h"
#include "service/vpn/vpnwireconstants.h"

#include <QtEndian>

namespace coreflow::vpn {

namespace {
// One handshake message on its stream: u16 length + bytes (§11.4); a message 1 is 108 bytes, so a
// longer frame or more pending bytes than this are a malformed handshake.
constexpr int kMaxHandshakeFrame = 2 + 1024;

using Cause = VpnDropCounts::Cause;

Cause causeOf(VpnPacketPolicy::Verdict verdict)
{
    switch (verdict) {
    case VpnPacketPolicy::Verdict::NotIpv4: return Cause::NotIpv4;
    case VpnPacketPolicy::Verdict::SenderNotAdmitted: return Cause::SenderNotAdmitted;
    case VpnPacketPolicy::Verdict::SpoofedSource: return Cause::SpoofedSource;
    case VpnPacketPolicy::Verdict::UnknownDestination: return Cause::UnknownDestination;
    case VpnPacketPolicy::Verdict::UngrantedPair: return Cause::UngrantedPair;
    case VpnPacketPolicy::Verdict::DatagramTooLarge: return Cause::DatagramTooLarge;
    case VpnPacketPolicy::Verdict::Forward: break;
    }
    return Cause::NotIpv4; // not reached: a forwarded packet is no drop
}

Cause causeOf(VpnDatagramOpener::Outcome outcome)
{
    switch (outcome) {
    case VpnDatagramOpener::Outcome::DatagramTooShort: return Cause::DatagramTooShort;
    case VpnDatagramOpener::Outcome::KeysExpired: return Cause::KeysExpired;
    case VpnDatagramOpener::Outcome::CounterExhausted: return Cause::CounterExhausted;
    case VpnDatagramOpener::Outcome::Replayed: return Cause::Replayed;
    case VpnDatagramOpener::Outcome::TooOld: return Cause::TooOld;
    case VpnDatagramOpener::Outcome::AuthenticationFailed:
    case VpnDatagramOpener::Outcome::Opened: break;
    }
    return Cause::AuthenticationFailed;
}

Cause causeOf(VpnDatagramSealer::Outcome outcome)
{
    return outcome == VpnDatagramSealer::Outcome::CounterExhausted ? Cause::CounterExhausted : Cause::KeysExpired;
}
} // namespace

QJsonObject VpnHub::ApplyAnswer::toJson() const
{
    return QJsonObject{{QStringLiteral("state"), state},
                       {QStringLiteral("revision"), revision ? QJsonValue(double(*revision)) : QJsonValue(QJsonValue::Null)},
                       {QStringLiteral("reason"), reason.isEmpty() ? QJsonValue(QJsonValue::Null) : QJsonValue(reason)}};
}

VpnHub::VpnHub(Settings settings, Clock &clock, QObject *parent)
    : QObject(parent), m_settings(std::move(settings)), m_clock(clock),
      m_responder(m_settings.staticKeys ? m_settings.staticKeys() : NoiseKeyPair::generate(), kVpnNoisePrologue), m_authority(clock), m_policy(m_authority)
{
    VpnQuicServer::Handler &handler = *this;
    m_server = std::make_unique<VpnQuicServer>(handler, m_settings.limits);
    m_expiryTimer = m_clock.createTimer(this);
    connect(m_expiryTimer.get(), &ClockTimer::timeout, this, &VpnHub::checkExpiries);
    m_destinationLimit = [this](int destinationIndex) -> qsizetype {
        const Session *destination = sessionOfMember(destinationIndex);
        return destination ? m_server->maxDatagramPayload(destination->id) : std::numeric_limits<int>::max();
    };
}

VpnHub::~VpnHub()
{
    m_server.reset();
    qDeleteAll(m_sessions);
}

QByteArray VpnHub::publicKey() const { return m_responder.publicKey(); }

std::optional<QString> VpnHub::setCredentials(const QByteArray &certificateChainPem, const Secret &privateKeyPem)
{
    return m_server->setCredentials(certificateChainPem, privateKeyPem);
}

void VpnHub::stop()
{
    m_expiryTimer->stop();
    m_server->close();
    qDeleteAll(m_sessions);
    m_sessions.clear();
    m_memberConnection.clear();
    std::fill(m_sessionByMember.begin(), m_sessionByMember.end(), nullptr);
}

std::optional<QString> VpnHub::bindOnce()
{
    if (m_server->isBound())
        return std::nullopt;
    if (auto failure = m_server->bind(m_settings.address, m_settings.port)) {
        m_lastFailure = QStringLiteral("bind failed: %1").arg(*failure);
        qCCritical(logVpn).noquote() << QStringLiteral("VPN hub cannot bind UDP %1:%2: %3; the next network push binds again")
                                            .arg(m_settings.address.toString())
                                            .arg(m_settings.port)
                                            .arg(*failure);
        Q_EMIT eventLine(QStringLiteral("VPN hub bind failed: %1").arg(*failure));
        return m_lastFailure;
    }
    m_lastFailure.clear();
    qCInfo(logVpn).noquote() << QStringLiteral("VPN hub bound UDP %1:%2 (QUIC, ALPN coreflow-vpn/1)")
                                    .arg(m_settings.address.toString())
                                    .arg(m_server->boundPort());
    Q_EMIT eventLine(QStringLiteral("VPN hub bound UDP %1:%2").arg(m_settings.address.toString()).arg(m_server->boundPort()));
    return std::nullopt;
}

contract::Result<VpnHub::ApplyAnswer> VpnHub::admit(const QJsonObject &network, const QString &path)
{
    auto read = ClusterVpnNetwork::read(network, path);
    if (!read)
        return read.refusal();
    const QString described = read.value().describe();
    auto admission = m_authority.admit(std::move(read).value());
    if (!admission)
        return admission.refusal();
    ApplyAnswer answer;
    if (admission->state == VpnNetworkAuthority::State::Replayed) {
        answer.state = QStringLiteral("replayed");
        answer.revision = m_authority.heldRevision();
        return answer;
    }
    indexMembers();
    // Lazy bind, once, on the first admitted network (VH-05..07); a failure holds nothing (CF-19).
    if (auto failure = bindOnce()) {
        m_authority.clear();
        indexMembers();
        answer.state = QStringLiteral("failed");
        answer.reason = *failure;
        Q_EMIT statusChanged();
        return answer;
    }
    for (const QString &nodeId : admission->withdrawnNodeIds)
        cut(nodeId, kVpnCloseMemberWithdrawn, QStringLiteral("withdrawn"));
    // A member the new network keeps but no longer lets live (expired) stops too.
    checkExpiries();
    qCInfo(logVpn).noquote() << "VPN network applied:" << described;
    Q_EMIT eventLine(QStringLiteral("VPN network applied: %1").arg(described));
    answer.state = QStringLiteral("applied");
    answer.revision = m_authority.heldRevision();
    Q_EMIT statusChanged();
    return answer;
}

void VpnHub::connectionOpened(VpnQuicServer::ConnectionId id, const QString &remote)
{
    auto *session = new Session;
    session->id = id;
    session->remote = remote;
    m_sessions.insert(id, session);
}

void VpnHub::streamReceived(VpnQuicServer::ConnectionId id, qint64 streamId, QByteArrayView bytes)
{
    Session *session = m_sessions.value(id);
    if (!session)
        return;
    // Only client-initiated bidirectional streams carry handshakes (§11.4).
    if ((streamId & 0x3) != 0)
        return cutSession(id, kVpnCloseHandshakeFailed);
    QByteArray &pending = session->streamBytes[streamId];
    pending += bytes;
    if (pending.size() > kMaxHandshakeFrame)
        return cutSession(id, kVpnCloseHandshakeFailed);
    if (pending.size() < 2)
        return;
    const int length = qFromBigEndian<quint16>(pending.constData());
    if (length + 2 > kMaxHandshakeFrame)
        return cutSession(id, kVpnCloseHandshakeFailed);
    if (pending.size() < 2 + length)
        return;
    const QByteArray message1 = pending.mid(2, length);
    session->streamBytes.remove(streamId);
    handshake(*session, streamId, message1);
}

void VpnHub::handshake(Session &session, qint64 streamId, QByteArrayView message1)
{
    const VpnQuicServer::ConnectionId id = session.id;
    bool expiredMember = false;
    auto outcome = m_responder.respond(message1, [this, &expiredMember](const QByteArray &key) -> std::optional<VpnMemberRef> {
        const ClusterVpnNetwork::Member *member = m_authority.liveMemberByKey(key);
        if (!member) {
            expiredMember = m_authority.held() && m_authority.held()->memberByKey(key);
            return std::nullopt;
        }
        return VpnMemberRef{member->nodeId, member->address};
    });
    if (!outcome) {
        const NoiseHandshakeFailure failure = outcome.failure();
        if (!m_refusalLog || m_refusalLog->admit(1))
            qCInfo(logVpn).noquote() << QStringLiteral("VPN handshake from %1 refused: %2%3")
                                            .arg(session.remote, noiseHandshakeFailureName(failure),
                                                 expiredMember ? QStringLiteral(" (member expired)") : QString());
        // §11.4: an unknown key 0x100, an expired member 0x102, anything else 0x103.
        const quint64 code = failure != NoiseHandshakeFailure::MemberUnknown ? kVpnCloseHandshakeFailed
                             : expiredMember                                 ? kVpnCloseMemberExpired
                                                                             : kVpnCloseMemberUnknown;
        return cutSession(id, code);
    }
    NoiseIkResponse &response = outcome.value();
    const QString nodeId = response.member.nodeId;
    // §11.4 (D-98): the timestamp in message 1 must exceed the greatest accepted for this key, so a
    // captured message 1 sent again authenticates but changes nothing held; the live connection stays.
    switch (m_timestamps.admit(response.initiatorStaticKey, response.initiatorPayload)) {
    case VpnHandshakeTimestamps::Verdict::Accepted:
        break;
    case VpnHandshakeTimestamps::Verdict::NotNewer:
        drop(nodeId, Cause::HandshakeReplayed);
        if (!m_refusalLog || m_refusalLog->admit(1))
            qCInfo(logVpn).noquote() << QStringLiteral("VPN handshake from %1 refused: handshake-replayed (member %2's timestamp is not newer)")
                                            .arg(session.remote, nodeId);
        return cutSession(id, kVpnCloseHandshakeReplayed);
    case VpnHandshakeTimestamps::Verdict::Malformed:
        if (!m_refusalLog || m_refusalLog->admit(1))
            qCInfo(logVpn).noquote() << QStringLiteral("VPN handshake from %1 refused: message-malformed (no 12-byte timestamp)").arg(session.remote);
        return cutSession(id, kVpnCloseHandshakeFailed);
    }
    // One connection per member: a newer one replaces the older.
    if (const auto older = m_memberConnection.value(nodeId); older != 0 && older != id)
        cutSession(older, 0);
    if (!session.nodeId.isEmpty() && session.nodeId != nodeId)
        return cutSession(id, kVpnCloseHandshakeFailed); // a rekey must name the same member
    session.nodeId = nodeId;
    session.counters = &m_memberCounters[nodeId];
    session.memberIndex = m_authority.held() ? m_authority.held()->indexOfNodeId(nodeId) : -1;
    // A rekey keeps the previous keys for what is still in flight under them (§11.6).
    session.previousOpener = std::move(session.opener);
    session.opener = std::make_unique<VpnDatagramOpener>(std::move(response.keys.receiveKey), m_clock);
    session.sealer = std::make_unique<VpnDatagramSealer>(std::move(response.keys.sendKey), m_clock);
    m_memberConnection.insert(nodeId, id);
    if (session.memberIndex >= 0 && std::size_t(session.memberIndex) < m_sessionByMember.size())
        m_sessionByMember[std::size_t(session.memberIndex)] = &session;
    session.counters->lastHandshakeAtMs = m_clock.nowMs();
    QByteArray framed(2, '\0');
    qToBigEndian<quint16>(quint16(response.message2.size()), framed.data());
    framed += response.message2;
    m_server->sendStream(id, streamId, framed);
    qCInfo(logVpn).noquote() << QStringLiteral("VPN member %1 authenticated from %2").arg(nodeId, session.remote);
    Q_EMIT statusChanged();
}

void VpnHub::datagramReceived(VpnQuicServer::ConnectionId id, QByteArrayView payload)
{
    Session *session = m_sessions.value(id);
    if (!session || !session->opener) {
        m_drops.add(Cause::NoSession);
        return;
    }
    VpnDatagramOpener::Outcome opened = session->opener->open(payload, m_openBuffer);
    if (opened == VpnDatagramOpener::Outcome::AuthenticationFailed && session->previousOpener) {
        const auto previous = session->previousOpener->open(payload, m_openBuffer);
        if (previous == VpnDatagramOpener::Outcome::Opened)
            opened = previous;
        else if (previous == VpnDatagramOpener::Outcome::KeysExpired)
            session->previousOpener.reset();
    }
    if (opened != VpnDatagramOpener::Outcome::Opened) {
        drop(*session, causeOf(opened));
        if (opened == VpnDatagramOpener::Outcome::KeysExpired)
            cutSession(id, kVpnCloseRekeyRequired);
        return;
    }
    MemberCounters &sender = *session->counters;
    sender.packetsIn++;
    sender.bytesIn += quint64(m_openBuffer.size());
    const auto decision = m_policy.judge(session->memberIndex, m_openBuffer, m_destinationLimit);
    if (decision.verdict != VpnPacketPolicy::Verdict::Forward)
        return drop(*session, causeOf(decision.verdict));
    Session *target = sessionOfMember(decision.destinationIndex);
    if (!target || !target->sealer)
        return drop(*session, Cause::DestinationNotConnected);
    const VpnQuicServer::ConnectionId connection = target->id;
    const auto sealed = target->sealer->seal(m_openBuffer, m_sealBuffer);
    if (sealed != VpnDatagramSealer::Outcome::Sealed) {
        drop(*session, causeOf(sealed));
        if (sealed == VpnDatagramSealer::Outcome::KeysExpired)
            cutSession(connection, kVpnCloseRekeyRequired);
        return;
    }
    switch (m_server->sendDatagram(connection, m_sealBuffer)) {
    case VpnQuicServer::DatagramOutcome::Sent:
    case VpnQuicServer::DatagramOutcome::Queued: {
        MemberCounters &receiver = *target->counters;
        receiver.packetsOut++;
        receiver.bytesOut += quint64(m_openBuffer.size());
        return;
    }
    case VpnQuicServer::DatagramOutcome::TooLarge:
        return drop(*session, Cause::DatagramTooLarge);
    case VpnQuicServer::DatagramOutcome::QueueFull:
        return drop(*session, Cause::QueueFull);
    case VpnQuicServer::DatagramOutcome::NoConnection:
        return drop(*session, Cause::DestinationNotConnected);
    }
}

void VpnHub::drop(Session &session, Cause cause)
{
    m_drops.add(cause);
    if (session.counters)
        session.counters->drops.add(cause);
}

void VpnHub::drop(const QString &nodeId, Cause cause)
{
    m_drops.add(cause);
    if (!nodeId.isEmpty())
        m_memberCounters[nodeId].drops.add(cause);
}

void VpnHub::indexMembers()
{
    const auto &held = m_authority.held();
    m_sessionByMember.assign(held ? std::size_t(held->members().size()) : 0, nullptr);
    for (Session *session : std::as_const(m_sessions)) {
        session->memberIndex = held && !session->nodeId.isEmpty() ? held->indexOfNodeId(session->nodeId) : -1;
        if (session->memberIndex >= 0 && m_memberConnection.value(session->nodeId) == session->id)
            m_sessionByMember[std::size_t(session->memberIndex)] = session;
    }
}

VpnHub::Session *VpnHub::sessionOfMember(int memberIndex) const
{
    return memberIndex >= 0 && std::size_t(memberIndex) < m_sessionByMember.size() ? m_sessionByMember[std::size_t(memberIndex)] : nullptr;
}

void VpnHub::forgetMemberSession(Session &session)
{
    if (session.nodeId.isEmpty())
        return;
    if (m_memberConnection.value(session.nodeId) == session.id)
        m_memberConnection.remove(session.nodeId);
    if (sessionOfMember(session.memberIndex) == &session)
        m_sessionByMember[std::size_t(session.memberIndex)] = nullptr;
}

void VpnHub::connectionClosed(VpnQuicServer::ConnectionId id)
{
    Session *session = m_sessions.take(id);
    if (!session)
        return;
    if (!session->nodeId.isEmpty() && m_memberConnection.value(session->nodeId) == id)
        qCInfo(logVpn).noquote() << QStringLiteral("VPN member %1 disconnected").arg(session->nodeId);
    forgetMemberSession(*session);
    delete session;
    Q_EMIT statusChanged();
}

void VpnHub::cutSession(VpnQuicServer::ConnectionId id, quint64 code)
{
    Session *session = m_sessions.take(id);
    if (session)
        forgetMemberSession(*session);
    delete session;
    m_server->closeConnection(id, code);
    Q_EMIT statusChanged();
}

void VpnHub::cut(const QString &nodeId, quint64 code, const QString &why)
{
    const auto id = m_memberConnection.value(nodeId);
    if (!id)
        return;
    qCInfo(logVpn).noquote() << QStringLiteral("VPN member %1 cut: %2").arg(nodeId, why);
    Q_EMIT eventLine(QStringLiteral("VPN member %1 cut: %2").arg(nodeId, why));
    cutSession(id, code);
}

void VpnHub::checkExpiries()
{
    const QStringList connected = m_memberConnection.keys();
    for (const QString &nodeId : connected)
        if (!m_authority.liveMemberByNodeId(nodeId))
            cut(nodeId, m_authority.held() && m_authority.held()->memberByNodeId(nodeId) ? kVpnCloseMemberExpired : kVpnCloseMemberWithdrawn,
                QStringLiteral("expired"));
    armExpiry();
}

void VpnHub::armExpiry()
{
    const qint64 next = m_authority.nextExpiryMs();
    if (next < 0) {
        m_expiryTimer->stop();
        return;
    }
    m_expiryTimer->start(qMax<qint64>(0, next - m_clock.nowMs()));
}

status::VpnHubStatus VpnHub::status() const
{
    status::VpnHubStatus s;
    s.bound = m_server->isBound();
    s.address = m_settings.address.toString();
    s.quicPort = s.bound ? m_server->boundPort() : m_settings.port;
    s.publicKey = QString::fromLatin1(publicKey().toBase64());
    s.state = s.bound ? QStringLiteral("bound") : (m_lastFailure.isEmpty() ? QStringLiteral("idle") : QStringLiteral("failed"));
    s.lastFailure = m_lastFailure;
    s.networkRevision = m_authority.heldRevision();
    s.membersConnected = int(m_memberConnection.size());
    s.drops = m_drops.byName();
    if (const auto &held = m_authority.held()) {
        s.networkExpiresAtMs = held->expiresAtMs();
        s.memberCount = int(held->members().size());
        for (const auto &member : held->members()) {
            status::VpnMemberStatus m;
            m.nodeId = member.nodeId;
            m.address = ClusterVpnNetwork::formatIpv4(member.address);
            m.connected = m_memberConnection.contains(member.nodeId);
            const auto found = m_memberCounters.find(member.nodeId);
            if (found != m_memberCounters.end()) {
                const MemberCounters &counters = found->second;
                m.lastHandshakeAtMs = counters.lastHandshakeAtMs;
                m.packetsIn = qint64(counters.packetsIn);
                m.bytesIn = qint64(counters.bytesIn);
                m.packetsOut = qint64(counters.packetsOut);
                m.bytesOut = qint64(counters.bytesOut);
                m.drops = counters.drops.byName();
            }
            s.members.append(m);
        }
    }
    return s;
}

} // namespace coreflow::vpn
