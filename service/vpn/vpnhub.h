#pragma once
// VpnHub: the cluster's managed VPN hub (docs/contract.md §11): it holds the one network Cloudly's
// authority pushed (VpnNetworkAuthority), binds its QUIC port lazily on the first admitted network
// (VH-05..07), authenticates members with Noise IK on their stream 0 (NoiseIkResponder), opens and
// seals their datagrams (VpnDatagramOpener/Sealer) and forwards one IPv4 packet only where
// VpnPacketPolicy allows. Nothing is persisted (VH-17).
//
// Key: the hub's Noise static pair is made when the hub is built, at the relay's start (D-04), so the
// first registration already advertises it; a restart re-keys (VH-18). Its private half lives in a
// Secret only and never reaches a log, the status or an error.
//
// Admission answers (§11.2): applied / replayed / failed (a bind failure: `bind failed: <class>`,
// value-free; the network is then not held, so the next push binds again, CF-19/CF-20), or the
// authority's refusal (VH-11..14, nothing applied). A member the new network leaves out (or lists
// with another key) is cut at once with 0x101 member-withdrawn; one whose expiresAt (or the network's)
// passes on the injected clock is cut with 0x102 member-expired; a member still sending under keys
// older than 180000 ms is cut with 0x104 rekey-required; an unknown static key gets 0x100, any other
// handshake failure 0x103, a message 1 whose timestamp does not exceed the greatest accepted for its
// key 0x105 handshake-replayed (counted `handshake-replayed`; the live connection stays, §11.4, D-98)
// (§11.7). One connection per member: a newer authenticated connection of
// the same member replaces the older one (closed with QUIC's NO_ERROR, code 0).
//
// Drops are counted by cause (the policy's names, the opener's names, `no-session`,
// `destination-not-connected`, `datagram-too-large`, `queue-full`) in total and per sending member.
//
// The packet path (issue 21) looks nothing up by string: a session keeps its member's index into the
// held network (refreshed whenever a network is applied) and a pointer to that member's counters, the
// connected session of each member index sits in a vector beside the nodeId-keyed table the control
// plane uses, and drops are counted by an enum (VpnDropCounts), named only when the status is read.
#include "service/core/refusallogbound.h"
#include "service/vpn/noiseikresponder.h"
#include "service/vpn/noisekeypair.h"
#include "service/vpn/vpndropcounts.h"
#include "service/vpn/vpnhandshaketimestamps.h"
#include "service/vpn/vpnnetworkauthority.h"
#include "service/vpn/vpnpacketpolicy.h"
#include "service/vpn/vpnquicserver.h"
#include "shared/contract/result.h"
#include "shared/status/relaystatus.h"
#include "shared/util/clock.h"

#include <QHash>
#include <QHostAddress>
#include <QJsonObject>
#include <QMap>
#include <QObject>
#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

namespace coreflow::vpn {

class VpnDatagramOpener;
class VpnDatagramSealer;

class VpnHub : public QObject, private VpnQuicServer::Handler {
    Q_OBJECT
public:
    struct Settings {
        QHostAddress address; // COREFLOW_VPN_BIND_HOSTNAME
        quint16 port = 0;     // COREFLOW_VPN_QUIC_PORT
        VpnQuicServer::Limits limits;
        // Where the hub's static Noise pair comes from, once, when the hub is built; empty:
        // NoiseKeyPair::generate (tests give a known pair so key canaries can look for its private half).
        std::function<NoiseKeyPair()> staticKeys;
    };

    struct ApplyAnswer {
        QString state;                 // "applied" | "replayed" | "failed"
        std::optional<qint64> revision; // served after this push
        QString reason;                // with "failed"
        QJsonObject toJson() const;
    };

    VpnHub(Settings settings, Clock &clock, QObject *parent = nullptr);
    ~VpnHub() override;

    // The hub's static public key (32 bytes) for relay.vpnHub.publicKey (base64).
    QByteArray publicKey() const;
    const Settings &settings() const { return m_settings; }
    // The listener's certificate chain (PEM) and key, which the QUIC listener serves (§11.3).
    std::optional<QString> setCredentials(const QByteArray &certificateChainPem, const Secret &privateKeyPem);

    // The relay's one bound on lines strangers cause (§3.1, D-70): a refused handshake's line goes
    // through it (a stranger may dial the UDP port as often as it likes).
    void setRefusalLog(RefusalLogBound *bound) { m_refusalLog = bound; }

    // A network read from applyClusterVpnNetwork's request or getClusterVpnNetwork's answer.
    contract::Result<ApplyAnswer> admit(const QJsonObject &network, const QString &path);
    void stop();

    bool isBound() const { return m_server && m_server->isBound(); }
    status::VpnHubStatus status() const;
    VpnQuicServer *server() const { return m_server.get(); }

Q_SIGNALS:
    void statusChanged();
    void eventLine(const QString &line);

private:
    struct MemberCounters {
        qint64 lastHandshakeAtMs = 0;
        quint64 packetsIn = 0, bytesIn = 0, packetsOut = 0, bytesOut = 0;
        VpnDropCounts drops;
    };
    struct Session {
        VpnQuicServer::ConnectionId id = 0;
        QString nodeId; // "" until a handshake authenticated it
        int memberIndex = -1;               // nodeId's index into the held network's members(); -1: none
        MemberCounters *counters = nullptr; // nodeId's counters (set with nodeId)
        QString remote;
        QHash<qint64, QByteArray> streamBytes;
        std::unique_ptr<VpnDatagramOpener> opener;
        std::unique_ptr<VpnDatagramOpener> previousOpener; // the keys before a rekey, until they expire (§11.6)
        std::unique_ptr<VpnDatagramSealer> sealer;
    };
    void connectionOpened(VpnQuicServer::ConnectionId id, const QString &remote) override;
    void streamReceived(VpnQuicServer::ConnectionId id, qint64 streamId, QByteArrayView bytes) override;
    void datagramReceived(VpnQuicServer::ConnectionId id, QByteArrayView payload) override;
    void connectionClosed(VpnQuicServer::ConnectionId id) override;

    std::optional<QString> bindOnce();
    void handshake(Session &session, qint64 streamId, QByteArrayView message1);
    void cut(const QString &nodeId, quint64 code, const QString &why);
    void cutSession(VpnQuicServer::ConnectionId id, quint64 code);
    void drop(Session &session, VpnDropCounts::Cause cause);
    void drop(const QString &nodeId, VpnDropCounts::Cause cause);
    // After the held network changed (applied, cleared): every session's member index, and the
    // member-index → connected session vector, from the new network.
    void indexMembers();
    // The connected session of a member index of the held network, or nullptr.
    Session *sessionOfMember(int memberIndex) const;
    // Forgets a session that is going (closed or cut) from the member tables.
    void forgetMemberSession(Session &session);
    void checkExpiries();
    void armExpiry();

    Settings m_settings;
    Clock &m_clock;
    NoiseIkResponder m_responder;
    VpnHandshakeTimestamps m_timestamps; // greatest message 1 timestamp per member key (§11.4, D-98)
    VpnNetworkAuthority m_authority;
    VpnPacketPolicy m_policy;
    std::unique_ptr<VpnQuicServer> m_server;
    std::unique_ptr<ClockTimer> m_expiryTimer;
    QHash<VpnQuicServer::ConnectionId, Session *> m_sessions;
    QHash<QString, VpnQuicServer::ConnectionId> m_memberConnection;
    std::vector<Session *> m_sessionByMember; // by member index of the held network: its connected session
    // Never erased while the hub stands; std::unordered_map keeps the references sessions hold.
    std::unordered_map<QString, MemberCounters> m_memberCounters;
    VpnDropCounts m_drops;
    VpnPacketPolicy::DatagramLimit m_destinationLimit; // made once: the destination's path limit
    QString m_lastFailure; // the last bind failure's line; "" once bound
    RefusalLogBound *m_refusalLog = nullptr;
    QByteArray m_sealBuffer;
    QByteArray m_openBuffer;
};

} // namespace coreflow::vpn
