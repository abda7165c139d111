#include "service/forwarding/framerefusallog.h"

#include "service/core/logging.h"
#include "service/forwarding/nodeconnection.h"

namespace coreflow {

bool FrameRefusalLog::admit(NodeConnection &connection)
{
    const qint64 n = connection.countRefusedFrame();
    // 1st, 2nd, 4th, 8th, ... of this connection (n is at least 1).
    if ((n & (n - 1)) != 0)
        return false;
    const qint64 now = m_clock.nowMs();
    if (!m_windowOpen || now - m_windowStartMs >= kWindowMs) {
        m_windowOpen = true;
        m_windowStartMs = now;
        m_linesInWindow = 0;
        if (m_heldBack > 0)
            qCInfo(logForwarder, "%lld more frame refusals were not logged", qint64(m_heldBack));
        m_heldBack = 0;
    }
    if (m_linesInWindow >= kLinesPerWindow) {
        ++m_heldBack;
        return false;
    }
    ++m_linesInWindow;
    return true;
}

QString FrameRefusalLog::countNote(const NodeConnection &connection)
{
    return QStringLiteral("(%1 on this connection)").arg(connection.refusedFrames());
}

} // namespace coreflow
