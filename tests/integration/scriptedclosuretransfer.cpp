#include "tests/integration/scriptedclosuretransfer.h"

#include <QMetaObject>

namespace coreflow::testing {

void ScriptedClosureTransfer::sendToCloudly(const QString &nodeId, const QString &serviceId, const QString &backupId, SendDone done)
{
    calls.append({QStringLiteral("send"), nodeId, serviceId, backupId, corestoreRequests ? corestoreRequests() : -1});
    answerLater([this, done = std::move(done)] {
        if (sendFailure)
            return done(*sendFailure);
        done(ClosureReceipt{QStringLiteral("3f1c2a4e-0000-4000-8000-000000000001"), 1, 1048576, QString(64, QLatin1Char('a'))});
    });
}

void ScriptedClosureTransfer::restoreFromCloudly(const QString &nodeId, const QString &serviceId, const QString &backupId,
                                                 RestoreDone done)
{
    calls.append({QStringLiteral("restore"), nodeId, serviceId, backupId, corestoreRequests ? corestoreRequests() : -1});
    answerLater([this, done = std::move(done)] {
        if (restoreFailure)
            return done(*restoreFailure);
        done(ClosureRestored{1048576, QString(64, QLatin1Char('a'))});
    });
}

void ScriptedClosureTransfer::answerLater(std::function<void()> answer)
{
    if (hold) {
        m_held.append(std::move(answer));
        return;
    }
    QMetaObject::invokeMethod(this, std::move(answer), Qt::QueuedConnection);
}

void ScriptedClosureTransfer::release()
{
    const auto held = std::exchange(m_held, {});
    for (const auto &answer : held)
        QMetaObject::invokeMethod(this, answer, Qt::QueuedConnection);
}

} // namespace coreflow::testing
