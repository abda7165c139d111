#pragma once
// BindingReconciler: platform binding reconciliation (docs/contract.md §6.9, §7.1, §12.2, §12.3, §12.5;
// rules CS-15..CS-33, CS-47..CS-55, WD-06..WD-12). Publication (§12.4) is behind BindingPublication.
//
// When it runs: only while an accepted registration stands. acceptanceStood() (after every accepted
// registration, once the cluster config was read again) reads getClusterPlatformDesiredState and
// reconciles every binding against it; adoptPushed() (every pushClusterConfig) adopts a pushed desired
// state and reconciles while the acceptance stands. pause() (a lost session, a registration refused
// with a name stating Cloudly does not dispatch to this relay) stops every timer and drops what is in
// flight until the next acceptance. A refused read is logged in Cloudly's words and nothing is
// reconciled; the relay keeps running.
//
// Per binding (key: serviceId/name), in this order:
//   pushnotification             never held, touched or reported (WD-06)
//   no grant                     left exactly as it is, nothing reported (CS-17); status "ungranted"
//   nodeId null                  reported failed binding-not-placed
//   grant names another service, capability or binding: reported failed binding-not-granted (CS-18)
//   database without a valid corestoreDatabase on its node: reported failed database-endpoint-missing,
//                                no Corestore call (CS-32, CS-33)
//   digest of the canonical BindingRequest != grant.requestDigest: nothing sent, nothing reported;
//                                status failed, reason binding-request-digest-mismatch (CS-15)
//   organisation or cluster missing: reported failed (CS-46), nothing sent
//   then POST /control/credential-bindings/reconcile and .../material ({ grant: <authority>,
//   request }), at most kAttemptsPerNode bindings of one node at a time; the material goes into a
//   Secret at once, is checked (CredentialMaterialReader; database material addressed to another
//   endpoint is refused, CS-31) and handed to the publication; a grant whose receipt is held skips
//   straight to the ready report (CS-40).
// An attempt sends exactly the request whose digest it checked; when the node's corestoreDatabase
// changes or leaves while it runs, the attempt is abandoned and the binding judged again (D-93). Under
// a committed grant (REPLAY_CONFLICT) nothing is read from Corestore, sealed or sent again until the
// grant changes (CS-43). The grant's authority is withheld from every Corestore refusal line (CS-49).
// Failures retry under the same grant after BindingBackoff's wait on the injected clock; a new grant
// is tried at once; one log line per distinct failure (corestore-binding-refused: /
// corestore-binding-failed:, naming node, binding, grant operation and generation, no value) and
// corestore-binding-failure-cleared: on recovery. A 409 legacy refusal is reported
// { provisioning | failed, statusReason: <code> }. ready is reported only after the publication said
// Published; a report equal to the last one Cloudly accepted is not sent again (CS-53); a refused
// report is resent on a wait of its own, 5000 ms doubling to 60000 ms (CS-24, D-94). A binding no
// longer desired is forgotten here and never deleted on Corestore (CS-20); a grant operation that
// left the desired state is released in the publication (CS-39).
#include "service/bindings/bindingreport.h"
#include "service/bindings/bindingrequest.h"
#include "service/bindings/platformdesiredstate.h"
#include "shared/status/relaystatus.h"

#include <QHash>
#include <QObject>
#include <QSet>
#include <QStringList>
#include <deque>
#include <map>
#include <memory>
#include <optional>

namespace coreflow {

class BindingCloudlyCalls;
class BindingCorestoreCalls;
class BindingPublication;
struct BindingPublicationOutcome;
struct CorestoreCallOutcome;
class Clock;
class ClockTimer;

class BindingReconciler : public QObject {
    Q_OBJECT
public:
    static constexpr int kAttemptsPerNode = 4;

    BindingReconciler(BindingCorestoreCalls &corestore, BindingCloudlyCalls &cloudly, BindingPublication &publication, Clock &clock,
                      QObject *parent = nullptr);
    ~BindingReconciler() override;

    // The cluster the config names (the publication's scope, §12.4).
    void setClusterId(const QString &clusterId) { m_clusterId = clusterId; }
    void acceptanceStood();
    void pause(const QString &why);
    // nullopt: the push left the desired state unchanged (it still reconciles while the acceptance stands).
    void adoptPushed(std::optional<PlatformDesiredState> state);
    void stop();

    bool isReconciling() const { return m_active; }
    QList<status::PlatformBinding> statusBindings() const;
    int attemptsInFlight() const;
    int bindingCount() const { return int(m_entries.size()); }

Q_SIGNALS:
    void statusChanged();
    void eventLine(const QString &line);

private:
    struct Entry;
    struct Failure {
        bool refusal = false;          // the backoff's refusal cap
        QString prefix;                // corestore-binding-refused | corestore-binding-failed
        QString line;                  // value-free
        QString reportStatus = QStringLiteral("failed");
        std::optional<QString> statusReason;
        QString reason;                // the status model's reason
    };

    void adopt(PlatformDesiredState state, bool everyBinding);
    void evaluate(Entry &e);
    void localFailure(Entry &e, const QString &reason, bool report, bool reasonReported);
    void enqueue(Entry &e);
    void startNext(const QString &nodeId);
    void startAttempt(Entry &e);
    void onReconciled(const QString &key, quint64 epoch, const CorestoreCallOutcome &outcome);
    void onMaterial(const QString &key, quint64 epoch, const CorestoreCallOutcome &outcome);
    void onPublished(const QString &key, quint64 epoch, const BindingPublicationOutcome &outcome);
    void succeeded(Entry &e);
    void failed(Entry &e, const Failure &failure);
    void finishAttempt(Entry &e);
    Entry *current(const QString &key, quint64 epoch);
    // The attempt's request is still the one the node's cluster document yields now (CS-15, CS-32).
    bool attemptStands(const Entry &e) const;
    void abandon(Entry &e);
    void report(Entry &e, BindingReport r);
    void sendReport(Entry &e);
    void scheduleRetry(Entry &e, bool refusal);
    void dropInFlight();
    QByteArray corestoreBody(const Entry &e) const;
    std::optional<BindingRequest> requestFor(const Entry &e) const;
    BindingReport reportFor(const Entry &e, const QString &status, const std::optional<QString> &reason, bool endpoints) const;
    QString describe(const Entry &e) const; // "node <n> binding <s>/<b> grant <op> generation <g>"
    void say(QtMsgType level, const QString &line);
    Failure corestoreFailure(const CorestoreCallOutcome &outcome) const;

    BindingCorestoreCalls &m_corestore;
    BindingCloudlyCalls &m_cloudly;
    BindingPublication &m_publication;
    Clock &m_clock;
    QString m_clusterId;
    bool m_active = false;
    bool m_stopped = false;
    quint64 m_acceptance = 0;
    quint64 m_nextEpoch = 1;
    QString m_loggedReadProblem;
    std::map<QString, std::unique_ptr<Entry>> m_entries;
    QStringList m_order;                      // keys in desired-state order
    QSet<QString> m_grantOperations;          // of the held desired state
    QHash<QString, int> m_running;            // attempts in flight per node
    QHash<QString, std::deque<QString>> m_queued;
};

} // namespace coreflow
