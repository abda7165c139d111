#pragma once
// RelayStatus: the value-free status model the relay publishes on its status socket and the console
// shows. docs/contract.md "Status protocol".
//
// Value-free by construction: every member is a count, a time (Unix ms), an id, a name or a line the
// relay composed. No member can hold a Secret (Secret has no conversion to any type used here), a
// request or response body, a header value or route-table material.
#include <QJsonObject>
#include <QList>
#include <QMap>
#include <QString>
#include <optional>

namespace coreflow::status {

inline constexpr int statusProtocolVersion = 1;

struct ReadinessRefusal {
    QString hop;                  // "cloudly" | "palletRuntime" | "clusterIngress" | "registration"
    std::optional<QString> peerOffer; // null when the peer's offer was servable but its answer was not
    std::optional<QString> ownOffer;
    QString line;
    bool operator==(const ReadinessRefusal &) const = default;
};

struct CloudlySessionStatus {
    bool connected = false;       // a socket is open
    bool dispatchable = false;    // registerCloudlyClientSession succeeded on it
    qint64 carrierCount = 0;      // connections registered on since start
    qint64 identityRenewalDueMs = 0; // Unix ms, 0 when none scheduled
    QString credentialId;         // pinned relay credential id (public metadata), empty until pinned
    qint64 credentialGeneration = 0;
    QString url;                  // CLOUDLY_URL (origin and path, no credential)
    qint64 lastFrameAtMs = 0;     // Unix ms of the last byte received from Cloudly, 0 none (§3.3)
    QString keepalive;            // "live" | "awaiting-pong" | "silent" | "no-session" | "off" (§3.3)
    qint64 connectedSinceMs = 0;  // Unix ms the current socket became dispatchable, 0 while none is
    QString lastErrorClass;       // why the last socket ended or failed to open; "" none (§18.1)
    qint64 nextRetryAtMs = 0;     // Unix ms of the next reconnect attempt, 0 none scheduled
    bool operator==(const CloudlySessionStatus &) const = default;
};

struct ListenerStatus {
    bool listening = false;
    QString address;
    int port = 0;
    QString origin;
    QString note;                 // e.g. "no relay block: nodes target Cloudly directly"
    QString certificateSubject;   // the listener certificate's subject CN (the relay domain); "" none
    qint64 certificateNotAfterMs = 0; // its notAfter, Unix ms; 0 while no certificate is held
    bool operator==(const ListenerStatus &) const = default;
};

struct CarriedNode {
    QString nodeId;
    qint64 sinceMs = 0;
    qint64 carrierCount = 0;
    QString lastMethod;
    qint64 lastForwardAtMs = 0;
    int forwardsInFlight = 0;
    qint64 lastFrameAtMs = 0;     // Unix ms of the last byte received from the node, 0 none (§3.3)
    QString keepalive;            // "live" | "awaiting-pong" | "off" (§3.3)
    QString remoteAddress;        // the node's TCP peer, "ip:port" ("[ip6]:port"); "" unknown
    QString offeredRelease;       // the release of the offer it registered with (§2.2); "" none
    qint64 connectedAtMs = 0;     // Unix ms the relay accepted its connection
    qint64 bytesReceived = 0;     // bytes read from the node on this connection (after TLS)
    qint64 bytesSent = 0;         // bytes written to the node on this connection (before TLS)
    bool operator==(const CarriedNode &) const = default;
};

struct EscrowRun {
    QString nodeId;
    QString projectionId;
    qint64 projectionGeneration = 0;
    int renewalCount = 0;
    qint64 currentWindowStartMs = 0; // 0 when none current
    qint64 currentWindowEndMs = 0;
    qint64 nextWindowStartMs = 0;
    QString lastOfferResult;
    qint64 authorityUntilMs = 0;     // end of the last renewal window held ("DNS authority until"); 0 none
    bool operator==(const EscrowRun &) const = default;
};

struct IngressStatus {
    bool bound = false;
    std::optional<qint64> routeTableRevision; // null: none computed yet
    int routeCount = 0;
    int hostnameCount = 0;
    bool operator==(const IngressStatus &) const = default;
};

struct RegistrationStatus {
    qint64 lastSequence = -1;     // registrationSequence of the last registerClusterRelay sent; -1 none
    QString lastOutcome;          // "accepted" | the refusal name | "in-flight"; "" none yet (§6.6)
    qint64 lastAtMs = 0;          // Unix ms of that outcome (of the send while in flight), 0 none
    bool operator==(const RegistrationStatus &) const = default;
};

// One platform binding (docs/contract.md §18.1 bindings[], §12.2): value-free by construction, no
// member for a credential, the grant's authority or sealed bytes.
struct PlatformBinding {
    QString name, capability, nodeId, status, reason;
    QString serviceId;
    QString grantOperation;     // "" without a grant
    qint64 grantGeneration = 0;
    int attempts = 0;           // reconcile attempts under the current grant
    qint64 nextRetryAtMs = 0;   // the next retry (Unix ms); 0 when none is scheduled
    bool operator==(const PlatformBinding &) const = default;
};

// One admitted member of the managed VPN hub (docs/contract.md §18.1 vpn.members): value-free.
struct VpnMemberStatus {
    QString nodeId;
    QString address;            // its IPv4 address inside the control prefix
    bool connected = false;     // an authenticated connection is up
    qint64 lastHandshakeAtMs = 0;
    qint64 packetsIn = 0, bytesIn = 0;   // opened from this member (bytes: IPv4 packet bytes)
    qint64 packetsOut = 0, bytesOut = 0; // relayed to this member
    QMap<QString, qint64> drops;         // its packets dropped, by cause
    bool operator==(const VpnMemberStatus &) const = default;
};

struct VpnHubStatus {
    bool bound = false;
    QString address;
    int quicPort = 0;
    std::optional<qint64> networkRevision;
    int memberCount = 0;             // admitted members of the held network
    QString publicKey;               // base64 of the hub's Noise static public key ("" without a hub)
    QString state = QStringLiteral("none"); // none (no hub configured) | idle | bound | failed
    QString lastFailure;             // the last bind failure's line; "" while none stands
    qint64 networkExpiresAtMs = 0;   // 0: none held
    int membersConnected = 0;
    QList<VpnMemberStatus> members;
    QMap<QString, qint64> drops;     // every dropped packet or datagram, by cause
    bool operator==(const VpnHubStatus &) const = default;
};

// The Corestore lane (docs/contract.md §12.1, §18.1 corestore): value-free facts only.
struct CorestoreNode {
    QString nodeId;
    bool endpointPublished = false;
    QString lastCallOutcome = QStringLiteral("none"); // none | answered | endpoint-unknown | credential | unreachable | refused
    qint64 lastCallAtMs = 0;
    bool operator==(const CorestoreNode &) const = default;
};

struct CorestoreStatus {
    QString credential = QStringLiteral("none");     // none | enrolling | held | failed
    QString failureCode;                              // the failed enrollment's code; "" unless failed
    QString recipientKeyId;                           // "" while none is held
    qint64 recipientGeneration = 0;
    qint64 enrolledAtMs = 0;
    QList<CorestoreNode> nodes;
    bool operator==(const CorestoreStatus &) const = default;
};

// The last clock skew observation of the escrow (docs/contract.md §9.6, §18.1 clockSkew, D-74).
struct ClockSkew {
    bool suspected = false;                    // the last observation stands (a later one within the margin clears it)
    QString source = QStringLiteral("none");   // none | run-signed-ahead | node-not-yet-valid
    QString nodeId;                            // the node whose run or offer showed it; "" for none
    qint64 observedAtMs = 0;                   // the relay's clock at the observation
    qint64 windowStartMs = 0;                  // the signed window's notBefore
    qint64 skewMs = 0;                         // its size, ms: notBefore - relay now (run-signed-ahead) or
                                               // relay now - notBefore, a lower bound (node-not-yet-valid)
    bool operator==(const ClockSkew &) const = default;
};

// A backup or restore being carried (docs/contract.md §18.1 backups.operations, §13.1, §13.2).
struct BackupOperationStatus {
    QString kind;                 // "backup" | "restore"
    QString nodeId, serviceId, backupId;
    qint64 startedAtMs = 0;       // when the relay took the request
    QString step;                 // backup: "snapshots" | "closure"; restore: "preconditions" | the step running
    int stepsDone = 0;            // restore: steps answered so far; backup: 0
    int stepsTotal = 0;           // restore: the steps it asks for; backup: 0
    bool operator==(const BackupOperationStatus &) const = default;
};

// A database closure transfer in flight (§18.1 backups.transfers, §13.4): value-free, no byte of the
// closure, no descriptor receipt, no header value.
struct ClosureTransferStatus {
    QString streamId;             // the stream's UUID
    QString direction;            // "send" (to Cloudly, a backup) | "receive" (from Cloudly, a restore)
    QString nodeId, serviceId, backupId;
    qint64 startedAtMs = 0;
    QString state;                // send: preparing|exporting|offering|streaming|completing;
                                  // receive: preparing|dialing|opening|streaming|awaiting-node|completing
    qint64 bytesMoved = 0;        // bytes sent to Cloudly (send) or received from it (receive)
    std::optional<qint64> sizeBytes; // the closure's size once stated; null before
    QString awaiting;             // the side the transfer waits for now: "node" | "cloudly"
    bool operator==(const ClosureTransferStatus &) const = default;
};

// A closure transfer that ended (§18.1 backups.recent).
struct ClosureOutcomeStatus {
    QString streamId, direction, nodeId, serviceId, backupId;
    qint64 startedAtMs = 0, endedAtMs = 0;
    qint64 bytesMoved = 0;
    std::optional<qint64> sizeBytes;
    QString outcome;              // "stored" | "restored" | the refusal name that ended it
    bool operator==(const ClosureOutcomeStatus &) const = default;
};

struct BackupLaneStatus {
    QList<BackupOperationStatus> operations;
    QList<ClosureTransferStatus> transfers;
    QList<ClosureOutcomeStatus> recent;      // the last kRecentTransfers, oldest first
    qint64 closureBytesSent = 0;             // closure bytes handed to Cloudly since start
    qint64 closureBytesReceived = 0;         // closure bytes received from Cloudly since start
    QMap<QString, qint64> transfersByOutcome; // transfers ended since start, by outcome
    static constexpr int kRecentTransfers = 16;
    bool operator==(const BackupLaneStatus &) const = default;
};

struct Counters {
    qint64 forwards = 0;
    qint64 pushes = 0;
    qint64 reconnects = 0;
    QMap<QString, qint64> refusalsByName;
    qint64 refusalsLastHour = 0;              // refusals authored in the last 60 one-minute buckets (D-74)
    qint64 reregistrationWaves = 0;           // §8.4 waves started (at least one node asked)
    QMap<QString, qint64> escrowOffersByOutcome; // §9.4 offers answered: "delivered" | "failed"
    qint64 registryRequests = 0;              // §17 image pull requests relayed to the registry
    qint64 registryBodyBytes = 0;             // body bytes of those answers handed to nodes
    qint64 statusClients = 0;                 // status socket clients admitted since start (§18)
    qint64 timers = 0;                        // event-loop timers registered on the relay's main thread now (D-103)
    bool operator==(const Counters &) const = default;
};

struct RelayStatus {
    QString build;
    QString contractRelease;
    QString nodeId;
    qint64 startedAtMs = 0;
    qint64 generatedAtMs = 0;
    bool ready = false;
    QList<ReadinessRefusal> refusals;
    bool parked = false;
    QString parkedLine;
    CloudlySessionStatus cloudly;
    RegistrationStatus registration;
    ListenerStatus listener;
    QList<CarriedNode> nodes;
    QList<EscrowRun> escrow;
    IngressStatus ingress;
    QList<PlatformBinding> bindings;
    VpnHubStatus vpn;
    CorestoreStatus corestore;
    ClockSkew clockSkew;
    BackupLaneStatus backups;
    Counters counters;

    QJsonObject toJson() const;
    static RelayStatus fromJson(const QJsonObject &object);
    bool operator==(const RelayStatus &) const = default;
};

} // namespace coreflow::status
