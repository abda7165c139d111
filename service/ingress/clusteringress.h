#pragma once
// ClusterIngress: the relay's side of the cluster ingress (docs/contract.md §10,
// §6.7; rules CI-01..CI-24, PV-06, PV-07, PV-09).
//
// Route table custody. The one table Cloudly computes for this cluster is held in memory only, as a
// RouteTable (its JSON kept in a Secret: it carries every hostname's private key). It is never written,
// journaled, logged or put into an error; what the relay says about it is its revision, its route count
// and its hostname count. Revision is the only idempotency: a table (pushed with pushClusterRouteTable,
// or read with getClusterRouteTable by refreshRouteTable()) is adopted only when its revision is
// greater than the held one; otherwise it is ignored and a push is answered { revision: <held> }. A
// table RouteTable::read refuses is refused route-table-invalid with its first reason (never material)
// and the held table is untouched. A failed read keeps the last good table. Cloudly's null ("none
// computed yet") is said once per transition and, while nothing is held, answered to the ingress as
// null — never as an empty table; a null read while a table is held keeps that table (Decision D-40).
//
// Hints. Every adoption of a greater revision sends the bound ingress
// pushClusterIngressRouteTableChanged { revision } (the revision alone), bounded at
// RelayTiming::ingressRequestTimeoutMs (8000). A failed hint is logged once and never retried; a table
// adopted while no ingress is bound is hinted to nobody.
//
// Ingress lane (listener, served on the node method table):
//  - registerClusterIngress: the offer is judged first (clusterIngress, oldest accepted 32.0.0;
//    protocol-offer-refused, nothing forwarded), then the body is validated (IngressRegistration;
//    cluster-ingress-registration-refused reason registration-invalid, nothing forwarded), then the
//    request bytes go to Cloudly untouched, bearer included, bounded at RelayTiming::forwardTimeoutMs.
//    No dispatchable session, or the forward failed: reason not-ready. Both relay refusals carry
//    retryAfterMs 5000 (RelayTiming::ingressRetryAfterMs) and retry { waitForMs, reason }. Cloudly's
//    refusal travels back verbatim. Only Cloudly's acceptance binds the connection it came on (a later
//    acceptance supersedes it); the answer is { registration: <Cloudly's response, byte-identical>,
//    routeTableRevision: integer | null }.
//  - getClusterIngressRouteTable { appliedRevision: integer | null }: answered { routeTable: table |
//    null } for the bound connection alone; any other caller, a node included, is refused
//    ingress-caller-not-bound.
// Cloudly lane (attached in the handlers step only when a listener runs):
//  - pushClusterRouteTable { routeTable } -> { revision }.
//  - getClusterTrafficStatistics: the request bytes go to the bound ingress and its answer comes back
//    verbatim; ingress-not-bound while none is bound, ingress-request-timeout after 8000 ms,
//    ingress-connection-lost when it closes first.
// A connection's close releases the binding only when it is the bound one.
//
// Readiness feed for the composition root: offerRefused() when an offer is refused (the standing entry
// is offerRefusal(), hop "clusterIngress"), offerAccepted() when a servable offer arrives (which clears
// it, PV-24). refreshRouteTable() is called on every registration of this relay that Cloudly accepts —
// never on the session registration before it (CI-06, CI-07).
#include "service/core/methodtable.h"
#include "service/core/relaycounters.h"
#include "shared/contract/timing.h"
#include "service/forwarding/listenersessions.h"
#include "service/forwarding/nodeconnection.h"
#include "service/ingress/routetable.h"
#include "shared/status/relaystatus.h"

#include <QObject>
#include <QPointer>
#include <optional>

namespace coreflow {

class CloudlyConnector;

class ClusterIngress : public QObject {
    Q_OBJECT
public:
    // sessions: the listener's connections as the forwarding lane offers them to other lanes.
    ClusterIngress(CloudlyConnector &cloudly, ListenerSessions &sessions, MethodTable &nodeMethods,
                   MethodTable &cloudlyMethods, RelayCounters &counters, const contract::RelayTiming &timing,
                   QObject *parent = nullptr);
    ~ClusterIngress() override;

    // pushClusterRouteTable and getClusterTrafficStatistics on the Cloudly lane, while a listener runs.
    void attachCloudlyHandlers();
    void detachCloudlyHandlers();

    // Reads getClusterRouteTable over the Cloudly session and adopts its answer by the rules above.
    void refreshRouteTable();

    status::IngressStatus status() const;
    NodeConnection *boundConnection() const;
    std::optional<qint64> heldRevision() const;
    // The standing offer refusal of the clusterIngress hop, until a servable offer arrives.
    std::optional<status::ReadinessRefusal> offerRefusal() const { return m_offerRefusal; }

Q_SIGNALS:
    void statusChanged();
    // peerOffer/ownOffer as "kind@release" (peerOffer empty when none was readable); line is the reason.
    void offerRefused(const QString &peerOffer, const QString &ownOffer, const QString &line);
    void offerAccepted();
    void routeTableAdopted(qint64 revision);
    void ingressBound();
    void ingressReleased();

private:
    void onRegister(const contract::Frame &frame, const Caller &caller, const MethodTable::Reply &reply);
    void onPull(const contract::Frame &frame, const Caller &caller, const MethodTable::Reply &reply);
    void onPush(const contract::Frame &frame, const MethodTable::Reply &reply);
    void onTrafficStatistics(const contract::Frame &frame, const MethodTable::Reply &reply);
    void onConnectionClosed(NodeConnection *connection);
    void refuseRegistration(const MethodTable::Reply &reply, const contract::Frame &frame, QLatin1StringView reason,
                            const QString &detail);
    void refuse(const MethodTable::Reply &reply, const contract::Frame &frame, const contract::Refusal &refusal);
    bool adopt(RouteTable table, const QString &source);
    void noteNoTable();
    void hint(qint64 revision);
    QString heldText() const;

    CloudlyConnector &m_cloudly;
    ListenerSessions &m_sessions;
    MethodTable &m_nodeMethods;
    MethodTable &m_cloudlyMethods;
    RelayCounters &m_counters;
    contract::RelayTiming m_timing;

    std::optional<RouteTable> m_table;
    bool m_cloudlySaysNone = false;
    QPointer<NodeConnection> m_bound;
    // Connections whose registerClusterIngress is with Cloudly now (one in flight before a binding, §3.4).
    std::optional<status::ReadinessRefusal> m_offerRefusal;
};

} // namespace coreflow
