#include "service/backup/clusterbackup.h"

#include "service/backup/backupanswerreader.h"
#include "service/backup/backuprequest.h"
#include "service/backup/prunerequest.h"
#include "service/backup/restorerun.h"
#include "service/backup/unreadableanswer.h"
#include "service/closures/closuretransfer.h"
#include "service/core/logging.h"
#include "service/corestore/corestoreclient.h"
#include "shared/contract/envelope.h"
#include "shared/contract/methods.h"
#include "shared/contract/refusalnames.h"
#include "shared/util/clock.h"

#include <QJsonArray>
#include <QPointer>
#include <algorithm>

namespace coreflow {

using namespace contract;

namespace {

constexpr QByteArrayView kBackupsRoute("/control/backups");
constexpr QByteArrayView kPruneRoute("/control/archive/prune");

} // namespace

ClusterBackup::ClusterBackup(CorestoreClient &client, RestoreRun::CredentialProbe credential, ClosureTransfer &closures,
                             MethodTable &cloudlyMethods, Clock &clock, QObject *parent)
    : QObject(parent), m_client(client), m_credential(std::move(credential)), m_closures(closures), m_methods(cloudlyMethods), m_clock(clock)
{
}

ClusterBackup::~ClusterBackup() { detach(); }

void ClusterBackup::attach()
{
    if (m_attached)
        return;
    m_attached = true;
    m_methods.add(QString(method::backupClusterService),
                  [this](const Frame &frame, const Caller &, MethodTable::Reply reply) { serveBackup(frame, std::move(reply)); });
    m_methods.add(QString(method::restoreClusterService),
                  [this](const Frame &frame, const Caller &, MethodTable::Reply reply) { serveRestore(frame, std::move(reply)); });
    m_methods.add(QString(method::pruneClusterNodeArchive),
                  [this](const Frame &frame, const Caller &, MethodTable::Reply reply) { servePrune(frame, std::move(reply)); });
}

void ClusterBackup::detach()
{
    if (!m_attached)
        return;
    m_attached = false;
    m_methods.remove(QString(method::backupClusterService));
    m_methods.remove(QString(method::restoreClusterService));
    m_methods.remove(QString(method::pruneClusterNodeArchive));
}

void ClusterBackup::serveBackup(const Frame &frame, MethodTable::Reply reply)
{
    auto body = frame.requestObject();
    if (!body)
        return reply(MethodTable::refusalFor(frame, body.refusal()));
    auto read = BackupRequest::read(body.value());
    if (!read)
        return reply(MethodTable::refusalFor(frame, read.refusal()));
    const BackupRequest request = read.value();
    const QByteArray route = kBackupsRoute.toByteArray();
    QPointer<ClusterBackup> self(this);
    const quint64 id = m_nextBackup++;
    m_backups.emplace(id, status::BackupOperationStatus{QStringLiteral("backup"), request.nodeId, request.serviceId, request.backupId,
                                                        m_clock.nowMs(), QStringLiteral("snapshots"), 0, 0});
    Q_EMIT statusChanged();
    m_client.post(request.nodeId, route, request.corestoreBody(), [self, id, frame, reply, request, route](const CorestoreCallOutcome &outcome) {
        if (!self)
            return;
        const auto fail = [&](const Refusal &refused) {
            self->m_backups.erase(id);
            Q_EMIT self->statusChanged();
            qCWarning(logBackup).noquote() << QStringLiteral("backup %1: service %2 on node %3 not taken: %4")
                                                  .arg(request.backupId, request.serviceId, request.nodeId, refused.text());
            reply(MethodTable::refusalFor(frame, refused));
        };
        if (outcome.kind != CorestoreCallOutcome::Kind::Answered)
            return fail(outcome.refusal);
        const auto snapshots = BackupAnswerReader::readSnapshots(outcome.body, request);
        if (!snapshots)
            return fail(UnreadableAnswer::refusal(self->m_client, request.nodeId, route, snapshots.refusal().reason));

        const QJsonObject taken = snapshots.value();
        const auto answer = [self, id, frame, reply, request, taken]() {
            self->m_backups.erase(id);
            Q_EMIT self->statusChanged();
            const QJsonObject response{{QStringLiteral("nodeId"), request.nodeId},
                                       {QStringLiteral("serviceId"), request.serviceId},
                                       {QStringLiteral("backupId"), request.backupId},
                                       {QStringLiteral("completedAt"), self->m_clock.nowMs()},
                                       {QStringLiteral("snapshots"), taken}};
            reply(MethodTable::responseFor(frame, Envelope::compact(response)));
        };
        qCInfo(logBackup).noquote() << QStringLiteral("backup %1: service %2 on node %3: snapshots taken (database %4, %5 volumes, object storage %6)")
                                           .arg(request.backupId, request.serviceId, request.nodeId,
                                                taken.value(QStringLiteral("database")).isNull() ? QStringLiteral("none") : QStringLiteral("taken"))
                                           .arg(taken.value(QStringLiteral("volumes")).toArray().size())
                                           .arg(taken.value(QStringLiteral("objectStorage")).isNull() ? QStringLiteral("none") : QStringLiteral("taken"));
        if (!request.replication)
            return answer();
        // CS-77: what replication carries, said where it happens.
        qCInfo(logBackup).noquote()
            << QStringLiteral("backup %1: replication carries the database closure of service %2 to Cloudly and nothing more; "
                              "volume and object-storage snapshots stay on node %3")
                   .arg(request.backupId, request.serviceId, request.nodeId);
        // CS-74, CS-79: the closure goes before the answer; CS-78: its failure does not fail the backup.
        if (const auto it = self->m_backups.find(id); it != self->m_backups.end())
            it->second.step = QStringLiteral("closure");
        Q_EMIT self->statusChanged();
        self->m_closures.sendToCloudly(request.nodeId, request.serviceId, request.backupId, [self, request, answer](const auto &result) {
            if (!self)
                return;
            if (result) {
                qCInfo(logBackup).noquote() << QStringLiteral("backup %1: the database closure of service %2 was accepted by Cloudly")
                                                   .arg(request.backupId, request.serviceId);
            } else if (result.refusal().name == QLatin1String(refusal::closureAbsent)) {
                qCInfo(logBackup).noquote() << QStringLiteral("backup %1: service %2 has no database; no closure to carry")
                                                   .arg(request.backupId, request.serviceId);
            } else {
                qCWarning(logBackup).noquote() << QStringLiteral("backup %1: the database closure of service %2 was refused: %3; "
                                                                 "the backup answers its snapshots")
                                                      .arg(request.backupId, request.serviceId, result.refusal().text());
            }
            answer();
        });
    });
}

void ClusterBackup::serveRestore(const Frame &frame, MethodTable::Reply reply)
{
    auto body = frame.requestObject();
    if (!body)
        return reply(MethodTable::refusalFor(frame, body.refusal()));
    auto read = RestoreRequest::read(body.value());
    if (!read)
        return reply(MethodTable::refusalFor(frame, read.refusal()));
    // §13.2: one restore of a service at a time; the second is refused by name and dials nothing.
    for (const auto &[runningId, running] : m_restores) {
        if (running->finished() || running->request().serviceId != read->serviceId)
            continue;
        const RestoreRequest &theirs = running->request();
        const Refusal busy{QString(refusal::restoreInProgress), QStringLiteral("a restore of service %1 is already running (backup %2 on node %3)")
                                                                    .arg(theirs.serviceId, theirs.backupId, theirs.nodeId)};
        qCWarning(logBackup).noquote() << QStringLiteral("restore of backup %1: not started: %2").arg(read->backupId, busy.text());
        return reply(MethodTable::refusalFor(frame, busy));
    }
    const quint64 id = m_nextRestore++;
    QPointer<ClusterBackup> self(this);
    auto run = std::make_unique<RestoreRun>(read.value(), m_client, m_credential, m_closures, m_clock,
                                            [self, id, frame, reply](const Result<QByteArray> &answer) {
                                                if (answer)
                                                    reply(MethodTable::responseFor(frame, answer.value()));
                                                else
                                                    reply(MethodTable::refusalFor(frame, answer.refusal()));
                                                if (!self)
                                                    return;
                                                const auto it = self->m_restores.find(id);
                                                if (it != self->m_restores.end()) {
                                                    // Not deleted inside its own callback.
                                                    it->second->disconnect(self.data());
                                                    it->second.release()->deleteLater();
                                                    self->m_restores.erase(it);
                                                    Q_EMIT self->statusChanged();
                                                }
                                            });
    RestoreRun *started = run.get();
    connect(started, &RestoreRun::stepChanged, this, &ClusterBackup::statusChanged);
    m_restores.emplace(id, std::move(run));
    Q_EMIT statusChanged();
    started->start();
}

QList<status::BackupOperationStatus> ClusterBackup::statusOperations() const
{
    QList<status::BackupOperationStatus> out;
    for (const auto &[id, op] : m_backups)
        out.append(op);
    for (const auto &[id, run] : m_restores)
        if (!run->finished())
            out.append(run->statusEntry());
    std::stable_sort(out.begin(), out.end(), [](const auto &a, const auto &b) { return a.startedAtMs < b.startedAtMs; });
    return out;
}

void ClusterBackup::servePrune(const Frame &frame, MethodTable::Reply reply)
{
    auto body = frame.requestObject();
    if (!body)
        return reply(MethodTable::refusalFor(frame, body.refusal()));
    auto read = PruneRequest::read(body.value());
    if (!read)
        return reply(MethodTable::refusalFor(frame, read.refusal()));
    const PruneRequest request = read.value();
    const QByteArray route = kPruneRoute.toByteArray();
    QPointer<ClusterBackup> self(this);
    m_client.post(request.nodeId, route, request.corestoreBody(), [self, frame, reply, request, route](const CorestoreCallOutcome &outcome) {
        if (!self)
            return;
        Refusal failure = outcome.refusal;
        if (outcome.kind == CorestoreCallOutcome::Kind::Answered) {
            const auto pruned = PruneRequest::readAnswer(outcome.body);
            if (pruned) {
                qCInfo(logBackup).noquote() << QStringLiteral("archive of node %1 pruned: %2 snapshots, %3 bytes freed")
                                                   .arg(request.nodeId)
                                                   .arg(pruned->prunedSnapshots)
                                                   .arg(pruned->freedBytes);
                const QJsonObject response{{QStringLiteral("nodeId"), request.nodeId},
                                           {QStringLiteral("prunedSnapshots"), pruned->prunedSnapshots},
                                           {QStringLiteral("freedBytes"), pruned->freedBytes}};
                return reply(MethodTable::responseFor(frame, Envelope::compact(response)));
            }
            failure = UnreadableAnswer::refusal(self->m_client, request.nodeId, route, pruned.refusal().reason);
        }
        qCWarning(logBackup).noquote() << QStringLiteral("archive of node %1 not pruned: %2").arg(request.nodeId, failure.text());
        reply(MethodTable::refusalFor(frame, failure));
    });
}

} // namespace coreflow
