#pragma once
// ClosureTransfer: the seam between the backup lane (backupClusterService / restoreClusterService,
// docs/contract.md §13.1, §13.2) and the database closure streams on the Cloudly session (§13.4).
// Implemented by the closure lane; the backup lane holds a reference and never sees a stream.
//
// sendToCloudly: exports the service's database closure from the node's Corestore and streams it to
// Cloudly (§13.4 send direction); done() gets Cloudly's acceptance receipt (the only proof of
// storage, CS-67) or the refusal that ended the transfer (closure-absent, closure-transfer-stalled,
// closure-digest-mismatch, closure-refused, the §12 failure classes).
// restoreFromCloudly: fetches the backup's closure from Cloudly and restores it into the node's
// database (§13.4 receive direction); done() gets the restored size and digest or the refusal
// (closure-transfer-stalled, closure-digest-mismatch, closure-refused, NOT_FOUND,
// cloudly-session-lost, the §12 failure classes).
// done() is called exactly once per call, never from inside the call.
// sessionDispatchable(): whether a closure could be carried now (the Cloudly session is
// dispatchable), the restore precondition of §13.2 (CS-80).
#include "shared/contract/result.h"

#include <QString>
#include <functional>

namespace coreflow {

struct ClosureReceipt {
    QString streamId;
    qint64 storedAtMs = 0;  // Unix ms
    qint64 sizeBytes = 0;   // bytes
    QString sha256;         // lowercase hex
};

struct ClosureRestored {
    qint64 restoredBytes = 0; // bytes
    QString sha256;           // lowercase hex
};

class ClosureTransfer {
public:
    using SendDone = std::function<void(const contract::Result<ClosureReceipt> &outcome)>;
    using RestoreDone = std::function<void(const contract::Result<ClosureRestored> &outcome)>;

    virtual ~ClosureTransfer() = default;
    virtual void sendToCloudly(const QString &nodeId, const QString &serviceId, const QString &backupId, SendDone done) = 0;
    virtual void restoreFromCloudly(const QString &nodeId, const QString &serviceId, const QString &backupId,
                                    RestoreDone done) = 0;
    virtual bool sessionDispatchable() const = 0;
};

} // namespace coreflow
