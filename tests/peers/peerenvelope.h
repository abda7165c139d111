#pragma once
// PeerEnvelope: the loopback peers' own envelope codec, written from docs/contract.md §3 with Qt's JSON
// (never the relay's shared/contract/envelope.h; tests/layering/check_layers.py enforces that).
//
// parse(): the frame must be a JSON object with a string `method` and a `correlation` object holding a
// string `id` and `phase` "request" or "response"; `request`, when present, must be an object (absent
// reads as {}). Any other top-level member is read over. A key written twice counts by its last
// occurrence (as Qt's JSON reader keeps it). Refusal otherwise: request-invalid naming what is wrong.
// The member views of the PeerFrame are the exact byte ranges of the frame (a small scanner over the
// validated text locates them; keys are compared after JSON unescaping).
//
// Builders write {"method":…,"request":…,["response":…|"response":null,"error":…,["retry":…]],
// "correlation":{"id":…,"phase":…}}; raw bodies are inserted verbatim, strings JSON-escaped.
#include "tests/peers/peerframe.h"

#include "tests/peers/peerrefusal.h"
#include "tests/peers/peerresult.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QJsonObject>
#include <QStringView>

namespace coreflow::peers {

class PeerEnvelope {
public:
    static PeerResult<PeerFrame> parse(const QByteArray &utf8);

    static QByteArray request(QStringView method, QStringView correlationId, QByteArrayView rawRequest);
    static QByteArray response(QStringView method, QStringView correlationId, QByteArrayView rawRequest,
                               QByteArrayView rawResponse);
    // An answer with response null and the given error (and retry, when not empty) members verbatim.
    static QByteArray error(QStringView method, QStringView correlationId, QByteArrayView rawRequest,
                            QByteArrayView rawError, QByteArrayView rawRetry = {});
    // error = { text: "<name>: <reason>", data: { name, ...refusal.data } } (contract §3.1).
    static QJsonObject errorJson(const PeerRefusal &refusal);
    static QByteArray compact(const QJsonObject &object);
    static QByteArray jsonString(QStringView text);
};

} // namespace coreflow::peers
