#pragma once
// The wire names the loopback peers speak, written out from docs/contract.md (never the relay's
// shared/contract/methods.h, offers.h or refusalnames.h: tests/layering/check_layers.py enforces that),
// so a renamed or misspelt constant in the relay turns a test red instead of following it silently.
#include <QJsonObject>
#include <QLatin1StringView>
#include <QString>
#include <array>

namespace coreflow::peers {

namespace method {
using Name = QLatin1StringView;
// Cloudly session: the relay's own calls (§6).
inline constexpr Name exchangeClusterRelayAuthorization{"exchangeClusterRelayAuthorization"}; // §6.1
inline constexpr Name registerCloudlyClientSession{"registerCloudlyClientSession"};           // §6.2
inline constexpr Name refreshClusterIdentity{"refreshClusterIdentity"};                       // §6.3
inline constexpr Name getClusterConfig{"getClusterConfig"};                                   // §6.4
inline constexpr Name getClusterRelayCertificate{"getClusterRelayCertificate"};               // §6.5
inline constexpr Name registerClusterRelay{"registerClusterRelay"};                           // §6.6
inline constexpr Name getClusterRouteTable{"getClusterRouteTable"};                           // §6.7
// Node lane (§8.1): the six upstream names and the four secret-recipient methods (project names).
inline constexpr Name registerPalletRuntimeSession{"registerPalletRuntimeSession"};
inline constexpr Name getRuntimeManagedVpnCredential{"getRuntimeManagedVpnCredential"};
inline constexpr Name getRuntimeRegistryCredential{"getRuntimeRegistryCredential"};
inline constexpr Name reportRuntimeNetworkProtection{"reportRuntimeNetworkProtection"};
inline constexpr Name reportRuntimeAssignmentObservation{"reportRuntimeAssignmentObservation"};
inline constexpr Name reportRuntimeAssignmentTerminalReceipt{"reportRuntimeAssignmentTerminalReceipt"};
inline constexpr std::array<Name, 10> forwardedNodeMethods{
    registerPalletRuntimeSession, getRuntimeManagedVpnCredential, getRuntimeRegistryCredential,
    reportRuntimeNetworkProtection, reportRuntimeAssignmentObservation, reportRuntimeAssignmentTerminalReceipt,
    Name("getRuntimeSecretRecipientState"), Name("beginRuntimeSecretRecipientEnrollment"),
    Name("completeRuntimeSecretRecipientEnrollment"), Name("getRuntimeAssignmentSecretMaterial")};
// Pushes, Cloudly -> relay -> node (§8.3).
inline constexpr Name applyRuntimeAssignment{"applyRuntimeAssignment"};
inline constexpr Name applyRuntimeNetworkProjection{"applyRuntimeNetworkProjection"};
inline constexpr Name applyRuntimeNetworkDnsLeaseRenewal{"applyRuntimeNetworkDnsLeaseRenewal"};
// Ingress lane (§10).
inline constexpr Name registerClusterIngress{"registerClusterIngress"};                         // §10.1
inline constexpr Name getClusterIngressRouteTable{"getClusterIngressRouteTable"};               // §10.3
inline constexpr Name pushClusterIngressRouteTableChanged{"pushClusterIngressRouteTableChanged"}; // §10.4
inline constexpr Name getClusterTrafficStatistics{"getClusterTrafficStatistics"};               // §10.6
// Database closure streams (§13.4, relay -> Cloudly; abort both ways) and their dispatches (§13.5, §13.6).
inline constexpr Name offerServiceDatabaseClosure{"offerServiceDatabaseClosure"};
inline constexpr Name openServiceDatabaseClosure{"openServiceDatabaseClosure"};
inline constexpr Name grantServiceDatabaseClosureCredit{"grantServiceDatabaseClosureCredit"};
inline constexpr Name completeServiceDatabaseClosure{"completeServiceDatabaseClosure"};
inline constexpr Name abortServiceDatabaseClosure{"abortServiceDatabaseClosure"};
inline constexpr Name backupServiceDatabaseClosure{"backupServiceDatabaseClosure"};
inline constexpr Name restoreServiceDatabaseClosure{"restoreServiceDatabaseClosure"};
} // namespace method

// Refusal names the peers send or read (§22).
namespace refusal {
using Name = QLatin1StringView;
inline constexpr Name methodNotServed{"method-not-served"};               // §3.0
inline constexpr Name requestInvalid{"request-invalid"};                  // §1
inline constexpr Name relayIdentityUnverified{"relay-identity-unverified"}; // §6.1, §6.6 (Cloudly)
inline constexpr Name relayClusterNotEnabled{"relay-cluster-not-enabled"}; // §6.6 (Cloudly)
inline constexpr Name relayNodeUnknown{"relay-node-unknown"};             // §6.6 (Cloudly)
inline constexpr Name relayVpnHubAbsent{"relay-vpn-hub-absent"};          // §6.6 (Cloudly)
inline constexpr Name nodeNotConnected{"node-not-connected"};             // §8.3 (relay)
inline constexpr Name closureRefused{"closure-refused"};                  // §13.4 (Cloudly)
inline constexpr Name notFound{"NOT_FOUND"};                              // §13.4 (Cloudly: no closure)
inline constexpr Name closureStreamUnknown{"closure-stream-unknown"};     // §13.4 (abort reason)
inline constexpr Name closureTransferStalled{"closure-transfer-stalled"}; // §13.4 (relay)
inline constexpr Name closureDigestMismatch{"closure-digest-mismatch"};   // §13.4 (relay)
inline constexpr Name closureAbsent{"closure-absent"};                    // §13.5 (relay)
} // namespace refusal

// ProtocolOffer session kinds (§2.1).
namespace sessionKind {
inline constexpr QLatin1StringView cloudlyClient{"cloudlyClient"};
inline constexpr QLatin1StringView palletRuntime{"palletRuntime"};
inline constexpr QLatin1StringView clusterIngress{"clusterIngress"};
} // namespace sessionKind

// The release the peers offer by default: the contract's (docs/contract.md title, §2.1).
inline const QString contractRelease = QStringLiteral("33.1.0");

// ProtocolOffer (§2.1): { sessionKind, release }.
inline QJsonObject offerJson(const QString &sessionKind, const QString &release)
{
    return QJsonObject{{QStringLiteral("sessionKind"), sessionKind}, {QStringLiteral("release"), release}};
}

} // namespace coreflow::peers
