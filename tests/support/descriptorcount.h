#pragma once
// Descriptor counts for the tests that check nothing is left behind (docs/contract.md §3.2: every end
// of a call releases its descriptors; the fault matrix, the silent peers, the closures).
//
// A count is compared only once the real event loop has settled. Two things close a descriptor later
// than the event a test waits for: parts released with deleteLater() go at a later turn of the loop,
// and a WebSocket session that sent its Close to a peer that does not answer keeps its socket for
// WebSocketSession::kCloseGraceMs (2000 ms of real time, docs/contract.md §3.3) before it aborts. A
// baseline or an after-count read inside either window is one descriptor off (the +-1 flakes of issue
// 23). settledDescriptors() therefore turns the loop until the count has not moved for longer than
// that grace. It is a count, not a timing assertion: the bound only ends a test whose count never
// settles, and the caller then compares exactly.
#include "service/transport/websocketsession.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QEvent>
#include <QTest>

namespace coreflow::testing {

// Descriptors this process holds now (/proc/self/fd).
inline int openDescriptors()
{
    return int(QDir(QStringLiteral("/proc/self/fd")).entryList(QDir::NoDotAndDotDot | QDir::System).size());
}

// Real time the count must stand still before it counts as settled: the longest real-time hold of a
// closing descriptor in the relay, plus a margin for a loaded machine's loop turns.
inline constexpr int kDescriptorSettleMs = WebSocketSession::kCloseGraceMs + 1000;

// The descriptor count once it has not changed for kDescriptorSettleMs while the loop ran (posted
// deletions delivered every turn). After boundMs it returns the count as it is then; a caller that
// compares it exactly fails with both numbers.
inline int settledDescriptors(int boundMs = 60000)
{
    QElapsedTimer total;
    total.start();
    QElapsedTimer still;
    still.start();
    int last = openDescriptors();
    while (total.elapsed() < boundMs) {
        QTest::qWait(20);
        QCoreApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);
        const int now = openDescriptors();
        if (now != last) {
            last = now;
            still.restart();
        } else if (still.elapsed() >= kDescriptorSettleMs) {
            break;
        }
    }
    return last;
}

} // namespace coreflow::testing
