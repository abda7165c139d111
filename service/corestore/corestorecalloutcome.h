#pragma once
// CorestoreCallOutcome: how one Corestore call of the relay ended (docs/contract.md §12's failure
// classes, §15). Answered carries the 2xx status and body; Refused carries the 4xx status and
// Corestore's error body too (for its caller to read, e.g. a 409's legacy-adoption code, §12.2; never
// for a log line); every other kind carries the refusal line
// the relay composed (value-free: method, path, node, status or failure class — never a header
// value, the token or a body). Refused also carries the status and Corestore's error body (at most
// 16 MiB, never logged), for a lane whose refusal quotes Corestore's reason (§14).
//   EndpointUnknown  CORESTORE_ENDPOINT_UNKNOWN (nothing dialled, nothing enrolled)
//   Credential       CorestoreCredentialEnrollmentError / corestore-credential-missing (nothing sent)
//   Unreachable      CORESTORE_UNREACHABLE (5xx, timeout, connection failure, bounds, unreadable)
//   Refused          corestore-refused (another 4xx, after the 401/403 re-read)
#include "shared/contract/refusal.h"

#include <QByteArray>
#include <QString>

namespace coreflow {

struct CorestoreCallOutcome {
    enum class Kind { Answered, EndpointUnknown, Credential, Unreachable, Refused };
    Kind kind = Kind::Unreachable;
    int status = 0;
    QByteArray body;
    contract::Refusal refusal;

    // The status model's words (§18.1 corestore.nodes[].lastCallOutcome).
    static QString word(Kind kind)
    {
        switch (kind) {
        case Kind::Answered:
            return QStringLiteral("answered");
        case Kind::EndpointUnknown:
            return QStringLiteral("endpoint-unknown");
        case Kind::Credential:
            return QStringLiteral("credential");
        case Kind::Unreachable:
            return QStringLiteral("unreachable");
        case Kind::Refused:
            return QStringLiteral("refused");
        }
        return QStringLiteral("none");
    }
};

} // namespace coreflow
