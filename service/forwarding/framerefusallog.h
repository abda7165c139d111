#pragma once
// FrameRefusalLog: whether the refusal of one more frame from a listener connection is logged
// (docs/contract.md §3.1 "Refusal log bound", D-61). Frames that are not the envelope and requests
// the binding check refuses are answered every time, but a peer must not be able to fill the log:
//  - per connection: only its 1st, 2nd, 4th, 8th, ... refused frame is logged, the line naming the
//    count so far (countNote());
//  - all connections together: at most kLinesPerWindow (10) such lines per kWindowMs (1000 ms) of
//    the injected clock; the lines held back are counted, and the first line of a later window is
//    preceded by one line "N more frame refusals were not logged".
// Costs nothing on a frame that is not refused (the per-connection count lives in NodeConnection).
#include "shared/util/clock.h"

#include <QString>

namespace coreflow {

class NodeConnection;

class FrameRefusalLog {
public:
    static constexpr qint64 kWindowMs = 1000;
    static constexpr int kLinesPerWindow = 10;

    explicit FrameRefusalLog(const Clock &clock) : m_clock(clock) {}

    // Counts one refused frame of `connection`; true when its line is to be logged now. Logs the
    // "N more were not logged" line itself (coreflow.forwarder) when a new window opens after lines
    // were held back.
    bool admit(NodeConnection &connection);
    // "(n on this connection)", for the line admit() allowed.
    static QString countNote(const NodeConnection &connection);
    // Lines held back since the last logged one (all connections).
    qint64 heldBack() const { return m_heldBack; }

private:
    const Clock &m_clock;
    qint64 m_windowStartMs = 0;
    int m_linesInWindow = 0;
    bool m_windowOpen = false;
    qint64 m_heldBack = 0;
};

} // namespace coreflow
