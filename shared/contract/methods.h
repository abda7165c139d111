#pragma once
// Method names of every lane, verbatim from the seed where the seed names them. docs/contract.md lists
// each with lane, direction, shapes, refusals and source section.
#include <QLatin1StringView>
#include <array>

namespace coreflow::contract::method {

using Name = QLatin1StringView;

// --- Cloudly session: relay -> Cloudly (the relay's own calls) -----------------------------------
inline constexpr Name exchangeClusterRelayAuthorization{"exchangeClusterRelayAuthorization"};
inline constexpr Name refreshClusterIdentity{"refreshClusterIdentity"};
inline constexpr Name registerCloudlyClientSession{"registerCloudlyClientSession"};
inline constexpr Name getClusterConfig{"getClusterConfig"};
inline constexpr Name getClusterRelayCertificate{"getClusterRelayCertificate"};
inline constexpr Name registerClusterRelay{"registerClusterRelay"};
inline constexpr Name getClusterRouteTable{"getClusterRouteTable"};
inline constexpr Name getClusterVpnNetwork{"getClusterVpnNetwork"};

// --- Node lane: node -> relay -> Cloudly (the six node methods, seed "Cluster-side listener") ---
inline constexpr Name registerPalletRuntimeSession{"registerPalletRuntimeSession"};
inline constexpr Name getRuntimeManagedVpnCredential{"getRuntimeManagedVpnCredential"};
inline constexpr Name getRuntimeRegistryCredential{"getRuntimeRegistryCredential"};
inline constexpr Name reportRuntimeNetworkProtection{"reportRuntimeNetworkProtection"};
inline constexpr Name reportRuntimeAssignmentObservation{"reportRuntimeAssignmentObservation"};
inline constexpr Name reportRuntimeAssignmentTerminalReceipt{"reportRuntimeAssignmentTerminalReceipt"};

inline constexpr std::array<Name, 6> nodeMethods{registerPalletRuntimeSession,    getRuntimeManagedVpnCredential,
                                                 getRuntimeRegistryCredential,    reportRuntimeNetworkProtection,
                                                 reportRuntimeAssignmentObservation,
                                                 reportRuntimeAssignmentTerminalReceipt};

// --- Pushes: Cloudly -> relay -> node (routed by request.session.nodeId) --------------------------
inline constexpr Name applyRuntimeAssignment{"applyRuntimeAssignment"};
inline constexpr Name applyRuntimeNetworkSigningAuthority{"applyRuntimeNetworkSigningAuthority"};
inline constexpr Name applyRuntimeNetworkProjection{"applyRuntimeNetworkProjection"};
inline constexpr Name applyRuntimeNetworkDnsLeaseRenewal{"applyRuntimeNetworkDnsLeaseRenewal"};

inline constexpr std::array<Name, 4> nodePushes{applyRuntimeAssignment, applyRuntimeNetworkSigningAuthority,
                                                applyRuntimeNetworkProjection, applyRuntimeNetworkDnsLeaseRenewal};

// --- Escrow (Cloudly -> relay) -------------------------------------------------------------------
inline constexpr Name holdRuntimeNetworkDnsLeaseRenewals{"holdRuntimeNetworkDnsLeaseRenewals"};

// --- Cluster ingress -----------------------------------------------------------------------------
inline constexpr Name registerClusterIngress{"registerClusterIngress"};
inline constexpr Name getClusterIngressRouteTable{"getClusterIngressRouteTable"};
inline constexpr Name pushClusterIngressRouteTableChanged{"pushClusterIngressRouteTableChanged"};
inline constexpr Name pushClusterRouteTable{"pushClusterRouteTable"};
inline constexpr Name getClusterTrafficStatistics{"getClusterTrafficStatistics"};

// --- Managed VPN ---------------------------------------------------------------------------------
inline constexpr Name applyClusterVpnNetwork{"applyClusterVpnNetwork"};

} // namespace coreflow::contract::method
