#include "console/metricsexposition.h"

#include "console/terminaltext.h"

#include <QStringList>

namespace coreflow::console {

namespace {

class Writer {
public:
    void family(const char *name, const char *type, const char *help)
    {
        m_out += QByteArray("# HELP coreflow_relay_") + name + ' ' + help + '\n';
        m_out += QByteArray("# TYPE coreflow_relay_") + name + ' ' + type + '\n';
    }
    void sample(const char *name, qint64 value, const QByteArray &labels = QByteArray())
    {
        m_out += QByteArray("coreflow_relay_") + name;
        if (!labels.isEmpty())
            m_out += '{' + labels + '}';
        m_out += ' ' + QByteArray::number(value) + '\n';
    }
    // A value in seconds from milliseconds, printed with its three decimals (300000 ms -> 300.000).
    void sampleSecondsFromMs(const char *name, qint64 ms, const QByteArray &labels = QByteArray())
    {
        m_out += QByteArray("coreflow_relay_") + name;
        if (!labels.isEmpty())
            m_out += '{' + labels + '}';
        m_out += ' ' + QByteArray::number(double(ms) / 1000.0, 'f', 3) + '\n';
    }
    void one(const char *name, const char *type, const char *help, qint64 value)
    {
        family(name, type, help);
        sample(name, value);
    }
    QByteArray take() { return m_out; }

private:
    QByteArray m_out;
};

QByteArray label(const char *key, const QString &value)
{
    return QByteArray(key) + "=\"" + MetricsExposition::escapeLabelValue(value) + '"';
}

} // namespace

QByteArray MetricsExposition::escapeLabelValue(const QString &value)
{
    // The relay's strings lose their control and format characters first, as in --text (§18.3): the
    // exposition is printed on the operator's terminal by default. Then Prometheus' escapes.
    QByteArray out;
    for (const char c : TerminalText::printable(value).toUtf8()) {
        if (c == '\\')
            out += "\\\\";
        else if (c == '"')
            out += "\\\"";
        else if (c == '\n')
            out += "\\n";
        else
            out += c;
    }
    return out;
}

QByteArray MetricsExposition::render(const std::optional<status::RelayStatus> &status)
{
    Writer w;
    w.one("up", "gauge", "1 when the console read a status snapshot from the relay, else 0.", status ? 1 : 0);
    if (!status)
        return w.take();
    const status::RelayStatus &s = *status;

    w.family("build_info", "gauge", "The relay build and contract release (always 1).");
    w.sample("build_info", 1, label("build", s.build) + ',' + label("contract_release", s.contractRelease));
    w.one("start_time_seconds", "gauge", "When the relay process started, Unix seconds.", s.startedAtMs / 1000);
    w.one("ready", "gauge", "1 when the relay is ready (no readiness refusal).", s.ready ? 1 : 0);
    w.one("parked", "gauge", "1 while the relay registration is parked and needs an operator.", s.parked ? 1 : 0);

    w.family("hop_ready", "gauge", "Readiness per hop: 0 while a refusal names the hop.");
    for (const char *hop : {"cloudly", "registration", "palletRuntime", "clusterIngress", "relay"}) {
        bool ok = true;
        for (const auto &r : s.refusals)
            ok = ok && r.hop != QLatin1String(hop);
        w.sample("hop_ready", ok ? 1 : 0, label("hop", QString::fromLatin1(hop)));
    }
    const bool listenerOk = s.listener.origin.isEmpty() || s.listener.listening;
    w.sample("hop_ready", listenerOk ? 1 : 0, label("hop", QStringLiteral("listener")));

    qint64 inFlight = 0;
    for (const auto &n : s.nodes)
        inFlight += n.forwardsInFlight;
    qint64 renewals = 0;
    for (const auto &e : s.escrow)
        renewals += e.renewalCount;
    w.one("nodes_carried", "gauge", "Nodes whose sessions the relay carries now.", s.nodes.size());
    w.one("requests_in_flight", "gauge", "Node requests forwarded to Cloudly and not answered yet.", inFlight);
    w.one("escrow_runs_held", "gauge", "DNS lease renewal runs the relay holds for nodes.", s.escrow.size());
    w.one("escrow_renewals_held", "gauge", "DNS lease renewals held in those runs.", renewals);
    if (s.listener.certificateNotAfterMs != 0)
        w.one("certificate_expiry_seconds", "gauge",
              "Seconds until the listener certificate's notAfter (negative: expired; renewal needs a restart).",
              (s.listener.certificateNotAfterMs - s.generatedAtMs) / 1000);
    // Clock skew the escrow observed (§9.6, §18.1 clockSkew): the size only while it is suspected.
    w.one("clock_skew_suspected", "gauge", "1 while the escrow suspects clock skew (check NTP on this host).",
          s.clockSkew.suspected ? 1 : 0);
    if (s.clockSkew.suspected) {
        w.family("clock_skew_seconds", "gauge",
                 "Size of the suspected clock skew, seconds (a lower bound for node-not-yet-valid), by source.");
        w.sampleSecondsFromMs("clock_skew_seconds", s.clockSkew.skewMs, label("source", s.clockSkew.source));
    }
    w.one("ingress_bound", "gauge", "1 while a cluster ingress connection is bound.", s.ingress.bound ? 1 : 0);
    w.one("ingress_routes", "gauge", "Routes in the held cluster route table.", s.ingress.routeCount);

    w.one("forwards_total", "counter", "Node requests forwarded to Cloudly.", s.counters.forwards);
    w.one("pushes_total", "counter", "Cloudly requests routed to nodes.", s.counters.pushes);
    w.family("refusals_total", "counter", "Refusals the relay authored, by refusal name.");
    for (auto it = s.counters.refusalsByName.constBegin(); it != s.counters.refusalsByName.constEnd(); ++it)
        w.sample("refusals_total", it.value(), label("name", it.key()));
    w.one("cloudly_reconnects_total", "counter", "Cloudly sockets dialled again after a loss.", s.counters.reconnects);
    w.one("reregistration_waves_total", "counter", "Re-registration waves started after the Cloudly session changed.",
          s.counters.reregistrationWaves);
    w.family("escrow_offers_total", "counter", "DNS lease renewals offered to nodes, by outcome.");
    QMap<QString, qint64> offers = s.counters.escrowOffersByOutcome;
    for (const QString &outcome : {QStringLiteral("delivered"), QStringLiteral("failed")})
        if (!offers.contains(outcome))
            offers.insert(outcome, 0);
    for (auto it = offers.constBegin(); it != offers.constEnd(); ++it)
        w.sample("escrow_offers_total", it.value(), label("outcome", it.key()));
    w.one("registry_requests_total", "counter", "Image pull requests relayed to the registry.", s.counters.registryRequests);
    w.one("registry_body_bytes_total", "counter", "Body bytes of registry answers handed to nodes.", s.counters.registryBodyBytes);
    w.one("status_clients_total", "counter", "Status socket clients admitted.", s.counters.statusClients);

    // Backups, restores and closure transfers (docs/contract.md §18.1 backups, §18.3).
    int backups = 0;
    for (const auto &op : s.backups.operations)
        backups += op.kind == QLatin1String("backup") ? 1 : 0;
    w.family("backup_operations_in_flight", "gauge", "Backups and restores being carried, by kind.");
    w.sample("backup_operations_in_flight", backups, label("kind", QStringLiteral("backup")));
    w.sample("backup_operations_in_flight", s.backups.operations.size() - backups, label("kind", QStringLiteral("restore")));
    int sending = 0;
    for (const auto &t : s.backups.transfers)
        sending += t.direction == QLatin1String("send") ? 1 : 0;
    w.family("closure_transfers_in_flight", "gauge", "Database closure transfers on the Cloudly session, by direction.");
    w.sample("closure_transfers_in_flight", sending, label("direction", QStringLiteral("send")));
    w.sample("closure_transfers_in_flight", s.backups.transfers.size() - sending, label("direction", QStringLiteral("receive")));
    w.family("closure_bytes_total", "counter", "Database closure bytes sent to or received from Cloudly, by direction.");
    w.sample("closure_bytes_total", s.backups.closureBytesSent, label("direction", QStringLiteral("send")));
    w.sample("closure_bytes_total", s.backups.closureBytesReceived, label("direction", QStringLiteral("receive")));
    w.family("closure_transfers_total", "counter", "Database closure transfers ended, by outcome (stored, restored or a refusal name).");
    for (auto it = s.backups.transfersByOutcome.constBegin(); it != s.backups.transfersByOutcome.constEnd(); ++it)
        w.sample("closure_transfers_total", it.value(), label("outcome", it.key()));

    // The managed VPN hub (docs/contract.md §18.1 vpn, §18.3): public facts only, never a key. A member
    // is labelled by its nodeId and address as the status shows them.
    const status::VpnHubStatus &vpn = s.vpn;
    w.one("vpn_hub_bound", "gauge", "1 while the VPN hub's QUIC port is bound.", vpn.bound ? 1 : 0);
    w.one("vpn_members_admitted", "gauge", "Members of the VPN network the hub holds.", vpn.memberCount);
    w.one("vpn_members_connected", "gauge", "VPN members with an authenticated connection now.", vpn.membersConnected);
    if (vpn.networkRevision)
        w.one("vpn_network_revision", "gauge", "Revision of the VPN network the hub holds (absent while none is held).",
              *vpn.networkRevision);
    w.family("vpn_drops_total", "counter", "Packets and datagrams the VPN hub dropped, by cause.");
    for (auto it = vpn.drops.constBegin(); it != vpn.drops.constEnd(); ++it)
        w.sample("vpn_drops_total", it.value(), label("cause", it.key()));
    auto memberLabels = [](const status::VpnMemberStatus &m) { return label("member", m.nodeId) + ',' + label("address", m.address); };
    w.family("vpn_member_connected", "gauge", "1 while the VPN member has an authenticated connection.");
    for (const auto &m : vpn.members)
        w.sample("vpn_member_connected", m.connected ? 1 : 0, memberLabels(m));
    w.family("vpn_member_packets_total", "counter",
             "IPv4 packets per VPN member: direction in = opened from the member, out = relayed to it.");
    for (const auto &m : vpn.members) {
        w.sample("vpn_member_packets_total", m.packetsIn, memberLabels(m) + ',' + label("direction", QStringLiteral("in")));
        w.sample("vpn_member_packets_total", m.packetsOut, memberLabels(m) + ',' + label("direction", QStringLiteral("out")));
    }
    w.family("vpn_member_bytes_total", "counter",
             "IPv4 packet bytes per VPN member: direction in = opened from the member, out = relayed to it.");
    for (const auto &m : vpn.members) {
        w.sample("vpn_member_bytes_total", m.bytesIn, memberLabels(m) + ',' + label("direction", QStringLiteral("in")));
        w.sample("vpn_member_bytes_total", m.bytesOut, memberLabels(m) + ',' + label("direction", QStringLiteral("out")));
    }
    w.family("vpn_member_drops_total", "counter", "The VPN member's packets the hub dropped, by cause.");
    for (const auto &m : vpn.members)
        for (auto it = m.drops.constBegin(); it != m.drops.constEnd(); ++it)
            w.sample("vpn_member_drops_total", it.value(), memberLabels(m) + ',' + label("cause", it.key()));
    return w.take();
}

} // namespace coreflow::console
