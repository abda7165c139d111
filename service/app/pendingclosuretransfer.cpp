#include "service/app/pendingclosuretransfer.h"

#include "service/cloudly/cloudlyconnector.h"
#include "shared/contract/refusalnames.h"

#include <QMetaObject>

namespace coreflow {

using namespace contract;

PendingClosureTransfer::PendingClosureTransfer(const CloudlyConnector &cloudly, QObject *parent) : QObject(parent), m_cloudly(cloudly) {}

Refusal PendingClosureTransfer::pending()
{
    Refusal refused{QString(refusal::relayFunctionPending),
                    QStringLiteral("database closure streams is not built: the relay carries no closure yet")};
    refused.data = QJsonObject{{QStringLiteral("function"), QStringLiteral("database closure streams")}};
    return refused;
}

void PendingClosureTransfer::sendToCloudly(const QString &, const QString &, const QString &, SendDone done)
{
    // Never from inside the call (the seam's rule).
    QMetaObject::invokeMethod(this, [done = std::move(done)] { done(pending()); }, Qt::QueuedConnection);
}

void PendingClosureTransfer::restoreFromCloudly(const QString &, const QString &, const QString &, RestoreDone done)
{
    QMetaObject::invokeMethod(this, [done = std::move(done)] { done(pending()); }, Qt::QueuedConnection);
}

bool PendingClosureTransfer::sessionDispatchable() const { return m_cloudly.isDispatchable(); }

} // namespace coreflow
