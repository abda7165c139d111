#pragma once
// RenewalWindows: which renewal of a held run is due, and when the next thing happens — pure functions
// of the run's windows and the relay's clock, so every timing rule is unit-tested without a socket
// (docs/contract.md §9.4; rules ES-19, ES-21, ES-25, ES-37).
//
// All times are Unix ms by the relay's clock; a window is [notBefore, expiresAt). The relay's clock only
// chooses which renewal to offer (ES-30): nothing here shifts or extends a window.
#include "service/escrow/dnsleaserenewalrun.h"

namespace coreflow {

class RenewalWindows {
public:
    using Renewals = QVector<DnsLeaseRenewalRun::Renewal>;

    // ES-19: the renewal to offer at nowMs: notBefore + marginMs <= nowMs < expiresAt, the one with the
    // latest notBefore when two qualify (the later sequence on a tie). -1 when none is eligible.
    static int dueIndex(const Renewals &renewals, qint64 nowMs, qint64 marginMs);
    // ES-21: the earliest notBefore + marginMs strictly after nowMs of a window that is still open then,
    // or -1 when no window opens any more.
    static qint64 nextOpeningMs(const Renewals &renewals, qint64 nowMs, qint64 marginMs);
    // ES-25: re-offers of renewal i stop at the end of the window before it in the run (the window a
    // node that kept up still holds); for the run's first renewal, at its own end. Never after its own end.
    static qint64 reofferDeadlineMs(const Renewals &renewals, int i);
    // Status: the latest window containing nowMs (no margin), or -1.
    static int currentIndex(const Renewals &renewals, qint64 nowMs);
    // Status: the earliest notBefore strictly after nowMs, or -1.
    static qint64 nextWindowStartMs(const Renewals &renewals, qint64 nowMs);
};

} // namespace coreflow
