#include "service/forwarding/reregistrationwave.h"

#include "service/core/logging.h"
#include "service/forwarding/nodeconnection.h"
#include "service/forwarding/noderegistry.h"

#include <algorithm>
#include <cmath>

namespace coreflow {

namespace {
// §8.4: a node registered under an older carrier count is closed with 4000 (application range).
constexpr quint16 kRegisterAgainCloseCode = 4000;
} // namespace

ReregistrationWave::ReregistrationWave(Clock &clock, const contract::RelayTiming &timing, Lister lister, Closer closer, QObject *parent)
    : QObject(parent), m_clock(clock), m_timing(timing), m_lister(std::move(lister)), m_closer(std::move(closer))
{
    m_timer = m_clock.createTimer(this);
    connect(m_timer.get(), &ClockTimer::timeout, this, &ReregistrationWave::closeDue);
}

ReregistrationWave::ReregistrationWave(Clock &clock, const contract::RelayTiming &timing, const NodeRegistry &registry,
                                       QObject *parent)
    : ReregistrationWave(
          clock, timing,
          [&registry] {
              QList<Member> members;
              for (const NodeConnection *c : registry.carriedConnections())
                  if (c->binding())
                      members.append(Member{c->binding()->nodeId, c->connectionId(), c->registeredUnderCarrier()});
              return members;
          },
          [&registry](const Member &member, qint64 olderThan) {
              NodeConnection *c = registry.carried(member.nodeId);
              if (!c || c->connectionId() != member.connectionId || c->registeredUnderCarrier() >= olderThan || !c->isOpen())
                  return false;
              c->close(kRegisterAgainCloseCode, QStringLiteral("cloudly session changed; register again"));
              return true;
          },
          parent)
{
}

ReregistrationWave::~ReregistrationWave() = default;

double ReregistrationWave::spacingMs(int n, const contract::RelayTiming &timing)
{
    if (n <= 0)
        return double(timing.reregistrationSpacingMs);
    return std::min(double(timing.reregistrationSpacingMs), double(timing.reregistrationWindowMs) / double(n));
}

qint64 ReregistrationWave::offsetMs(int i, int n, const contract::RelayTiming &timing)
{
    return qint64(std::floor(double(i) * spacingMs(n, timing)));
}

void ReregistrationWave::carrierDispatchable(qint64 carrierCount, bool newCarrier)
{
    if (!newCarrier || carrierCount <= m_carrier)
        return; // an identity renewal on the unbroken socket keeps the carrier (OC-02)
    m_carrier = carrierCount;
    m_timer->stop();
    m_members.clear();
    m_next = 0;
    m_closed = 0;
    const QList<Member> carried = m_lister ? m_lister() : QList<Member>{};
    for (const Member &m : carried)
        if (m.registeredUnderCarrier < carrierCount)
            m_members.append(m);
    if (m_members.isEmpty())
        return;
    std::sort(m_members.begin(), m_members.end(), [](const Member &a, const Member &b) { return a.nodeId < b.nodeId; });
    qCInfo(logForwarder).noquote() << "Cloudly session changed (carrier" << carrierCount << "):" << m_members.size()
                                   << "nodes registered under an older carrier are asked to register again, one every"
                                   << spacingMs(int(m_members.size()), m_timing) << "ms";
    m_startedAtMs = m_clock.nowMs();
    Q_EMIT started(carrierCount, int(m_members.size()));
    closeDue();
}

void ReregistrationWave::sessionLost()
{
    if (m_members.isEmpty())
        return;
    qCInfo(logForwarder).noquote() << "Cloudly session lost during the re-registration wave;" << remaining()
                                   << "nodes stay connected until the session is back";
    m_timer->stop();
    m_members.clear();
    m_next = 0;
}

void ReregistrationWave::stop()
{
    m_timer->stop();
    m_members.clear();
    m_next = 0;
}

void ReregistrationWave::closeDue()
{
    const int n = int(m_members.size());
    const qint64 elapsed = m_clock.nowMs() - m_startedAtMs;
    while (m_next < n && offsetMs(int(m_next), n, m_timing) <= elapsed) {
        const Member member = m_members.at(m_next++);
        if (m_closer && m_closer(member, m_carrier)) {
            ++m_closed;
            qCInfo(logForwarder).noquote() << QStringLiteral("node %1 asked to re-register: this relay's Cloudly session changed").arg(member.nodeId);
            Q_EMIT nodeAsked(member.nodeId, m_clock.nowMs());
        }
    }
    if (m_next < n) {
        m_timer->start(qMax<qint64>(0, m_startedAtMs + offsetMs(int(m_next), n, m_timing) - m_clock.nowMs()));
        return;
    }
    const qint64 carrier = m_carrier;
    const int closed = m_closed;
    m_members.clear();
    m_next = 0;
    Q_EMIT finished(carrier, closed);
}

} // namespace coreflow
