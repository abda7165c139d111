#pragma once
// RestoreRun: one restoreClusterService, from its preconditions to its last step (docs/contract.md
// §13.2; rules CS-63, CS-64, CS-75, CS-80, CS-81, CS-82).
//
// Preconditions, all before the first step (CS-80), in this order: the node publishes a Corestore
// endpoint (else CORESTORE_ENDPOINT_UNKNOWN); with replication, the Cloudly session the closure
// travels on is dispatchable (else cloudly-session-unavailable: no dispatchable Cloudly session for
// the closure of backup <b>); the control credential is held or acquired now
// (CorestoreCredentialEnrollmentError / corestore-credential-missing). Endpoint and session are judged
// again once the credential is there. A precondition refusal is the §12 class itself and nothing has
// been dialled.
//
// Steps (RestoreRequest::steps(), CS-81), one at a time, each after the previous one answered:
//   closure         ClosureTransfer::restoreFromCloudly (replication only; replaces "database")
//   volume:<name>   POST /control/volumes { serviceId, name } (created or already there), then
//                   POST /control/restores/volume { serviceId, backupId, name, snapshotId }
//   database        POST /control/restores/database { serviceId, backupId, snapshotId }
//   objectstorage   POST /control/restores/objectstorage { serviceId, backupId, snapshotId }
// A step that fails ends the run (CS-82):
//   restore-step-failed: step <step> failed: <the step's refusal line>
//   data = { name, step, completedSteps: [ the steps done before it, in order ] }
// logged once (warning) with the backup id. Nothing is retried and nothing is undone.
//
// Answer (done's value, raw JSON): { nodeId, serviceId, backupId, completedAt: Clock ms,
// steps: [ { step, state: "done" } ] }. done() is called exactly once (from inside start() for a
// precondition refused at once).
#include "service/backup/restorerequest.h"
#include "shared/contract/result.h"
#include "shared/status/relaystatus.h"

#include <QObject>
#include <functional>

namespace coreflow {

class Clock;
class ClosureTransfer;
class CorestoreClient;

class RestoreRun : public QObject {
    Q_OBJECT
public:
    using Done = std::function<void(const contract::Result<QByteArray> &answer)>;
    // Makes sure the Corestore control credential is held (enrolling or re-reading it if need be) and
    // calls ready(nullptr) when it is, ready(&why) when none can be had. The composition root binds it
    // to CorestoreCredential::acquire (D-82); the token itself never reaches this lane.
    using CredentialProbe = std::function<void(std::function<void(const contract::Refusal *failure)> ready)>;

    RestoreRun(RestoreRequest request, CorestoreClient &client, CredentialProbe credential, ClosureTransfer &closures,
               Clock &clock, Done done, QObject *parent = nullptr);
    ~RestoreRun() override;

    void start();
    const RestoreRequest &request() const { return m_request; }
    QStringList completedSteps() const { return m_completed; }
    bool finished() const { return m_finished; }
    // §18.1 backups.operations: kind "restore", step "preconditions" until the first step runs.
    status::BackupOperationStatus statusEntry() const;

Q_SIGNALS:
    void stepChanged(); // a step started (the status shows the one running)

private:
    std::optional<contract::Refusal> judgeEndpointAndSession() const;
    void onCredential(const contract::Refusal *failure);
    void runNext();
    void runVolume(const RestoreRequest::Volume &volume);
    void runRestore(const QByteArray &route, const QByteArray &body);
    // POSTs body to route; a 2xx answer is judged by read (nullopt: accepted, else the problem).
    void post(const QByteArray &route, const QByteArray &body, std::function<std::optional<QString>(const QByteArray &)> read,
              std::function<void()> then);
    void stepDone();
    void stepFailed(const contract::Refusal &failure);
    void finish(const contract::Result<QByteArray> &answer);

    RestoreRequest m_request;
    CorestoreClient &m_client;
    CredentialProbe m_credential;
    ClosureTransfer &m_closures;
    Clock &m_clock;
    Done m_done;
    QStringList m_steps;
    QStringList m_completed;
    qint64 m_startedAtMs = 0;
    bool m_running = false; // the preconditions held; steps run
    bool m_started = false;
    bool m_finished = false;
};

} // namespace coreflow
