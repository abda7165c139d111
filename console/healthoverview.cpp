#include "console/healthoverview.h"

#include "console/terminalview.h"

#include <algorithm>
#include <utility>

namespace coreflow::console {

namespace {

QString refusalText(const QList<status::ReadinessRefusal> &refusals, const QString &hop)
{
    QStringList lines;
    for (const auto &r : refusals)
        if (r.hop == hop)
            lines << TerminalView::refusalLine(r).mid(hop.size() + 2);
    return lines.join(QStringLiteral("; "));
}

const status::ReadinessRefusal *firstRefusal(const QList<status::ReadinessRefusal> &refusals, const QString &hop)
{
    for (const auto &r : refusals)
        if (r.hop == hop)
            return &r;
    return nullptr;
}

// What to do about a failed binding (§12.2's reasons), in words; `others`: further failed bindings.
QString bindingAction(const status::PlatformBinding &b, int others)
{
    const QString which = QStringLiteral("Binding %1/%2").arg(b.serviceId, b.name);
    const QString node = b.nodeId.isEmpty() ? QStringLiteral("its node") : QStringLiteral("node %1").arg(b.nodeId);
    const QString &r = b.reason;
    QString action;
    if (r == QLatin1String("binding-not-placed"))
        action = QStringLiteral("%1 failed: Cloudly placed it on no node (binding-not-placed): place service %2 on a node in Cloudly; "
                                "the relay reconciles it once a config names the node.")
                     .arg(which, b.serviceId);
    else if (r == QLatin1String("binding-not-granted"))
        action = QStringLiteral("%1 failed: its publication grant names another service, capability or binding (binding-not-granted): "
                                "have Cloudly issue a grant for this binding.")
                     .arg(which);
    else if (r == QLatin1String("database-endpoint-missing"))
        action = QStringLiteral("%1 failed: %2 publishes no Corestore database endpoint (database-endpoint-missing): state the node's "
                                "corestoreDatabase in Cloudly; the relay reconciles again once it is stated.")
                     .arg(which, node);
    else if (r == QLatin1String("binding-request-digest-mismatch"))
        action = QStringLiteral("%1 failed: the grant's request digest does not match the binding Cloudly sent "
                                "(binding-request-digest-mismatch); nothing was sent to Corestore: have Cloudly issue the grant again.")
                     .arg(which);
    else if (r == QLatin1String("publication-scope-missing"))
        action = QStringLiteral("%1 failed: the binding names no organization or the cluster no id (publication-scope-missing): fix the "
                                "binding in Cloudly.")
                     .arg(which);
    else if (r.startsWith(QLatin1String("legacy-adoption-")))
        action = QStringLiteral("%1 failed: %2's Corestore will not adopt the existing resource (%3): resolve it on that Corestore; "
                                "the relay tries again by itself.")
                     .arg(which, node, r);
    else
        action = QStringLiteral("%1 on %2 failed (%3): read the relay's corestore-binding lines in its log; the relay tries again %4.")
                     .arg(which, node, TerminalView::orDash(r),
                          b.nextRetryAtMs ? QStringLiteral("at %1").arg(TerminalView::isoUtc(b.nextRetryAtMs)) : QStringLiteral("by itself"));
    if (others > 0)
        action += QStringLiteral(" %1 more failed: see the bindings.").arg(others);
    return action;
}

} // namespace

bool HealthOverview::escrowRowFailed(const status::EscrowRun &run)
{
    const QString &r = run.lastOfferResult;
    // §9.4: none, admitted, replayed, or a failure (refused <name>, node-not-connected, ...).
    return !(r.isEmpty() || r == QLatin1String("none") || r == QLatin1String("admitted") || r == QLatin1String("replayed"));
}

bool HealthOverview::bindingRowFailed(const status::PlatformBinding &binding) { return binding.status == QLatin1String("failed"); }

bool HealthOverview::closureOutcomeFailed(const status::ClosureOutcomeStatus &outcome)
{
    return outcome.outcome != QLatin1String("stored") && outcome.outcome != QLatin1String("restored");
}

bool HealthOverview::nodeRowTroubled(const status::CarriedNode &node)
{
    // "awaiting-pong" is the normal wait after each ping; only a silent node (§3.3) is a problem.
    return node.keepalive == QLatin1String("silent");
}

HealthOverview::HealthOverview(const status::RelayStatus &s)
{
    m_ready = s.ready;
    m_parked = s.parked;
    QStringList actions; // in priority order; the first is shown

    // Cloudly hop.
    qint64 authorityUntil = 0;
    for (const auto &e : s.escrow)
        authorityUntil = authorityUntil == 0 ? e.authorityUntilMs : std::min(authorityUntil, e.authorityUntilMs);
    if (const auto *r = firstRefusal(s.refusals, QStringLiteral("cloudly"))) {
        QString value = refusalText(s.refusals, QStringLiteral("cloudly"));
        if (!s.cloudly.lastErrorClass.isEmpty())
            value += QStringLiteral(" (last error: %1)").arg(s.cloudly.lastErrorClass);
        m_hops.append({QStringLiteral("cloudly"), value, true});
        if (r->peerOffer && r->ownOffer)
            actions << QStringLiteral("Cloudly speaks %1 and this relay %2: run a relay release that matches Cloudly's.")
                           .arg(*r->peerOffer, *r->ownOffer);
        else if (!s.parked) // parked: the park line's action (below, first) says it all
            actions << QStringLiteral("Check that Cloudly (%1) is reachable from this host; the relay reconnects by itself%2%3.")
                           .arg(TerminalView::orDash(s.cloudly.url),
                                s.cloudly.nextRetryAtMs ? QStringLiteral(" (next attempt %1)").arg(TerminalView::isoUtc(s.cloudly.nextRetryAtMs))
                                                        : QString(),
                                s.escrow.isEmpty() ? QString()
                                                   : QStringLiteral("; the escrow holds DNS authority for %1 nodes until %2")
                                                         .arg(s.escrow.size())
                                                         .arg(TerminalView::isoUtc(authorityUntil)));
    } else {
        m_hops.append({QStringLiteral("cloudly"),
                       s.cloudly.connectedSinceMs ? QStringLiteral("ok (session since %1)").arg(TerminalView::isoUtc(s.cloudly.connectedSinceMs))
                                                  : QStringLiteral("ok"),
                       false});
    }

    // Registration.
    if (s.parked) {
        // The park line itself is shown once, under READINESS (and in the window's banner).
        m_hops.append({QStringLiteral("registration"),
                       QStringLiteral("PARKED: Cloudly no longer accepts the credential generation this relay holds"), true});
        actions.prepend(QStringLiteral("The relay is parked: put the bearer of the cluster's current relay credential in the "
                                       "credential file and restart the unit (systemctl restart coreflow)."));
    } else if (const auto *r = firstRefusal(s.refusals, QStringLiteral("registration"))) {
        m_hops.append({QStringLiteral("registration"), refusalText(s.refusals, QStringLiteral("registration")), true});
        if (s.registration.lastOutcome == QLatin1String("relay-node-unknown"))
            actions << QStringLiteral("Cloudly does not know node %1: enroll it (spark enrollnode) and the relay registers again by itself.")
                           .arg(TerminalView::orDash(s.nodeId));
        else if (s.registration.lastOutcome == QLatin1String("relay-endpoint-unpublishable"))
            actions << QStringLiteral("Cloudly cannot publish the listen address: fix COREFLOW_RELAY_BIND_HOSTNAME and restart.");
        else if (r->peerOffer && r->ownOffer)
            actions << QStringLiteral("Cloudly answers registerClusterRelay in %1 and this relay speaks %2: run a matching relay release.")
                           .arg(*r->peerOffer, *r->ownOffer);
        else
            actions << QStringLiteral("Registration was refused (%1): read the line above; the relay registers again by itself.")
                           .arg(TerminalView::orDash(s.registration.lastOutcome));
    } else {
        m_hops.append({QStringLiteral("registration"),
                       s.registration.lastOutcome.isEmpty()
                           ? QStringLiteral("ok")
                           : QStringLiteral("ok (last: %1, sequence %2, %3)")
                                 .arg(s.registration.lastOutcome)
                                 .arg(s.registration.lastSequence)
                                 .arg(TerminalView::isoUtc(s.registration.lastAtMs)),
                       false});
    }

    // Listener (and its certificate).
    const qint64 warnFrom = s.listener.certificateNotAfterMs - certificateWarningDays * 86'400'000;
    m_certificateWarning = s.listener.certificateNotAfterMs != 0 && s.generatedAtMs >= warnFrom;
    if (!s.listener.origin.isEmpty() && !s.listener.listening) {
        m_hops.append({QStringLiteral("listener"),
                       QStringLiteral("NOT BOUND") + (s.listener.note.isEmpty() ? QString() : QStringLiteral(": ") + s.listener.note), true});
        actions << QStringLiteral("No listener is bound for %1: nodes cannot reach this relay; see the relay's log for the cause.")
                       .arg(s.listener.origin);
    } else if (m_certificateWarning) {
        const qint64 left = s.listener.certificateNotAfterMs - s.generatedAtMs;
        const QString when = left <= 0 ? QStringLiteral("EXPIRED at %1").arg(TerminalView::isoUtc(s.listener.certificateNotAfterMs))
                                       : QStringLiteral("expires %1 (in %2 days)")
                                             .arg(TerminalView::isoUtc(s.listener.certificateNotAfterMs))
                                             .arg(left / 86'400'000);
        m_hops.append({QStringLiteral("listener"), QStringLiteral("certificate ") + when, true});
        actions << QStringLiteral("The listener certificate %1: restart the relay to obtain a new one from Cloudly "
                                  "(it is not renewed while the relay runs).")
                       .arg(when);
    } else {
        m_hops.append({QStringLiteral("listener"),
                       s.listener.listening ? QStringLiteral("ok (%1:%2)").arg(s.listener.address).arg(s.listener.port)
                                            : QStringLiteral("ok (no relay block: %1)").arg(TerminalView::orDash(s.listener.note)),
                       false});
    }

    for (const auto &[hop, key] : {std::pair{QStringLiteral("palletRuntime"), QStringLiteral("node lane")},
                                   std::pair{QStringLiteral("clusterIngress"), QStringLiteral("ingress lane")},
                                   std::pair{QStringLiteral("relay"), QStringLiteral("start")}}) {
        const QString text = refusalText(s.refusals, hop);
        m_hops.append({key, text.isEmpty() ? QStringLiteral("ok") : text, !text.isEmpty()});
        if (!text.isEmpty())
            actions << (hop == QLatin1String("relay")
                            ? QStringLiteral("The relay is still starting: wait for \"the relay is open for Cloudly dispatch\" in its log.")
                            : QStringLiteral("The %1 is refused: %2").arg(key, text));
    }

    // Counts.
    for (const auto &e : s.escrow)
        m_escrowFailed += escrowRowFailed(e) ? 1 : 0;
    for (const auto &b : s.bindings)
        m_bindingsFailed += bindingRowFailed(b) ? 1 : 0;
    qint64 refusals = 0;
    for (const qint64 n : s.counters.refusalsByName)
        refusals += n;
    int troubled = 0;
    for (const auto &n : s.nodes)
        troubled += nodeRowTroubled(n) ? 1 : 0;
    m_counts.append({QStringLiteral("nodes"),
                     QStringLiteral("%1 carried").arg(s.nodes.size())
                         + (troubled ? QStringLiteral(", %1 silent").arg(troubled) : QString()),
                     troubled > 0});
    m_counts.append({QStringLiteral("escrow"),
                     QStringLiteral("%1 runs held").arg(s.escrow.size())
                         + (m_escrowFailed ? QStringLiteral(", %1 with a failed offer").arg(m_escrowFailed) : QString()),
                     m_escrowFailed > 0});
    m_counts.append({QStringLiteral("bindings"),
                     QStringLiteral("%1 failed of %2").arg(m_bindingsFailed).arg(s.bindings.size()), m_bindingsFailed > 0});
    m_counts.append({QStringLiteral("refusals"),
                     QStringLiteral("%1 in the last hour (%2 since start)").arg(s.counters.refusalsLastHour).arg(refusals),
                     s.counters.refusalsLastHour > 0});
    // Clock skew the escrow observed (§9.6, §18.1 clockSkew).
    if (s.clockSkew.suspected) {
        const bool nodeSaid = s.clockSkew.source == QLatin1String("node-not-yet-valid");
        const QString what = nodeSaid
            ? QStringLiteral("node %1 refused a DNS lease renewal as not yet valid %2 ms after its window opened by this relay's clock")
                  .arg(s.clockSkew.nodeId)
                  .arg(s.clockSkew.skewMs)
            : QStringLiteral("Cloudly signed DNS lease renewal windows for node %1 opening %2 ms ahead of this relay's clock")
                  .arg(s.clockSkew.nodeId)
                  .arg(s.clockSkew.skewMs);
        m_counts.append({QStringLiteral("clock"),
                         QStringLiteral("SKEW SUSPECTED (%1 ms, %2, at %3)")
                             .arg(s.clockSkew.skewMs)
                             .arg(s.clockSkew.source, TerminalView::isoUtc(s.clockSkew.observedAtMs)),
                         true});
        actions << QStringLiteral("Clock skew suspected: %1: check NTP on this host (timedatectl, chronyc tracking)%2.")
                       .arg(what, nodeSaid ? QStringLiteral(" and on the node") : QString());
    }
    for (const auto &n : s.nodes)
        if (nodeRowTroubled(n)) {
            actions << QStringLiteral("Node %1 is silent (no frame within the keepalive deadline): check its network; the "
                                      "relay closes a silent connection by itself and the node dials again.")
                           .arg(n.nodeId);
            break;
        }
    if (m_escrowFailed) {
        for (const auto &e : s.escrow)
            if (escrowRowFailed(e)) {
                actions << QStringLiteral("Node %1 did not take its DNS lease renewal (%2): check its connection and clock; "
                                          "the relay offers it again every 30 s while the window allows.")
                               .arg(e.nodeId, e.lastOfferResult);
                break;
            }
    }
    if (m_bindingsFailed)
        for (const auto &b : s.bindings)
            if (bindingRowFailed(b)) {
                actions << bindingAction(b, m_bindingsFailed - 1);
                break;
            }
    if (!m_ready && actions.isEmpty())
        actions << QStringLiteral("The relay reports not ready: read the readiness lines below.");

    m_healthy = m_ready && actions.isEmpty() && !m_parked;
    m_nextAction = actions.isEmpty() ? QStringLiteral("nothing to do") : actions.first();
}

QString HealthOverview::verdict() const
{
    if (m_parked)
        return QStringLiteral("PARKED");
    if (!m_ready)
        return QStringLiteral("NOT READY");
    return m_healthy ? QStringLiteral("HEALTHY") : QStringLiteral("READY, WITH WARNINGS");
}

} // namespace coreflow::console
