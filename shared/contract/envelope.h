#pragma once
// Envelope: one TypedRequest-compatible JSON object per WebSocket text frame
// (../shared/reference/envelope.md, docs/contract.md "Envelope").
//
// parse() is a pure decoder with no socket inside. It locates the top-level members without
// re-serialising anything: request/response/error/retry are kept as the exact byte ranges the peer
// sent, so a forwarded body is byte-for-byte the body that arrived (docs/contract.md §8; Decision D-02:
// simdjson's raw_json() is used for that reason). authInfo, localData and serverData are read over and never
// forwarded.
//
// Refusals: request-invalid (not a JSON object, missing/mistyped method or correlation, unknown phase),
// frame-too-large (above maxFrameBytes).
#include "shared/contract/result.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QJsonObject>
#include <QString>
#include <optional>
#include <string_view>

namespace coreflow::contract {

enum class Phase { Request, Response };

struct Frame {
    QByteArray raw;          // the whole frame as received (UTF-8); the views below point into it
    QString method;
    QString correlationId;
    Phase phase = Phase::Request;
    QByteArrayView request;  // raw JSON of "request" (empty view when absent)
    QByteArrayView response; // raw JSON of "response" (empty when absent or null)
    QByteArrayView error;    // raw JSON of "error" (empty when absent or null)
    QByteArrayView retry;    // raw JSON of "retry" (empty when absent or null)

    bool hasError() const { return !error.isEmpty(); }
    // Parses the request body as a JSON object (small bodies only: used for the value-free facts the
    // relay must read, e.g. request.session). Returns request-invalid naming the member on failure.
    Result<QJsonObject> requestObject() const;
    Result<QJsonObject> responseObject() const;
    // The raw JSON of one top-level member of the request body (the last one when a key repeats, as
    // QJsonDocument reads it), without parsing the rest: the relay reads request.session of a forwarded
    // body this way instead of building a QJsonObject of the whole (carried) body. nullopt when absent.
    // *readable is false when this reader cannot run on the frame (a Frame not made by parse(), or an
    // unreadable body); the caller then reads requestObject() instead.
    std::optional<QByteArrayView> requestMember(std::string_view key, bool *readable) const;
    Refusal errorRefusal() const;
};

class Envelope {
public:
    static constexpr qsizetype maxFrameBytes = 16 * 1024 * 1024;
    // Each of this thread's JSON parsers keeps capacity for documents up to this many bytes between
    // frames; after a larger document it releases its memory (docs/contract.md §3 "Parser memory").
    static constexpr qsizetype retainedParserCapacityBytes = 1024 * 1024;
    // The document capacity (bytes of JSON) this thread's parsers hold now, summed: the observable
    // for the bound above.
    static qsizetype heldParserCapacityBytes();
    // Zeroes the strings this thread's validating parser decoded from the last frame it read, which
    // was documentBytes long (it keeps them until a later frame overwrites them): called after a frame
    // that carried a secret (docs/contract.md §19.4).
    static void wipeDecodedStrings(qsizetype documentBytes);

    static Result<Frame> parse(QByteArray utf8);

    // Frame builders. Bodies are raw JSON inserted verbatim; method and id are JSON-escaped.
    static QByteArray request(QStringView method, QStringView correlationId, QByteArrayView rawRequest);
    static QByteArray response(QStringView method, QStringView correlationId, QByteArrayView rawRequest,
                               QByteArrayView rawResponse);
    // An answer that relays the peer's error/retry members verbatim (a forwarded refusal).
    static QByteArray relayedError(QStringView method, QStringView correlationId, QByteArrayView rawRequest,
                                   QByteArrayView rawError, QByteArrayView rawRetry);
    // An answer carrying the relay's own named refusal.
    static QByteArray refusal(QStringView method, QStringView correlationId, QByteArrayView rawRequest,
                              const Refusal &refusal);
    static QByteArray compact(const QJsonObject &object);
    static QByteArray jsonString(QStringView text);
};

} // namespace coreflow::contract
