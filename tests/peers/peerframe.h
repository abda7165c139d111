#pragma once
// PeerFrame: one envelope frame as a loopback peer reads it (docs/contract.md §3 "Envelope and framing").
// Written for the peers from the contract, not from the relay's codec (docs/architecture.md: a peer
// shares no code with the relay), so a defect in the relay's envelope cannot hide in its own test peer.
//
// The member views point into `raw` (the whole text frame, UTF-8); a copy of a PeerFrame shares raw's
// storage, so the views stay valid for as long as any copy lives. Bytes are the exact bytes that arrived:
// key order, whitespace and number spelling are kept (contract §3 "Forwarding").
#include "tests/peers/peerrefusal.h"
#include "tests/peers/peerresult.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QJsonObject>
#include <QString>

namespace coreflow::peers {

// correlation.phase (contract §3).
enum class Phase { Request, Response };

struct PeerFrame {
    QByteArray raw;          // the whole frame as received
    QString method;
    QString correlationId;
    Phase phase = Phase::Request;
    QByteArrayView request;  // raw JSON of "request"; "{}" when absent (contract §3: read as request: {})
    QByteArrayView response; // raw JSON of "response"; empty when absent or null
    QByteArrayView error;    // raw JSON of "error"; empty when absent or null
    QByteArrayView retry;    // raw JSON of "retry"; empty when absent or null

    bool hasError() const { return !error.isEmpty(); }
    // request/response parsed as a JSON object; a request-invalid refusal naming the member otherwise.
    PeerResult<QJsonObject> requestObject() const;
    PeerResult<QJsonObject> responseObject() const;
    // error read as a refusal (contract §3.1): the name from data.name, falling back to the text
    // before the first ": "; the reason is the text after "<name>: "; further data members kept.
    PeerRefusal errorRefusal() const;
};

} // namespace coreflow::peers
