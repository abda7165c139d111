#pragma once
// ScriptedClosureTransfer: a test double of the ClosureTransfer seam (service/closures/closuretransfer.h,
// docs/contract.md §13.4) for the backup lane's tests. It records every call in order (with how many
// Corestore requests the test's observer counted at that moment, so a test sees whether the closure
// came before or after the node-local steps) and answers as scripted: a receipt / restored size, or
// the refusal set in sendFailure / restoreFailure. With `hold`, answers wait for release().
// Answers are never given from inside the call (the seam's rule): always on a later event-loop turn.
#include "service/closures/closuretransfer.h"

#include <QList>
#include <QObject>
#include <functional>
#include <optional>

namespace coreflow::testing {

class ScriptedClosureTransfer : public QObject, public ClosureTransfer {
    Q_OBJECT
public:
    struct Call {
        QString direction;   // "send" | "restore"
        QString nodeId;
        QString serviceId;
        QString backupId;
        int corestoreRequestsBefore = -1;
    };

    bool dispatchable = true;
    bool hold = false;
    std::optional<contract::Refusal> sendFailure;
    std::optional<contract::Refusal> restoreFailure;
    std::function<int()> corestoreRequests;
    QList<Call> calls;

    void sendToCloudly(const QString &nodeId, const QString &serviceId, const QString &backupId, SendDone done) override;
    void restoreFromCloudly(const QString &nodeId, const QString &serviceId, const QString &backupId, RestoreDone done) override;
    bool sessionDispatchable() const override { return dispatchable; }

    // Answers every held call now (as scripted at this moment).
    void release();
    int held() const { return int(m_held.size()); }

private:
    void answerLater(std::function<void()> answer);
    QList<std::function<void()>> m_held;
};

} // namespace coreflow::testing
