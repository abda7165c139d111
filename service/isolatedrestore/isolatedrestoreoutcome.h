#pragma once
// IsolatedRestoreOutcome: what one isolated-restore control's Corestore call ends in for Cloudly
// (docs/contract.md §14 "Refusals"; IR-09..IR-18). Maps the Corestore client's outcome (§12 failure
// classes) onto the restore's own names, and a 2xx answer through IsolatedRestoreProgress:
//
//   EndpointUnknown                  restore-node-not-carried: node <id> publishes no Corestore endpoint
//   Credential (nothing was dialled) restore-node-unreachable: node <id>: no Corestore control credential
//                                    is held (<the credential's refusal line>); nothing was dialled
//   Unreachable, timeout             restore-node-unreachable: POST <path> on node <id>: timed out after
//                                    10000 ms; the control may have been applied — read
//                                    getIsolatedRestoreProgressOnNode (IR-18)
//   Unreachable, any other class     restore-node-unreachable: POST <path> on node <id>: <class> (5xx
//                                    status, connection refused, ... as §15 "Answers" lists them)
//   Refused (a 4xx; a 403 after no   restore-node-refused: <status> <code>: <reason>, where <code> is
//   re-read, a 401 after its one     Corestore's error.code as the client quotes it (a plain name of at
//   re-read)                         most 64 characters, else `unreadable`; `withheld` when it is the
//                                    token) and <reason> Corestore's error.reason: control characters
//                                    replaced by '?', at most 256 characters, `withheld` when it is the
//                                    held token or repeats 16 characters of the control's grant, and
//                                    `unreadable` when the body is not the error shape (IR-11, IR-12)
//   Answered (2xx)                   the progress answer (IsolatedRestoreProgress::answer), or
//                                    restore-progress-invalid: <problem> (IR-15..IR-17)
// No line quotes the control, a header value or the token. Pure function.
#include "service/corestore/corestorecalloutcome.h"
#include "service/isolatedrestore/isolatedrestorecontrol.h"

#include <QByteArray>
#include <QByteArrayView>
#include <functional>

namespace coreflow {

class IsolatedRestoreOutcome {
public:
    static constexpr qsizetype kMaxReasonChars = 256;
    using HeldToken = std::function<bool(QByteArrayView bytes)>;

    // The response body for Cloudly, or the refusal.
    static contract::Result<QByteArray> judge(const CorestoreCallOutcome &outcome, const QString &nodeId,
                                              const IsolatedRestoreControl &control, const HeldToken &isHeldToken);
    // Corestore's error.reason as a refusal may quote it (see above).
    // Whether text holds the grant or any 16 characters of it (what a refusal never quotes, IR-03).
    static bool repeatsGrant(QStringView text, const QString &grant);
    static QString quotableReason(const QByteArray &errorBody, const QString &grant, const HeldToken &isHeldToken);
};

} // namespace coreflow
