#include "service/forwarding/upstreamforwarder.h"

#include "service/core/logging.h"
#include "service/forwarding/nodeconnection.h"
#include "service/forwarding/noderegistry.h"
#include "shared/contract/ids.h"
#include "shared/contract/methods.h"
#include "shared/contract/offers.h"
#include "shared/contract/refusalnames.h"

#include <QPointer>

namespace coreflow {

using namespace contract;

namespace {
Refusal named(QLatin1StringView name, const QString &reason) { return Refusal{QString(name), reason}; }
} // namespace

struct UpstreamForwarder::Upstream {
    Frame frame;                              // the node's request (method, node correlation id, raw body)
    QPointer<NodeConnection> connection;
    MethodTable::Reply reply;
    bool registration = false;
    qint64 arrivedAtMs = 0;
    std::unique_ptr<ClockTimer> waitTimer;    // registration: the wait for a session
    quint64 callId = 0;
};

UpstreamForwarder::UpstreamForwarder(CloudlyConnector &cloudly, MethodTable &nodeMethods, NodeRegistry &registry,
                                     RelayCounters &counters, Clock &clock, const RelayTiming &timing,
                                     FrameRefusalLog &refusalLog, QObject *parent)
    : QObject(parent), m_cloudly(cloudly), m_nodeMethods(nodeMethods), m_registry(registry), m_counters(counters),
      m_clock(clock), m_timing(timing), m_refusalLog(refusalLog), m_gate(registry, refusalLog)
{
    // The six node methods and the four secret-recipient requests travel the same current-session path
    // (§8.1); none of their bodies is read beyond request.session.
    auto handler = [this](const Frame &frame, const Caller &caller, MethodTable::Reply reply) {
        forward(frame, caller.connection, reply);
    };
    for (const auto &name : method::nodeMethods)
        m_nodeMethods.add(QString(name), handler);
    for (const auto &name : method::nodeSecretMethods)
        m_nodeMethods.add(QString(name), handler);
    connect(&m_cloudly, &CloudlyConnector::dispatchable, this, &UpstreamForwarder::flushHeld);
    connect(&m_cloudly, &CloudlyConnector::sendBacklogChanged, this, [this](bool backlogged) {
        if (!backlogged)
            flushHeld();
    });
}

UpstreamForwarder::~UpstreamForwarder()
{
    for (const auto &name : method::nodeMethods)
        m_nodeMethods.remove(QString(name));
    for (const auto &name : method::nodeSecretMethods)
        m_nodeMethods.remove(QString(name));
}

void UpstreamForwarder::refuse(const MethodTable::Reply &reply, const Frame &frame, const Refusal &refusal)
{
    m_counters.countRefusal(refusal.name);
    reply(MethodTable::refusalFor(frame, refusal));
}

void UpstreamForwarder::forward(const Frame &frame, NodeConnection *connection, const MethodTable::Reply &reply)
{
    if (!connection)
        return refuse(reply, frame, named(refusal::methodNotServed, QStringLiteral("node methods are served on the listener only")));
    if (m_stopping)
        return refuse(reply, frame, named(refusal::cloudlySessionUnavailable, QStringLiteral("the relay is stopping")));
    const bool registration = frame.method == method::registerPalletRuntimeSession;
    if (registration) {
        // A connection not registered yet has one request in flight at most, on either lane (§3.4, D-57, D-90).
        if (connection->hasUnregisteredRequestInFlight())
            return refuse(reply, frame, named(refusal::unregisteredRequestInFlight,
                                              QStringLiteral("a connection that has not registered has one request in flight at most")));
        if (!admitRegistration(frame, connection, reply))
            return;
    } else {
        if (auto refusal = m_gate.admit(frame, connection))
            return refuse(reply, frame, *refusal);
        if (!m_cloudly.isDispatchable())
            return refuse(reply, frame, named(refusal::cloudlySessionUnavailable, QStringLiteral("no Cloudly session")));
    }
    auto op = std::make_shared<Upstream>();
    op->frame = frame;
    op->connection = connection;
    op->reply = reply;
    op->registration = registration;
    op->arrivedAtMs = m_clock.nowMs();
    if (registration && !m_cloudly.isDispatchable())
        return waitForSession(op);
    send(op);
}

// The peer's offer is judged before anything else is read, before any bearer travels and before
// anything is forwarded (§2.2); then request.nodeId is read (§8.1). False: refused (answered).
bool UpstreamForwarder::admitRegistration(const Frame &frame, NodeConnection *connection, const MethodTable::Reply &reply)
{
    auto request = frame.requestObject();
    if (!request) {
        refuse(reply, frame, request.refusal());
        return false;
    }
    if (auto refusal = judgePeerOffer(request.value().value(QStringLiteral("offer")), sessionKind::palletRuntime)) {
        if (m_refusalLog.admit(*connection))
            qCWarning(logForwarder).noquote() << "refused registerPalletRuntimeSession from" << connection->describe() << ":"
                                              << refusal->text() << FrameRefusalLog::countNote(*connection);
        refuse(reply, frame, *refusal);
        return false;
    }
    connection->noteOfferedRelease(request.value().value(QStringLiteral("offer")).toObject().value(QStringLiteral("release")).toString());
    const QJsonValue nodeId = request.value().value(QStringLiteral("nodeId"));
    if (!nodeId.isString() || nodeId.toString().isEmpty()) {
        refuse(reply, frame, named(refusal::requestInvalid, nodeId.isUndefined() ? QStringLiteral("field request.nodeId is missing")
                                                                                 : QStringLiteral("field request.nodeId is not a non-empty string")));
        return false;
    }
    // An id by §1 "Strings" (at most 256 characters, no control characters) before anything is
    // forwarded; the refusal never repeats the value.
    if (!isId(nodeId.toString())) {
        refuse(reply, frame, named(refusal::requestInvalid, QStringLiteral("field request.nodeId ") + notAnIdReason()));
        return false;
    }
    return true;
}

// A registration waits out a brief reconnect (§8.1); it counts as in flight while it waits.
void UpstreamForwarder::waitForSession(const std::shared_ptr<Upstream> &op)
{
    if (m_refusalLog.admit(*op->connection))
        qCInfo(logForwarder).noquote() << "holding registerPalletRuntimeSession from" << op->connection->describe()
                                       << "until the Cloudly session is back (at most" << m_timing.registrationWaitMs << "ms)"
                                       << FrameRefusalLog::countNote(*op->connection);
    op->waitTimer = m_clock.createTimer();
    std::weak_ptr<Upstream> weak = op;
    connect(op->waitTimer.get(), &ClockTimer::timeout, this, [this, weak] {
        auto op = weak.lock();
        if (!op)
            return;
        m_waitingForSession.removeAll(op);
        if (op->connection)
            op->connection->forwardEnded();
        // Held past its budget behind a backlogged session (flushHeld), or no session came back.
        if (m_cloudly.isDispatchable())
            refuse(op->reply, op->frame,
                   named(refusal::cloudlyForwardTimeout,
                         QStringLiteral("no answer from Cloudly within %1 ms").arg(m_timing.registrationBudgetMs)));
        else
            refuse(op->reply, op->frame,
                   named(refusal::cloudlySessionUnavailable,
                         QStringLiteral("no Cloudly session after waiting %1 ms").arg(m_timing.registrationWaitMs)));
        Q_EMIT statusChanged();
    });
    op->waitTimer->start(m_timing.registrationWaitMs);
    m_waitingForSession.append(op);
    op->connection->forwardBegan();
}

// Held registrations leave in arrival order under the same backlog marks as live forwarding (§3.4,
// D-58): once the session is backlogged the rest wait for it to drain (sendBacklogChanged(false))
// instead of going out in one burst past the session's 32 MiB send bound. While they wait behind the
// backlog each is bounded by its registration budget counted from its arrival.
void UpstreamForwarder::flushHeld()
{
    while (!m_waitingForSession.isEmpty() && m_cloudly.isDispatchable() && !m_cloudly.isSendBacklogged()) {
        const std::shared_ptr<Upstream> op = m_waitingForSession.takeFirst();
        op->waitTimer->stop();
        if (op->connection)
            op->connection->forwardEnded();
        send(op);
    }
    if (m_waitingForSession.isEmpty() || !m_cloudly.isDispatchable())
        return;
    const qint64 now = m_clock.nowMs();
    for (const auto &op : std::as_const(m_waitingForSession))
        op->waitTimer->start(qMax<qint64>(1, m_timing.registrationBudgetMs - (now - op->arrivedAtMs)));
}

void UpstreamForwarder::send(const std::shared_ptr<Upstream> &op)
{
    const qint64 budget = op->registration
                              ? qMax<qint64>(1, m_timing.registrationBudgetMs - (m_clock.nowMs() - op->arrivedAtMs))
                              : m_timing.forwardTimeoutMs;
    if (op->connection) {
        op->connection->forwardBegan();
        op->connection->forwardSent(op->frame.method, m_clock.nowMs());
    }
    m_counters.countForward();
    m_inFlight.emplace(op.get(), op);
    qCDebug(logForwarder).noquote() << "forwarding" << op->frame.method << "from"
                                    << (op->connection ? op->connection->describe() : QStringLiteral("a closed connection"));
    op->callId = m_cloudly.call(op->frame.method, op->frame.request, budget,
                                [this, op, budget](const CloudlyConnector::CallResult &result) {
                                    CloudlyConnector::CallResult r = result;
                                    if (!r.delivered && r.refusal.name == QLatin1String(refusal::cloudlyForwardTimeout))
                                        r.refusal.reason = QStringLiteral("no answer from Cloudly within %1 ms")
                                                               .arg(op->registration ? m_timing.registrationBudgetMs : budget);
                                    finish(op, r);
                                });
    Q_EMIT statusChanged();
}

void UpstreamForwarder::finish(const std::shared_ptr<Upstream> &op, const CloudlyConnector::CallResult &result)
{
    m_inFlight.erase(op.get());
    NodeConnection *connection = op->connection.data();
    if (connection)
        connection->forwardEnded();
    if (!result.delivered) {
        // A peer can repeat what is not forwarded at will: the line is under the refusal log bound (§3.1, D-90).
        if (connection && m_refusalLog.admit(*connection))
            qCInfo(logForwarder).noquote() << op->frame.method << "for"
                                           << connection->describe() << "not forwarded:" << result.refusal.name
                                           << FrameRefusalLog::countNote(*connection);
        refuse(op->reply, op->frame, result.refusal);
        Q_EMIT statusChanged();
        return;
    }
    const Frame &answer = result.answer;
    if (answer.hasError()) {
        op->reply(Envelope::relayedError(op->frame.method, op->frame.correlationId, op->frame.request, answer.error, answer.retry));
        Q_EMIT statusChanged();
        return;
    }
    if (op->registration && connection)
        bindRegistration(connection, answer);
    op->reply(Envelope::response(op->frame.method, op->frame.correlationId, op->frame.request, answer.response));
    Q_EMIT statusChanged();
}

// The one value-free fact read from a registration answer: the binding Cloudly issued (§8.1).
void UpstreamForwarder::bindRegistration(NodeConnection *connection, const Frame &answer)
{
    auto response = answer.responseObject();
    if (response) {
        const QJsonValue session = response.value().value(QStringLiteral("session"));
        if (session.isObject()) {
            auto binding = SessionBinding::read(session.toObject(), QStringLiteral("response.session"));
            if (binding)
                return m_registry.bind(connection, binding.value(), m_cloudly.carrierCount(), m_clock.nowMs());
        }
    }
    qCWarning(logForwarder).noquote() << "Cloudly accepted a registration without a readable session binding; the connection stays unbound";
}

void UpstreamForwarder::connectionClosed(NodeConnection *connection)
{
    for (auto it = m_waitingForSession.begin(); it != m_waitingForSession.end();) {
        if ((*it)->connection == connection) {
            (*it)->waitTimer->stop();
            it = m_waitingForSession.erase(it);
        } else {
            ++it;
        }
    }
    for (auto it = m_inFlight.begin(); it != m_inFlight.end();) {
        if (it->second->connection == connection) {
            m_cloudly.cancel(it->second->callId);
            it = m_inFlight.erase(it);
        } else {
            ++it;
        }
    }
}

} // namespace coreflow
