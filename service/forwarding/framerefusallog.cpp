#include "service/forwarding/framerefusallog.h"

#include "service/forwarding/nodeconnection.h"

namespace coreflow {

bool FrameRefusalLog::admit(NodeConnection &connection) { return m_bound.admit(connection.countRefusedFrame()); }

QString FrameRefusalLog::countNote(const NodeConnection &connection)
{
    return QStringLiteral("(%1 on this connection)").arg(connection.refusedFrames());
}

} // namespace coreflow
