#pragma once
// ReceivedFrame: one entry of a loopback peer's observation log (every text frame it received).
#include "tests/peers/peerenvelope.h"

#include <QByteArray>
#include <QString>

namespace coreflow::peers {

struct ReceivedFrame {
    QString method;            // empty when the frame could not be parsed
    QString correlationId;     // as the sender wrote it
    Phase phase = Phase::Request;
    QByteArray rawRequest;     // the "request" member exactly as received (Frame::request), "{}" when absent
    QByteArray rawResponse;    // the "response" member as received (response phase; empty when null/absent)
    QByteArray rawError;       // the "error" member as received (empty when absent)
    QByteArray rawFrame;       // the whole text frame, UTF-8, as received
    qint64 timeMs = 0;         // receive time, Unix epoch ms (system clock)
    // Binary messages (closure chunks) that arrived on the same socket before this text frame, and
    // their bytes (whole messages): where a text frame fell among the chunks (docs/contract.md §13.4).
    qint64 binaryMessagesBefore = 0;
    qint64 binaryBytesBefore = 0;
    bool parsed = true;        // false: PeerEnvelope::parse refused the frame (see parseRefusal)
    PeerRefusal parseRefusal;
};

} // namespace coreflow::peers
