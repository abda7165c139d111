#pragma once
// MetricsExposition: `coreflow-console --metrics`: one status snapshot in the Prometheus text
// exposition format (version 0.0.4), for node_exporter's textfile collector (docs/contract.md §18.3,
// docs/operations.md). Every value comes from the status object (§18.1); nothing is kept between runs.
//
// Families (all prefixed coreflow_relay_; counters since the relay started):
//   gauges   up (1: a snapshot was read; render(nullopt) writes only up 0), build_info{build,
//            contract_release} 1, start_time_seconds, ready, parked, hop_ready{hop} for cloudly,
//            registration, palletRuntime, clusterIngress, relay (0 while §18.1 refusals name that hop)
//            and listener (0 while a relay origin is configured and no listener is bound),
//            nodes_carried, requests_in_flight (Σ nodes[].forwardsInFlight), escrow_runs_held,
//            escrow_renewals_held, certificate_expiry_seconds (listener.certificateNotAfterMs −
//            generatedAtMs, seconds; only while a certificate is held), ingress_bound,
//            ingress_routes
//   counters forwards_total, pushes_total, refusals_total{name}, cloudly_reconnects_total,
//            reregistration_waves_total, escrow_offers_total{outcome="delivered"|"failed"},
//            registry_requests_total, registry_body_bytes_total, status_clients_total
//   VPN hub  vpn_hub_bound, vpn_members_admitted, vpn_members_connected, vpn_network_revision (only
//            while a network is held), vpn_member_connected{member,address} (gauges);
//            vpn_drops_total{cause}, vpn_member_packets_total{member,address,direction="in"|"out"},
//            vpn_member_bytes_total{...same}, vpn_member_drops_total{member,address,cause} (counters).
//            Members are labelled by nodeId and address as the status shows them; no key is exported.
// Label values are escaped (backslash, double quote, newline) as the format requires.
#include "shared/status/relaystatus.h"

#include <QByteArray>
#include <optional>

namespace coreflow::console {

class MetricsExposition {
public:
    static QByteArray render(const std::optional<status::RelayStatus> &status);
    // value as a label value: control and format characters replaced with U+FFFD (TerminalText), then
    // backslash, quote and newline escaped (§18.3).
    static QByteArray escapeLabelValue(const QString &value);
};

} // namespace coreflow::console
