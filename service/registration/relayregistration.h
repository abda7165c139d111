#pragma once
// RelayRegistration: telling Cloudly which relay this is and where it listens (docs/contract.md §6.6, §6.6.1;
// rules RR-01..RR-33, PV-14..PV-18, PV-22/23).
//
// On every registration of the relay's own Cloudly session (a reconnect and an identity renewal alike)
// a relay with a listener sends registerClusterRelay { relay: { version, nodeId, listenAddress,
// listenPort }, registrationSequence, offer }. registrationSequence counts sends within the process
// from 0; one send is in flight at a time (a trigger during a send queues exactly one more).
//
// Answers:
//  - an acceptance that holds: the first one pins the credential (logged once, id and generation only),
//    later ones must name the pinned credential and a strictly higher generation of the same record;
//    the registration hop is cleared and accepted() is emitted;
//  - protocol-offer-refused or an unservable offer: offer disagreement on hop "registration";
//    an answer that does not hold: "answer not the contract's" on that hop; both re-offered every
//    refusedOfferRetryIntervalMs (300000 ms);
//  - the six relay-* refusals are logged by name (relay-node-unknown with the enrollment step) and
//    reported with refusedByName(); none drops a node;
//  - relay-credential-generation-stale, or an acceptance naming another credential than the pinned one,
//    parks the relay for the rest of the process (parked() is emitted first, so custody ends before
//    anything else; then no registration, no identity refresh, no re-offer; the line is logged once
//    and stands as the readiness refusal of hop "registration");
//  - a transport failure is logged by class and custody is kept; the next renewal or reconnect
//    registers again.
#include "service/core/readinessboard.h"
#include "service/cloudly/cloudlyconnector.h"
#include "service/registration/registrationacceptance.h"
#include "shared/contract/timing.h"
#include "shared/util/clock.h"

#include <QObject>
#include <optional>

namespace coreflow {

// The value-free endpoint facts a registration reports, verbatim as bound (RR-10).
struct RelayEndpoint {
    QString version;        // the build
    QString nodeId;         // COREFLOW_NODE_ID
    QString listenAddress;  // COREFLOW_RELAY_BIND_HOSTNAME as bound
    quint16 listenPort = 0; // the bound port
    QString servedOrigin;   // the relay block's origin this process serves (for RR-20)
    // relay.vpnHub (docs/contract.md §6.6, RR-12..14, D-04): set on a relay configured with a VPN hub,
    // from the first registration; absent otherwise (the key is then not sent at all, RR-13).
    struct VpnHub {
        QString publicKey; // base64 of the hub's 32-byte Noise static public key
        QString address;   // COREFLOW_VPN_BIND_HOSTNAME
        quint16 quicPort = 0;
    };
    std::optional<VpnHub> vpnHub;
};

class RelayRegistration : public QObject {
    Q_OBJECT
public:
    RelayRegistration(CloudlyConnector &cloudly, ReadinessBoard &readiness, Clock &clock,
                      const contract::RelayTiming &timing, QObject *parent = nullptr);

    // Starts registering (called when the relay opens for dispatch): now, if the session is
    // dispatchable, and on every later registration of the session.
    void start(const RelayEndpoint &endpoint);
    void stop();

    bool isParked() const { return m_parked; }
    bool isInFlight() const { return m_inFlight; }
    qint64 nextSequence() const { return m_sequence; }
    std::optional<RecordReference> pinnedCredential() const { return m_credential; }
    std::optional<RecordReference> acceptedRecord() const { return m_record; }
    // When the refused offer is offered again (clock ms), 0 when none is scheduled.
    qint64 retryDueMs() const;
    // The last registerClusterRelay for the status model (docs/contract.md §18.1 registration): its
    // registrationSequence (-1 before the first), its outcome ("in-flight" while unanswered,
    // "accepted", the refusal name Cloudly answered, "answer-not-contract", "offer-not-servable", or
    // the transport refusal's name) and when (clock ms).
    qint64 lastSequence() const { return m_lastSequence; }
    const QString &lastOutcome() const { return m_lastOutcome; }
    qint64 lastOutcomeAtMs() const { return m_lastOutcomeAtMs; }

    // Exact names of the refusals that state Cloudly does not dispatch to this relay
    // (data.clusterRelayUndispatchedRefusals): they end escrow custody (ES-33).
    static bool statesThisRelayIsNotDispatchedTo(const QString &refusalName);

Q_SIGNALS:
    void accepted();
    void refusedByName(const QString &refusalName);
    void parked(const QString &line);

private:
    void trigger();
    void send();
    void noteOutcome(const QString &outcome);
    void onAnswer(const CloudlyConnector::CallResult &result);
    void refuseAnswer(const QString &line);
    void park(const QString &line);
    void done();

    CloudlyConnector &m_cloudly;
    ReadinessBoard &m_readiness;
    Clock &m_clock;
    qint64 m_lastSequence = -1;
    QString m_lastOutcome;
    qint64 m_lastOutcomeAtMs = 0;
    contract::RelayTiming m_timing;
    std::unique_ptr<ClockTimer> m_retryTimer;
    RelayEndpoint m_endpoint;
    bool m_started = false;
    bool m_parked = false;
    bool m_inFlight = false;
    bool m_again = false;
    qint64 m_sequence = 0;
    std::optional<RecordReference> m_credential;
    std::optional<RecordReference> m_record;
};

} // namespace coreflow
