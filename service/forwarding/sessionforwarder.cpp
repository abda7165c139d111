#include "service/forwarding/sessionforwarder.h"

#include "service/core/logging.h"
#include "shared/contract/refusalnames.h"

#include <QJsonDocument>
#include <utility>
#include <QJsonObject>

namespace coreflow {

using namespace contract;

SessionForwarder::SessionForwarder(CloudlyConnector &cloudly, MethodTable &nodeMethods, MethodTable &cloudlyMethods,
                                   RelayCounters &counters, Clock &clock, const RelayTiming &timing,
                                   RefusalLogBound &refusalLogBound, QObject *parent)
    : ListenerSessions(parent), m_cloudly(cloudly), m_nodeMethods(nodeMethods), m_counters(counters), m_clock(clock),
      m_refusalLog(refusalLogBound), m_requests(clock), m_upstream(cloudly, nodeMethods, m_registry, counters, clock, timing, m_refusalLog),
      m_pushes(cloudlyMethods, m_registry, m_requests, counters, timing),
      m_registrationDeadlineMs(timing.registrationDeadlineMs), m_registrationDeadlines(clock)
{
    connect(&m_cloudly, &CloudlyConnector::sendBacklogChanged, this, &SessionForwarder::pauseReading);
}

SessionForwarder::~SessionForwarder() = default;

void SessionForwarder::pauseReading(bool paused)
{
    for (NodeConnection *c : m_registry.connections())
        c->setReadPaused(paused);
}

void SessionForwarder::adoptSession(WebSocketSession *session)
{
    auto *connection = new NodeConnection(session, m_nextConnectionId++, m_clock.nowMs(), *this, this);
    m_registry.add(connection);
    if (m_cloudly.isSendBacklogged())
        connection->setReadPaused(true);
    if (m_registrationDeadlineMs > 0) {
        QPointer<NodeConnection> watched = connection;
        m_registrationDeadlines.schedule(m_registrationDeadlineMs, [this, watched] {
            if (!watched || watched->isAdmitted() || !watched->isOpen())
                return;
            m_counters.countRefusal(QString(refusal::registrationDeadline));
            qCDebug(logForwarder).noquote() << watched->describe() << "did not register within" << m_registrationDeadlineMs << "ms";
            watched->close(QWebSocketProtocol::CloseCodePolicyViolated, QString(refusal::registrationDeadline));
        });
    }
    qCDebug(logForwarder).noquote() << "accepted" << connection->describe();
    Q_EMIT statusChanged();
}

void SessionForwarder::closeAll(const QString &reason)
{
    const auto connections = m_registry.connections();
    for (NodeConnection *c : connections)
        c->close(QWebSocketProtocol::CloseCodeGoingAway, reason);
    for (NodeConnection *c : connections)
        nodeClosed(c);
}

void SessionForwarder::drain(std::function<void()> drained)
{
    m_upstream.stopAccepting();
    m_drained = std::move(drained);
    m_requests.setIdleCallback([this] { checkDrained(); });
    connect(&m_upstream, &UpstreamForwarder::statusChanged, this, &SessionForwarder::checkDrained, Qt::UniqueConnection);
    checkDrained();
}

void SessionForwarder::checkDrained()
{
    if (!m_drained || workInFlight() > 0)
        return;
    // From the event loop: the request that just ended is still on the stack.
    QMetaObject::invokeMethod(this, [drained = std::exchange(m_drained, nullptr)] { drained(); }, Qt::QueuedConnection);
}

void SessionForwarder::nodeClosed(NodeConnection *connection)
{
    if (!m_registry.remove(connection))
        return;
    m_upstream.connectionClosed(connection);
    m_requests.connectionLost(connection);
    Q_EMIT connectionClosed(connection);
    connection->retire();
    Q_EMIT statusChanged();
}

void SessionForwarder::nodeFrame(NodeConnection *connection, const QByteArray &utf8)
{
    auto parsed = Envelope::parse(utf8);
    if (!parsed) {
        answerUnreadable(connection, utf8, parsed.refusal());
        return;
    }
    const Frame &frame = parsed.value();
    if (frame.phase == Phase::Response) {
        if (!m_requests.answered(connection, frame))
            qCDebug(logForwarder).noquote() << connection->describe() << "answered no pending request (" << frame.method << ")";
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
    if (m_refusalLog.admit(*connection))
        qCWarning(logForwarder).noquote() << connection->describe() << "sent an unreadable frame:" << refusal.name
                                          << FrameRefusalLog::countNote(*connection);
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

} // namespace coreflow
