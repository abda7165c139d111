#pragma once
// Coreflow: the composition root. It owns every part of the relay and starts them in the order
// docs/contract.md §19.3 states (rules ST-02..ST-05, UC-08/09):
//   configuration (read by main) -> status socket -> Cloudly session -> cluster config ->
//   listener certificate -> listener -> handlers -> "the relay is open for Cloudly dispatch".
// A failure in any step rolls the started parts back in reverse order and ends in startFailed(reason)
// (main prints the reason on stderr and exits 1). stop() may come at any time, also during the start;
// it tears down in reverse order and ends in stopped(ok).
//
// Without a relay block in the cluster config the relay logs that the cluster's nodes target Cloudly
// directly and opens no listener (LO-08/09).
#include "service/core/methodtable.h"
#include "service/app/relayconfiguration.h"
#include "service/core/refusallogbound.h"
#include "service/core/relaycounters.h"
#include "shared/contract/timing.h"
#include "shared/contract/types.h"
#include "shared/status/relaystatus.h"
#include "shared/util/clock.h"
#include "service/vpn/noisekeypair.h"

#include <QObject>
#include <functional>
#include <memory>
#include <optional>

namespace coreflow {

class CloudlyConnector;
class ReadinessBoard;
class RelayRegistration;
class ForwarderCourier;
class LeaseEscrow;
class ReregistrationWave;
class ClusterIngress;
class NamedRefusals;
class RelayListener;
class RegistryProxy;
class SessionForwarder;
class StatusServer;
class ListenerHttpHandler;
class CorestoreCredential;
class CorestoreClient;
class CorestoreInventory;
class IsolatedRestoreCarrier;
class ClusterBackup;
class ClosureTransfer;
class ClosureStreams;
namespace vpn {
class VpnHub;
}
class BindingPublication;
class BindingReconciler;
class CloudlyBindingCalls;
class CorestoreBindingCalls;
class CredentialPublisher;

struct Readiness {
    bool ready = false;
    QList<status::ReadinessRefusal> refusals;
};

class Coreflow : public QObject {
    Q_OBJECT
public:
    Coreflow(RelayConfiguration configuration, Clock &clock, contract::RelayTiming timing = {}, QObject *parent = nullptr);
    ~Coreflow() override;

    void start();
    void stop();

    // docs/contract.md §2: { ready, refusals }.
    Readiness checkReadiness() const;
    status::RelayStatus statusSnapshot() const;

    bool isOpen() const { return m_open; }
    quint16 listenerPort() const;
    CloudlyConnector *cloudly() const { return m_cloudly.get(); }
    SessionForwarder *forwarder() const { return m_forwarder.get(); }
    // The listener once started (nullptr before, and in a relay without a relay block).
    RelayListener *listener() const { return m_listener.get(); }
    LeaseEscrow *escrow() const { return m_escrow.get(); }
    ReregistrationWave *reregistrationWave() const { return m_wave.get(); }
    ClusterIngress *clusterIngress() const { return m_ingress.get(); }
    StatusServer *statusServer() const { return m_statusServer.get(); }
    RelayRegistration *registration() const { return m_registration.get(); }
    ReadinessBoard *readiness() const { return m_readiness.get(); }
    CorestoreCredential *corestoreCredential() const { return m_corestoreCredential.get(); }
    CorestoreClient *corestore() const { return m_corestore.get(); }
    // The closure streams: the ClosureTransfer the backup lane calls (§13.4).
    ClosureStreams *closures() const { return m_closures.get(); }
    // The managed VPN hub (docs/contract.md §11): built with the listener on a relay configured with
    // both VPN variables; nullptr otherwise.
    vpn::VpnHub *vpnHub() const { return m_vpnHub.get(); }
    // Where the hub's static Noise pair comes from (before start; docs/contract.md §11.4): unset, a
    // fresh pair per process. Tests give a known pair so key canaries can look for its private half.
    void setVpnHubStaticKeys(std::function<vpn::NoiseKeyPair()> source) { m_vpnStaticKeys = std::move(source); }
    // The bindings lane (docs/contract.md §12.2..§12.5).
    BindingReconciler *bindings() const { return m_bindings.get(); }
    // The publication seam the bindings lane hands material to (§12.4): the CredentialPublisher unless
    // a test gives its double here (before start; the caller keeps it alive).
    void setBindingPublication(BindingPublication *publication);
    // Credential publication (§12.4), the BindingPublication reconciliation calls.
    CredentialPublisher *credentialPublisher() const { return m_credentialPublisher.get(); }
    const std::optional<contract::ClusterConfig> &clusterConfig() const { return m_clusterConfig; }
    MethodTable &cloudlyMethods() { return m_cloudlyMethods; }
    MethodTable &nodeMethods() { return m_nodeMethods; }
    // The /v2/ handler of the listener (set before start).
    void setListenerHttpHandler(ListenerHttpHandler *handler) { m_httpHandler = handler; }
    // The database closure streams the backup lane uses (docs/contract.md §13.4; set before start, not
    // owned); nullptr: the relay's own ClosureStreams (the default). Tests give a scripted one.
    void setClosureTransfer(ClosureTransfer *closures);
    ClusterBackup *clusterBackup() const { return m_clusterBackup.get(); }

Q_SIGNALS:
    void started();
    void startFailed(const QString &reason);
    void stopped(bool ok);
    void statusChanged();

private:
    enum class Step { Idle, StatusSocket, CloudlySession, ClusterConfig, Certificate, Listener, Handlers, Open, Stopping, Stopped, Failed };

    void startStatusSocket();
    void startCloudlySession();
    void readClusterConfig();
    void obtainCertificate();
    void startListener(const class RelayCertificate &certificate);
    void attachHandlers();
    void open();
    void fail(const QString &reason);
    void teardown(std::function<void(bool)> done);
    void notifyStatus();
    void servePushClusterConfig(const contract::Frame &frame, MethodTable::Reply reply);
    void rereadClusterNodes();
    void servedAcceptance();
    void noteRelayBlock(const std::optional<contract::ClusterRelayBlock> &read);
    void publishEvent(const QString &kind, const QString &line);
    void startVpnHub(const class RelayCertificate &certificate);
    void serveApplyClusterVpnNetwork(const contract::Frame &frame, MethodTable::Reply reply);
    void pullVpnNetwork();

    RelayConfiguration m_config;
    Clock &m_clock;
    contract::RelayTiming m_timing;
    qint64 m_startedAtMs = 0;

    MethodTable m_cloudlyMethods{QStringLiteral("the Cloudly session")};
    MethodTable m_nodeMethods{QStringLiteral("the relay listener")};
    RelayCounters m_counters{&m_clock};
    // The one bound on log lines peers cause with refused input (docs/contract.md §3.1, D-70).
    RefusalLogBound m_refusalLogBound{m_clock};

    std::unique_ptr<StatusServer> m_statusServer;
    std::unique_ptr<ReadinessBoard> m_readiness;
    std::unique_ptr<CloudlyConnector> m_cloudly;
    std::unique_ptr<RelayRegistration> m_registration;
    std::unique_ptr<SessionForwarder> m_forwarder;
    std::unique_ptr<ForwarderCourier> m_escrowCourier;
    std::unique_ptr<LeaseEscrow> m_escrow;
    std::unique_ptr<ReregistrationWave> m_wave;
    std::unique_ptr<ClusterIngress> m_ingress;
    std::unique_ptr<NamedRefusals> m_namedRefusals;
    std::unique_ptr<RegistryProxy> m_registryProxy;
    std::unique_ptr<RelayListener> m_listener;
    std::unique_ptr<CorestoreCredential> m_corestoreCredential;
    std::unique_ptr<CorestoreClient> m_corestore;
    std::unique_ptr<CorestoreInventory> m_corestoreInventory;
    std::unique_ptr<IsolatedRestoreCarrier> m_isolatedRestore;
    std::unique_ptr<ClosureStreams> m_closures;
    std::unique_ptr<vpn::VpnHub> m_vpnHub;
    std::function<vpn::NoiseKeyPair()> m_vpnStaticKeys;
    std::unique_ptr<ClusterBackup> m_clusterBackup;
    std::unique_ptr<CloudlyBindingCalls> m_bindingCloudly;
    std::unique_ptr<CorestoreBindingCalls> m_bindingCorestore;
    BindingPublication *m_bindingPublication = nullptr;
    std::unique_ptr<BindingReconciler> m_bindings;
    std::unique_ptr<CredentialPublisher> m_credentialPublisher;
    std::unique_ptr<ClockTimer> m_stopDeadline;
    std::unique_ptr<ClockTimer> m_stopDrain; // the stop's drain bound (stopDrainMs, §19.3)
    ListenerHttpHandler *m_httpHandler = nullptr;

    std::optional<contract::ClusterConfig> m_clusterConfig;
    Step m_step = Step::Idle;
    bool m_open = false;
    bool m_handlersAttached = false;
    QString m_listenerNote;
    QString m_loggedRelayBlock; // the relay block difference logged last ("" while none stands)
    QString m_certificateSubject;     // the relay domain the listener certificate was checked for
    qint64 m_certificateNotAfterMs = 0;
};

} // namespace coreflow
