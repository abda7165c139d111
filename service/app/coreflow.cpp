#include "service/app/coreflow.h"
#include "shared/contract/secretstringtake.h"

#include "service/app/clusterconfigpush.h"
#include "service/bindings/bindingreconciler.h"
#include "service/bindings/cloudlybindingcalls.h"
#include "service/bindings/corestorebindingcalls.h"
#include "service/corestore/corestoreclient.h"
#include "service/corestore/corestorecredential.h"
#include "service/corestore/corestoreinventory.h"
#include "service/isolatedrestore/isolatedrestorecarrier.h"
#include "service/backup/clusterbackup.h"
#include "service/closures/closurestreams.h"
#include "service/bindings/credentialpublisher.h"

#include "service/core/epolleventdispatcher.h"
#include "service/core/logging.h"
#include "service/core/readinessboard.h"
#include "service/registration/relayregistration.h"
#include "service/cloudly/cloudlyconnector.h"
#include "shared/contract/exactkeyreader.h"
#include "shared/contract/methods.h"
#include "shared/contract/offers.h"
#include "shared/contract/refusalnames.h"
#include "service/forwarding/forwardercourier.h"
#include "service/escrow/leaseescrow.h"
#include "service/forwarding/reregistrationwave.h"
#include "service/forwarding/sessionforwarder.h"
#include "service/namedrefusals/namedrefusals.h"
#include "service/ingress/clusteringress.h"
#include "service/listener/relaycertificate.h"
#include "service/listener/relaylistener.h"
#include "service/registry/registryproxy.h"
#include "service/statussocket/statusserver.h"
#include "service/vpn/clustervpnnetwork.h"
#include "service/vpn/vpnhub.h"
#include "service/vpn/vpnqueuebudget.h"

#include <QAbstractEventDispatcher>
#include <QDateTime>
#include <QJsonDocument>
#include <QTimeZone>
#include <utility>

namespace coreflow {

using namespace contract;

Coreflow::Coreflow(RelayConfiguration configuration, Clock &clock, RelayTiming timing, QObject *parent)
    : QObject(parent), m_config(std::move(configuration)), m_clock(clock), m_timing(timing)
{
    m_startedAtMs = m_clock.nowMs();
    m_readiness = std::make_unique<ReadinessBoard>();
    m_cloudlyMethods.setUnservedRefusal(Refusal{QStringLiteral("relay-starting"),
                                                QStringLiteral("the relay is starting; it opens for dispatch once its listener is up")});
    m_cloudly = std::make_unique<CloudlyConnector>(m_config.cloudlyUrl, std::exchange(m_config.bearer, Secret()), m_config.extraCaCertificates,
                                                   m_cloudlyMethods, m_clock, m_timing);
    m_registration = std::make_unique<RelayRegistration>(*m_cloudly, *m_readiness, m_clock, m_timing);
    // The Corestore lane (docs/contract.md §12, §15): endpoints from the cluster document, the control
    // credential enrolled on the first Corestore-bound call, the two inventories on the Cloudly table.
    m_corestoreCredential = std::make_unique<CorestoreCredential>(*m_cloudly, m_clock, m_timing);
    m_corestore = std::make_unique<CorestoreClient>(*m_corestoreCredential, m_config.extraCaCertificates, m_clock);
    m_corestoreInventory = std::make_unique<CorestoreInventory>(*m_corestore, m_cloudlyMethods, m_clock);
    // Isolated restore (docs/contract.md §14): the five controls carried through the same client; the
    // listener refuses them from construction on (they come from Cloudly's session only).
    m_isolatedRestore = std::make_unique<IsolatedRestoreCarrier>(
        *m_corestore, m_cloudlyMethods, m_nodeMethods,
        [credential = m_corestoreCredential.get()](QByteArrayView bytes) { return credential->matchesToken(bytes); });
    m_isolatedRestore->attachListenerRefusals();
    // Database closures (docs/contract.md §13.4-§13.6) on the Cloudly session, through the Corestore client.
    m_closures = std::make_unique<ClosureStreams>(*m_cloudly, *m_corestore, m_cloudlyMethods, m_clock, m_timing.cloudlyCallTimeoutMs);
    connect(m_closures.get(), &ClosureStreams::statusChanged, this, &Coreflow::notifyStatus);
    // Backup, restore and pruning per node (§13.1–§13.3) on the same client, the replicated closure
    // through the closure streams; the restore's credential precondition (CS-80) asks the credential
    // itself, which is the root's to hand out (D-81).
    setClosureTransfer(nullptr);
    // Credential publication (§12.4): the BindingPublication seam reconciliation publishes through.
    m_credentialPublisher = std::make_unique<CredentialPublisher>(*m_cloudly, m_timing);
    connect(m_corestoreCredential.get(), &CorestoreCredential::statusChanged, this, &Coreflow::notifyStatus);
    connect(m_corestore.get(), &CorestoreClient::statusChanged, this, &Coreflow::notifyStatus);
    connect(m_corestoreCredential.get(), &CorestoreCredential::eventLine, this,
            [this](const QString &line) { publishEvent(QStringLiteral("corestore"), line); });
    // §12.1: the recipient state is read after every registration of the relay's own session.
    connect(m_cloudly.get(), &CloudlyConnector::dispatchable, m_corestoreCredential.get(),
            [this](qint64, bool) { m_corestoreCredential->recipientStateChanged(); });
    // §15 "Endpoint": endpoints are adopted again after every accepted registration; the bindings are
    // then reconciled against that config and the desired state read right after it (§6.9, WD-08).
    connect(m_registration.get(), &RelayRegistration::accepted, this, &Coreflow::rereadClusterNodes);
    // §6.8: the VPN network is pulled after every accepted registration (VH-15).
    connect(m_registration.get(), &RelayRegistration::accepted, this, &Coreflow::pullVpnNetwork);
    m_bindingCloudly = std::make_unique<CloudlyBindingCalls>(*m_cloudly, m_timing.cloudlyCallTimeoutMs);
    m_bindingCorestore = std::make_unique<CorestoreBindingCalls>(*m_corestore);
    setBindingPublication(m_credentialPublisher.get());
    // Negotiation on the Cloudly hop only changes what the relay says about itself (docs/contract.md §2).
    // A cluster peer's refused offer is that peer's: it is answered and counted (refusals by name),
    // never a readiness refusal (§2.2, D-62), so a stranger on the listener cannot flip readiness.
    connect(m_readiness.get(), &ReadinessBoard::changed, this, &Coreflow::notifyStatus);
    connect(m_cloudly.get(), &CloudlyConnector::cloudlyOfferRefused, m_readiness.get(),
            [this](const QString &peer, const QString &own, const QString &line) {
                m_readiness->setOfferDisagreement(QStringLiteral("cloudly"), peer, own, line);
            });
    connect(m_cloudly.get(), &CloudlyConnector::cloudlyAnswerNotContract, m_readiness.get(),
            [this](const QString &line) { m_readiness->setAnswerNotContract(QStringLiteral("cloudly"), line); });
    connect(m_cloudly.get(), &CloudlyConnector::cloudlyOfferServed, m_readiness.get(),
            [this] { m_readiness->clearHop(QStringLiteral("cloudly")); });
    connect(m_cloudly.get(), &CloudlyConnector::cloudlyOfferAgreed, m_readiness.get(),
            [this] { m_readiness->clearOfferDisagreement(QStringLiteral("cloudly")); });
    m_forwarder = std::make_unique<SessionForwarder>(*m_cloudly, m_nodeMethods, m_cloudlyMethods, m_counters, m_clock, m_timing, m_refusalLogBound);
    m_stopDeadline = m_clock.createTimer(this);
    m_stopDrain = m_clock.createTimer(this);
    connect(m_cloudly.get(), &CloudlyConnector::statusChanged, this, &Coreflow::notifyStatus);
    connect(m_forwarder.get(), &SessionForwarder::statusChanged, this, &Coreflow::notifyStatus);
    connect(&m_forwarder->upstream(), &UpstreamForwarder::statusChanged, this, &Coreflow::notifyStatus);
    // Outage continuity and the DNS lease renewal escrow (docs/contract.md §8.4, §9).
    m_escrowCourier = std::make_unique<ForwarderCourier>(m_forwarder->registry(), *m_forwarder);
    m_escrow = std::make_unique<LeaseEscrow>(*m_escrowCourier, m_clock, m_timing, &m_counters);
    m_wave = std::make_unique<ReregistrationWave>(m_clock, m_timing, m_forwarder->registry());
    connect(m_cloudly.get(), &CloudlyConnector::sessionLost, m_escrow.get(), &LeaseEscrow::sessionLost);
    connect(m_cloudly.get(), &CloudlyConnector::sessionLost, m_wave.get(), &ReregistrationWave::sessionLost);
    connect(m_cloudly.get(), &CloudlyConnector::dispatchable, m_escrow.get(), [this](qint64, bool) { m_escrow->sessionDispatchable(); });
    connect(m_cloudly.get(), &CloudlyConnector::dispatchable, m_wave.get(), &ReregistrationWave::carrierDispatchable);
    connect(&m_forwarder->registry(), &NodeRegistry::nodeRegistered, m_escrow.get(), &LeaseEscrow::nodeRegistered);
    connect(&m_forwarder->pushes(), &PushRouter::pushAnswered, m_escrow.get(), &LeaseEscrow::pushAnswered);
    connect(m_escrow.get(), &LeaseEscrow::statusChanged, this, &Coreflow::notifyStatus);
    connect(m_escrow.get(), &LeaseEscrow::eventLine, this, [this](const QString &line) {
        if (m_statusServer)
            m_statusServer->publishEvent(QStringLiteral("escrow"), line);
    });
    connect(m_wave.get(), &ReregistrationWave::started, this, [this](qint64 carrierCount, int members) {
        m_counters.countReregistrationWave();
        if (m_statusServer)
            m_statusServer->publishEvent(QStringLiteral("node"),
                                         QStringLiteral("re-registration wave: %1 nodes asked to register again under carrier %2")
                                             .arg(members)
                                             .arg(carrierCount));
        notifyStatus();
    });
    connect(m_wave.get(), &ReregistrationWave::nodeAsked, this, [this](const QString &nodeId, qint64) {
        if (m_statusServer)
            m_statusServer->publishEvent(QStringLiteral("node"),
                                         QStringLiteral("node %1 asked to re-register: this relay's Cloudly session changed").arg(nodeId));
    });
    // The cluster ingress lane and route table custody (docs/contract.md §10); the retired Swarm and
    // pending-function methods answered by name (docs/contract.md §16).
    m_ingress = std::make_unique<ClusterIngress>(*m_cloudly, *m_forwarder, m_nodeMethods, m_cloudlyMethods, m_counters, m_timing);
    connect(m_ingress.get(), &ClusterIngress::statusChanged, this, &Coreflow::notifyStatus);
    m_namedRefusals = std::make_unique<NamedRefusals>(m_cloudlyMethods, m_counters);
    // Registering this relay (docs/contract.md §6.6): what an acceptance re-reads, what the
    // refusals end, and the park (docs/contract.md §6.6).
    connect(m_registration.get(), &RelayRegistration::accepted, m_ingress.get(), &ClusterIngress::refreshRouteTable);
    // §9.5: the escrow judges the refusal itself (drop for four names, park for the stale generation);
    // refusedByName is emitted before parked, so custody ends before the park line (RR-30), and the
    // park below is then a silent no-op (LeaseEscrow::park is idempotent).
    connect(m_registration.get(), &RelayRegistration::refusedByName, m_escrow.get(),
            [this](const QString &name) { m_escrow->registrationRefused(name); });
    connect(m_registration.get(), &RelayRegistration::parked, m_escrow.get(), [this](const QString &) { m_escrow->park(); });
    // WD-10, WD-11: a lost session, or a registration refused with a name stating Cloudly does not
    // dispatch to this relay, pauses binding reconciliation until the next acceptance.
    connect(m_cloudly.get(), &CloudlyConnector::sessionLost, this, [this] {
        if (m_bindings)
            m_bindings->pause(QStringLiteral("the Cloudly session was lost"));
    });
    connect(m_registration.get(), &RelayRegistration::refusedByName, this, [this](const QString &name) {
        if (m_bindings && refusal::statesThisRelayIsNotDispatchedTo(name))
            m_bindings->pause(QStringLiteral("Cloudly refused registerClusterRelay with %1").arg(name));
    });
    connect(m_registration.get(), &RelayRegistration::parked, this, [this](const QString &line) {
        if (m_statusServer)
            m_statusServer->publishEvent(QStringLiteral("registration"), line);
    });
    // The events an operator follows (docs/contract.md §18 event kinds): nodes joining and leaving,
    // Cloudly back after a loss, registration accepted or refused (the loss and the park are above).
    connect(m_registration.get(), &RelayRegistration::accepted, this,
            [this] { publishEvent(QStringLiteral("registration"), QStringLiteral("registerClusterRelay accepted")); });
    connect(m_registration.get(), &RelayRegistration::refusedByName, this, [this](const QString &name) {
        publishEvent(QStringLiteral("registration"), QStringLiteral("registerClusterRelay refused: %1").arg(name));
    });
    connect(&m_forwarder->registry(), &NodeRegistry::nodeRegistered, this, [this](const contract::SessionBinding &binding) {
        publishEvent(QStringLiteral("node"), QStringLiteral("node %1 joined: registered through this relay").arg(binding.nodeId));
    });
    connect(&m_forwarder->registry(), &NodeRegistry::nodeGone, this, [this](const QString &nodeId) {
        publishEvent(QStringLiteral("node"), QStringLiteral("node %1 left: its connection ended; no longer carried").arg(nodeId));
    });
    connect(m_cloudly.get(), &CloudlyConnector::dispatchable, this, [this](qint64 carrierCount, bool newCarrier) {
        if (newCarrier)
            publishEvent(QStringLiteral("cloudly"), carrierCount > 1
                                                        ? QStringLiteral("Cloudly session back (carrier %1): dispatchable again").arg(carrierCount)
                                                        : QStringLiteral("Cloudly session open (carrier 1)"));
    });
    // The node lane answers the escrow hold by name: custody is Cloudly's to hand over, on its own
    // session only (docs/contract.md §9, ES-04).
    m_nodeMethods.add(QString(method::holdRuntimeNetworkDnsLeaseRenewals), [this](const Frame &frame, const Caller &, MethodTable::Reply reply) {
        m_counters.countRefusal(QString(refusal::escrowCloudlyOnly));
        reply(MethodTable::refusalFor(frame, Refusal{QString(refusal::escrowCloudlyOnly),
                                                     QStringLiteral("DNS lease renewals are handed over by Cloudly on the relay's own session only")}));
    });
}

void Coreflow::setClosureTransfer(ClosureTransfer *closures)
{
    if (m_step != Step::Idle)
        return; // the backup lane is wired once, before start
    ClosureTransfer &used = closures ? *closures : static_cast<ClosureTransfer &>(*m_closures);
    CorestoreCredential *credential = m_corestoreCredential.get();
    m_clusterBackup = std::make_unique<ClusterBackup>(
        *m_corestore,
        [credential](std::function<void(const Refusal *failure)> ready) {
            credential->acquire([ready = std::move(ready)](const Secret *token, quint64, const Refusal &failure) {
                ready(token ? nullptr : &failure);
            });
        },
        used, m_cloudlyMethods, m_clock);
    connect(m_clusterBackup.get(), &ClusterBackup::statusChanged, this, &Coreflow::notifyStatus);
}

Coreflow::~Coreflow()
{
    // Parts are destroyed in reverse order of construction; the forwarder detaches its handlers first.
    m_listener.reset();
    m_registryProxy.reset();
    m_cloudlyMethods.remove(QString(method::applyClusterVpnNetwork));
    m_vpnHub.reset();
    m_cloudlyMethods.remove(QString(method::holdRuntimeNetworkDnsLeaseRenewals));
    m_cloudlyMethods.remove(QString(method::pushClusterConfig));
    m_isolatedRestore.reset();
    m_clusterBackup.reset();
    m_bindings.reset(); // before the publication and the Corestore client it calls
    m_credentialPublisher.reset();
    m_corestoreInventory.reset();
    m_closures.reset();
    m_corestore.reset();
    m_corestoreCredential.reset();
    m_wave.reset();
    m_escrow.reset();
    m_escrowCourier.reset();
    m_namedRefusals.reset();
    m_ingress.reset();
    m_forwarder.reset();
    m_cloudly.reset();
    m_statusServer.reset();
}

void Coreflow::setBindingPublication(BindingPublication *publication)
{
    if (m_step != Step::Idle || !publication)
        return;
    m_bindings.reset();
    m_bindingPublication = publication;
    m_bindings = std::make_unique<BindingReconciler>(*m_bindingCorestore, *m_bindingCloudly, *m_bindingPublication, m_clock);
    connect(m_bindings.get(), &BindingReconciler::statusChanged, this, &Coreflow::notifyStatus);
    connect(m_bindings.get(), &BindingReconciler::eventLine, this, [this](const QString &line) { publishEvent(QStringLiteral("binding"), line); });
}

quint16 Coreflow::listenerPort() const { return m_listener ? m_listener->boundPort() : 0; }

void Coreflow::start()
{
    if (m_step != Step::Idle)
        return;
    // The start line (§19.3) is main()'s, logged before the configuration is read: not repeated here.
    startStatusSocket();
}

void Coreflow::startStatusSocket()
{
    m_step = Step::StatusSocket;
    if (!m_config.statusSocketPath.isEmpty()) {
        StatusServerOptions options;
        options.socketPath = m_config.statusSocketPath.isEmpty() ? StatusServer::defaultSocketPath() : m_config.statusSocketPath;
        options.operatorGroup = m_config.operatorGroup;
        if (m_config.statusMaxQueuedBytes > 0)
            options.maxQueuedBytes = m_config.statusMaxQueuedBytes;
        m_statusServer = std::make_unique<StatusServer>(options, [this] { return statusSnapshot(); }, m_clock);
        QString error;
        if (!m_statusServer->start(&error)) {
            // The status socket is an operator's window, not part of serving the cluster.
            qCWarning(logApp).noquote() << "status socket not available:" << error;
            m_statusServer.reset();
        } else {
            qCInfo(logApp).noquote() << "status socket at" << options.socketPath;
        }
    }
    startCloudlySession();
}

void Coreflow::startCloudlySession()
{
    m_step = Step::CloudlySession;
    connect(m_cloudly.get(), &CloudlyConnector::startRefused, this, [this](const Refusal &refusal) {
        fail(QStringLiteral("Cloudly refused this relay's session: %1").arg(refusal.text()));
    });
    connect(m_cloudly.get(), &CloudlyConnector::dispatchable, this, [this](qint64, bool) {
        if (m_step == Step::CloudlySession)
            readClusterConfig();
    });
    connect(m_cloudly.get(), &CloudlyConnector::sessionLost, this, [this] {
        if (m_step == Step::Open && m_statusServer)
            m_statusServer->publishEvent(QStringLiteral("cloudly"),
                                         m_cloudly->lostToSilence()
                                             ? QStringLiteral("Cloudly session lost: %1 (no frame for %2 ms); reconnecting")
                                                   .arg(QLatin1StringView(refusal::cloudlySilent))
                                                   .arg(m_timing.sessionSilenceDeadlineMs)
                                             : QStringLiteral("Cloudly session lost; reconnecting"));
    });
    m_cloudly->start();
}

void Coreflow::readClusterConfig()
{
    m_step = Step::ClusterConfig;
    m_cloudly->call(QString(method::getClusterConfig), QByteArrayView("{}"), m_timing.cloudlyCallTimeoutMs,
                    [this](const CloudlyConnector::CallResult &r) {
                        if (m_step != Step::ClusterConfig)
                            return;
                        if (!r.delivered)
                            return fail(QStringLiteral("cannot read the cluster config: %1").arg(r.refusal.text()));
                        if (r.answer.hasError())
                            return fail(QStringLiteral("Cloudly refused the cluster config read: %1").arg(r.answer.errorRefusal().text()));
                        auto response = r.answer.responseObject();
                        if (!response)
                            return fail(QStringLiteral("unreadable cluster config: %1").arg(response.refusal().text()));
                        ExactKeyReader reader(response.value(), QStringLiteral("response"));
                        const QJsonObject cluster = reader.requiredObject(QStringLiteral("cluster"));
                        if (auto refusal = reader.finish())
                            return fail(QStringLiteral("unreadable cluster config: %1").arg(refusal->text()));
                        auto config = ClusterConfig::read(cluster, QStringLiteral("response.cluster"));
                        if (!config)
                            return fail(QStringLiteral("invalid cluster config: %1").arg(config.refusal().text()));
                        m_clusterConfig = config.value();
                        m_corestore->adoptNodes(m_clusterConfig->nodes);
                        if (!m_clusterConfig->relay) {
                            m_listenerNote = QStringLiteral("cluster %1 has no relay block: its nodes target Cloudly directly; no listener is served")
                                                 .arg(m_clusterConfig->id);
                            qCInfo(logApp).noquote() << m_listenerNote;
                            return attachHandlers();
                        }
                        QStringList missing;
                        if (m_config.nodeId.isEmpty())
                            missing << QStringLiteral("COREFLOW_NODE_ID");
                        if (m_config.bindHostname.isEmpty())
                            missing << QStringLiteral("COREFLOW_RELAY_BIND_HOSTNAME");
                        if (!missing.isEmpty())
                            return fail(QStringLiteral("configuration-invalid: the cluster has a relay block, so %1 %2 required")
                                            .arg(missing.join(QStringLiteral(", ")),
                                                 missing.size() > 1 ? QStringLiteral("are") : QStringLiteral("is")));
                        // The VPN pair is read beside the listener's variables: both or neither (§19.1, D-20).
                        if (const auto vpn = m_config.vpnHubRefusal())
                            return fail(vpn->text());
                        const ClusterRelayBlock &block = *m_clusterConfig->relay;
                        // Checked only when the origin names a port (§19.3, D-19).
                        if (const auto originPort = block.originPort(); originPort && *originPort != m_config.bindPort)
                            return fail(QString(refusal::listenerOriginPortMismatch)
                                        + QStringLiteral(": the relay origin %1 names port %2 but this relay binds port %3")
                                            .arg(block.origin.toString())
                                            .arg(*originPort)
                                            .arg(m_config.bindPort));
                        obtainCertificate();
                    });
}

void Coreflow::obtainCertificate()
{
    m_step = Step::Certificate;
    const QString domain = m_clusterConfig->relay->domain();
    const QByteArray body = Envelope::compact(QJsonObject{{QStringLiteral("domain"), domain}});
    m_cloudly->call(QString(method::getClusterRelayCertificate), body, m_timing.cloudlyCallTimeoutMs,
                    [this, domain](const CloudlyConnector::CallResult &r) {
                        if (m_step != Step::Certificate)
                            return;
                        if (!r.delivered)
                            return fail(QStringLiteral("cannot obtain the certificate for %1: %2").arg(domain, r.refusal.text()));
                        if (r.answer.hasError())
                            return fail(QStringLiteral("Cloudly refused the certificate for %1: %2").arg(domain, r.answer.errorRefusal().text()));
                        // The key goes from the answer's bytes straight into a Secret and is blanked in a
                        // wiped copy, which alone is read with QJsonDocument (contract §19.4).
                        QByteArray blanked(r.answer.response.data(), r.answer.response.size());
                        std::optional<Secret> key = takeSecretString(blanked, {"certificate", "privateKeyPem"});
                        contract::Frame blankedAnswer;
                        blankedAnswer.response = QByteArrayView(blanked);
                        auto response = blankedAnswer.responseObject();
                        Secret::wipe(blanked);
                        if (!response)
                            return fail(QStringLiteral("unreadable certificate answer for %1: %2").arg(domain, response.refusal().text()));
                        ExactKeyReader reader(response.value(), QStringLiteral("response"));
                        const QJsonObject certificate = reader.requiredObject(QStringLiteral("certificate"));
                        if (auto refusal = reader.finish())
                            return fail(QStringLiteral("unreadable certificate answer for %1: %2").arg(domain, refusal->text()));
                        auto material = RelayCertificateMaterial::read(certificate, QStringLiteral("response.certificate"));
                        if (!material)
                            return fail(QStringLiteral("unreadable certificate for %1: %2").arg(domain, material.refusal().text()));
                        if (key)
                            material.value().privateKeyPem = std::move(*key);
                        auto checked = RelayCertificate::fromMaterial(material.value(), domain, m_clock.nowMs());
                        if (!checked)
                            return fail(checked.refusal().text());
                        qCInfo(logCertificate).noquote() << "listener certificate for" << domain << "accepted; valid until"
                                                         << QDateTime::fromMSecsSinceEpoch(checked->notAfterMs(), Qt::UTC).toString(Qt::ISODate);
                        m_certificateSubject = domain;
                        m_certificateNotAfterMs = checked->notAfterMs();
                        startListener(checked.value());
                    });
}

void Coreflow::startListener(const RelayCertificate &certificate)
{
    m_step = Step::Listener;
    m_listener = std::make_unique<RelayListener>();
    m_listener->setRefusalLog(&m_refusalLogBound);
    m_listener->setClock(m_clock); // the accept-to-decision deadline (contract §3.4)
    // The listener's whole HTTP surface beside the upgrade is the image pull endpoint; the registry is
    // CLOUDLY_URL's origin (contract §17), which RegistryProxy derives from it.
    m_registryProxy = std::make_unique<RegistryProxy>(m_config.cloudlyUrl, m_clusterConfig->relay->origin,
                                                      m_config.extraCaCertificates, m_clock);
    m_listener->setHttpHandler(m_httpHandler ? m_httpHandler : m_registryProxy.get());
    // Silent nodes and ingress connections are dropped as closed ones (docs/contract.md §3.3, D-56).
    m_listener->setSessionKeepalive(SessionKeepalive::create(m_clock, m_timing.sessionPingIntervalMs, m_timing.sessionSilenceDeadlineMs));
    connect(m_listener.get(), &RelayListener::nodeSessionAccepted, m_forwarder.get(), &SessionForwarder::adoptSession);
    if (auto refusal = m_listener->listen(m_config.bindHostname, m_config.bindPort, certificate.serverConfiguration())) {
        m_listener.reset();
        return fail(refusal->text());
    }
    startVpnHub(certificate);
    attachHandlers();
}

void Coreflow::attachHandlers()
{
    m_step = Step::Handlers;
    // The escrow hold is served on the Cloudly-facing table only (ES-04; node lane: escrow-cloudly-only).
    m_cloudlyMethods.add(QString(method::holdRuntimeNetworkDnsLeaseRenewals), [this](const Frame &frame, const Caller &, MethodTable::Reply reply) {
        m_escrow->hold(frame, std::move(reply));
    });
    m_cloudlyMethods.add(QString(method::pushClusterConfig), [this](const Frame &frame, const Caller &, MethodTable::Reply reply) {
        servePushClusterConfig(frame, std::move(reply));
    });
    m_corestoreInventory->attach();
    m_isolatedRestore->attach();
    m_closures->attach();
    m_cloudlyMethods.add(QString(method::applyClusterVpnNetwork), [this](const Frame &frame, const Caller &, MethodTable::Reply reply) {
        serveApplyClusterVpnNetwork(frame, std::move(reply));
    });
    m_clusterBackup->attach();
    if (m_listener) {
        m_forwarder->attachPushHandlers();
        m_ingress->attachCloudlyHandlers();
        m_handlersAttached = true;
    }
    open();
}

void Coreflow::open()
{
    m_step = Step::Open;
    m_open = true;
    m_cloudlyMethods.setUnservedRefusal(std::nullopt);
    qCInfo(logApp) << "the relay is open for Cloudly dispatch";
    // Registering is not a start step: the relay registers once it is open (ST-04), and only when it
    // serves a listener (RR-04).
    if (m_listener) {
        RelayEndpoint endpoint{QStringLiteral(COREFLOW_BUILD_VERSION), m_config.nodeId, m_config.bindHostname,
                               m_listener->boundPort(), m_clusterConfig->relay->origin.toString(), std::nullopt};
        // relay.vpnHub from the first registration (D-04): the key exists since the hub was built.
        if (m_vpnHub)
            endpoint.vpnHub = RelayEndpoint::VpnHub{QString::fromLatin1(m_vpnHub->publicKey().toBase64()),
                                                    m_vpnHub->settings().address.toString(), m_vpnHub->settings().port};
        m_registration->start(endpoint);
    }
    if (m_statusServer)
        m_statusServer->publishEvent(QStringLiteral("lifecycle"), QStringLiteral("the relay is open for Cloudly dispatch"));
    notifyStatus();
    Q_EMIT started();
}

void Coreflow::fail(const QString &reason)
{
    if (m_step == Step::Failed || m_step == Step::Stopping || m_step == Step::Stopped)
        return;
    qCCritical(logApp).noquote() << "start failed:" << reason;
    teardown([this, reason](bool) {
        m_step = Step::Failed;
        Q_EMIT startFailed(reason);
    });
}

void Coreflow::stop()
{
    if (m_step == Step::Stopping || m_step == Step::Stopped || m_step == Step::Failed)
        return;
    qCInfo(logApp) << "stopping";
    teardown([this](bool ok) {
        m_step = Step::Stopped;
        qCInfo(logApp).noquote() << (ok ? "stopped" : "stop did not complete in time");
        Q_EMIT stopped(ok);
    });
}

void Coreflow::teardown(std::function<void(bool)> done)
{
    m_step = Step::Stopping;
    m_open = false;
    auto finished = std::make_shared<bool>(false);
    auto finish = [this, finished, done](bool ok) {
        if (*finished)
            return;
        *finished = true;
        m_stopDeadline->stop();
        m_stopDrain->stop();
        if (m_statusServer)
            m_statusServer->stop();
        done(ok);
    };
    m_stopDeadline->disconnect(this);
    connect(m_stopDeadline.get(), &ClockTimer::timeout, this, [finish] { finish(false); });
    m_stopDeadline->start(m_timing.stopDeadlineMs);
    // Reverse order: registration, handlers, listener (and the sessions it handed out), Cloudly session,
    // status socket.
    m_registration->stop();
    if (m_handlersAttached) {
        m_forwarder->detachPushHandlers();
        m_ingress->detachCloudlyHandlers();
        m_handlersAttached = false;
    }
    // The escrow stops (timer cleared, runs dropped) before the forwarder empties its registry (ES-27).
    m_cloudlyMethods.remove(QString(method::holdRuntimeNetworkDnsLeaseRenewals));
    m_cloudlyMethods.remove(QString(method::pushClusterConfig));
    m_cloudlyMethods.remove(QString(method::applyClusterVpnNetwork));
    if (m_vpnHub)
        m_vpnHub->stop();
    m_corestoreInventory->detach();
    m_isolatedRestore->detach();
    m_clusterBackup->detach();
    // Closures end before the Corestore pools they run on close (CS-73); a backup waiting for its
    // closure then answers its snapshots (CS-78).
    m_closures->detach();
    m_closures->stop();
    if (m_bindings)
        m_bindings->stop();
    m_corestore->stop();
    m_escrow->stop();
    m_wave->stop();
    if (m_listener)
        m_listener->close();
    // The drain (§19.3): node sessions stay open while the requests in flight on them end (each by its
    // answer or its own bound), at most stopDrainMs; then they close, and the Cloudly session drains the
    // relay's own calls and closes.
    auto closed = std::make_shared<bool>(false);
    auto closeNodesAndSession = [this, finished, closed, finish] {
        if (*finished || *closed)
            return;
        *closed = true;
        m_stopDrain->stop();
        m_forwarder->closeAll(QStringLiteral("relay stopping"));
        m_cloudly->stop([finish] { finish(true); });
    };
    const int inFlight = m_forwarder->workInFlight();
    if (inFlight == 0)
        return closeNodesAndSession();
    qCInfo(logApp).noquote() << "stopping: draining" << inFlight << "node request(s) in flight (at most" << m_timing.stopDrainMs << "ms)";
    m_stopDrain->disconnect(this);
    connect(m_stopDrain.get(), &ClockTimer::timeout, this, [this, closeNodesAndSession] {
        qCWarning(logApp).noquote() << "stopping: drain bound of" << m_timing.stopDrainMs << "ms reached with" << m_forwarder->workInFlight()
                                    << "node request(s) in flight; closing the node sessions";
        closeNodesAndSession();
    });
    m_stopDrain->start(m_timing.stopDrainMs);
    m_forwarder->drain(closeNodesAndSession);
}

void Coreflow::publishEvent(const QString &kind, const QString &line)
{
    if (m_statusServer)
        m_statusServer->publishEvent(kind, line);
}

void Coreflow::startVpnHub(const RelayCertificate &certificate)
{
    if (!m_config.vpnBindHostname || !m_config.vpnQuicPort)
        return;
    vpn::VpnHub::Settings settings;
    settings.address = QHostAddress(*m_config.vpnBindHostname);
    settings.port = m_config.vpnQuicPort->toUShort();
    settings.limits = vpn::VpnQueueBudget::limitsFor(vpn::VpnQueueBudget::memoryLimitBytes());
    settings.staticKeys = m_vpnStaticKeys;
    m_vpnHub = std::make_unique<vpn::VpnHub>(settings, m_clock);
    m_vpnHub->setRefusalLog(&m_refusalLogBound);
    if (auto problem = m_vpnHub->setCredentials(certificate.chainPem(), certificate.privateKeyPem()))
        qCWarning(logApp).noquote() << "VPN hub:" << *problem;
    connect(m_vpnHub.get(), &vpn::VpnHub::statusChanged, this, &Coreflow::notifyStatus);
    connect(m_vpnHub.get(), &vpn::VpnHub::eventLine, this, [this](const QString &line) { publishEvent(QStringLiteral("vpn"), line); });
    qCInfo(logApp).noquote() << QStringLiteral("VPN hub configured for UDP %1:%2 (at most %3 members); it binds on the first admitted network")
                                    .arg(settings.address.toString())
                                    .arg(settings.port)
                                    .arg(settings.limits.maxConnections);
}

void Coreflow::serveApplyClusterVpnNetwork(const Frame &frame, MethodTable::Reply reply)
{
    // docs/contract.md §11.2.
    auto request = frame.requestObject();
    if (!request)
        return reply(MethodTable::refusalFor(frame, request.refusal()));
    if (!m_vpnHub) {
        const Refusal refusal{QString(refusal::vpnHubNotConfigured),
                              QStringLiteral("this relay has no COREFLOW_VPN_BIND_HOSTNAME and COREFLOW_VPN_QUIC_PORT")};
        m_counters.countRefusal(refusal.name);
        return reply(MethodTable::refusalFor(frame, refusal));
    }
    auto carried = vpn::ClusterVpnNetwork::readCarrier(request.value(), QStringLiteral("request"), false);
    if (!carried || !carried.value()) {
        const Refusal refusal = carried ? Refusal{QString(refusal::requestInvalid), QStringLiteral("field request.network is required")} : carried.refusal();
        m_counters.countRefusal(refusal.name);
        return reply(MethodTable::refusalFor(frame, refusal));
    }
    auto answer = m_vpnHub->admit(*carried.value(), QStringLiteral("request.network"));
    if (!answer) {
        qCWarning(logApp).noquote() << "applyClusterVpnNetwork refused:" << answer.refusal().text();
        m_counters.countRefusal(answer.refusal().name);
        return reply(MethodTable::refusalFor(frame, answer.refusal()));
    }
    reply(MethodTable::responseFor(frame, Envelope::compact(answer->toJson())));
}

void Coreflow::pullVpnNetwork()
{
    if (!m_vpnHub)
        return;
    m_cloudly->call(QString(method::getClusterVpnNetwork), QByteArrayView("{}"), m_timing.cloudlyCallTimeoutMs,
                    [this](const CloudlyConnector::CallResult &r) {
                        if (m_step != Step::Open || !m_vpnHub)
                            return;
                        // D-26: a pulled network has no caller; its outcome is logged and shown in status.
                        QString problem;
                        if (!r.delivered)
                            problem = r.refusal.text();
                        else if (r.answer.hasError())
                            problem = r.answer.errorRefusal().text();
                        if (problem.isEmpty()) {
                            auto response = r.answer.responseObject();
                            if (!response) {
                                problem = response.refusal().text();
                            } else if (auto carried = vpn::ClusterVpnNetwork::readCarrier(response.value(), QStringLiteral("response"), true); !carried) {
                                problem = carried.refusal().text();
                            } else if (!carried.value()) {
                                qCInfo(logApp) << "getClusterVpnNetwork: the cluster has no VPN network yet; nothing is bound";
                                return;
                            } else if (auto answer = m_vpnHub->admit(*carried.value(), QStringLiteral("response.network")); !answer) {
                                problem = answer.refusal().text();
                            } else {
                                qCInfo(logApp).noquote() << "getClusterVpnNetwork:" << answer->state
                                                         << (answer->reason.isEmpty() ? QString() : answer->reason);
                                return;
                            }
                        }
                        qCWarning(logApp).noquote() << "getClusterVpnNetwork: the pulled network was not applied:" << problem;
                    });
}

void Coreflow::servePushClusterConfig(const Frame &frame, MethodTable::Reply reply)
{
    // docs/contract.md §7.1: Corestore endpoints adopted (CS-03, CS-05); a relay-block difference is
    // logged, never adopted (LO-11).
    // The grants' authorities are lifted out of the request's text into Secrets before it is parsed
    // (§12.2: Secret-like), so the parsed request holds blanked strings only.
    QByteArray blanked(frame.request.data(), frame.request.size());
    const QList<Secret> authorities = PlatformDesiredState::takeAuthorities(blanked);
    Frame blankedFrame = frame;
    blankedFrame.request = QByteArrayView(blanked);
    auto request = blankedFrame.requestObject();
    Secret::wipe(blanked);
    if (!request)
        return reply(MethodTable::refusalFor(frame, request.refusal()));
    auto push = ClusterConfigPush::read(request.value(), authorities);
    if (!push) {
        m_counters.countRefusal(push.refusal().name);
        return reply(MethodTable::refusalFor(frame, push.refusal()));
    }
    const ClusterConfig &cluster = push->cluster;
    const std::optional<ClusterRelayBlock> held = m_clusterConfig ? m_clusterConfig->relay : std::nullopt;
    const QString relayBlock = ClusterConfigPush::relayBlockWord(held, cluster.relay);
    noteRelayBlock(cluster.relay);
    if (m_clusterConfig)
        m_clusterConfig->nodes = cluster.nodes;
    const int endpoints = m_corestore->adoptNodes(cluster.nodes);
    // WD-09: every push reconciles while the acceptance stands (the pushed state, or the held one).
    if (m_bindings)
        m_bindings->adoptPushed(std::move(push.value().desiredState));
    reply(MethodTable::responseFor(frame, ClusterConfigPush::answer(int(cluster.nodes.size()), endpoints, push->grants, relayBlock,
                                                                    m_bindings ? m_bindings->isReconciling()
                                                                               : m_registration->acceptedRecord().has_value())));
}

void Coreflow::noteRelayBlock(const std::optional<ClusterRelayBlock> &read)
{
    // docs/contract.md §6.4: a changed or removed relay block is logged once and never adopted
    // (LO-11, LO-12).
    const std::optional<ClusterRelayBlock> held = m_clusterConfig ? m_clusterConfig->relay : std::nullopt;
    if (ClusterConfigPush::relayBlockWord(held, read) == QStringLiteral("unchanged")) {
        m_loggedRelayBlock.clear();
        return;
    }
    const QString now = read ? read->origin.toString() : QStringLiteral("none");
    if (now == m_loggedRelayBlock)
        return;
    m_loggedRelayBlock = now;
    qCWarning(logApp).noquote() << QStringLiteral("relay block changed (%1 -> %2); not adopted until the relay restarts")
                                       .arg(held ? held->origin.toString() : QStringLiteral("none"), now);
}

void Coreflow::rereadClusterNodes()
{
    m_cloudly->call(QString(method::getClusterConfig), QByteArrayView("{}"), m_timing.cloudlyCallTimeoutMs,
                    [this](const CloudlyConnector::CallResult &r) {
                        if (m_step != Step::Open)
                            return;
                        QString problem;
                        if (!r.delivered)
                            problem = r.refusal.text();
                        else if (r.answer.hasError())
                            problem = r.answer.errorRefusal().text();
                        std::optional<ClusterConfig> config;
                        if (problem.isEmpty()) {
                            auto response = r.answer.responseObject();
                            if (!response) {
                                problem = response.refusal().text();
                            } else {
                                ExactKeyReader reader(response.value(), QStringLiteral("response"));
                                const QJsonObject cluster = reader.requiredObject(QStringLiteral("cluster"));
                                if (auto refusal = reader.finish()) {
                                    problem = refusal->text();
                                } else if (auto read = ClusterConfig::read(cluster, QStringLiteral("response.cluster")); !read) {
                                    problem = read.refusal().text();
                                } else {
                                    config = read.value();
                                }
                            }
                        }
                        if (!config) {
                            qCWarning(logApp).noquote() << "cannot re-read the cluster config after the accepted registration:" << problem
                                                        << "; the Corestore endpoints held stay";
                            return servedAcceptance();
                        }
                        noteRelayBlock(config->relay);
                        if (m_clusterConfig)
                            m_clusterConfig->nodes = config->nodes;
                        m_corestore->adoptNodes(config->nodes);
                        servedAcceptance();
                    });
}

void Coreflow::servedAcceptance()
{
    // §6.9: the desired state is read right after each acceptance (and its config read), and the
    // bindings reconciled against it; only while that acceptance still stands.
    if (!m_bindings || !m_registration->acceptedRecord() || !m_cloudly->isDispatchable())
        return;
    if (m_clusterConfig)
        m_bindings->setClusterId(m_clusterConfig->id);
    m_bindings->acceptanceStood();
}

void Coreflow::notifyStatus()
{
    if (m_statusServer)
        m_statusServer->statusChanged();
    Q_EMIT statusChanged();
}

Readiness Coreflow::checkReadiness() const
{
    Readiness r;
    if (!m_cloudly->isDispatchable() && m_readiness->hopServes(QStringLiteral("cloudly")))
        r.refusals.append(status::ReadinessRefusal{QStringLiteral("cloudly"), std::nullopt, std::nullopt,
                                                   m_cloudly->isParked()        ? QStringLiteral("no Cloudly session (parked: not reconnecting)")
                                                   : m_cloudly->lostToSilence() ? QStringLiteral("%1: no frame from Cloudly for %2 ms; reconnecting")
                                                                                      .arg(QLatin1StringView(refusal::cloudlySilent))
                                                                                      .arg(m_timing.sessionSilenceDeadlineMs)
                                                                                : QStringLiteral("no Cloudly session")});
    r.refusals += m_readiness->refusals();
    if (!m_open && m_step != Step::Open)
        r.refusals.append(status::ReadinessRefusal{QStringLiteral("relay"), std::nullopt, std::nullopt,
                                                   QStringLiteral("the relay is not open for dispatch")});
    r.ready = r.refusals.isEmpty();
    return r;
}

status::RelayStatus Coreflow::statusSnapshot() const
{
    status::RelayStatus s;
    s.build = QStringLiteral(COREFLOW_BUILD_VERSION);
    s.contractRelease = contractRelease();
    s.nodeId = m_config.nodeId;
    s.startedAtMs = m_startedAtMs;
    s.generatedAtMs = m_clock.nowMs();
    const Readiness readiness = checkReadiness();
    s.ready = readiness.ready;
    s.refusals = readiness.refusals;
    s.parked = m_readiness->isParked();
    s.parkedLine = m_readiness->parkedLine();
    if (const auto credential = m_registration->pinnedCredential()) {
        s.cloudly.credentialId = credential->id;
        s.cloudly.credentialGeneration = credential->generation;
    }
    s.cloudly.connected = m_cloudly->isConnected();
    s.cloudly.dispatchable = m_cloudly->isDispatchable();
    s.cloudly.carrierCount = m_cloudly->carrierCount();
    s.cloudly.identityRenewalDueMs = m_cloudly->identityRenewalDueMs();
    s.cloudly.lastFrameAtMs = m_cloudly->lastFrameReceivedAtMs();
    s.cloudly.keepalive = m_cloudly->keepaliveState();
    s.cloudly.connectedSinceMs = m_cloudly->dispatchableSinceMs();
    s.cloudly.lastErrorClass = m_cloudly->lastErrorClass();
    s.cloudly.nextRetryAtMs = m_cloudly->reconnectDueMs();
    s.registration.lastSequence = m_registration->lastSequence();
    s.registration.lastOutcome = m_registration->lastOutcome();
    s.registration.lastAtMs = m_registration->lastOutcomeAtMs();
    s.cloudly.url = m_config.cloudlyUrl.toString(QUrl::RemoveUserInfo | QUrl::RemoveQuery | QUrl::RemoveFragment);
    s.listener.listening = m_listener && m_listener->isListening();
    s.listener.address = m_listener ? m_listener->boundAddress() : m_config.bindHostname;
    s.listener.port = m_listener ? m_listener->boundPort() : 0;
    s.listener.origin = (m_clusterConfig && m_clusterConfig->relay) ? m_clusterConfig->relay->origin.toString() : QString();
    s.listener.note = m_listenerNote;
    s.listener.certificateSubject = m_certificateSubject;
    s.listener.certificateNotAfterMs = m_certificateNotAfterMs;
    s.nodes = m_forwarder->carriedNodes();
    s.escrow = m_escrow->statusRuns();
    if (m_bindings)
        s.bindings = m_bindings->statusBindings();
    s.ingress = m_ingress->status();
    if (m_vpnHub)
        s.vpn = m_vpnHub->status();
    s.corestore.credential = CorestoreCredential::stateWord(m_corestoreCredential->state());
    s.corestore.failureCode = m_corestoreCredential->failureCode();
    s.corestore.recipientKeyId = m_corestoreCredential->keyId();
    s.corestore.recipientGeneration = m_corestoreCredential->generation();
    s.corestore.enrolledAtMs = m_corestoreCredential->enrolledAtMs();
    s.corestore.nodes = m_corestore->statusNodes();
    s.counters.forwards = m_counters.forwards();
    s.counters.pushes = m_counters.pushes();
    s.counters.reconnects = m_cloudly->reconnects();
    s.counters.refusalsByName = m_counters.refusalsByName();
    s.counters.refusalsLastHour = m_counters.refusalsLastHour();
    s.clockSkew = m_escrow->clockSkew();
    s.backups = m_closures->statusLane();
    s.backups.operations = m_clusterBackup->statusOperations();
    s.counters.reregistrationWaves = m_counters.reregistrationWaves();
    s.counters.escrowOffersByOutcome = m_counters.escrowOffersByOutcome();
    if (m_registryProxy) {
        s.counters.registryRequests = m_registryProxy->requestsRelayed();
        s.counters.registryBodyBytes = m_registryProxy->bodyBytesRelayed();
    }
    s.counters.statusClients = m_statusServer ? m_statusServer->clientsAdmitted() : 0;
    // Qt's own dispatcher (COREFLOW_EVENT_DISPATCHER=qt) does not count its timers: 0 then (D-103).
    if (const auto *dispatcher = qobject_cast<const EpollEventDispatcher *>(QAbstractEventDispatcher::instance()))
        s.counters.timers = dispatcher->timerCount();
    return s;
}

} // namespace coreflow
