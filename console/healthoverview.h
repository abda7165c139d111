#pragma once
// HealthOverview: the answer to "is this relay healthy, and if not, what do I do?", computed from one
// status snapshot (docs/contract.md §18.1). The top of `--text`/`--watch` (TerminalView) and the
// window's first tab (MainWindow) both show it.
//
//   hops     one line per hop, in this order: cloudly, registration, listener, node lane
//            (palletRuntime), ingress lane (clusterIngress), start (relay). Each is ok or a problem with
//            its state in words (the readiness line, the park line, the note).
//   counts   nodes carried; escrow runs held and how many of them had an offer fail; bindings failed
//            (status "failed", §18.1 bindings[].status) of all held; refusals the relay authored in the
//            last hour and since start (counters); clock skew (clockSkew).
//   certificate  a warning from certificateWarningDays (14) days before the listener certificate's
//            notAfter (and once it has passed): renewal is not built, so a restart is the operator's job.
//   nextAction   one sentence: what to do first (the first problem in the order above; "nothing to do"
//            when healthy). For a failed binding it names the reason and what to change where (§12.2).
// A problem is shown highlighted (text: a leading "!"; window: coloured).
#include "shared/status/relaystatus.h"

#include <QList>
#include <QString>

namespace coreflow::console {

class HealthOverview {
public:
    static constexpr qint64 certificateWarningDays = 14;

    struct Line {
        QString key;    // "cloudly", "registration", "listener", "node lane", "ingress lane", "start", ...
        QString value;  // "ok" or the state in words
        bool problem = false;
    };

    explicit HealthOverview(const status::RelayStatus &status);

    bool healthy() const { return m_healthy; }
    QString verdict() const;                 // "HEALTHY" | "NOT READY" | "PARKED" | "READY, WITH WARNINGS"
    const QList<Line> &hops() const { return m_hops; }
    const QList<Line> &counts() const { return m_counts; }
    const QString &nextAction() const { return m_nextAction; }
    int escrowFailed() const { return m_escrowFailed; }
    int bindingsFailed() const { return m_bindingsFailed; }
    // Whether the certificate warning applies (inside the 14 days, or expired).
    bool certificateWarning() const { return m_certificateWarning; }
    // Whether a row shows a problem (the window colours these; the text marks them).
    static bool escrowRowFailed(const status::EscrowRun &run);
    static bool bindingRowFailed(const status::PlatformBinding &binding);
    // A closure transfer that ended without being stored or restored (§18.1 backups.recent).
    static bool closureOutcomeFailed(const status::ClosureOutcomeStatus &outcome);
    static bool nodeRowTroubled(const status::CarriedNode &node); // keepalive "silent" (§3.3)

private:
    bool m_healthy = false;
    bool m_ready = false;
    bool m_parked = false;
    bool m_certificateWarning = false;
    int m_escrowFailed = 0;
    int m_bindingsFailed = 0;
    QList<Line> m_hops;
    QList<Line> m_counts;
    QString m_nextAction;
};

} // namespace coreflow::console
