#include "service/core/refusallogbound.h"

#include "service/core/logging.h"

namespace coreflow {

bool RefusalLogBound::admit(qint64 refusedOnThisPeer)
{
    const qint64 n = qMax<qint64>(1, refusedOnThisPeer);
    // 1st, 2nd, 4th, 8th, ... of this peer.
    if ((n & (n - 1)) != 0)
        return false;
    const qint64 now = m_clock.nowMs();
    if (!m_windowOpen || now - m_windowStartMs >= kWindowMs) {
        m_windowOpen = true;
        m_windowStartMs = now;
        m_linesInWindow = 0;
        if (m_heldBack > 0)
            qCInfo(logListener, "%lld more refusals were not logged", qint64(m_heldBack));
        m_heldBack = 0;
    }
    if (m_linesInWindow >= kLinesPerWindow) {
        ++m_heldBack;
        return false;
    }
    ++m_linesInWindow;
    return true;
}

} // namespace coreflow
