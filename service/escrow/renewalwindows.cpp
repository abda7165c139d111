#include "service/escrow/renewalwindows.h"

namespace coreflow {

int RenewalWindows::dueIndex(const Renewals &renewals, qint64 nowMs, qint64 marginMs)
{
    int best = -1;
    for (int i = 0; i < renewals.size(); ++i) {
        const auto &r = renewals.at(i);
        if (r.notBeforeMs + marginMs <= nowMs && nowMs < r.expiresAtMs
            && (best < 0 || r.notBeforeMs >= renewals.at(best).notBeforeMs))
            best = i;
    }
    return best;
}

qint64 RenewalWindows::nextOpeningMs(const Renewals &renewals, qint64 nowMs, qint64 marginMs)
{
    qint64 best = -1;
    for (const auto &r : renewals) {
        const qint64 opening = r.notBeforeMs + marginMs;
        if (opening > nowMs && opening < r.expiresAtMs && (best < 0 || opening < best))
            best = opening;
    }
    return best;
}

qint64 RenewalWindows::reofferDeadlineMs(const Renewals &renewals, int i)
{
    if (i < 0 || i >= renewals.size())
        return -1;
    const qint64 own = renewals.at(i).expiresAtMs;
    return i == 0 ? own : qMin(own, renewals.at(i - 1).expiresAtMs);
}

int RenewalWindows::currentIndex(const Renewals &renewals, qint64 nowMs)
{
    return dueIndex(renewals, nowMs, 0);
}

qint64 RenewalWindows::nextWindowStartMs(const Renewals &renewals, qint64 nowMs)
{
    qint64 best = -1;
    for (const auto &r : renewals)
        if (r.notBeforeMs > nowMs && (best < 0 || r.notBeforeMs < best))
            best = r.notBeforeMs;
    return best;
}

} // namespace coreflow
