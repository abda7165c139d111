#pragma once
// Method names of every lane, verbatim from the upstream contract where it names them. docs/contract.md
// §23 lists each with lane, direction and the section that states its shapes and refusals.
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

// --- Node lane: node -> relay -> Cloudly (the six node methods, docs/contract.md §5) ---
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


// ===== Appended with the full contract (docs/contract.md). Names marked (project) are this project's;
// ===== the others are the upstream contract's, verbatim.

// --- Cloudly session: relay -> Cloudly (docs/contract.md §6, §12, §13.4) ---------------------------
inline constexpr Name getClusterPlatformDesiredState{"getClusterPlatformDesiredState"};
inline constexpr Name getCorestoreControlRecipientState{"getCorestoreControlRecipientState"};                 // (project)
inline constexpr Name beginCorestoreControlRecipientEnrollment{"beginCorestoreControlRecipientEnrollment"};   // (project)
inline constexpr Name completeCorestoreControlRecipientEnrollment{"completeCorestoreControlRecipientEnrollment"}; // (project)
inline constexpr Name getCorestoreControlCredentialMaterial{"getCorestoreControlCredentialMaterial"};
inline constexpr Name getSecretIngressRecipient{"getSecretIngressRecipient"};
inline constexpr Name publishCorestoreCredentialMaterial{"publishCorestoreCredentialMaterial"};
inline constexpr Name reportClusterPlatformBindingStatus{"reportClusterPlatformBindingStatus"};               // (project)
inline constexpr Name offerServiceDatabaseClosure{"offerServiceDatabaseClosure"};                             // (project)
inline constexpr Name openServiceDatabaseClosure{"openServiceDatabaseClosure"};                               // (project)
inline constexpr Name grantServiceDatabaseClosureCredit{"grantServiceDatabaseClosureCredit"};                 // (project)
inline constexpr Name completeServiceDatabaseClosure{"completeServiceDatabaseClosure"};                       // (project)
inline constexpr Name abortServiceDatabaseClosure{"abortServiceDatabaseClosure"};                             // (project), both ways

// --- Node lane: forwarded secret-recipient session requests (project names, Decision D-06) --------
inline constexpr Name getRuntimeSecretRecipientState{"getRuntimeSecretRecipientState"};
inline constexpr Name beginRuntimeSecretRecipientEnrollment{"beginRuntimeSecretRecipientEnrollment"};
inline constexpr Name completeRuntimeSecretRecipientEnrollment{"completeRuntimeSecretRecipientEnrollment"};
inline constexpr Name getRuntimeAssignmentSecretMaterial{"getRuntimeAssignmentSecretMaterial"};

inline constexpr std::array<Name, 4> nodeSecretMethods{getRuntimeSecretRecipientState,
                                                       beginRuntimeSecretRecipientEnrollment,
                                                       completeRuntimeSecretRecipientEnrollment,
                                                       getRuntimeAssignmentSecretMaterial};

// --- Cloudly -> relay: config push, Corestore, backup, closures (docs/contract.md §7, §12, §13) ----
inline constexpr Name pushClusterConfig{"pushClusterConfig"};                                                 // (project)
inline constexpr Name getClusterCorestoreInventory{"getClusterCorestoreInventory"};
inline constexpr Name getClusterCorestoreLegacyResources{"getClusterCorestoreLegacyResources"};
inline constexpr Name backupClusterService{"backupClusterService"};
inline constexpr Name restoreClusterService{"restoreClusterService"};
inline constexpr Name pruneClusterNodeArchive{"pruneClusterNodeArchive"};
inline constexpr Name backupServiceDatabaseClosure{"backupServiceDatabaseClosure"};
inline constexpr Name restoreServiceDatabaseClosure{"restoreServiceDatabaseClosure"};

// --- Isolated restore: Cloudly -> relay -> node Corestore (docs/contract.md §14) ------------------
inline constexpr Name prepareIsolatedRestoreOnNode{"prepareIsolatedRestoreOnNode"};
inline constexpr Name stageIsolatedRestoreArchive{"stageIsolatedRestoreArchive"};
inline constexpr Name getIsolatedRestoreProgressOnNode{"getIsolatedRestoreProgressOnNode"};
inline constexpr Name executeIsolatedRestoreOnNode{"executeIsolatedRestoreOnNode"};
inline constexpr Name cleanupIsolatedRestoreOnNode{"cleanupIsolatedRestoreOnNode"};

inline constexpr std::array<Name, 5> isolatedRestoreMethods{prepareIsolatedRestoreOnNode, stageIsolatedRestoreArchive,
                                                            getIsolatedRestoreProgressOnNode,
                                                            executeIsolatedRestoreOnNode, cleanupIsolatedRestoreOnNode};

// --- Retired Swarm-reconciler methods: the project's list (docs/contract.md §16.1, D-14) ----------
// Registered on the Cloudly lane; each answers retired-swarm-method naming capability and new owner.
inline constexpr Name getServices{"getServices"};
inline constexpr Name updateServices{"updateServices"};
inline constexpr Name deleteService{"deleteService"};
inline constexpr Name restartService{"restartService"};
inline constexpr Name getServiceLogs{"getServiceLogs"};
inline constexpr Name getSwarmNodes{"getSwarmNodes"};
inline constexpr Name updateSwarmNetworks{"updateSwarmNetworks"};
inline constexpr Name updateTrafficRoutes{"updateTrafficRoutes"};

inline constexpr std::array<Name, 8> retiredSwarmMethods{getServices,    updateServices, deleteService,
                                                         restartService, getServiceLogs, getSwarmNodes,
                                                         updateSwarmNetworks, updateTrafficRoutes};

// --- Removed: NOT registered at all, answered method-not-served (docs/contract.md §16.2) ----------
inline constexpr Name coreflowGetTrafficStats{"coreflowGetTrafficStats"};
inline constexpr Name executeServiceBackup{"executeServiceBackup"};
inline constexpr Name executeServiceRestore{"executeServiceRestore"};
inline constexpr Name coreflowPruneNodeArchive{"coreflowPruneNodeArchive"};
inline constexpr Name coreflowGetCorestoreInventory{"coreflowGetCorestoreInventory"};

inline constexpr std::array<Name, 5> removedMethods{coreflowGetTrafficStats, executeServiceBackup,
                                                    executeServiceRestore, coreflowPruneNodeArchive,
                                                    coreflowGetCorestoreInventory};

// --- Pending relay functions (project names, docs/contract.md §16.3): relay-function-pending ------
inline constexpr Name renewClusterRelayCertificate{"renewClusterRelayCertificate"};
inline constexpr Name replayClusterDesiredState{"replayClusterDesiredState"};
inline constexpr Name delegateRuntimeNetworkSigning{"delegateRuntimeNetworkSigning"};
inline constexpr Name getClusterRelayServedNodes{"getClusterRelayServedNodes"};

inline constexpr std::array<Name, 4> pendingFunctionMethods{renewClusterRelayCertificate, replayClusterDesiredState,
                                                            delegateRuntimeNetworkSigning, getClusterRelayServedNodes};

} // namespace coreflow::contract::method
