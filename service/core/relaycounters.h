#pragma once
// RelayCounters: what the relay has done since start, for the status model (forwards, pushes,
// refusals by name, re-registration waves, escrow offers by outcome; reconnects are read from the
// connector, registry requests from the registry proxy, status clients from the status server). Value-free: names and counts only.
// With a clock, refusals are also counted per minute for counters.refusalsLastHour (§18.1, D-74).
#include "service/core/refusalminutering.h"
#include "shared/util/clock.h"

#include <QMap>
#include <QString>

namespace coreflow {

class RelayCounters {
public:
    explicit RelayCounters(Clock *clock = nullptr) : m_clock(clock) {}
    void countForward() { ++m_forwards; }
    void countPush() { ++m_pushes; }
    void countRefusal(const QString &name)
    {
        ++m_refusals[name];
        if (m_clock)
            m_refusalMinutes.count(m_clock->nowMs());
    }
    // Refusals authored in the current minute and the 59 before it by the clock; 0 without a clock.
    qint64 refusalsLastHour() const { return m_clock ? m_refusalMinutes.lastHour(m_clock->nowMs()) : 0; }
    void countReregistrationWave() { ++m_waves; }
    // outcome: "delivered" | "failed" (docs/contract.md §18.1 counters.escrowOffersByOutcome)
    void countEscrowOffer(const QString &outcome) { ++m_escrowOffers[outcome]; }
    qint64 reregistrationWaves() const { return m_waves; }
    const QMap<QString, qint64> &escrowOffersByOutcome() const { return m_escrowOffers; }
    qint64 forwards() const { return m_forwards; }
    qint64 pushes() const { return m_pushes; }
    const QMap<QString, qint64> &refusalsByName() const { return m_refusals; }

private:
    Clock *m_clock;
    RefusalMinuteRing m_refusalMinutes;
    qint64 m_forwards = 0;
    qint64 m_pushes = 0;
    QMap<QString, qint64> m_refusals;
    qint64 m_waves = 0;
    QMap<QString, qint64> m_escrowOffers;
};

} // namespace coreflow
