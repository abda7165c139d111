#include "service/ingress/clusteringress.h"

#include "service/core/logging.h"
#include "service/cloudly/cloudlyconnector.h"
#include "shared/contract/exactkeyreader.h"
#include "shared/contract/methods.h"
#include "shared/contract/offers.h"
#include "shared/contract/refusalnames.h"
#include "shared/contract/refusalquote.h"
#include "shared/contract/secretstringtake.h"
#include "service/ingress/ingressregistration.h"

namespace coreflow {

using namespace contract;

namespace {
Refusal named(QLatin1StringView name, const QString &reason) { return Refusal{QString(name), reason}; }

// A request to the ingress' connection ended without an answer: named for the ingress lane (§3.2).
Refusal ingressRefusal(const Refusal &refusal, const QString &method, qint64 timeoutMs)
{
    if (refusal.name == QLatin1String(refusal::nodePushTimeout))
        return named(refusal::ingressRequestTimeout, QStringLiteral("%1 got no answer from the ingress within %2 ms").arg(method).arg(timeoutMs));
    if (refusal.name == QLatin1String(refusal::nodeConnectionLost))
        return named(refusal::ingressConnectionLost,
                     QStringLiteral("the cluster ingress closed its connection before it answered %1").arg(method));
    return refusal;
}

QByteArray revisionJson(const std::optional<qint64> &revision)
{
    return revision ? QByteArray::number(*revision) : QByteArrayLiteral("null");
}
} // namespace

ClusterIngress::ClusterIngress(CloudlyConnector &cloudly, ListenerSessions &sessions, MethodTable &nodeMethods,
                               MethodTable &cloudlyMethods, RelayCounters &counters, const RelayTiming &timing,
                               QObject *parent)
    : QObject(parent), m_cloudly(cloudly), m_sessions(sessions), m_nodeMethods(nodeMethods),
      m_cloudlyMethods(cloudlyMethods), m_counters(counters), m_timing(timing)
{
    m_nodeMethods.add(QString(method::registerClusterIngress),
                      [this](const Frame &frame, const Caller &caller, MethodTable::Reply reply) { onRegister(frame, caller, reply); });
    m_nodeMethods.add(QString(method::getClusterIngressRouteTable),
                      [this](const Frame &frame, const Caller &caller, MethodTable::Reply reply) { onPull(frame, caller, reply); });
    connect(&m_sessions, &ListenerSessions::connectionClosed, this, &ClusterIngress::onConnectionClosed);
}

ClusterIngress::~ClusterIngress()
{
    detachCloudlyHandlers();
    m_nodeMethods.remove(QString(method::registerClusterIngress));
    m_nodeMethods.remove(QString(method::getClusterIngressRouteTable));
}

void ClusterIngress::attachCloudlyHandlers()
{
    m_cloudlyMethods.add(QString(method::pushClusterRouteTable),
                         [this](const Frame &frame, const Caller &, MethodTable::Reply reply) { onPush(frame, reply); });
    m_cloudlyMethods.add(QString(method::getClusterTrafficStatistics),
                         [this](const Frame &frame, const Caller &, MethodTable::Reply reply) { onTrafficStatistics(frame, reply); });
}

void ClusterIngress::detachCloudlyHandlers()
{
    m_cloudlyMethods.remove(QString(method::pushClusterRouteTable));
    m_cloudlyMethods.remove(QString(method::getClusterTrafficStatistics));
}

NodeConnection *ClusterIngress::boundConnection() const { return m_bound.data(); }

std::optional<qint64> ClusterIngress::heldRevision() const
{
    return m_table ? std::optional<qint64>(m_table->revision()) : std::nullopt;
}

status::IngressStatus ClusterIngress::status() const
{
    status::IngressStatus s;
    s.bound = m_bound && m_bound->isOpen();
    s.routeTableRevision = heldRevision();
    s.routeCount = m_table ? m_table->routeCount() : 0;
    s.hostnameCount = m_table ? m_table->hostnameCount() : 0;
    return s;
}

QString ClusterIngress::heldText() const
{
    return m_table ? QStringLiteral("revision %1").arg(m_table->revision()) : QStringLiteral("no table");
}

void ClusterIngress::refuse(const MethodTable::Reply &reply, const Frame &frame, const Refusal &refusal)
{
    m_counters.countRefusal(refusal.name);
    reply(MethodTable::refusalFor(frame, refusal));
}

// --- Ingress lane --------------------------------------------------------------------------------

void ClusterIngress::refuseRegistration(const MethodTable::Reply &reply, const Frame &frame, QLatin1StringView reason,
                                        const QString &detail)
{
    const qint64 retryAfterMs = m_timing.ingressRetryAfterMs;
    const Refusal refused{QString(refusal::clusterIngressRegistrationRefused), QStringLiteral("%1: %2").arg(QString(reason), detail),
                          QJsonObject{{QStringLiteral("reason"), QString(reason)}, {QStringLiteral("retryAfterMs"), retryAfterMs}}};
    m_counters.countRefusal(refused.name);
    const QJsonObject retry{{QStringLiteral("waitForMs"), retryAfterMs}, {QStringLiteral("reason"), QString(reason)}};
    reply(Envelope::relayedError(frame.method, frame.correlationId, frame.request, Envelope::compact(refused.toErrorJson()),
                                 Envelope::compact(retry)));
}

void ClusterIngress::onRegister(const Frame &frame, const Caller &caller, const MethodTable::Reply &reply)
{
    NodeConnection *connection = caller.connection;
    if (!connection)
        return refuse(reply, frame, named(refusal::methodNotServed, QStringLiteral("registerClusterIngress is served on the listener only")));
    // A connection not registered yet has one request in flight at most, counted with the node lane's
    // (§3.4, D-57, D-90): the connection holds the one count both lanes ask.
    if (connection != m_bound.data() && connection->hasUnregisteredRequestInFlight())
        return refuse(reply, frame, named(refusal::unregisteredRequestInFlight,
                                          QStringLiteral("a connection that has not registered has one request in flight at most")));
    const auto request = frame.requestObject();

    // 1. The offer, before anything else is read or forwarded (PV-07, PV-09).
    const ProtocolOffer own = offerForClusterIngress();
    const QJsonValue offer = request ? request->value(QStringLiteral("offer")) : QJsonValue(QJsonValue::Undefined);
    if (auto refused = judgePeerOffer(offer, sessionKind::clusterIngress)) {
        const QString peerText = peerOfferInRefusal(*refused);
        if (m_sessions.refusalLog().admit(*connection))
            qCWarning(logIngress).noquote() << "refused registerClusterIngress from" << connection->describe() << ":"
                                            << refused->text() << FrameRefusalLog::countNote(*connection);
        m_offerRefusal = status::ReadinessRefusal{QStringLiteral("clusterIngress"),
                                                  peerText.isEmpty() ? std::nullopt : std::optional<QString>(peerText),
                                                  own.describe(), refused->text()};
        refuse(reply, frame, *refused);
        Q_EMIT offerRefused(peerText, own.describe(), refused->text());
        Q_EMIT statusChanged();
        return;
    }
    if (m_offerRefusal) {
        qCInfo(logIngress).noquote() << "a servable clusterIngress offer arrived; the hop's offer refusal is cleared";
        m_offerRefusal.reset();
        Q_EMIT statusChanged();
    }
    Q_EMIT offerAccepted();

    // 2. The body (CI-24): nothing is forwarded for a body the validator refuses.
    auto registration = IngressRegistration::read(request.value(), QStringLiteral("request"));
    if (!registration) {
        if (m_sessions.refusalLog().admit(*connection))
            qCInfo(logIngress).noquote() << "refused registerClusterIngress from" << connection->describe()
                                         << ": registration-invalid:" << registration.refusal().reason
                                         << FrameRefusalLog::countNote(*connection);
        return refuseRegistration(reply, frame, refusal::ingressReasonRegistrationInvalid, registration.refusal().reason);
    }
    const QString ingressId = registration->ingressId();
    const QString nodeId = registration->nodeId();

    // 3. Carried to Cloudly, bytes untouched, bearer included (CI-15).
    if (!m_cloudly.isDispatchable()) {
        if (m_sessions.refusalLog().admit(*connection))
            qCInfo(logIngress).noquote() << "refused registerClusterIngress of ingress" << RefusalQuote::nameOrLength(ingressId)
                                         << ": not-ready: no Cloudly session" << FrameRefusalLog::countNote(*connection);
        return refuseRegistration(reply, frame, refusal::ingressReasonNotReady, QStringLiteral("this relay has no Cloudly session"));
    }
    QPointer<ClusterIngress> self = this;
    QPointer<NodeConnection> origin = connection;
    m_counters.countForward();
    connection->ingressRegistrationBegan();
    // No line for the carrying itself: a stranger can repeat it at will (§3.1 "Refusal log bound", D-90);
    // its outcome is logged, a refusal under the bound, a binding always.
    m_cloudly.call(frame.method, frame.request, m_timing.forwardTimeoutMs,
                   [self, origin, frame, reply, ingressId, nodeId](const CloudlyConnector::CallResult &result) {
                       if (origin)
                           origin->ingressRegistrationEnded();
                       if (!self)
                           return;
                       if (!result.delivered) {
                           if (origin && self->m_sessions.refusalLog().admit(*origin))
                               qCInfo(logIngress).noquote() << "registerClusterIngress of ingress" << RefusalQuote::nameOrLength(ingressId)
                                                            << "not carried:" << result.refusal.name
                                                            << FrameRefusalLog::countNote(*origin);
                           return self->refuseRegistration(
                               reply, frame, refusal::ingressReasonNotReady,
                               QStringLiteral("the registration could not be carried to Cloudly (%1)").arg(result.refusal.name));
                       }
                       const Frame &answer = result.answer;
                       if (answer.hasError()) {
                           // Cloudly's refusal travels back untouched (CI-22); no binding changes.
                           if (origin && self->m_sessions.refusalLog().admit(*origin))
                               qCInfo(logIngress).noquote()
                                   << "Cloudly refused registerClusterIngress of ingress" << RefusalQuote::nameOrLength(ingressId)
                                   << "from" << origin->describe() << ":"
                                   << RefusalQuote::nameOrLength(answer.errorRefusal().name)
                                   << FrameRefusalLog::countNote(*origin);
                           reply(Envelope::relayedError(frame.method, frame.correlationId, frame.request, answer.error, answer.retry));
                           return;
                       }
                       if (!origin || !origin->isOpen()) {
                           qCInfo(logIngress).noquote() << "Cloudly accepted ingress" << ingressId
                                                        << "but its connection closed first; nothing is bound";
                           return;
                       }
                       NodeConnection *previous = self->m_bound.data();
                       self->m_bound = origin;
                       origin->admitAsRegistered(); // registered frame bound and pool from now on (§3.4)
                       if (previous && previous != origin.data())
                           qCInfo(logIngress).noquote() << "cluster ingress" << ingressId << "on node" << nodeId << "bound to"
                                                        << origin->describe() << "; it supersedes" << previous->describe();
                       else
                           qCInfo(logIngress).noquote() << "cluster ingress" << ingressId << "on node" << nodeId << "bound to"
                                                        << origin->describe();
                       QByteArray body = QByteArrayLiteral("{\"registration\":");
                       body += answer.response.isEmpty() ? QByteArrayView("null") : answer.response;
                       body += ",\"routeTableRevision\":";
                       body += revisionJson(self->heldRevision());
                       body += '}';
                       reply(MethodTable::responseFor(frame, body));
                       Q_EMIT self->ingressBound();
                       Q_EMIT self->statusChanged();
                   });
}

void ClusterIngress::onPull(const Frame &frame, const Caller &caller, const MethodTable::Reply &reply)
{
    NodeConnection *connection = caller.connection;
    if (!connection || connection != m_bound.data()) {
        if (!connection || m_sessions.refusalLog().admit(*connection))
            qCInfo(logIngress).noquote() << "refused getClusterIngressRouteTable from"
                                         << (connection ? connection->describe() : QStringLiteral("the Cloudly session"))
                                         << ": not the bound cluster ingress"
                                         << (connection ? FrameRefusalLog::countNote(*connection) : QString());
        return refuse(reply, frame, named(refusal::ingressCallerNotBound, QStringLiteral("this connection is not the bound cluster ingress")));
    }
    auto request = frame.requestObject();
    if (!request)
        return refuse(reply, frame, request.refusal());
    ExactKeyReader reader(request.value(), QStringLiteral("request"));
    const QJsonValue applied = reader.requiredAny(QStringLiteral("appliedRevision"));
    if (!reader.failed() && !applied.isNull() && !(applied.isDouble() && applied.toDouble() == double(applied.toInteger())))
        reader.fail(QStringLiteral("appliedRevision"), QStringLiteral("is not an integer or null"));
    if (auto refusal = reader.finish())
        return refuse(reply, frame, *refusal);
    qCInfo(logIngress).noquote() << QStringLiteral("the cluster ingress pulled %1 (it applied %2)")
                                        .arg(heldText(), applied.isNull() ? QStringLiteral("none") : QString::number(applied.toInteger()));
    if (!m_table)
        return reply(MethodTable::responseFor(frame, QByteArrayView("{\"routeTable\":null}")));
    // The one place the table travels. The composed body is held as a Secret so its copy is wiped.
    const Secret body = Secret::concatenated({"{\"routeTable\":", m_table->material().reveal(), "}"});
    QByteArray answer = MethodTable::responseFor(frame, body.reveal());
    connection->treatWritesAsSecret(); // the one node-facing write that carries keys (§19.4)
    reply(answer);
    Secret::wipe(answer); // the reply is framed and written before it returns (contract §19.4)
}

void ClusterIngress::onConnectionClosed(NodeConnection *connection)
{
    if (!connection || connection != m_bound.data())
        return;
    m_bound = nullptr;
    qCInfo(logIngress).noquote() << "the bound cluster ingress on" << connection->describe() << "disconnected; no ingress is bound";
    Q_EMIT ingressReleased();
    Q_EMIT statusChanged();
}

// --- Cloudly lane --------------------------------------------------------------------------------

// A table's keys go from the frame's bytes straight into Secrets; only a wiped copy with the keys
// blanked is read with QJsonDocument (docs/contract.md §19.4).
namespace {
struct BlankedRouteTableBody {
    QList<Secret> keys;
    Result<QJsonObject> object = Refusal{};
};
BlankedRouteTableBody readBlanked(QByteArrayView body, const QString &member)
{
    QByteArray blanked(body.data(), body.size());
    BlankedRouteTableBody out;
    out.keys = takeSecretStrings(blanked, {"routeTable", "certificates"}, "privateKeyPem").value_or(QList<Secret>{});
    Frame view;
    if (member == QLatin1String("request")) {
        view.request = QByteArrayView(blanked);
        out.object = view.requestObject();
    } else {
        view.response = QByteArrayView(blanked);
        out.object = view.responseObject();
    }
    Secret::wipe(blanked);
    return out;
}
} // namespace

void ClusterIngress::onPush(const Frame &frame, const MethodTable::Reply &reply)
{
    BlankedRouteTableBody body = readBlanked(frame.request, QStringLiteral("request"));
    auto &request = body.object;
    if (!request)
        return refuse(reply, frame, named(refusal::routeTableInvalid, request.refusal().reason));
    const auto carried = RouteTable::readCarrier(request.value(), QStringLiteral("request"), false);
    if (!carried) {
        qCWarning(logIngress).noquote() << "refused a pushed route table:" << carried.refusal().text() << "; keeping" << heldText();
        return refuse(reply, frame, carried.refusal());
    }
    auto table = RouteTable::read(*carried.value(), QStringLiteral("request.routeTable"));
    if (table && !table.value().restoreKeys(body.keys))
        table = Refusal{QString(refusal::routeTableInvalid), QStringLiteral("request.routeTable.certificates could not be read")};
    if (!table) {
        qCWarning(logIngress).noquote() << "refused a pushed route table:" << table.refusal().text() << "; keeping" << heldText();
        return refuse(reply, frame, table.refusal());
    }
    adopt(std::move(table).value(), QStringLiteral("pushClusterRouteTable"));
    reply(MethodTable::responseFor(frame, QByteArrayLiteral("{\"revision\":") + QByteArray::number(m_table->revision()) + '}'));
}

void ClusterIngress::onTrafficStatistics(const Frame &frame, const MethodTable::Reply &reply)
{
    NodeConnection *connection = m_bound.data();
    if (!connection || !connection->isOpen()) {
        qCInfo(logIngress).noquote() << "refused getClusterTrafficStatistics: no cluster ingress is bound";
        return refuse(reply, frame, named(refusal::ingressNotBound, QStringLiteral("no cluster ingress is bound to this relay")));
    }
    QPointer<ClusterIngress> self = this;
    const qint64 timeoutMs = m_timing.ingressRequestTimeoutMs;
    m_counters.countForward();
    qCDebug(logIngress).noquote() << "carrying getClusterTrafficStatistics to the cluster ingress";
    m_sessions.requestConnection(
        connection, frame.method, frame.request, timeoutMs, [self, frame, reply, timeoutMs](const Frame *answer, const Refusal *refusal) {
            if (refusal) {
                const Refusal r = ingressRefusal(*refusal, frame.method, timeoutMs);
                qCInfo(logIngress).noquote() << "getClusterTrafficStatistics ended:" << r.name;
                if (self)
                    self->m_counters.countRefusal(r.name);
                return reply(MethodTable::refusalFor(frame, r));
            }
            if (answer->hasError())
                reply(Envelope::relayedError(frame.method, frame.correlationId, frame.request, answer->error, answer->retry));
            else
                reply(MethodTable::responseFor(frame, answer->response));
        });
}

// --- Custody -------------------------------------------------------------------------------------

void ClusterIngress::refreshRouteTable()
{
    QPointer<ClusterIngress> self = this;
    qCDebug(logIngress).noquote() << "reading getClusterRouteTable";
    m_cloudly.call(QString(method::getClusterRouteTable), QByteArrayView("{}"), m_timing.cloudlyCallTimeoutMs,
                   [self](const CloudlyConnector::CallResult &result) {
                       if (!self)
                           return;
                       if (!result.delivered) {
                           qCWarning(logIngress).noquote() << "route table read failed:" << result.refusal.name << "; keeping"
                                                           << self->heldText();
                           return;
                       }
                       if (result.answer.hasError()) {
                           // In Cloudly's own words (its error.text; contract §6.7).
                           qCWarning(logIngress).noquote() << "Cloudly refused the route table read:"
                                                           << result.answer.errorRefusal().text() << "; keeping" << self->heldText();
                           return;
                       }
                       BlankedRouteTableBody body = readBlanked(result.answer.response, QStringLiteral("response"));
                       auto &response = body.object;
                       if (!response) {
                           qCWarning(logIngress).noquote() << "unreadable route table answer:" << response.refusal().reason
                                                           << "; keeping" << self->heldText();
                           return;
                       }
                       const auto carried = RouteTable::readCarrier(response.value(), QStringLiteral("response"), true);
                       if (!carried) {
                           qCWarning(logIngress).noquote() << "refused the route table Cloudly answered:" << carried.refusal().text()
                                                           << "; keeping" << self->heldText();
                           return;
                       }
                       if (!carried.value())
                           return self->noteNoTable();
                       auto table = RouteTable::read(*carried.value(), QStringLiteral("response.routeTable"));
                       if (table && !table.value().restoreKeys(body.keys))
                           table = Refusal{QString(refusal::routeTableInvalid),
                                           QStringLiteral("response.routeTable.certificates could not be read")};
                       if (!table) {
                           qCWarning(logIngress).noquote() << "refused the route table Cloudly answered:" << table.refusal().text()
                                                           << "; keeping" << self->heldText();
                           return;
                       }
                       self->adopt(std::move(table).value(), QStringLiteral("getClusterRouteTable"));
                   });
}

bool ClusterIngress::adopt(RouteTable table, const QString &source)
{
    if (m_table && table.revision() <= m_table->revision()) {
        qCInfo(logIngress).noquote() << "ignored route table revision" << table.revision() << "from" << source << ": holding revision"
                                     << m_table->revision();
        return false;
    }
    m_table = std::move(table);
    m_cloudlySaysNone = false;
    qCInfo(logIngress).noquote() << "adopted route table" << m_table->describe() << "from" << source;
    hint(m_table->revision());
    Q_EMIT routeTableAdopted(m_table->revision());
    Q_EMIT statusChanged();
    return true;
}

void ClusterIngress::noteNoTable()
{
    if (m_cloudlySaysNone)
        return;
    m_cloudlySaysNone = true;
    if (m_table)
        qCInfo(logIngress).noquote() << "Cloudly has computed no route table for this cluster; keeping" << heldText();
    else
        qCInfo(logIngress).noquote() << "Cloudly has computed no route table for this cluster yet; the ingress is answered null";
}

void ClusterIngress::hint(qint64 revision)
{
    NodeConnection *connection = m_bound.data();
    if (!connection || !connection->isOpen()) {
        qCInfo(logIngress).noquote() << "route table revision" << revision << "adopted while no cluster ingress is bound; hinted to nobody";
        return;
    }
    const QByteArray body = QByteArrayLiteral("{\"revision\":") + QByteArray::number(revision) + '}';
    qCDebug(logIngress).noquote() << "hinting route table revision" << revision << "to the cluster ingress";
    const QString hintMethod(method::pushClusterIngressRouteTableChanged);
    const qint64 timeoutMs = m_timing.ingressRequestTimeoutMs;
    m_sessions.requestConnection(connection, hintMethod, body, timeoutMs,
                                 [revision, hintMethod, timeoutMs](const Frame *answer, const Refusal *refusal) {
                                     // Never retried: the revision is the idempotency, the next pull catches up (CI-13).
                                     if (refusal)
                                         qCWarning(logIngress).noquote() << "hint for route table revision" << revision << "failed:"
                                                                         << ingressRefusal(*refusal, hintMethod, timeoutMs).name
                                                                         << "; not retried";
                                     else if (answer->hasError())
                                         qCWarning(logIngress).noquote() << "the cluster ingress refused the hint for route table revision"
                                                                         << revision << ":" << answer->errorRefusal().name << "; not retried";
                                 });
}

} // namespace coreflow
