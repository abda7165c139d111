#include "service/backup/restorerun.h"

#include "service/backup/backupanswerreader.h"
#include "service/backup/unreadableanswer.h"
#include "service/closures/closuretransfer.h"
#include "service/core/logging.h"
#include "service/corestore/corestoreclient.h"
#include "shared/contract/envelope.h"
#include "shared/contract/refusalnames.h"
#include "shared/util/clock.h"

#include <QJsonArray>
#include <QPointer>

namespace coreflow {

using namespace contract;

namespace {

constexpr QByteArrayView kVolumesRoute("/control/volumes");
constexpr QByteArrayView kRestoreVolumeRoute("/control/restores/volume");
constexpr QByteArrayView kRestoreDatabaseRoute("/control/restores/database");
constexpr QByteArrayView kRestoreObjectStorageRoute("/control/restores/objectstorage");

} // namespace

RestoreRun::RestoreRun(RestoreRequest request, CorestoreClient &client, CredentialProbe credential, ClosureTransfer &closures,
                       Clock &clock, Done done, QObject *parent)
    : QObject(parent), m_request(std::move(request)), m_client(client), m_credential(std::move(credential)), m_closures(closures),
      m_clock(clock), m_done(std::move(done)), m_steps(m_request.steps()), m_startedAtMs(clock.nowMs())
{
}

status::BackupOperationStatus RestoreRun::statusEntry() const
{
    status::BackupOperationStatus s;
    s.kind = QStringLiteral("restore");
    s.nodeId = m_request.nodeId;
    s.serviceId = m_request.serviceId;
    s.backupId = m_request.backupId;
    s.startedAtMs = m_startedAtMs;
    s.step = !m_running ? QStringLiteral("preconditions") : m_steps.value(int(m_completed.size()), QStringLiteral("answering"));
    s.stepsDone = int(m_completed.size());
    s.stepsTotal = int(m_steps.size());
    return s;
}

RestoreRun::~RestoreRun() = default;

void RestoreRun::start()
{
    if (m_started)
        return;
    m_started = true;
    if (auto refused = judgeEndpointAndSession())
        return finish(*refused);
    QPointer<RestoreRun> self(this);
    m_credential([self](const Refusal *failure) {
        if (self)
            self->onCredential(failure);
    });
}

std::optional<Refusal> RestoreRun::judgeEndpointAndSession() const
{
    if (!m_client.endpointOf(m_request.nodeId))
        return Refusal{QString(refusal::corestoreEndpointUnknown),
                       QStringLiteral("node %1 publishes no Corestore endpoint").arg(m_request.nodeId)};
    if (m_request.replication && !m_closures.sessionDispatchable())
        return Refusal{QString(refusal::cloudlySessionUnavailable),
                       QStringLiteral("no dispatchable Cloudly session for the closure of backup %1").arg(m_request.backupId)};
    return std::nullopt;
}

void RestoreRun::onCredential(const Refusal *failure)
{
    if (m_finished)
        return;
    if (failure) {
        // The §12 class as the Corestore client states it (fail closed: nothing is dialled).
        return finish(failure->name.isEmpty()
                          ? Refusal{QString(refusal::corestoreCredentialMissing), QStringLiteral("no Corestore control credential is held")}
                          : *failure);
    }
    if (auto refused = judgeEndpointAndSession())
        return finish(*refused);
    qCInfo(logBackup).noquote() << QStringLiteral("restore of backup %1: service %2 on node %3, steps %4")
                                       .arg(m_request.backupId, m_request.serviceId, m_request.nodeId,
                                            m_steps.isEmpty() ? QStringLiteral("none") : m_steps.join(QLatin1Char(',')));
    m_running = true;
    runNext();
}

void RestoreRun::runNext()
{
    if (m_finished)
        return;
    if (m_completed.size() == m_steps.size()) {
        QJsonArray steps;
        for (const QString &step : m_completed)
            steps.append(QJsonObject{{QStringLiteral("step"), step}, {QStringLiteral("state"), QStringLiteral("done")}});
        const QJsonObject answer{{QStringLiteral("nodeId"), m_request.nodeId},
                                 {QStringLiteral("serviceId"), m_request.serviceId},
                                 {QStringLiteral("backupId"), m_request.backupId},
                                 {QStringLiteral("completedAt"), m_clock.nowMs()},
                                 {QStringLiteral("steps"), steps}};
        qCInfo(logBackup).noquote() << QStringLiteral("restore of backup %1: service %2 on node %3 restored (%4 steps)")
                                           .arg(m_request.backupId, m_request.serviceId, m_request.nodeId)
                                           .arg(m_completed.size());
        return finish(Envelope::compact(answer));
    }
    const QString step = m_steps.at(m_completed.size());
    Q_EMIT stepChanged();
    const QJsonValue service(m_request.serviceId);
    const QJsonValue backup(m_request.backupId);
    if (step == QLatin1String("closure")) {
        QPointer<RestoreRun> self(this);
        m_closures.restoreFromCloudly(m_request.nodeId, m_request.serviceId, m_request.backupId, [self](const auto &result) {
            if (!self || self->m_finished)
                return;
            if (!result)
                return self->stepFailed(result.refusal());
            self->stepDone();
        });
        return;
    }
    if (step.startsWith(QLatin1String("volume:"))) {
        const QString name = step.mid(int(qstrlen("volume:")));
        for (const RestoreRequest::Volume &volume : m_request.volumes)
            if (volume.name == name)
                return runVolume(volume);
        return stepFailed(Refusal{QString(refusal::requestInvalid), QStringLiteral("the request names no volume %1").arg(name)});
    }
    if (step == QLatin1String("database")) {
        return runRestore(kRestoreDatabaseRoute.toByteArray(),
                          Envelope::compact(QJsonObject{{QStringLiteral("serviceId"), service},
                                                        {QStringLiteral("backupId"), backup},
                                                        {QStringLiteral("snapshotId"), *m_request.databaseSnapshotId}}));
    }
    runRestore(kRestoreObjectStorageRoute.toByteArray(),
               Envelope::compact(QJsonObject{{QStringLiteral("serviceId"), service},
                                             {QStringLiteral("backupId"), backup},
                                             {QStringLiteral("snapshotId"), *m_request.objectStorageSnapshotId}}));
}

void RestoreRun::runVolume(const RestoreRequest::Volume &volume)
{
    const QString name = volume.name;
    const QByteArray create = Envelope::compact(QJsonObject{{QStringLiteral("serviceId"), m_request.serviceId},
                                                            {QStringLiteral("name"), name}});
    const QByteArray restore = Envelope::compact(QJsonObject{{QStringLiteral("serviceId"), m_request.serviceId},
                                                             {QStringLiteral("backupId"), m_request.backupId},
                                                             {QStringLiteral("name"), name},
                                                             {QStringLiteral("snapshotId"), volume.snapshotId}});
    // Created before it is restored into: a restore may land on a node that never ran the service.
    post(kVolumesRoute.toByteArray(), create,
         [name](const QByteArray &body) -> std::optional<QString> {
             const auto read = BackupAnswerReader::readVolume(body, name);
             return read ? std::nullopt : std::optional<QString>(read.refusal().reason);
         },
         [this, restore] { runRestore(kRestoreVolumeRoute.toByteArray(), restore); });
}

void RestoreRun::runRestore(const QByteArray &route, const QByteArray &body)
{
    post(route, body,
         [](const QByteArray &answer) -> std::optional<QString> {
             const auto read = BackupAnswerReader::readRestored(answer);
             return read ? std::nullopt : std::optional<QString>(read.refusal().reason);
         },
         [this] { stepDone(); });
}

void RestoreRun::post(const QByteArray &route, const QByteArray &body, std::function<std::optional<QString>(const QByteArray &)> read,
                      std::function<void()> then)
{
    QPointer<RestoreRun> self(this);
    m_client.post(m_request.nodeId, route, body,
                  [self, route, read = std::move(read), then = std::move(then)](const CorestoreCallOutcome &outcome) {
                      if (!self || self->m_finished)
                          return;
                      if (outcome.kind != CorestoreCallOutcome::Kind::Answered)
                          return self->stepFailed(outcome.refusal);
                      if (const auto problem = read(outcome.body))
                          return self->stepFailed(UnreadableAnswer::refusal(self->m_client, self->m_request.nodeId, route, *problem));
                      then();
                  });
}

void RestoreRun::stepDone()
{
    m_completed.append(m_steps.at(m_completed.size()));
    runNext();
}

void RestoreRun::stepFailed(const Refusal &failure)
{
    const QString step = m_steps.at(m_completed.size());
    qCWarning(logBackup).noquote() << QStringLiteral("restore of backup %1: service %2 on node %3: step %4 failed after [%5]: %6")
                                          .arg(m_request.backupId, m_request.serviceId, m_request.nodeId, step,
                                               m_completed.join(QLatin1Char(',')), failure.text());
    Refusal refused{QString(refusal::restoreStepFailed), QStringLiteral("step %1 failed: %2").arg(step, failure.text())};
    refused.data = QJsonObject{{QStringLiteral("step"), step}, {QStringLiteral("completedSteps"), QJsonArray::fromStringList(m_completed)}};
    finish(refused);
}

void RestoreRun::finish(const Result<QByteArray> &answer)
{
    if (m_finished)
        return;
    m_finished = true;
    Done done = std::move(m_done);
    m_done = nullptr;
    if (done)
        done(answer);
}

} // namespace coreflow
