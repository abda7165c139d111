#pragma once
// ClusterBackup: backupClusterService, restoreClusterService and pruneClusterNodeArchive, served on
// the Cloudly-facing MethodTable (docs/contract.md §13.1–§13.3, §15.1; rules CS-63, CS-64, CS-74..CS-82).
// Each acts on the node its request names, through that node's Corestore endpoint with the control
// credential (CorestoreClient::post: the endpoint judged first, then the credential, fail closed).
//
// backupClusterService (BackupRequest)
//   POST /control/backups { serviceId, backupId, database, volumes, objectStorage } -> the snapshots
//   (BackupAnswerReader::readSnapshots). With replication.enabled, after the snapshots and before the
//   answer, ClosureTransfer::sendToCloudly sends the service's database closure (CS-74, CS-79); the
//   relay logs that a replicated backup carries the database closure only, volume and object-storage
//   snapshots staying on the node (CS-77). closure-absent (the service has no database) logs
//   "backup <b>: service <s> has no database; no closure to carry" (CS-76); any other failure logs
//   "backup <b>: the database closure of service <s> was refused: <refusal>" (warning) and the answer
//   is still the snapshots (CS-78). The answer carries no replication field (CS-79):
//     { nodeId, serviceId, backupId, completedAt: Clock ms, snapshots }
//   A failed snapshot call is refused with its §12 class (nothing is sent to Cloudly).
// restoreClusterService (RestoreRequest): one RestoreRun per request (preconditions, then the steps).
//   While a restore of a service runs, another one of the same service (any node) is refused
//   restore-in-progress (§13.2, D-95) before anything is dialled.
// pruneClusterNodeArchive (PruneRequest)
//   POST /control/archive/prune { serviceId, olderThan, keepBackupIds } ->
//     { nodeId, prunedSnapshots, freedBytes }
// Refusals: request-invalid (the readers; nothing dialled) and the §12 classes
// (CORESTORE_ENDPOINT_UNKNOWN, CorestoreCredentialEnrollmentError, corestore-credential-missing,
// CORESTORE_UNREACHABLE incl. "unreadable answer (<problem>)", corestore-refused), as CorestoreClient
// states them: value-free, never the control token (CS-09).
#include "service/backup/restorerun.h"
#include "service/core/methodtable.h"
#include "shared/status/relaystatus.h"

#include <QObject>
#include <map>
#include <memory>

namespace coreflow {

class Clock;
class ClosureTransfer;
class CorestoreClient;

class ClusterBackup : public QObject {
    Q_OBJECT
public:
    ClusterBackup(CorestoreClient &client, RestoreRun::CredentialProbe credential, ClosureTransfer &closures, MethodTable &cloudlyMethods,
                  Clock &clock, QObject *parent = nullptr);
    ~ClusterBackup() override;

    void attach();
    // Removes the three handlers; requests in flight still answer (their Corestore calls end with
    // CorestoreClient::stop()).
    void detach();

    int backupsInFlight() const { return int(m_backups.size()); }
    int restoresInFlight() const { return int(m_restores.size()); }
    // §18.1 backups.operations: every backup and restore being carried, oldest first (value-free:
    // ids, times, step names, counts).
    QList<status::BackupOperationStatus> statusOperations() const;

Q_SIGNALS:
    void statusChanged(); // an operation started, moved to its next step or ended

private:
    void serveBackup(const contract::Frame &frame, MethodTable::Reply reply);
    void serveRestore(const contract::Frame &frame, MethodTable::Reply reply);
    void servePrune(const contract::Frame &frame, MethodTable::Reply reply);

    CorestoreClient &m_client;
    RestoreRun::CredentialProbe m_credential;
    ClosureTransfer &m_closures;
    MethodTable &m_methods;
    Clock &m_clock;
    bool m_attached = false;
    quint64 m_nextBackup = 1;
    std::map<quint64, status::BackupOperationStatus> m_backups;
    quint64 m_nextRestore = 1;
    std::map<quint64, std::unique_ptr<RestoreRun>> m_restores;
};

} // namespace coreflow
