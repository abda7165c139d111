#pragma once
// PendingClosureTransfer: the composition root's ClosureTransfer while no closure stream is built
// (docs/contract.md §13.4, §16.3 style): every closure is refused at once, on the next turn of the
// event loop, with
//   relay-function-pending: database closure streams is not built: the relay carries no closure yet
// so a replicated backup still answers its snapshots and logs the refusal with its backup id (CS-78),
// and a replicated restore ends at its closure step (CS-82). sessionDispatchable() states the Cloudly
// session's own state. Replaced by the closure lane's implementation (Coreflow::setClosureTransfer
// takes any other one before start).
#include "service/closures/closuretransfer.h"

#include <QObject>

namespace coreflow {

class CloudlyConnector;

class PendingClosureTransfer : public QObject, public ClosureTransfer {
    Q_OBJECT
public:
    explicit PendingClosureTransfer(const CloudlyConnector &cloudly, QObject *parent = nullptr);

    void sendToCloudly(const QString &nodeId, const QString &serviceId, const QString &backupId, SendDone done) override;
    void restoreFromCloudly(const QString &nodeId, const QString &serviceId, const QString &backupId, RestoreDone done) override;
    bool sessionDispatchable() const override;

private:
    static contract::Refusal pending();
    const CloudlyConnector &m_cloudly;
};

} // namespace coreflow
