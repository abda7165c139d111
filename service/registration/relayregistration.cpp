#include "service/registration/relayregistration.h"

#include "service/core/logging.h"
#include "shared/contract/methods.h"
#include "shared/contract/offers.h"
#include "shared/contract/refusalnames.h"

#include <QUrl>

namespace coreflow {

using namespace contract;

namespace {
const QString kHop = QStringLiteral("registration");
} // namespace

RelayRegistration::RelayRegistration(CloudlyConnector &cloudly, ReadinessBoard &readiness, Clock &clock,
                                     const RelayTiming &timing, QObject *parent)
    : QObject(parent), m_cloudly(cloudly), m_readiness(readiness), m_clock(clock), m_timing(timing)
{
    m_retryTimer = m_clock.createTimer(this);
    connect(m_retryTimer.get(), &ClockTimer::timeout, this, [this] {
        qCInfo(logRegistration) << "offering registerClusterRelay again";
        trigger();
    });
    connect(&m_cloudly, &CloudlyConnector::dispatchable, this, [this](qint64, bool) { trigger(); });
}

bool RelayRegistration::statesThisRelayIsNotDispatchedTo(const QString &name)
{
    return refusal::statesThisRelayIsNotDispatchedTo(name); // the one list (contract/refusalnames.h)
}

qint64 RelayRegistration::retryDueMs() const { return m_retryTimer->isActive() ? m_retryTimer->deadlineMs() : 0; }

void RelayRegistration::start(const RelayEndpoint &endpoint)
{
    m_endpoint = endpoint;
    m_started = true;
    trigger();
}

void RelayRegistration::stop()
{
    m_started = false;
    m_retryTimer->stop();
}

void RelayRegistration::trigger()
{
    if (!m_started || m_parked || !m_cloudly.isDispatchable())
        return;
    if (m_inFlight) {
        m_again = true; // exactly one more after the one in flight
        return;
    }
    send();
}

void RelayRegistration::send()
{
    m_inFlight = true;
    m_again = false;
    m_retryTimer->stop();
    const qint64 sequence = m_sequence++;
    m_lastSequence = sequence;
    noteOutcome(QStringLiteral("in-flight"));
    QJsonObject relay{{QStringLiteral("version"), m_endpoint.version},
                      {QStringLiteral("nodeId"), m_endpoint.nodeId},
                      {QStringLiteral("listenAddress"), m_endpoint.listenAddress},
                      {QStringLiteral("listenPort"), int(m_endpoint.listenPort)}};
    // Public facts only: key, address and port; no endpoint id, no TLS identity (RR-14).
    if (m_endpoint.vpnHub)
        relay.insert(QStringLiteral("vpnHub"), QJsonObject{{QStringLiteral("publicKey"), m_endpoint.vpnHub->publicKey},
                                                           {QStringLiteral("address"), m_endpoint.vpnHub->address},
                                                           {QStringLiteral("quicPort"), int(m_endpoint.vpnHub->quicPort)}});
    const QByteArray body = Envelope::compact(QJsonObject{{QStringLiteral("relay"), relay},
                                                          {QStringLiteral("registrationSequence"), double(sequence)},
                                                          {QStringLiteral("offer"), offerForCloudlySession().toJson()}});
    qCInfo(logRegistration).noquote() << "registerClusterRelay" << "sequence" << sequence << "endpoint"
                                      << QStringLiteral("%1:%2").arg(m_endpoint.listenAddress).arg(m_endpoint.listenPort);
    m_cloudly.call(QString(method::registerClusterRelay), body, m_timing.cloudlyCallTimeoutMs,
                   [this](const CloudlyConnector::CallResult &r) { onAnswer(r); });
}

void RelayRegistration::noteOutcome(const QString &outcome)
{
    m_lastOutcome = outcome;
    m_lastOutcomeAtMs = m_clock.nowMs();
}

void RelayRegistration::done()
{
    m_inFlight = false;
    if (m_again && !m_parked)
        trigger();
}

void RelayRegistration::refuseAnswer(const QString &line)
{
    qCWarning(logRegistration).noquote() << line;
    m_readiness.setAnswerNotContract(kHop, line);
    m_retryTimer->start(m_timing.refusedOfferRetryIntervalMs);
}

void RelayRegistration::onAnswer(const CloudlyConnector::CallResult &r)
{
    if (!m_started || m_parked) {
        m_inFlight = false;
        return;
    }
    if (!r.delivered) {
        noteOutcome(r.refusal.name);
        qCWarning(logRegistration).noquote() << "registerClusterRelay failed in transport:" << r.refusal.text()
                                             << "- registering again on the next renewal or reconnect";
        // A standing refusal keeps its cadence even when one re-offer is lost in transport.
        if (!m_readiness.hopServes(kHop))
            m_retryTimer->start(m_timing.refusedOfferRetryIntervalMs);
        return done();
    }
    const ProtocolOffer own = offerForCloudlySession();
    if (r.answer.hasError()) {
        const Refusal e = r.answer.errorRefusal();
        noteOutcome(e.name);
        if (e.name == QLatin1String(refusal::protocolOfferRefused)) {
            const QString cloudlyOffer = cloudlyOfferInRefusal(e);
            const QString line = QStringLiteral("Cloudly refused registerClusterRelay's offer %1; Cloudly speaks %2 (offered again every %3 ms)")
                                     .arg(own.describe(), cloudlyOffer)
                                     .arg(m_timing.refusedOfferRetryIntervalMs);
            qCWarning(logRegistration).noquote() << line;
            m_readiness.setOfferDisagreement(kHop, cloudlyOffer, own.describe(), line);
            m_retryTimer->start(m_timing.refusedOfferRetryIntervalMs);
            return done();
        }
        if (e.name == QLatin1String(refusal::relayNodeUnknown))
            qCWarning(logRegistration).noquote() << "registerClusterRelay refused:" << e.name
                                                 << QStringLiteral("- Cloudly holds no node %1: enroll the node first: run spark enrollnode on it; this relay registers again on its next renewal or reconnect")
                                                        .arg(m_endpoint.nodeId);
        else if (e.name == QLatin1String(refusal::relayEndpointUnpublishable))
            qCWarning(logRegistration).noquote() << "registerClusterRelay refused:" << e.name
                                                 << QStringLiteral("- listen address %1 cannot be published; fix COREFLOW_RELAY_BIND_HOSTNAME").arg(m_endpoint.listenAddress);
        else
            qCWarning(logRegistration).noquote() << "registerClusterRelay refused:" << e.name;
        // Cloudly answered, and the answer is not an acceptance: the hop is not ready until one arrives
        // (the relay keeps serving everything it carries).
        m_readiness.setAnswerNotContract(kHop, QStringLiteral("Cloudly refused registerClusterRelay: %1; registering again on the next renewal or reconnect")
                                                   .arg(e.name));
        Q_EMIT refusedByName(e.name);
        if (e.name == QLatin1String(refusal::relayCredentialGenerationStale)) {
            park(m_credential ? QStringLiteral("relay parked: this relay is bound to cluster relay credential %1 generation %2, which Cloudly no longer accepts; only a restart holding the bearer of the current generation serves this cluster again")
                                    .arg(m_credential->id)
                                    .arg(m_credential->generation)
                              : QStringLiteral("relay parked: Cloudly no longer accepts the cluster relay credential generation this relay holds; only a restart holding the bearer of the current generation serves this cluster again"));
            return;
        }
        return done();
    }

    auto response = r.answer.responseObject();
    noteOutcome(QStringLiteral("answer-not-contract")); // until the acceptance below is judged whole
    if (!response) {
        refuseAnswer(QStringLiteral("Cloudly's answer to registerClusterRelay is not the contract's: %1").arg(response.refusal().reason));
        return done();
    }
    const RegistrationAcceptance acceptance = RegistrationAcceptance::read(response.value());
    const AnsweredOffer &judged = acceptance.judged;
    const std::optional<RecordReference> &credential = acceptance.credential;
    const std::optional<RecordReference> &record = acceptance.record;
    const QString &origin = acceptance.origin;
    if (judged.verdict == AnsweredOffer::Verdict::NotContract) {
        // A servable offer in an answer that is otherwise not the contract's ends the disagreement only.
        if (judged.namesServableOffer)
            m_readiness.clearOfferDisagreement(kHop);
        refuseAnswer(QStringLiteral("Cloudly's acceptance of registerClusterRelay is not the contract's: %1 (offered again every %2 ms)")
                         .arg(judged.problem->reason)
                         .arg(m_timing.refusedOfferRetryIntervalMs));
        return done();
    }
    if (judged.verdict == AnsweredOffer::Verdict::NotServable) {
        noteOutcome(QStringLiteral("offer-not-servable"));
        const QString line = QStringLiteral("Cloudly accepted registerClusterRelay in %1, which this relay (%2) cannot serve (offered again every %3 ms)")
                                 .arg(judged.offer->describe(), own.describe())
                                 .arg(m_timing.refusedOfferRetryIntervalMs);
        qCWarning(logRegistration).noquote() << line;
        m_readiness.setOfferDisagreement(kHop, judged.offer->describe(), own.describe(), line);
        m_retryTimer->start(m_timing.refusedOfferRetryIntervalMs);
        return done();
    }
    m_readiness.clearOfferDisagreement(kHop);
    if (m_credential && !(*credential == *m_credential)) {
        qCWarning(logRegistration).noquote() << "registerClusterRelay was accepted under cluster relay credential"
                                             << credential->id << "generation" << credential->generation
                                             << "but this relay is bound to" << m_credential->id << "generation"
                                             << m_credential->generation << "-" << QString(refusal::relayCredentialGenerationStale);
        noteOutcome(QString(refusal::relayCredentialGenerationStale));
        Q_EMIT refusedByName(QString(refusal::relayCredentialGenerationStale));
        park(QStringLiteral("relay parked: this relay is bound to cluster relay credential %1 generation %2, which Cloudly no longer accepts; only a restart holding the bearer of the current generation serves this cluster again")
                 .arg(m_credential->id)
                 .arg(m_credential->generation));
        return;
    }
    if (m_record && !(record->id == m_record->id && record->generation > m_record->generation)) {
        refuseAnswer(QStringLiteral("Cloudly's acceptance of registerClusterRelay does not advance registration record %1 (generation %2 after %3; offered again every %4 ms)")
                         .arg(record->id)
                         .arg(record->generation)
                         .arg(m_record->generation)
                         .arg(m_timing.refusedOfferRetryIntervalMs));
        return done();
    }
    if (!m_credential) {
        m_credential = credential;
        qCInfo(logRegistration).noquote() << QStringLiteral("this relay is bound to cluster relay credential %1 generation %2 (public metadata: the bearer behind it is held by the session and never logged)")
                                                 .arg(credential->id)
                                                 .arg(credential->generation);
    }
    m_record = record;
    const QUrl published(origin), served(m_endpoint.servedOrigin);
    if (published.scheme() != served.scheme() || published.host().compare(served.host(), Qt::CaseInsensitive) != 0
        || published.port(443) != served.port(443))
        qCWarning(logRegistration).noquote() << "Cloudly published origin" << origin << "for this cluster, but this relay serves"
                                             << m_endpoint.servedOrigin << "- the cluster's nodes would dial an origin this process does not serve";
    m_readiness.clearHop(kHop);
    m_retryTimer->stop();
    noteOutcome(QStringLiteral("accepted"));
    qCInfo(logRegistration).noquote() << "registerClusterRelay accepted; registration record" << record->id << "generation" << record->generation;
    Q_EMIT accepted();
    done();
}

void RelayRegistration::park(const QString &line)
{
    if (m_parked)
        return;
    // RR-30: custody ends first (receivers of parked() drop escrow runs), then announcing stops, then
    // the session's refreshes and retries, and the line is stated once, last.
    Q_EMIT parked(line);
    m_parked = true;
    m_inFlight = false;
    m_again = false;
    m_retryTimer->stop();
    m_cloudly.park();
    m_readiness.park(line);
    qCCritical(logRegistration).noquote() << line;
}

} // namespace coreflow
