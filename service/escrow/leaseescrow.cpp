#include "service/escrow/leaseescrow.h"

#include "service/core/logging.h"
#include "shared/contract/methods.h"
#include "shared/contract/refusalnames.h"
#include "service/escrow/renewalwindows.h"
#include "service/escrow/runprecedence.h"

#include <QDateTime>
#include <QPointer>
#include <algorithm>
#include <utility>

namespace coreflow {

using namespace contract;

namespace {
Refusal named(QLatin1StringView name, const QString &reason) { return Refusal{QString(name), reason}; }

QString utc(qint64 ms) { return QDateTime::fromMSecsSinceEpoch(ms, Qt::UTC).toString(Qt::ISODateWithMs); }

// A hold that reaches (or waits in the queue of) a stopping escrow (D-44).
Refusal stopping(const QString &nodeId)
{
    return named(refusal::escrowNodeNotCarried, QStringLiteral("node %1 is not carried by this relay: the relay is stopping").arg(nodeId));
}

// request.session.nodeId, read before anything else so the node's binding can be read on arrival.
Result<QString> nodeIdOf(const Frame &frame)
{
    auto request = frame.requestObject();
    if (!request)
        return named(refusal::escrowRunInvalid, request.refusal().reason);
    const QJsonValue session = request.value().value(QStringLiteral("session"));
    if (!session.isObject())
        return named(refusal::escrowRunInvalid, QStringLiteral("field request.session is missing or not an object"));
    const QJsonValue nodeId = session.toObject().value(QStringLiteral("nodeId"));
    if (!nodeId.isString() || nodeId.toString().isEmpty())
        return named(refusal::escrowRunInvalid, QStringLiteral("field request.session.nodeId is missing or not a non-empty string"));
    return nodeId.toString();
}
} // namespace

LeaseEscrow::LeaseEscrow(EscrowCourier &courier, Clock &clock, const RelayTiming &timing, RelayCounters *counters, QObject *parent)
    : QObject(parent), m_courier(courier), m_clock(clock), m_timing(timing), m_counters(counters)
{
    m_timer = m_clock.createTimer(this);
    connect(m_timer.get(), &ClockTimer::timeout, this, &LeaseEscrow::release);
}

LeaseEscrow::~LeaseEscrow()
{
    // Holds still queued get their one answer even when the escrow goes away without stop().
    answerQueuedAsStopping();
}

void LeaseEscrow::answerQueuedAsStopping()
{
    // take the queue first: a reply may re-enter hold(), which refuses at once once m_stopped is set
    const QList<QueuedHold> queued = std::exchange(m_queue, {});
    for (const QueuedHold &item : queued)
        refuse(item.reply, item.frame, stopping(item.nodeId));
}

void LeaseEscrow::say(const QString &line, bool warning)
{
    if (warning)
        qCWarning(logEscrow).noquote() << line;
    else
        qCInfo(logEscrow).noquote() << line;
    Q_EMIT eventLine(line);
}

bool LeaseEscrow::refusesAsNotYetValid(const QString &refusalName)
{
    return refusalName.endsWith(QLatin1String(refusal::notYetValidSuffix));
}

void LeaseEscrow::suspectSkew(const QString &source, const QString &nodeId, qint64 nowMs, qint64 windowStartMs, qint64 skewMs,
                              const QString &line)
{
    // One line per node, source and window: a re-offer refused again every 30 s says it once.
    const bool repeated = m_skew.suspected && m_skew.source == source && m_skew.nodeId == nodeId && m_skew.windowStartMs == windowStartMs;
    m_skew = status::ClockSkew{true, source, nodeId, nowMs, windowStartMs, skewMs};
    if (!repeated)
        say(line, true);
    Q_EMIT statusChanged();
}

void LeaseEscrow::skewNotSeen()
{
    if (!m_skew.suspected)
        return;
    m_skew.suspected = false;
    qCInfo(logEscrow).noquote() << "clock skew no longer suspected: the last" << m_skew.source
                                << "observation is superseded by one within the admission margin";
}

void LeaseEscrow::refuse(const MethodTable::Reply &reply, const Frame &frame, const Refusal &refusal)
{
    if (m_counters)
        m_counters->countRefusal(refusal.name);
    qCInfo(logEscrow).noquote() << "holdRuntimeNetworkDnsLeaseRenewals refused:" << refusal.text();
    reply(MethodTable::refusalFor(frame, refusal));
}

// --- Custody --------------------------------------------------------------------------------------

void LeaseEscrow::hold(const Frame &frame, MethodTable::Reply reply)
{
    if (m_parked)
        return refuse(reply, frame, named(refusal::escrowRelayParked, QStringLiteral("this relay is parked; it holds nothing until it is restarted")));
    auto nodeId = nodeIdOf(frame);
    if (!nodeId)
        return refuse(reply, frame, nodeId.refusal());
    if (m_stopped)
        return refuse(reply, frame, stopping(nodeId.value()));
    // Read the node's session the moment the hold arrives, before anything is awaited (ES-09).
    const auto arrival = m_courier.currentBinding(nodeId.value());
    if (!arrival)
        return refuse(reply, frame, named(refusal::escrowNodeNotCarried, QStringLiteral("node %1 is not carried by this relay").arg(nodeId.value())));
    m_queue.append(QueuedHold{frame, std::move(reply), nodeId.value(), *arrival});
    if (!m_drainScheduled) {
        m_drainScheduled = true;
        QMetaObject::invokeMethod(this, &LeaseEscrow::drain, Qt::QueuedConnection);
    }
}

void LeaseEscrow::drain()
{
    m_drainScheduled = false;
    // One at a time, in arrival order (ES-11).
    while (!m_queue.isEmpty()) {
        QueuedHold item = m_queue.takeFirst();
        apply(item);
    }
}

void LeaseEscrow::apply(QueuedHold &item)
{
    const Frame &frame = item.frame;
    if (m_parked)
        return refuse(item.reply, frame, named(refusal::escrowRelayParked, QStringLiteral("this relay is parked; it holds nothing until it is restarted")));
    if (m_stopped)
        return refuse(item.reply, frame, stopping(item.nodeId));
    const qint64 now = m_clock.nowMs();
    auto run = DnsLeaseRenewalRun::read(frame.request, now, maximumEscrowHorizonMs, maximumEscrowedRenewals);
    if (!run)
        return refuse(item.reply, frame, run.refusal());
    // Read the session again once the run is validated (ES-09).
    const auto current = m_courier.currentBinding(item.nodeId);
    if (!current)
        return refuse(item.reply, frame, named(refusal::escrowNodeNotCarried, QStringLiteral("node %1 is not carried by this relay").arg(item.nodeId)));
    if (!(*current == item.arrivalBinding) || !(run->session() == *current))
        return refuse(item.reply, frame, named(refusal::escrowRunForeignSession,
                                               QStringLiteral("node %1 registered another session").arg(item.nodeId)));
    if (run->scopeProblem())
        return refuse(item.reply, frame, *run->scopeProblem());
    auto held = m_runs.find(item.nodeId);
    // A run whose last window ended holds nothing it could still offer: it takes no part in precedence
    // (ES-37 applies on arrival too, not only at a release). An empty run is kept (D-44).
    if (held != m_runs.end() && !held->run.isEmpty() && held->run.lastExpiresAtMs() <= now) {
        say(QStringLiteral("node %1: DNS lease renewal run dropped: its last window ended").arg(item.nodeId));
        m_runs.erase(held);
        held = m_runs.end();
        Q_EMIT statusChanged();
    }
    if (auto refusal = RunPrecedence::judge(held == m_runs.end() ? nullptr : &held->run, run.value()))
        return refuse(item.reply, frame, *refusal);

    Entry entry;
    entry.binding = *current;
    entry.run = std::move(run).value();
    const int count = entry.run.size();
    const ProjectionReference projection = entry.run.projection();
    const qint64 lastEnd = entry.run.lastExpiresAtMs();
    const bool replaced = held != m_runs.end();
    auto it = m_runs.insert(item.nodeId, std::move(entry));
    if (count == 0)
        say(QStringLiteral("node %1: Cloudly released custody of its DNS lease renewals for projection %2").arg(item.nodeId, projection.describe()));
    else
        say(QStringLiteral("node %1: holding %2 DNS lease renewals for projection %3 until %4%5")
                .arg(item.nodeId)
                .arg(count)
                .arg(projection.describe(), utc(lastEnd), replaced ? QStringLiteral(" (replaces the held run)") : QString()));
    item.reply(MethodTable::responseFor(frame, Envelope::compact(QJsonObject{{QStringLiteral("held"), count}})));
    // Cloudly signs the window containing its now first: a first window opening beyond the admission
    // margin after the relay's now says the two clocks disagree (§9.6, D-74).
    if (count > 0) {
        const qint64 opens = it->run.renewals().first().notBeforeMs;
        const qint64 ahead = opens - now;
        if (ahead > m_timing.escrowAdmissionMarginMs)
            suspectSkew(QStringLiteral("run-signed-ahead"), item.nodeId, now, opens, ahead,
                        QStringLiteral("clock-skew-suspected: node %1: Cloudly signed DNS lease renewal windows that open at %2; "
                                       "this relay's clock reads %3, %4 ms earlier, beyond the %5 ms admission margin; "
                                       "check NTP on this host")
                            .arg(item.nodeId, utc(opens), utc(now))
                            .arg(ahead)
                            .arg(m_timing.escrowAdmissionMarginMs));
        else
            skewNotSeen();
    }
    // A run handed over while the session is already lost is offered its current window at once (ES-28).
    if (m_releasing) {
        step(item.nodeId, it.value(), now);
        armIfEarlier(it->nextActionMs);
    }
    Q_EMIT statusChanged();
}

void LeaseEscrow::drop(const QString &nodeId, const QString &why)
{
    if (m_runs.remove(nodeId))
        say(QStringLiteral("node %1: DNS lease renewal run dropped: %2").arg(nodeId, why));
}

void LeaseEscrow::nodeRegistered(const SessionBinding &binding)
{
    auto it = m_runs.constFind(binding.nodeId);
    if (it == m_runs.constEnd() || it->binding == binding)
        return; // an identical binding keeps the run (ES-31)
    drop(binding.nodeId, QStringLiteral("the node registered another session"));
    Q_EMIT statusChanged();
}

void LeaseEscrow::projectionAcknowledged(const QString &nodeId, const ProjectionReference &ack)
{
    auto it = m_runs.constFind(nodeId);
    if (it == m_runs.constEnd())
        return;
    const ProjectionReference &run = it->run.projection();
    // D-08: an earlier generation of the run's projection keeps it; anything else it cannot renew drops it.
    const bool keep = ack.id == run.id && (ack.generation < run.generation || (ack.generation == run.generation && ack.digest == run.digest));
    if (keep)
        return;
    drop(nodeId, QStringLiteral("the node acknowledged projection %1, which the held run for %2 does not renew").arg(ack.describe(), run.describe()));
    Q_EMIT statusChanged();
}

void LeaseEscrow::pushAnswered(const QString &nodeId, const Frame &push, const Frame &answer)
{
    if (push.method != QLatin1String(method::applyRuntimeNetworkProjection) || answer.hasError())
        return;
    auto response = answer.responseObject();
    if (!response)
        return;
    const QJsonValue projection = response.value().value(QStringLiteral("projection"));
    if (!projection.isObject()) {
        qCDebug(logEscrow).noquote() << "node" << nodeId << "acknowledged a projection without a readable reference";
        return;
    }
    auto ack = ProjectionReference::read(projection.toObject(), QStringLiteral("response.projection"));
    if (!ack) {
        qCDebug(logEscrow).noquote() << "node" << nodeId << "acknowledged a projection with an unreadable reference:" << ack.refusal().reason;
        return;
    }
    projectionAcknowledged(nodeId, ack.value());
}

bool LeaseEscrow::statesThisRelayIsNotDispatchedTo(const QString &refusalName)
{
    return refusal::statesThisRelayIsNotDispatchedTo(refusalName); // the one list (contract/refusalnames.h)
}

bool LeaseEscrow::registrationRefused(const QString &refusalName)
{
    if (!statesThisRelayIsNotDispatchedTo(refusalName)) {
        if (!m_runs.isEmpty())
            qCInfo(logEscrow).noquote() << "registration answered" << refusalName << "- DNS lease renewal custody is kept";
        return false;
    }
    if (refusalName == QLatin1String(refusal::relayCredentialGenerationStale))
        park();
    else
        dropAll(QStringLiteral("Cloudly refused this relay's registration with %1").arg(refusalName));
    return true;
}

void LeaseEscrow::dropAll(const QString &reason)
{
    const int n = int(m_runs.size());
    m_runs.clear();
    arm();
    say(QStringLiteral("dropped the DNS lease renewal runs of %1 nodes: %2").arg(n).arg(reason));
    Q_EMIT statusChanged();
}

void LeaseEscrow::park()
{
    if (m_parked)
        return;
    m_parked = true;
    dropAll(QStringLiteral("this relay is parked; nothing is held again until it is restarted"));
}

void LeaseEscrow::stop()
{
    if (m_stopped)
        return;
    m_stopped = true;
    m_releasing = false;
    m_timer->stop();
    const int n = int(m_runs.size());
    m_runs.clear();
    qCInfo(logEscrow).noquote() << "escrow stopped; dropped the DNS lease renewal runs of" << n << "nodes";
    // Holds still waiting to be applied are answered now, not by a drain that may never run.
    answerQueuedAsStopping();
    Q_EMIT statusChanged();
}

// --- Release --------------------------------------------------------------------------------------

void LeaseEscrow::sessionLost()
{
    if (m_stopped)
        return;
    m_releasing = true;
    for (auto &e : m_runs) {
        e.offeredIndex = -1;
        e.outcome = Outcome::None;
        e.offerToken = 0;
    }
    if (!m_runs.isEmpty())
        say(QStringLiteral("Cloudly session lost: offering held DNS lease renewals to %1 nodes").arg(m_runs.size()));
    release();
}

void LeaseEscrow::sessionDispatchable()
{
    if (!m_releasing)
        return;
    m_releasing = false;
    m_timer->stop();
    for (auto &e : m_runs) {
        e.offerToken = 0; // answers still in flight change nothing any more
        e.nextActionMs = -1;
    }
    if (!m_runs.isEmpty())
        say(QStringLiteral("Cloudly session back: no more DNS lease renewals are offered"));
    Q_EMIT statusChanged();
}

void LeaseEscrow::release()
{
    if (!m_releasing || m_stopped) {
        m_timer->stop();
        return;
    }
    const qint64 now = m_clock.nowMs();
    bool changed = false;
    for (auto it = m_runs.begin(); it != m_runs.end();) {
        if (it->run.lastExpiresAtMs() <= now) { // ES-37
            say(QStringLiteral("node %1: DNS lease renewal run dropped: its last window ended").arg(it.key()));
            it = m_runs.erase(it);
            changed = true;
            continue;
        }
        step(it.key(), it.value(), now);
        ++it;
    }
    arm();
    if (changed)
        Q_EMIT statusChanged();
}

void LeaseEscrow::step(const QString &nodeId, Entry &e, qint64 now)
{
    const auto &renewals = e.run.renewals();
    const int due = RenewalWindows::dueIndex(renewals, now, m_timing.escrowAdmissionMarginMs);
    if (due >= 0) {
        if (due != e.offeredIndex)
            offer(nodeId, e, due, now);
        else if (e.outcome == Outcome::Failed && now >= e.lastOfferAtMs + m_timing.escrowReofferIntervalMs
                 && now < RenewalWindows::reofferDeadlineMs(renewals, due))
            offer(nodeId, e, due, now);
    }
    e.nextActionMs = nextActionMs(e, now);
}

qint64 LeaseEscrow::nextActionMs(const Entry &e, qint64 now) const
{
    const auto &renewals = e.run.renewals();
    qint64 next = e.run.lastExpiresAtMs();
    const qint64 opening = RenewalWindows::nextOpeningMs(renewals, now, m_timing.escrowAdmissionMarginMs);
    if (opening >= 0)
        next = qMin(next, opening);
    if (e.outcome == Outcome::Failed && e.offeredIndex >= 0) {
        // The re-offer is scheduled only when step() will make it: at a time before the deadline. A
        // re-offer due before the deadline but reached after it (a late timer, a late failure answer)
        // is not made, and must not arm the timer at 0 ms (D-45).
        const qint64 again = qMax(e.lastOfferAtMs + m_timing.escrowReofferIntervalMs, now);
        if (again < RenewalWindows::reofferDeadlineMs(renewals, e.offeredIndex))
            next = qMin(next, again);
    }
    return next;
}

void LeaseEscrow::offer(const QString &nodeId, Entry &e, int index, qint64 now)
{
    const DnsLeaseRenewalRun::Renewal &r = e.run.renewals().at(index);
    e.offeredIndex = index;
    e.outcome = Outcome::InFlight;
    e.lastOfferAtMs = now;
    const quint64 token = m_nextToken++;
    e.offerToken = token;
    // Only a node the forwarder carries is reached, with its current binding (ES-22, ES-23).
    const auto binding = m_courier.currentBinding(nodeId);
    if (!binding) {
        e.outcome = Outcome::Failed;
        e.lastOfferResult = QString(refusal::nodeNotConnected);
        if (m_counters)
            m_counters->countEscrowOffer(QStringLiteral("failed"));
        qCInfo(logEscrow).noquote() << "node" << nodeId << "is not connected; DNS lease renewal sequence" << r.sequence << "not offered";
        return;
    }
    qCInfo(logEscrow).noquote() << "offering DNS lease renewal sequence" << r.sequence << "(window" << utc(r.notBeforeMs) << "to"
                                << utc(r.expiresAtMs) << ") to node" << nodeId;
    QPointer<LeaseEscrow> self(this);
    m_courier.deliver(nodeId, e.run.offerRequest(index, *binding), m_timing.pushTimeoutMs,
                      [self, nodeId, token, index](const Frame *answer, const Refusal *refusal) {
                          if (self)
                              self->offerAnswered(nodeId, token, index, answer, refusal);
                      });
}

void LeaseEscrow::offerAnswered(const QString &nodeId, quint64 token, int index, const Frame *answer, const Refusal *refusal)
{
    auto it = m_runs.find(nodeId);
    if (it == m_runs.end() || it->offerToken != token || token == 0)
        return;
    Entry &e = it.value();
    QString result;
    bool ok = false;
    if (refusal) {
        result = refusal->name;
    } else if (answer->hasError()) {
        result = QStringLiteral("refused %1").arg(answer->errorRefusal().name);
    } else {
        auto response = answer->responseObject();
        auto state = response ? e.run.bindAcknowledgement(index, response.value()) : Result<QString>(response.refusal());
        ok = state.ok();
        result = ok ? state.value() : QStringLiteral("acknowledgement-unbound");
    }
    e.outcome = ok ? Outcome::Delivered : Outcome::Failed;
    e.lastOfferResult = result;
    const DnsLeaseRenewalRun::Renewal &offered = e.run.renewals().at(index);
    if (ok) {
        skewNotSeen();
    } else if (answer && answer->hasError() && refusesAsNotYetValid(answer->errorRefusal().name)) {
        // The relay offered it at notBefore + margin or later by its own clock (§9.4), so the node's
        // clock is behind the relay's by at least that much (§9.6, D-74).
        const qint64 now = m_clock.nowMs();
        suspectSkew(QStringLiteral("node-not-yet-valid"), nodeId, now, offered.notBeforeMs, now - offered.notBeforeMs,
                    QStringLiteral("clock-skew-suspected: node %1 refused DNS lease renewal sequence %2 as not yet valid; "
                                   "this relay's clock reads %3, the window opens %4 (%5 ms earlier); "
                                   "check NTP on this host and on the node")
                        .arg(nodeId)
                        .arg(offered.sequence)
                        .arg(utc(now), utc(offered.notBeforeMs))
                        .arg(now - offered.notBeforeMs));
    }
    if (m_counters)
        m_counters->countEscrowOffer(ok ? QStringLiteral("delivered") : QStringLiteral("failed"));
    const qint64 sequence = e.run.renewals().at(index).sequence;
    if (ok)
        qCInfo(logEscrow).noquote() << "node" << nodeId << "answered DNS lease renewal sequence" << sequence << ":" << result;
    else
        qCWarning(logEscrow).noquote() << "node" << nodeId << "did not take DNS lease renewal sequence" << sequence << ":" << result
                                       << "- offered again in" << m_timing.escrowReofferIntervalMs << "ms while its window allows";
    if (m_releasing) {
        const qint64 now = m_clock.nowMs();
        e.nextActionMs = nextActionMs(e, now);
        armIfEarlier(e.nextActionMs);
    }
    Q_EMIT statusChanged();
}

void LeaseEscrow::arm()
{
    if (!m_releasing || m_stopped) {
        m_timer->stop();
        return;
    }
    qint64 earliest = -1;
    for (const auto &e : std::as_const(m_runs))
        if (e.nextActionMs >= 0 && (earliest < 0 || e.nextActionMs < earliest))
            earliest = e.nextActionMs;
    if (earliest < 0) {
        m_timer->stop();
        return;
    }
    m_timer->start(qMax<qint64>(0, earliest - m_clock.nowMs()));
}

void LeaseEscrow::armIfEarlier(qint64 atMs)
{
    if (!m_releasing || m_stopped || atMs < 0)
        return;
    if (!m_timer->isActive() || atMs < m_timer->deadlineMs())
        m_timer->start(qMax<qint64>(0, atMs - m_clock.nowMs()));
}

// --- Observation ----------------------------------------------------------------------------------

qint64 LeaseEscrow::renewalCount() const
{
    qint64 n = 0;
    for (const auto &e : m_runs)
        n += e.run.size();
    return n;
}

qsizetype LeaseEscrow::retainedBytes() const
{
    qsizetype n = 0;
    for (const auto &e : m_runs)
        n += e.run.retainedBytes() + qsizetype(sizeof(Entry));
    return n;
}

qint64 LeaseEscrow::releaseDueMs() const { return m_timer->isActive() ? m_timer->deadlineMs() : -1; }

QList<status::EscrowRun> LeaseEscrow::statusRuns() const
{
    const qint64 now = m_clock.nowMs();
    QList<status::EscrowRun> rows;
    rows.reserve(m_runs.size());
    for (auto it = m_runs.constBegin(); it != m_runs.constEnd(); ++it) {
        const auto &renewals = it->run.renewals();
        const int current = RenewalWindows::currentIndex(renewals, now);
        const qint64 next = RenewalWindows::nextWindowStartMs(renewals, now);
        status::EscrowRun row;
        row.nodeId = it.key();
        row.projectionId = it->run.projection().id;
        row.projectionGeneration = it->run.projection().generation;
        row.renewalCount = it->run.size();
        row.currentWindowStartMs = current >= 0 ? renewals.at(current).notBeforeMs : 0;
        row.currentWindowEndMs = current >= 0 ? renewals.at(current).expiresAtMs : 0;
        row.nextWindowStartMs = next >= 0 ? next : 0;
        row.lastOfferResult = it->lastOfferResult.isEmpty() ? QStringLiteral("none") : it->lastOfferResult;
        for (const auto &r : renewals)
            row.authorityUntilMs = qMax(row.authorityUntilMs, r.expiresAtMs);
        rows.append(row);
    }
    std::sort(rows.begin(), rows.end(), [](const auto &a, const auto &b) { return a.nodeId < b.nodeId; });
    return rows;
}

} // namespace coreflow
