#pragma once
// CorestoreAnswerReader: the exact-key readers of the two inventory answers of a node's Corestore
// (docs/contract.md §15.1, §12.6, §12.7; CS-56, CS-59, CS-61) and the raw bytes of their `services`
// value.
//
// read*(body): the body must be one JSON object (Qt's strict reader) with exactly one member,
// `services`, of the route's shape (every member required, nothing else; the legacy inventory also
// with both validators of §12.7: kind "database" | "bucket", non-empty serviceId and name, createdAt
// an integer >= 0, no serviceId twice). On success rawServices is a view into body: the bytes of the
// `services` value exactly as Corestore sent them (simdjson's raw_json; a repeated top-level key is
// refused, so the bytes are the value that was read). On failure the reason names the field, never
// a value.
#include <QByteArray>
#include <QByteArrayView>
#include <QString>
#include <optional>

namespace coreflow {

class CorestoreAnswerReader {
public:
    struct Read {
        bool ok = false;
        QByteArrayView rawServices; // into the body given to read*()
        QString problem;            // when !ok, e.g. "field services[0].databases is not an array of strings"
    };
    static Read readInventory(const QByteArray &body);
    static Read readLegacyResources(const QByteArray &body);
    // rawServices views the body, so a temporary body would leave it dangling when the call's full
    // expression ends (build-sanitize/ caught a test doing that, heap-use-after-free): refused at compile time.
    static Read readInventory(QByteArray &&) = delete;
    static Read readLegacyResources(QByteArray &&) = delete;
};

} // namespace coreflow
