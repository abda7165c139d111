#pragma once
// Every refusal name the relay answers or reads, verbatim. docs/contract.md §22 lists each with the
// lane and the section that states it. Upstream names are copied exactly; names this project had to
// choose are marked (project) (docs/contract.md §3.1; docs/decisions.md D-10).
#include <QLatin1StringView>
#include <QString>
#include <QStringView>

namespace coreflow::contract::refusal {

using Name = QLatin1StringView;

// --- Generic lane refusals (project) -------------------------------------------------------------
inline constexpr Name methodNotServed{"method-not-served"};         // unknown method on this lane
inline constexpr Name requestInvalid{"request-invalid"};             // envelope/body fails exact-key reading
inline constexpr Name frameTooLarge{"frame-too-large"};              // frame above the lane's bound

// --- Forwarding a runtime session (docs/contract.md §8) -----------------------------
inline constexpr Name cloudlySessionUnavailable{"cloudly-session-unavailable"}; // (project) FW-05 text
inline constexpr Name cloudlyForwardTimeout{"cloudly-forward-timeout"};         // (project) FW-03/FW-04
inline constexpr Name cloudlySessionLost{"cloudly-session-lost"};               // (project) socket dropped mid-forward
inline constexpr Name sessionBindingRefused{"session-binding-refused"};         // (project) FW-06..09
inline constexpr Name nodeNotConnected{"node-not-connected"};                   // (project) FW-16 text
inline constexpr Name nodePushTimeout{"node-push-timeout"};                     // (project) FW-14
inline constexpr Name nodeConnectionLost{"node-connection-lost"};               // (project) node closed mid-push

// --- Protocol version (docs/contract.md §2) ---------------------------------------------------
inline constexpr Name protocolOfferRefused{"protocol-offer-refused"};           // (project) PV-08

// --- Registering this relay (docs/contract.md §6.6), answered by Cloudly -----------------
inline constexpr Name relayClusterNotEnabled{"relay-cluster-not-enabled"};
inline constexpr Name relayNodeForeign{"relay-node-foreign"};
inline constexpr Name relayNodeUnknown{"relay-node-unknown"};
inline constexpr Name relayIdentityUnverified{"relay-identity-unverified"};
inline constexpr Name relaySequenceNotAdvancing{"relay-sequence-not-advancing"};
inline constexpr Name relayCredentialGenerationStale{"relay-credential-generation-stale"};
inline constexpr Name relayVpnHubAbsent{"relay-vpn-hub-absent"};
inline constexpr Name relayNotConnected{"relay-not-connected"};
inline constexpr Name relayAmbiguous{"relay-ambiguous"};

// The registerClusterRelay refusals that state Cloudly does not dispatch to this relay
// (data.clusterRelayUndispatchedRefusals; ES-33, ES-35), matched exactly. The one list of them:
// RelayRegistration and LeaseEscrow both ask here.
inline bool statesThisRelayIsNotDispatchedTo(QStringView name) noexcept
{
    return name == relayClusterNotEnabled || name == relayNodeForeign || name == relayNodeUnknown
           || name == relaySequenceNotAdvancing || name == relayCredentialGenerationStale;
}

// --- DNS lease renewal escrow (docs/contract.md §9) -----------------------------------
inline constexpr Name escrowCloudlyOnly{"escrow-cloudly-only"};
inline constexpr Name escrowRunInvalid{"escrow-run-invalid"};
inline constexpr Name escrowNodeNotCarried{"escrow-node-not-carried"};
// A node refusal of an offered DNS lease renewal whose name ends so says the window is not open yet by
// the node's clock (e.g. "dns-lease-renewal-not-yet-valid"): the escrow names clock skew (§9.6, D-74).
inline constexpr Name notYetValidSuffix{"-not-yet-valid"};
inline constexpr Name escrowRunForeignSession{"escrow-run-foreign-session"};
inline constexpr Name escrowRunStale{"escrow-run-stale"};
inline constexpr Name escrowRunUnordered{"escrow-run-unordered"};
inline constexpr Name escrowRelayParked{"escrow-relay-parked"};                 // (project) ES-35

// --- Cluster ingress (docs/contract.md §10) -----------------------------------------------------
inline constexpr Name clusterIngressRegistrationRefused{"cluster-ingress-registration-refused"};
inline constexpr Name ingressReasonNotReady{"not-ready"};                       // reason inside the above
inline constexpr Name ingressReasonRegistrationInvalid{"registration-invalid"}; // reason inside the above
inline constexpr Name ingressNotBound{"ingress-not-bound"};                     // (project) CI-21
inline constexpr Name ingressCallerNotBound{"ingress-caller-not-bound"};        // (project) CI-19
inline constexpr Name routeTableInvalid{"route-table-invalid"};                 // (project) CI-05

// --- Retired and pending methods (docs/contract.md §16) -------------------------------
inline constexpr Name retiredSwarmMethod{"retired-swarm-method"};               // (project) PF-06
inline constexpr Name relayFunctionPending{"relay-function-pending"};           // (project) PF-01

// --- Managed VPN hub (docs/contract.md §11) ---------------------------------------
inline constexpr Name vpnNetworkAuthorityForeign{"vpn-network-authority-foreign"};
inline constexpr Name vpnNetworkRevisionStale{"vpn-network-revision-stale"};

// --- Corestore and restore (docs/contract.md §12, §14) ---------------
inline constexpr Name corestoreEndpointUnknown{"CORESTORE_ENDPOINT_UNKNOWN"};
inline constexpr Name corestoreUnreachable{"CORESTORE_UNREACHABLE"};
inline constexpr Name corestoreCredentialEnrollmentError{"CorestoreCredentialEnrollmentError"};
inline constexpr Name bindingNotGranted{"binding-not-granted"};
inline constexpr Name databaseEndpointMissing{"database-endpoint-missing"};
inline constexpr Name restoreNodeNotCarried{"restore-node-not-carried"};
inline constexpr Name restoreNodeUnreachable{"restore-node-unreachable"};
inline constexpr Name restoreNodeRefused{"restore-node-refused"};
inline constexpr Name corestoreCredentialMissing{"corestore-credential-missing"}; // (project) CS-64
inline constexpr Name enrollmentChallengeInvalid{"enrollment-challenge-invalid"}; // (project) §12.1, D-63
inline constexpr Name enrollmentAnswerInvalid{"enrollment-answer-invalid"};       // (project) §12.1
inline constexpr Name answerTooLarge{"answer-too-large"};                         // (project) §15, D-63

// --- Listener HTTP surface (docs/contract.md §17) --------------------------------
inline constexpr Name registryMethodRefused{"registry-method-refused"};         // (project) IP-02
inline constexpr Name pathNotServed{"path-not-served"};                         // (project) IP-03
inline constexpr Name registryUnreachable{"registry-unreachable"};              // (project) IP-21

// --- Status socket (console protocol) -----------------------------------------------------------
inline constexpr Name statusReadOnly{"status-read-only"};                       // (project)
inline constexpr Name statusAccessDenied{"status-access-denied"};               // (project)
inline constexpr Name statusConsumerTooSlow{"status-consumer-too-slow"};        // (project)
// The relay does not listen at a squattable place; the console does not read one (§18 "Socket place").
inline constexpr Name statusSocketUnsafe{"status-socket-unsafe"};              // (project)
// The console's refusal of a server whose SO_PEERCRED uid it does not trust (§18 "Socket place").
inline constexpr Name statusServerUntrusted{"status-server-untrusted"};        // (project)
// --- Start failures (printed on stderr, exit 1) ------------------------------------------------------
inline constexpr Name relayCertificateInvalid{"relay-certificate-invalid"};     // (project) LO-03..LO-06
inline constexpr Name listenerBindFailed{"listener-bind-failed"};               // (project) UC-14
inline constexpr Name listenerOriginPortMismatch{"listener-origin-port-mismatch"}; // (project) LO-01
inline constexpr Name statusHelloTimeout{"status-hello-timeout"};              // (project)
inline constexpr Name statusTooManyClients{"status-too-many-clients"};         // (project)


// ===== Appended with the full contract (docs/contract.md §22). (project) as above. =====

// --- Generic / start ------------------------------------------------------------------------------
inline constexpr Name errorUnreadable{"error-unreadable"};                      // (project) peer error not an object
inline constexpr Name configurationInvalid{"configuration-invalid"};            // (project) start failure, exit 1
inline constexpr Name relayStarting{"relay-starting"};                          // (project) D-01

// --- Listener WebSocket close reasons (sent in a Close frame, §3, D-53) -----------------------------
inline constexpr Name nodeNotReading{"node-not-reading"};                       // (project) 1008, send bound
inline constexpr Name relayReceiveBudget{"relay-receive-budget"};               // (project) 1008, receive budget
// Connections that have not registered yet (§3.4, D-57): their own frame bound, pool and in-flight limit.
inline constexpr Name unregisteredFrameTooLarge{"unregistered-frame-too-large"}; // (project) 1009
inline constexpr Name unregisteredReceiveBudget{"unregistered-receive-budget"}; // (project) 1008
inline constexpr Name unregisteredRequestInFlight{"unregistered-request-in-flight"}; // (project) answered refusal
inline constexpr Name unregisteredNotReading{"unregistered-not-reading"};       // (project) 1008, send bound before registering
// Count bound and registration deadline of unregistered sessions (§3.4, D-59).
inline constexpr Name unregisteredSessionsFull{"unregistered-sessions-full"};   // (project) 1013
inline constexpr Name registrationDeadline{"registration-deadline"};           // (project) 1008
inline constexpr Name listenerBusy{"listener-busy"};                             // (project) 503, HTTP connection cap (§17)
inline constexpr Name cloudlyNotReading{"cloudly-not-reading"};                 // (project) 1008, Cloudly session send bound (D-54)
// Silent peers (§3.3, D-56): the Close reason of a session lost to silence (1001), and the readiness
// refusal named while the relay's Cloudly session was last lost so; a node socket replaced by the
// node's registration on a newer socket is closed 1000 with node-superseded.
inline constexpr Name cloudlySilent{"cloudly-silent"};                           // (project) 1001, readiness
inline constexpr Name nodeSilent{"node-silent"};                                 // (project) 1001, listener WebSocket
inline constexpr Name nodeSuperseded{"node-superseded"};                         // (project) 1000, listener WebSocket

// --- Registering this relay / certificate, answered by Cloudly (project) --------------------------
inline constexpr Name relayEndpointUnpublishable{"relay-endpoint-unpublishable"}; // (project) RR-11
inline constexpr Name relayCertificateUnavailable{"relay-certificate-unavailable"}; // (project) LO-02

// --- Cluster ingress (project) --------------------------------------------------------------------
inline constexpr Name ingressRequestTimeout{"ingress-request-timeout"};         // (project)
inline constexpr Name ingressConnectionLost{"ingress-connection-lost"};         // (project)

// --- Managed VPN hub (project) --------------------------------------------------------------------
inline constexpr Name vpnHubNotConfigured{"vpn-hub-not-configured"};            // (project)

// --- Corestore, bindings, backup, closures --------------------------------------------------------
inline constexpr Name corestoreRefused{"corestore-refused"};                    // (project) Corestore 4xx
inline constexpr Name bindingNotPlaced{"binding-not-placed"};                   // (project) status reason
inline constexpr Name legacyAdoptionPending{"legacy-adoption-pending"};         // Corestore reason -> provisioning
inline constexpr Name legacyAdoptionConflict{"legacy-adoption-conflict"};       // Corestore reason -> failed
inline constexpr Name legacyAdoptionMismatch{"legacy-adoption-mismatch"};       // Corestore reason -> failed
inline constexpr Name corestoreBindingRefused{"corestore-binding-refused"};     // log prefix (CS-27)
inline constexpr Name corestoreBindingFailed{"corestore-binding-failed"};       // log prefix (CS-27)
inline constexpr Name corestoreBindingFailureCleared{"corestore-binding-failure-cleared"}; // log prefix (CS-29)
inline constexpr Name restoreStepFailed{"restore-step-failed"};                 // (project) CS-82
inline constexpr Name restoreInProgress{"restore-in-progress"};                 // (project) §13.2, D-95
inline constexpr Name closureAbsent{"closure-absent"};                          // (project) CS-76
inline constexpr Name closureTransferStalled{"closure-transfer-stalled"};       // (project) CS-70/71
inline constexpr Name closureDigestMismatch{"closure-digest-mismatch"};         // (project)
inline constexpr Name closureStreamUnknown{"closure-stream-unknown"};           // (project)
inline constexpr Name closureRefused{"closure-refused"};                        // (project) answered by Cloudly

// --- Cloudly's codes on the secret/publication calls (read, not authored) -------------------------
inline constexpr Name cloudlyInvalidRequest{"INVALID_REQUEST"};
inline constexpr Name cloudlyForbidden{"FORBIDDEN"};
inline constexpr Name cloudlyNotFound{"NOT_FOUND"};
inline constexpr Name cloudlyGrantNotActive{"GRANT_NOT_ACTIVE"};
inline constexpr Name cloudlyRecipientNotActive{"RECIPIENT_NOT_ACTIVE"};
inline constexpr Name cloudlyRecipientKeyIdTaken{"RECIPIENT_KEY_ID_TAKEN"};
inline constexpr Name cloudlyProofRejected{"PROOF_REJECTED"};
inline constexpr Name cloudlyChallengeExpired{"CHALLENGE_EXPIRED"};
inline constexpr Name cloudlyReplayConflict{"REPLAY_CONFLICT"};
inline constexpr Name cloudlyInternalError{"INTERNAL_ERROR"};

// --- Credential publication (docs/contract.md §12.4; project names) --------------------------------
inline constexpr Name publicationAnswerInvalid{"publication-answer-invalid"};     // (project) an answer fails its reader
inline constexpr Name publicationUnbound{"publication-unbound"};                  // (project) CS-46: no cluster/organization
inline constexpr Name publicationMaterialUnusable{"publication-material-unusable"}; // (project) CS-46
inline constexpr Name publicationForgotten{"publication-forgotten"};              // (project) forget() during an attempt
inline constexpr Name publicationReplayConflict{"corestore-publication-replay-conflict"}; // log prefix (CS-43)
inline constexpr Name publicationReceiptRefused{"corestore-publication-receipt-refused"}; // log prefix (CS-44, CS-45)

// --- Isolated restore (project) -------------------------------------------------------------------
inline constexpr Name restoreControlInvalid{"restore-control-invalid"};         // (project) IR-04..06
inline constexpr Name restoreProgressInvalid{"restore-progress-invalid"};       // (project) IR-16/17

// --- Listener HTTP surface (project) --------------------------------------------------------------
inline constexpr Name registryHeadersTooLarge{"registry-headers-too-large"};    // (project) IP-18/19

} // namespace coreflow::contract::refusal
