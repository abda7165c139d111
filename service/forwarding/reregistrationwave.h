#pragma once
// ReregistrationWave: outage continuity (docs/contract.md §8.4; rules
// OC-01..OC-09, D-11). Cloudly keys a node's session by the carrier that registered it, so after this
// relay's Cloudly session reconnects every node registered under an older carrier count is asked to
// register again by closing its socket.
//
// carrierDispatchable(count, newCarrier) starts a wave when the count rose (newCarrier true; an identity
// renewal on the unbroken socket changes nothing, OC-02): the members are the carried nodes registered
// under a carrier count below `count`, closed in node-id order, the first at once and then
// spacingMs(N) = min(reregistrationSpacingMs, reregistrationWindowMs / N) apart (75 ms; compressed so
// all N closes fall inside [0, 5000) ms, OC-05/06, D-11). Each close is logged
//   node <id> asked to re-register: this relay's Cloudly session changed        (OC-07)
// and only made if the node is still carried on the same connection under an older count (OC-08).
// sessionLost() stops the wave at once: while the relay has no session nobody is closed (OC-09); the
// next dispatchable (a new carrier by construction) starts a wave with the new count, which includes
// the nodes the stopped wave had not reached. ONE ClockTimer, owned here. Nothing is replayed (OC-12).
#include "shared/contract/timing.h"
#include "shared/util/clock.h"

#include <QList>
#include <QObject>
#include <functional>
#include <memory>

namespace coreflow {

class NodeRegistry;

class ReregistrationWave : public QObject {
    Q_OBJECT
public:
    // A carried node as the wave sees it: the connection it registered on and the count it registered under.
    struct Member {
        QString nodeId;
        quint64 connectionId = 0;
        qint64 registeredUnderCarrier = 0;
    };
    // Every carried node (the forwarder's registry).
    using Lister = std::function<QList<Member>()>;
    // Closes the member's connection if it is still carried on that connection under a count below
    // olderThan; returns whether it closed it.
    using Closer = std::function<bool(const Member &member, qint64 olderThan)>;

    ReregistrationWave(Clock &clock, const contract::RelayTiming &timing, Lister lister, Closer closer,
                       QObject *parent = nullptr);
    // The relay's wave: the members are the nodes registry carries; a member is closed with code 4000
    // and reason "cloudly session changed; register again" (§8.4) when registry still carries it on
    // the same open connection under a count below olderThan.
    ReregistrationWave(Clock &clock, const contract::RelayTiming &timing, const NodeRegistry &registry,
                       QObject *parent = nullptr);
    ~ReregistrationWave() override;

    void carrierDispatchable(qint64 carrierCount, bool newCarrier);
    void sessionLost();
    void stop();

    bool isRunning() const { return !m_members.isEmpty(); }
    int remaining() const { return int(m_members.size() - m_next); }
    qint64 carrierCount() const { return m_carrier; }

    // Spacing between consecutive closes for n nodes, ms (fractional): min(spacing, window / n).
    static double spacingMs(int n, const contract::RelayTiming &timing);
    // Offset of close i (0-based) from the wave's start, ms: floor(i * spacingMs(n)); offset(0) = 0 and
    // offset(n-1) < window.
    static qint64 offsetMs(int i, int n, const contract::RelayTiming &timing);

Q_SIGNALS:
    // A wave began: `members` nodes (≥ 1) registered under an older carrier than carrierCount.
    void started(qint64 carrierCount, int members);
    // A node was asked to re-register, at atMs (clock ms).
    void nodeAsked(const QString &nodeId, qint64 atMs);
    void finished(qint64 carrierCount, int closed);

private:
    void closeDue();

    Clock &m_clock;
    contract::RelayTiming m_timing;
    Lister m_lister;
    Closer m_closer;
    std::unique_ptr<ClockTimer> m_timer;
    QList<Member> m_members;
    qsizetype m_next = 0;
    qint64 m_carrier = 0;
    qint64 m_startedAtMs = 0;
    int m_closed = 0;
};

} // namespace coreflow
