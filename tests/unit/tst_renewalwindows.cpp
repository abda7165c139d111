// RenewalWindows: which renewal is due and when, as pure functions of the windows and the relay clock.
// Rules: ES-12 (grid), ES-19 (margin boundary, overlap choice), ES-21 (next opening), ES-25 (re-offer
// deadline), ES-37 (a window's end is exclusive).
#include "service/escrow/renewalwindows.h"

#include <QTest>

using namespace coreflow;

namespace {
constexpr qint64 t0 = 1'700'000'000'000;
constexpr qint64 minute = 60000;
constexpr qint64 margin = 30000;

// Cloudly's grid (ES-12): 15-minute windows every 10 minutes.
RenewalWindows::Renewals grid(int n, qint64 start = t0)
{
    RenewalWindows::Renewals r;
    for (int k = 0; k < n; ++k)
        r.append(DnsLeaseRenewalRun::Renewal{k + 1, start + k * 10 * minute, start + k * 10 * minute + 15 * minute, 0, 0});
    return r;
}
} // namespace

class TstRenewalWindows : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // ES-19: notBefore + 30000 <= now: an offer exactly at notBefore (or 1 ms before the margin) is not made.
    void marginBoundary_ES19()
    {
        const auto r = grid(3);
        QCOMPARE(RenewalWindows::dueIndex(r, t0, margin), -1);
        QCOMPARE(RenewalWindows::dueIndex(r, t0 + margin - 1, margin), -1);
        QCOMPARE(RenewalWindows::dueIndex(r, t0 + margin, margin), 0);
    }

    // ES-19: when two windows overlap, the latest one that has been open for the margin.
    void overlapChoosesTheLatest_ES19()
    {
        const auto r = grid(3);
        // 10 min + 29.999 s: window 1 is open but not for the margin yet -> window 0 is still the one.
        QCOMPARE(RenewalWindows::dueIndex(r, t0 + 10 * minute + margin - 1, margin), 0);
        QCOMPARE(RenewalWindows::dueIndex(r, t0 + 10 * minute + margin, margin), 1);
        QCOMPARE(RenewalWindows::dueIndex(r, t0 + 14 * minute, margin), 1); // both open: the later
        // Order in the run does not matter: the latest notBefore wins.
        auto reversed = r;
        std::reverse(reversed.begin(), reversed.end());
        QCOMPARE(reversed.at(RenewalWindows::dueIndex(reversed, t0 + 14 * minute, margin)).sequence, 2);
    }

    // A window ends at expiresAt (exclusive); after the last one nothing is due (ES-37).
    void windowEndIsExclusive_ES37()
    {
        const auto r = grid(2);
        const qint64 lastEnd = r.last().expiresAtMs;
        QCOMPARE(RenewalWindows::dueIndex(r, lastEnd - 1, margin), 1);
        QCOMPARE(RenewalWindows::dueIndex(r, lastEnd, margin), -1);
        QCOMPARE(RenewalWindows::nextOpeningMs(r, lastEnd, margin), -1);
    }

    // ES-21: offers happen at every window start plus the margin.
    void nextOpening_ES21()
    {
        const auto r = grid(3);
        QCOMPARE(RenewalWindows::nextOpeningMs(r, t0 - 1, margin), t0 + margin);
        QCOMPARE(RenewalWindows::nextOpeningMs(r, t0 + margin, margin), t0 + 10 * minute + margin);
        QCOMPARE(RenewalWindows::nextOpeningMs(r, t0 + 20 * minute + margin, margin), -1);
    }

    // ES-25: re-offers stop when the window before it in the run ends; for the first, at its own end.
    void reofferDeadline_ES25()
    {
        const auto r = grid(3);
        QCOMPARE(RenewalWindows::reofferDeadlineMs(r, 0), t0 + 15 * minute);
        QCOMPARE(RenewalWindows::reofferDeadlineMs(r, 1), t0 + 15 * minute);
        QCOMPARE(RenewalWindows::reofferDeadlineMs(r, 2), t0 + 25 * minute);
        QCOMPARE(RenewalWindows::reofferDeadlineMs(r, 3), -1);
    }

    // Status: current window (no margin) and the next window start.
    void currentAndNext()
    {
        const auto r = grid(3);
        QCOMPARE(RenewalWindows::currentIndex(r, t0 - 1), -1);
        QCOMPARE(RenewalWindows::currentIndex(r, t0), 0);
        QCOMPARE(RenewalWindows::currentIndex(r, t0 + 10 * minute), 1);
        QCOMPARE(RenewalWindows::nextWindowStartMs(r, t0), t0 + 10 * minute);
        QCOMPARE(RenewalWindows::nextWindowStartMs(r, t0 + 20 * minute), -1);
    }
};

QTEST_GUILESS_MAIN(TstRenewalWindows)
#include "tst_renewalwindows.moc"
