#pragma once
// RelayCounters: what the relay has done since start, for the status model (forwards, pushes,
// refusals by name, re-registration waves, escrow offers by outcome; reconnects are read from the
// connector, registry requests from the registry proxy, status clients from the status server). Value-free: names and counts only.
#include <QMap>
#include <QString>

namespace coreflow {

class RelayCounters {
public:
    void countForward() { ++m_forwards; }
    void countPush() { ++m_pushes; }
    void countRefusal(const QString &name) { ++m_refusals[name]; }
    void countReregistrationWave() { ++m_waves; }
    // outcome: "delivered" | "failed" (docs/contract.md §18.1 counters.escrowOffersByOutcome)
    void countEscrowOffer(const QString &outcome) { ++m_escrowOffers[outcome]; }
    qint64 reregistrationWaves() const { return m_waves; }
    const QMap<QString, qint64> &escrowOffersByOutcome() const { return m_escrowOffers; }
    qint64 forwards() const { return m_forwards; }
    qint64 pushes() const { return m_pushes; }
    const QMap<QString, qint64> &refusalsByName() const { return m_refusals; }

private:
    qint64 m_forwards = 0;
    qint64 m_pushes = 0;
    QMap<QString, qint64> m_refusals;
    qint64 m_waves = 0;
    QMap<QString, qint64> m_escrowOffers;
};

} // namespace coreflow
