#include "service/forwarding/sessionforwarder.h"

#include "service/core/logging.h"
#include "shared/contract/exactkeyreader.h"
#include "shared/contract/methods.h"
#include "shared/contract/offers.h"
#include "shared/contract/refusalnames.h"

#include <QJsonDocument>

namespace coreflow {

using namespace contract;

namespace {
Refusal named(QLatin1StringView name, const QString &reason) { return Refusal{QString(name), reason}; }

// Reads request.session as a SessionBinding (exact keys). readable/member are what
// frame.requestMember("session") found (the caller has sliced it already).
Result<SessionBinding> sessionOf(const Frame &frame, bool readable, const std::optional<QByteArrayView> &member)
{
    // Fast path: parse only the sliced request.session (the body is forwarded byte-for-byte and never
    // needs a QJsonObject of its own).
    if (readable) {
        if (!member)
            return named(refusal::requestInvalid, QStringLiteral("field request.session is missing"));
        const QJsonDocument doc = member->startsWith('{') ? QJsonDocument::fromJson(member->toByteArray()) : QJsonDocument();
        if (!doc.isObject())
            return named(refusal::requestInvalid, QStringLiteral("field request.session is not an object"));
        return SessionBinding::read(doc.object(), QStringLiteral("request.session"));
    }
    auto request = frame.requestObject();
    if (!request)
        return request.refusal();
    const QJsonValue session = request.value().value(QStringLiteral("session"));
    if (session.isUndefined())
        return named(refusal::requestInvalid, QStringLiteral("field request.session is missing"));
    if (!session.isObject())
        return named(refusal::requestInvalid, QStringLiteral("field request.session is not an object"));
    return SessionBinding::read(session.toObject(), QStringLiteral("request.session"));
}
} // namespace

struct SessionForwarder::Upstream {
    Frame frame;                              // the node's request (method, node correlation id, raw body)
    QPointer<NodeConnection> connection;
    MethodTable::Reply reply;
    bool registration = false;
    qint64 arrivedAtMs = 0;
    std::unique_ptr<ClockTimer> waitTimer;    // registration: the wait for a session
    quint64 callId = 0;
};

struct SessionForwarder::PendingRequest {
    QPointer<NodeConnection> connection;
    QString method;
    AnswerCallback callback;
    DeadlineQueue::Handle deadline = 0; // in m_requestDeadlines
};

SessionForwarder::SessionForwarder(CloudlyConnector &cloudly, MethodTable &nodeMethods, MethodTable &cloudlyMethods,
                                   RelayCounters &counters, Clock &clock, const RelayTiming &timing, QObject *parent)
    : QObject(parent), m_cloudly(cloudly), m_nodeMethods(nodeMethods), m_cloudlyMethods(cloudlyMethods),
      m_counters(counters), m_clock(clock), m_timing(timing)
{
    // The six node methods and the four secret-recipient requests (FW-18) travel the same
    // current-session path; none of their bodies is read beyond request.session.
    auto forward = [this](const Frame &frame, const Caller &caller, MethodTable::Reply reply) {
        forwardUpstream(frame, caller.connection, reply);
    };
    for (const auto &name : method::nodeMethods)
        m_nodeMethods.add(QString(name), forward);
    for (const auto &name : method::nodeSecretMethods)
        m_nodeMethods.add(QString(name), forward);
    connect(&m_cloudly, &CloudlyConnector::dispatchable, this, &SessionForwarder::onDispatchable);
}

SessionForwarder::~SessionForwarder()
{
    detachPushHandlers();
    for (const auto &name : method::nodeMethods)
        m_nodeMethods.remove(QString(name));
    for (const auto &name : method::nodeSecretMethods)
        m_nodeMethods.remove(QString(name));
}

void SessionForwarder::attachPushHandlers()
{
    for (const auto &name : method::nodePushes) {
        m_cloudlyMethods.add(QString(name), [this](const Frame &frame, const Caller &, MethodTable::Reply reply) {
            pushDownstream(frame, reply);
        });
    }
}

void SessionForwarder::detachPushHandlers()
{
    for (const auto &name : method::nodePushes)
        m_cloudlyMethods.remove(QString(name));
}

void SessionForwarder::adoptSession(WebSocketSession *session)
{
    auto *connection = new NodeConnection(session, m_nextConnectionId++, m_clock.nowMs(), *this, this);
    m_connections.insert(connection->connectionId(), connection);
    qCDebug(logForwarder).noquote() << "accepted" << connection->describe();
    Q_EMIT statusChanged();
}

void SessionForwarder::closeAll(const QString &reason)
{
    const auto connections = m_connections.values();
    for (NodeConnection *c : connections)
        c->close(QWebSocketProtocol::CloseCodeGoingAway, reason);
    for (NodeConnection *c : connections)
        onClosed(c);
}

void SessionForwarder::onClosed(NodeConnection *connection)
{
    if (!m_connections.remove(connection->connectionId()))
        return;
    if (connection->binding && m_registry.value(connection->binding->nodeId) == connection) {
        m_registry.remove(connection->binding->nodeId);
        qCInfo(logForwarder).noquote() << connection->describe()
                                       << (connection->endedBySilence() ? "went silent (docs/contract.md §3.3); dropped, no longer carried"
                                                                        : "disconnected; no longer carried");
        Q_EMIT nodeGone(connection->binding->nodeId);
    }
    // Its registrations still waiting for a session are never sent, and answers to its forwards in
    // flight are no longer awaited: Cloudly must not issue a binding for a socket that is gone.
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
    // Requests waiting on this connection end now, by name.
    const auto ids = m_requests.keys();
    for (const QString &id : ids) {
        auto it = m_requests.constFind(id);
        if (it != m_requests.constEnd() && it.value()->connection == connection) {
            const Refusal r = named(refusal::nodeConnectionLost,
                                    QStringLiteral("%1 closed its connection before it answered %2")
                                        .arg(connection->describe(), it.value()->method));
            finishRequest(id, nullptr, &r);
        }
    }
    Q_EMIT connectionClosed(connection);
    connection->retire();
    Q_EMIT statusChanged();
}

void SessionForwarder::onFrame(NodeConnection *connection, const QByteArray &utf8)
{
    auto parsed = Envelope::parse(utf8);
    if (!parsed) {
        answerUnreadable(connection, utf8, parsed.refusal());
        return;
    }
    const Frame &frame = parsed.value();
    if (frame.phase == Phase::Response) {
        auto it = m_requests.constFind(frame.correlationId);
        if (it == m_requests.constEnd() || it.value()->connection != connection) {
            qCDebug(logForwarder).noquote() << connection->describe() << "answered no pending request (" << frame.method << ")";
            return;
        }
        finishRequest(frame.correlationId, &frame, nullptr);
        return;
    }
    QPointer<NodeConnection> origin = connection;
    m_nodeMethods.dispatch(frame, Caller{connection}, [origin](QByteArray answer) {
        if (origin)
            origin->send(answer);
    });
}

void SessionForwarder::answerUnreadable(NodeConnection *connection, const QByteArray &utf8, const Refusal &refusal)
{
    m_counters.countRefusal(refusal.name);
    // Answer by name when a correlation id can be read at all; otherwise there is nobody to answer.
    const QJsonDocument doc = QJsonDocument::fromJson(utf8);
    const QJsonObject correlation = doc.object().value(QStringLiteral("correlation")).toObject();
    const QString id = correlation.value(QStringLiteral("id")).toString();
    qCWarning(logForwarder).noquote() << connection->describe() << "sent an unreadable frame:" << refusal.name;
    if (id.isEmpty()) {
        // Nobody to answer: the peer does not speak the envelope (docs/contract.md §3).
        connection->close(refusal.name == QLatin1String(refusal::frameTooLarge) ? QWebSocketProtocol::CloseCodeTooMuchData
                                                                              : QWebSocketProtocol::CloseCodeProtocolError,
                          refusal.name);
        return;
    }
    const QString methodName = doc.object().value(QStringLiteral("method")).toString();
    connection->send(Envelope::refusal(methodName, id, QByteArrayView("{}"), refusal));
}

void SessionForwarder::refuse(const MethodTable::Reply &reply, const Frame &frame, const Refusal &refusal)
{
    m_counters.countRefusal(refusal.name);
    reply(MethodTable::refusalFor(frame, refusal));
}

std::optional<Refusal> SessionForwarder::checkBinding(const NodeConnection *connection, const SessionBinding &binding) const
{
    auto refused = [](const QString &why) { return named(refusal::sessionBindingRefused, why); };
    if (!connection->binding)
        return refused(QStringLiteral("this connection has registered no session"));
    const SessionBinding &own = *connection->binding;
    NodeConnection *current = m_registry.value(binding.nodeId);
    if (own == binding) {
        if (current == connection)
            return std::nullopt;
        return refused(QStringLiteral("the session of node %1 on this connection was superseded by a newer registration")
                           .arg(binding.nodeId));
    }
    if (current && current != connection && current->binding && *current->binding == binding)
        return refused(QStringLiteral("that session of node %1 was registered on another connection").arg(binding.nodeId));
    if (binding.nodeId != own.nodeId)
        return refused(QStringLiteral("the binding names node %1 but this connection registered node %2").arg(binding.nodeId, own.nodeId));
    if (binding.clusterId != own.clusterId)
        return refused(QStringLiteral("the binding names another cluster than the session registered here"));
    if (binding.sessionId != own.sessionId)
        return refused(QStringLiteral("the binding names a superseded session of node %1").arg(binding.nodeId));
    if (binding.relayRegistrationGeneration < own.relayRegistrationGeneration)
        return refused(QStringLiteral("the binding names an older relay registration generation (%1 < %2)")
                           .arg(binding.relayRegistrationGeneration)
                           .arg(own.relayRegistrationGeneration));
    return refused(QStringLiteral("the binding is not the one this connection registered"));
}

void SessionForwarder::forwardUpstream(const Frame &frame, NodeConnection *connection, const MethodTable::Reply &reply)
{
    if (!connection)
        return refuse(reply, frame, named(refusal::methodNotServed, QStringLiteral("node methods are served on the listener only")));
    auto op = std::make_shared<Upstream>();
    op->frame = frame;
    op->connection = connection;
    op->reply = reply;
    op->registration = frame.method == method::registerPalletRuntimeSession;
    op->arrivedAtMs = m_clock.nowMs();

    if (!op->registration) {
        // Fast path: the very bytes of request.session this connection presented before and that were
        // accepted then, while its binding and its place in the registry are unchanged, are accepted
        // again without parsing them (same bytes, same value, same verdict).
        bool readable = false;
        const std::optional<QByteArrayView> raw = frame.requestMember("session", &readable);
        const bool known = readable && raw && !connection->acceptedSessionRaw.isEmpty()
                           && *raw == QByteArrayView(connection->acceptedSessionRaw) && connection->binding
                           && m_registry.value(connection->binding->nodeId) == connection;
        if (!known) {
            auto binding = sessionOf(frame, readable, raw);
            if (!binding)
                return refuse(reply, frame, binding.refusal());
            if (auto refusal = checkBinding(connection, binding.value())) {
                qCInfo(logForwarder).noquote() << "refused" << frame.method << "from" << connection->describe() << ":" << refusal->name;
                return refuse(reply, frame, *refusal);
            }
            connection->acceptedSessionRaw = readable && raw ? raw->toByteArray() : QByteArray();
        }
        if (!m_cloudly.isDispatchable())
            return refuse(reply, frame, named(refusal::cloudlySessionUnavailable, QStringLiteral("no Cloudly session")));
        return sendUpstream(op);
    }

    // The peer's offer is judged before anything else is read, before any bearer travels and before
    // anything is forwarded (PV-07..PV-09).
    auto request = frame.requestObject();
    if (!request)
        return refuse(reply, frame, request.refusal());
    if (auto refusal = judgePeerOffer(request.value().value(QStringLiteral("offer")), sessionKind::palletRuntime)) {
        const QJsonObject peer = refusal->data.value(QStringLiteral("peerOffer")).toObject();
        const QString peerText = peer.isEmpty() ? QStringLiteral("no readable offer")
                                                : peer.value(QStringLiteral("sessionKind")).toString() + QLatin1Char('@')
                                                      + peer.value(QStringLiteral("release")).toString();
        qCWarning(logForwarder).noquote() << "refused registerPalletRuntimeSession from" << connection->describe() << ":"
                                          << refusal->text();
        Q_EMIT offerRefused(peerText, offerForPalletRuntime().describe(),
                            QStringLiteral("a node offered %1; %2").arg(peerText, refusal->reason));
        return refuse(reply, frame, *refusal);
    }
    Q_EMIT offerServed();
    {
        const QJsonValue nodeId = request.value().value(QStringLiteral("nodeId"));
        if (!nodeId.isString() || nodeId.toString().isEmpty())
            return refuse(reply, frame, named(refusal::requestInvalid, nodeId.isUndefined()
                                                                           ? QStringLiteral("field request.nodeId is missing")
                                                                           : QStringLiteral("field request.nodeId is not a non-empty string")));
    }
    if (m_cloudly.isDispatchable())
        return sendUpstream(op);
    // A registration waits out a brief reconnect.
    qCInfo(logForwarder).noquote() << "holding registerPalletRuntimeSession from" << connection->describe()
                                   << "until the Cloudly session is back (at most" << m_timing.registrationWaitMs << "ms)";
    op->waitTimer = m_clock.createTimer();
    std::weak_ptr<Upstream> weak = op;
    connect(op->waitTimer.get(), &ClockTimer::timeout, this, [this, weak] {
        auto op = weak.lock();
        if (!op)
            return;
        m_waitingForSession.removeAll(op);
        if (op->connection)
            op->connection->forwardsInFlight = qMax(0, op->connection->forwardsInFlight - 1);
        refuse(op->reply, op->frame,
               named(refusal::cloudlySessionUnavailable,
                     QStringLiteral("no Cloudly session after waiting %1 ms").arg(m_timing.registrationWaitMs)));
    });
    op->waitTimer->start(m_timing.registrationWaitMs);
    m_waitingForSession.append(op);
    if (op->connection)
        ++op->connection->forwardsInFlight;
}

void SessionForwarder::onDispatchable()
{
    const auto waiting = m_waitingForSession;
    m_waitingForSession.clear();
    for (const auto &op : waiting) {
        op->waitTimer->stop();
        if (op->connection)
            --op->connection->forwardsInFlight;
        sendUpstream(op);
    }
}

void SessionForwarder::sendUpstream(const std::shared_ptr<Upstream> &op)
{
    const qint64 budget = op->registration
                              ? qMax<qint64>(1, m_timing.registrationBudgetMs - (m_clock.nowMs() - op->arrivedAtMs))
                              : m_timing.forwardTimeoutMs;
    if (op->connection) {
        ++op->connection->forwardsInFlight;
        op->connection->lastMethod = op->frame.method;
        op->connection->lastForwardAtMs = m_clock.nowMs();
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
                                    finishUpstream(op, r);
                                });
    Q_EMIT statusChanged();
}

void SessionForwarder::finishUpstream(const std::shared_ptr<Upstream> &op, const CloudlyConnector::CallResult &result)
{
    m_inFlight.erase(op.get());
    NodeConnection *connection = op->connection.data();
    if (connection)
        connection->forwardsInFlight = qMax(0, connection->forwardsInFlight - 1);
    if (!result.delivered) {
        qCInfo(logForwarder).noquote() << op->frame.method << "for"
                                       << (connection ? connection->describe() : QStringLiteral("a closed connection"))
                                       << "not forwarded:" << result.refusal.name;
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
    if (op->registration && connection) {
        // The one value-free fact read from a registration answer: the binding Cloudly issued.
        auto response = answer.responseObject();
        std::optional<SessionBinding> binding;
        if (response) {
            const QJsonValue session = response.value().value(QStringLiteral("session"));
            if (session.isObject()) {
                auto read = SessionBinding::read(session.toObject(), QStringLiteral("response.session"));
                if (read)
                    binding = read.value();
            }
        }
        if (binding) {
            NodeConnection *previous = m_registry.value(binding->nodeId);
            if (previous && previous != connection) {
                // The superseded socket is closed, not kept until its TCP flow ends (§3.3).
                qCInfo(logForwarder).noquote() << "node" << binding->nodeId << "registered again on a new connection; the older one is superseded and closed";
                previous->close(QWebSocketProtocol::CloseCodeNormal, QString(refusal::nodeSuperseded));
            }
            if (connection->binding && connection->binding->nodeId != binding->nodeId
                && m_registry.value(connection->binding->nodeId) == connection)
                m_registry.remove(connection->binding->nodeId);
            connection->binding = *binding;
            connection->acceptedSessionRaw.clear(); // a new binding: the next request.session is read in full
            connection->registeredUnderCarrier = m_cloudly.carrierCount();
            connection->registeredAtMs = m_clock.nowMs();
            m_registry.insert(binding->nodeId, connection);
            qCInfo(logForwarder).noquote() << QStringLiteral("node %1 registered through this relay (carrier %2)").arg(binding->nodeId).arg(connection->registeredUnderCarrier);
            Q_EMIT nodeRegistered(binding->nodeId);
        } else {
            qCWarning(logForwarder).noquote() << "Cloudly accepted a registration without a readable session binding; the connection stays unbound";
        }
    }
    op->reply(Envelope::response(op->frame.method, op->frame.correlationId, op->frame.request, answer.response));
    Q_EMIT statusChanged();
}

void SessionForwarder::pushDownstream(const Frame &frame, const MethodTable::Reply &reply)
{
    bool readable = false;
    const std::optional<QByteArrayView> member = frame.requestMember("session", &readable);
    auto binding = sessionOf(frame, readable, member);
    if (!binding)
        return refuse(reply, frame, binding.refusal());
    const QString nodeId = binding->nodeId;
    NodeConnection *connection = m_registry.value(nodeId);
    if (!connection || !connection->isOpen()) {
        qCInfo(logForwarder).noquote() << frame.method << "for node" << nodeId << "refused: not connected";
        return refuse(reply, frame, named(refusal::nodeNotConnected, QStringLiteral("node %1 is not connected to this relay").arg(nodeId)));
    }
    m_counters.countPush();
    qCDebug(logForwarder).noquote() << "pushing" << frame.method << "to node" << nodeId;
    // The request frame is Cloudly's; it is kept (not copied) until the node answers.
    requestConnection(connection, frame.method, frame.request, m_timing.pushTimeoutMs,
                      [this, frame, reply, nodeId](const Frame *answer, const Refusal *refusal) {
                          if (refusal) {
                              qCInfo(logForwarder).noquote() << frame.method << "to node" << nodeId << "ended:" << refusal->name;
                              return refuse(reply, frame, *refusal);
                          }
                          if (answer->hasError())
                              reply(Envelope::relayedError(frame.method, frame.correlationId, frame.request, answer->error, answer->retry));
                          else
                              reply(Envelope::response(frame.method, frame.correlationId, frame.request, answer->response));
                          Q_EMIT pushAnswered(nodeId, frame, *answer);
                      });
}

QString SessionForwarder::requestConnection(NodeConnection *connection, const QString &method, QByteArrayView rawRequest,
                                            qint64 timeoutMs, AnswerCallback callback)
{
    const QString requestId = QStringLiteral("p%1").arg(m_nextRequestId++);
    auto pending = std::make_shared<PendingRequest>();
    pending->connection = connection;
    pending->method = method;
    pending->callback = std::move(callback);
    const QString who = connection->describe();
    pending->deadline = m_requestDeadlines.schedule(timeoutMs, [this, requestId, who, method, timeoutMs] {
        const Refusal r = named(refusal::nodePushTimeout,
                                QStringLiteral("%1 did not answer %2 within %3 ms").arg(who, method).arg(timeoutMs));
        finishRequest(requestId, nullptr, &r);
    });
    m_requests.insert(requestId, pending);
    connection->send(Envelope::request(method, requestId, rawRequest));
    return requestId;
}

void SessionForwarder::finishRequest(const QString &requestId, const Frame *answer, const Refusal *refusal)
{
    auto it = m_requests.find(requestId);
    if (it == m_requests.end())
        return;
    std::shared_ptr<PendingRequest> pending = it.value();
    m_requests.erase(it);
    m_requestDeadlines.cancel(pending->deadline);
    if (pending->callback)
        pending->callback(answer, refusal);
}

QList<status::CarriedNode> SessionForwarder::carriedNodes() const
{
    QList<status::CarriedNode> nodes;
    for (auto it = m_registry.constBegin(); it != m_registry.constEnd(); ++it) {
        const NodeConnection *c = it.value();
        nodes.append(status::CarriedNode{it.key(), c->registeredAtMs, c->registeredUnderCarrier, c->lastMethod,
                                         c->lastForwardAtMs, c->forwardsInFlight, c->lastReceivedAtMs(), c->keepaliveState()});
    }
    std::sort(nodes.begin(), nodes.end(), [](const auto &a, const auto &b) { return a.nodeId < b.nodeId; });
    return nodes;
}

} // namespace coreflow
