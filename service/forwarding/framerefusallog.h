#pragma once
// FrameRefusalLog: whether the refusal of one more frame from a listener connection is logged
// (docs/contract.md §3.1 "Refusal log bound", D-61, D-70): the connection's count of refused frames
// (it lives in NodeConnection) under the relay's one RefusalLogBound (per connection 1st, 2nd, 4th,
// ...; at most 10 lines per 1000 ms of all peers together, then "N more refusals were not logged").
// Costs nothing on a frame that is not refused.
#include "service/core/refusallogbound.h"

#include <QString>

namespace coreflow {

class NodeConnection;

class FrameRefusalLog {
public:
    explicit FrameRefusalLog(RefusalLogBound &bound) : m_bound(bound) {}

    // Counts one refused frame of `connection`; true when its line is to be logged now.
    bool admit(NodeConnection &connection);
    // "(n on this connection)", for the line admit() allowed.
    static QString countNote(const NodeConnection &connection);
    // Lines held back since the last logged one (all peers).
    qint64 heldBack() const { return m_bound.heldBack(); }

private:
    RefusalLogBound &m_bound;
};

} // namespace coreflow
