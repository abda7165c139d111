#pragma once
// RefusalLogBound: whether one more log line a peer caused by sending something refused is written
// (docs/contract.md §3.1 "Refusal log bound", D-61, D-70). Every refusal is still answered; only its
// line is bounded, so no peer (registered or not, WebSocket or plain HTTP) can fill the log:
//  - per peer (a listener connection): only its 1st, 2nd, 4th, 8th, ... refusal is logged; the
//    caller counts and passes that count;
//  - all peers together: at most kLinesPerWindow (10) such lines per kWindowMs (1000 ms) of the
//    injected clock; the lines held back are counted, and the first line of a later window is
//    preceded by one line "N more refusals were not logged" (coreflow.listener).
// One instance, owned by the composition root, is shared by the listener's handshakes and HTTP
// connections, the forwarding lane (FrameRefusalLog) and the ingress lane.
#include "shared/util/clock.h"

#include <QtGlobal>

namespace coreflow {

class RefusalLogBound {
public:
    static constexpr qint64 kWindowMs = 1000;
    static constexpr int kLinesPerWindow = 10;

    explicit RefusalLogBound(const Clock &clock) : m_clock(clock) {}

    // refusedOnThisPeer: the peer's refusals so far, this one included (at least 1). True when its
    // line is to be logged now.
    bool admit(qint64 refusedOnThisPeer);
    // Lines held back since the last logged one (all peers).
    qint64 heldBack() const { return m_heldBack; }

private:
    const Clock &m_clock;
    qint64 m_windowStartMs = 0;
    int m_linesInWindow = 0;
    bool m_windowOpen = false;
    qint64 m_heldBack = 0;
};

} // namespace coreflow
