#include "service/bindings/bindingreconciler.h"

#include "service/bindings/bindingbackoff.h"
#include "service/bindings/bindingcloudlycalls.h"
#include "service/bindings/bindingcorestorecalls.h"
#include "service/bindings/bindingpublication.h"
#include "service/bindings/credentialmaterialreader.h"
#include "service/core/logging.h"
#include "shared/contract/exactkeyreader.h"
#include "shared/contract/methods.h"
#include "shared/contract/refusalnames.h"
#include "shared/contract/secretstringtake.h"
#include "shared/util/clock.h"

#include <QJsonDocument>
#include <QJsonObject>

namespace coreflow {

using namespace contract;

namespace {
const QByteArray kReconcileRoute = "/control/credential-bindings/reconcile";
const QByteArray kMaterialRoute = "/control/credential-bindings/material";
const QString kDigestMismatch = QStringLiteral("binding-request-digest-mismatch");
const QString kScopeMissing = QStringLiteral("publication-scope-missing");
const QString kMaterialMisaddressed = QStringLiteral("material-endpoint-mismatch");
const QString kRetentionEvidence = QStringLiteral("retention-evidence-invalid");

QString keyOf(const PlatformBindingSpec &b) { return b.serviceId + QLatin1Char('/') + b.name; }

// The legacy-adoption code of a 409 body ({ error: { code, reason } }), "" when it is none of the three.
QString legacyCode(const QByteArray &body)
{
    const QJsonObject o = QJsonDocument::fromJson(body).object();
    const QString code = o.value(QStringLiteral("error")).toObject().value(QStringLiteral("code")).toString();
    if (code == QLatin1String(refusal::legacyAdoptionPending) || code == QLatin1String(refusal::legacyAdoptionConflict)
        || code == QLatin1String(refusal::legacyAdoptionMismatch))
        return code;
    return {};
}
} // namespace

struct BindingReconciler::Entry {
    QString key;
    DesiredBinding desired;
    QString status = QStringLiteral("ungranted");
    QString reason;
    int attempts = 0;             // under the current grant
    qint64 waitMs = 0;            // the last backoff wait under the current grant
    qint64 nextRetryAtMs = 0;
    std::unique_ptr<ClockTimer> timer;
    bool inFlight = false;
    bool queued = false;
    quint64 epoch = 0;            // the attempt in flight; a completion of another epoch is dropped
    QString loggedFailure;        // the distinct failure last logged ("" none standing)
    QString loggedLocal;          // the local refusal last logged
    bool publicationHeld = false; // the publication holds a request for the current grant (CS-42)
    bool committed = false;       // Cloudly answered REPLAY_CONFLICT under the current grant (CS-43)
    std::optional<BindingRequest> attemptRequest; // the request the attempt in flight checked and sends (CS-15)
    qint64 reportWaitMs = 0;      // the last wait before resending a refused report (§12.5, CS-24)
    std::optional<BindingReport> accepted; // the last report Cloudly accepted (CS-53)
    std::optional<BindingReport> wanted;   // the report to send next
    bool reportInFlight = false;
};

BindingReconciler::BindingReconciler(BindingCorestoreCalls &corestore, BindingCloudlyCalls &cloudly, BindingPublication &publication,
                                     Clock &clock, QObject *parent)
    : QObject(parent), m_corestore(corestore), m_cloudly(cloudly), m_publication(publication), m_clock(clock)
{
}

BindingReconciler::~BindingReconciler() = default;

void BindingReconciler::say(QtMsgType level, const QString &line)
{
    if (level == QtWarningMsg)
        qCWarning(logBindings).noquote() << line;
    else
        qCInfo(logBindings).noquote() << line;
    Q_EMIT eventLine(line);
}

QString BindingReconciler::describe(const Entry &e) const
{
    const auto &d = e.desired;
    QString out = QStringLiteral("node %1 binding %2/%3").arg(d.nodeId.value_or(QStringLiteral("(none)")), d.binding.serviceId, d.binding.name);
    if (d.grant)
        out += QStringLiteral(" grant %1 generation %2").arg(d.grant->operation).arg(d.grant->generation);
    return out;
}

// --- when it runs ------------------------------------------------------------------------------------

void BindingReconciler::acceptanceStood()
{
    if (m_stopped)
        return;
    m_active = true;
    const quint64 acceptance = ++m_acceptance;
    m_cloudly.call(QString(method::getClusterPlatformDesiredState), QByteArray("{}"), [this, acceptance](const BindingCloudlyCalls::Answer &a) {
        if (m_stopped || !m_active || acceptance != m_acceptance)
            return;
        QString problem;
        std::optional<PlatformDesiredState> state;
        if (!a.answered) {
            problem = QStringLiteral("Cloudly refused getClusterPlatformDesiredState: %1").arg(a.words);
        } else {
            QByteArray raw = a.response;
            const QList<Secret> authorities = PlatformDesiredState::takeAuthorities(raw);
            const QJsonDocument doc = QJsonDocument::fromJson(raw);
            Secret::wipe(raw);
            ExactKeyReader reader(doc.object(), QStringLiteral("response"));
            const QJsonObject object = reader.requiredObject(QStringLiteral("desiredState"));
            if (!doc.isObject())
                problem = QStringLiteral("getClusterPlatformDesiredState answered something that is not a JSON object");
            else if (auto refusal = reader.finish())
                problem = QStringLiteral("getClusterPlatformDesiredState answer not read: %1").arg(refusal->text());
            else if (auto read = PlatformDesiredState::read(object, QStringLiteral("response.desiredState"), authorities); !read)
                problem = QStringLiteral("getClusterPlatformDesiredState answer not read: %1").arg(read.refusal().text());
            else
                state = std::move(read).value();
        }
        if (!state) {
            // WD-12, CS-55: logged in Cloudly's words (once while it repeats), nothing reconciled.
            if (problem != m_loggedReadProblem)
                say(QtWarningMsg, problem + QStringLiteral("; bindings are not reconciled until the next accepted registration or config push"));
            m_loggedReadProblem = problem;
            return;
        }
        m_loggedReadProblem.clear();
        adopt(std::move(*state), true);
    });
}

void BindingReconciler::pause(const QString &why)
{
    if (!m_active)
        return;
    m_active = false;
    ++m_acceptance;
    dropInFlight();
    say(QtInfoMsg, QStringLiteral("binding reconciliation paused: %1; it resumes after the next accepted registration").arg(why));
    Q_EMIT statusChanged();
}

void BindingReconciler::stop()
{
    m_stopped = true;
    m_active = false;
    dropInFlight();
}

void BindingReconciler::dropInFlight()
{
    for (auto &[key, e] : m_entries) {
        e->timer->stop();
        e->nextRetryAtMs = 0;
        e->inFlight = false;
        e->queued = false;
        e->reportInFlight = false;
        e->epoch = m_nextEpoch++;
        if (e->status == QLatin1String("reconciling"))
            e->status = QStringLiteral("paused");
    }
    m_running.clear();
    m_queued.clear();
}

void BindingReconciler::adoptPushed(std::optional<PlatformDesiredState> state)
{
    if (m_stopped)
        return;
    if (state) {
        adopt(std::move(*state), false);
        return;
    }
    if (!m_active)
        return;
    for (const QString &key : std::as_const(m_order)) {
        Entry &e = *m_entries.at(key);
        if (!e.inFlight && !e.queued && !e.timer->isActive())
            evaluate(e);
    }
}

void BindingReconciler::adopt(PlatformDesiredState state, bool everyBinding)
{
    QStringList order;
    QSet<QString> operations;
    std::map<QString, DesiredBinding> desired;
    for (auto &d : state.bindings) {
        if (d.binding.capability == QLatin1String("pushnotification"))
            continue; // WD-06: Cloudly's own
        const QString key = keyOf(d.binding);
        if (desired.count(key))
            continue; // a name is unique per service; a repeat is not a second binding
        if (d.grant)
            operations.insert(d.grant->operation);
        order.append(key);
        desired.emplace(key, std::move(d));
    }
    // CS-20: what is no longer desired is retained on its Corestore, never deleted; CS-39: a grant
    // operation that left the desired state is released in the publication.
    QSet<QString> freed; // nodes whose attempt slot a removed binding held
    for (auto it = m_entries.begin(); it != m_entries.end();) {
        if (desired.count(it->first)) {
            ++it;
            continue;
        }
        Entry &e = *it->second;
        if (e.inFlight) {
            --m_running[e.desired.nodeId.value_or(QString())];
            freed.insert(e.desired.nodeId.value_or(QString()));
        }
        say(QtInfoMsg, QStringLiteral("binding %1/%2 is no longer desired: retained as it is on node %3 (never deleted)")
                           .arg(e.desired.binding.serviceId, e.desired.binding.name, e.desired.nodeId.value_or(QStringLiteral("(none)"))));
        it = m_entries.erase(it);
    }
    for (auto &q : m_queued)
        std::erase_if(q, [this](const QString &k) { return !m_entries.count(k); });
    for (const QString &node : std::as_const(freed))
        startNext(node);
    for (const QString &op : std::as_const(m_grantOperations))
        if (!operations.contains(op))
            m_publication.forget(op);
    m_grantOperations = operations;
    m_order = order;

    for (const QString &key : std::as_const(order)) {
        DesiredBinding &d = desired.at(key);
        auto found = m_entries.find(key);
        bool fresh = false;
        if (found == m_entries.end()) {
            auto e = std::make_unique<Entry>();
            e->key = key;
            e->timer = m_clock.createTimer(this);
            connect(e->timer.get(), &ClockTimer::timeout, this, [this, key] {
                auto f = m_entries.find(key);
                if (f == m_entries.end() || !m_active)
                    return;
                f->second->nextRetryAtMs = 0;
                evaluate(*f->second);
            });
            found = m_entries.emplace(key, std::move(e)).first;
            fresh = true;
        }
        Entry &e = *found->second;
        const bool sameGrant = !fresh && e.desired.grant.has_value() == d.grant.has_value()
                               && (!d.grant || (e.desired.grant->operation == d.grant->operation
                                                && e.desired.grant->generation == d.grant->generation));
        const bool changed = fresh || !sameGrant || e.desired.nodeId != d.nodeId || !(e.desired.binding == d.binding);
        e.desired = std::move(d);
        if (!sameGrant) {
            // CS-25: a new grant is tried at once, its backoff starts afresh.
            if (e.inFlight)
                --m_running[e.desired.nodeId.value_or(QString())];
            e.inFlight = false;
            e.epoch = m_nextEpoch++;
            e.attempts = 0;
            e.waitMs = 0;
            e.timer->stop();
            e.nextRetryAtMs = 0;
            e.publicationHeld = false;
            e.committed = false;
            e.reportWaitMs = 0;
            e.attemptRequest.reset();
        }
        if (!m_active)
            continue;
        if (e.inFlight || e.queued)
            continue;
        if (e.timer->isActive() && !everyBinding && !changed)
            continue; // waiting out its backoff under the same grant
        e.timer->stop();
        e.nextRetryAtMs = 0;
        evaluate(e);
    }
    Q_EMIT statusChanged();
}

// --- one binding ---------------------------------------------------------------------------------------

std::optional<BindingRequest> BindingReconciler::requestFor(const Entry &e) const
{
    const auto &b = e.desired.binding;
    if (b.capability == QLatin1String("database")) {
        const auto db = m_corestore.databaseOf(*e.desired.nodeId);
        if (!db || db->host.isEmpty() || db->port < 1 || db->port > 65535)
            return std::nullopt;
        return BindingRequest::database(b.serviceId, b.name, *db);
    }
    return BindingRequest::objectStorage(b.serviceId, b.name, b.retention);
}

void BindingReconciler::evaluate(Entry &e)
{
    const auto &d = e.desired;
    if (!d.grant) {
        // CS-17: left exactly as it is, nothing reported.
        e.status = QStringLiteral("ungranted");
        e.reason.clear();
        Q_EMIT statusChanged();
        return;
    }
    if (e.committed) {
        // CS-43 (§12.4): under a committed grant nothing is read from Corestore, sealed or sent again.
        e.status = QStringLiteral("committed");
        e.reason = QString(refusal::cloudlyReplayConflict);
        Q_EMIT statusChanged();
        return;
    }
    const auto &g = *d.grant;
    if (!d.nodeId)
        return localFailure(e, QString(refusal::bindingNotPlaced), true, true);
    if (g.serviceId != d.binding.serviceId || g.capability != d.binding.capability || g.bindingName != d.binding.name)
        return localFailure(e, QString(refusal::bindingNotGranted), true, true);
    const auto request = requestFor(e);
    if (!request)
        return localFailure(e, QString(refusal::databaseEndpointMissing), true, true);
    if (request->digestHex() != g.requestDigest.toLower())
        return localFailure(e, kDigestMismatch, false, false); // CS-15: nothing sent
    if (!d.binding.organizationId || d.binding.organizationId->isEmpty() || m_clusterId.isEmpty())
        return localFailure(e, kScopeMissing, true, false);   // CS-46
    e.loggedLocal.clear();
    e.attemptRequest = request; // the attempt sends exactly the request whose digest was checked
    enqueue(e);
}

void BindingReconciler::localFailure(Entry &e, const QString &reason, bool reportIt, bool reasonReported)
{
    e.status = QStringLiteral("failed");
    e.reason = reason;
    const QString logged = describe(e) + QLatin1Char('|') + reason;
    if (logged != e.loggedLocal) {
        e.loggedLocal = logged;
        say(QtWarningMsg, QStringLiteral("binding refused by the relay: %1: %2%3")
                              .arg(describe(e), reason, reportIt ? QStringLiteral("; reported failed") : QStringLiteral("; nothing sent")));
    }
    if (reportIt)
        report(e, reportFor(e, QStringLiteral("failed"), reasonReported ? std::optional<QString>(reason) : std::nullopt, false));
    Q_EMIT statusChanged();
}

void BindingReconciler::enqueue(Entry &e)
{
    const QString node = *e.desired.nodeId;
    e.queued = true;
    e.status = QStringLiteral("reconciling");
    m_queued[node].push_back(e.key);
    startNext(node);
}

void BindingReconciler::startNext(const QString &nodeId)
{
    auto &queue = m_queued[nodeId];
    while (m_active && m_running.value(nodeId) < kAttemptsPerNode && !queue.empty()) {
        const QString key = queue.front();
        queue.pop_front();
        auto f = m_entries.find(key);
        if (f == m_entries.end() || !f->second->queued)
            continue;
        f->second->queued = false;
        ++m_running[nodeId];
        startAttempt(*f->second);
    }
}

QByteArray BindingReconciler::corestoreBody(const Entry &e) const
{
    // { grant: <authority>, request: BindingRequest } (§15.1). The authority is revealed only here,
    // into the body the caller wipes once the call took it.
    const auto &request = e.attemptRequest;
    const Secret quoted = e.desired.grant->authority.jsonQuoted();
    QByteArray body;
    body.reserve(quoted.size() + 256);
    body.append("{\"grant\":");
    body.append(quoted.reveal());
    body.append(",\"request\":");
    body.append(request->canonical());
    body.append('}');
    return body;
}

void BindingReconciler::startAttempt(Entry &e)
{
    e.inFlight = true;
    e.epoch = m_nextEpoch++;
    ++e.attempts;
    e.status = QStringLiteral("reconciling");
    e.nextRetryAtMs = 0;
    e.timer->stop();
    Q_EMIT statusChanged();
    if (m_publication.holdsReceipt(e.desired.grant->operation))
        return succeeded(e); // CS-40: published under this grant; nothing is read or sealed again
    if (!attemptStands(e))
        return abandon(e);
    const QString key = e.key;
    const quint64 epoch = e.epoch;
    QByteArray body = corestoreBody(e);
    m_corestore.post(*e.desired.nodeId, kReconcileRoute, body, e.desired.grant->authority,
                     [this, key, epoch](const CorestoreCallOutcome &outcome) { onReconciled(key, epoch, outcome); });
    Secret::wipe(body);
}

bool BindingReconciler::attemptStands(const Entry &e) const
{
    const auto now = requestFor(e);
    return now && e.attemptRequest && now->canonical() == e.attemptRequest->canonical();
}

void BindingReconciler::abandon(Entry &e)
{
    // CS-15, CS-32: the node's corestoreDatabase changed (or left) while the attempt ran; its answer
    // belongs to a request the binding no longer stands on. Nothing more is sent under it; the binding
    // is judged again on what the cluster document states now.
    say(QtInfoMsg, QStringLiteral("binding attempt abandoned: %1: the node's corestoreDatabase changed during the attempt").arg(describe(e)));
    e.attemptRequest.reset();
    finishAttempt(e);
    evaluate(e);
}

BindingReconciler::Entry *BindingReconciler::current(const QString &key, quint64 epoch)
{
    auto f = m_entries.find(key);
    if (f == m_entries.end() || f->second->epoch != epoch || !f->second->inFlight || !m_active)
        return nullptr;
    return f->second.get();
}

BindingReconciler::Failure BindingReconciler::corestoreFailure(const CorestoreCallOutcome &outcome) const
{
    Failure f;
    f.refusal = outcome.kind == CorestoreCallOutcome::Kind::Refused && BindingBackoff::isRefusalStatus(outcome.status);
    f.prefix = f.refusal ? QString(refusal::corestoreBindingRefused) : QString(refusal::corestoreBindingFailed);
    f.line = outcome.refusal.text();
    f.reason = outcome.refusal.name;
    return f;
}

void BindingReconciler::onReconciled(const QString &key, quint64 epoch, const CorestoreCallOutcome &outcome)
{
    Entry *e = current(key, epoch);
    if (!e)
        return;
    if (!attemptStands(*e))
        return abandon(*e);
    if (outcome.kind != CorestoreCallOutcome::Kind::Answered) {
        Failure f = corestoreFailure(outcome);
        if (outcome.kind == CorestoreCallOutcome::Kind::Refused && outcome.status == 409) {
            // CS-50..52: a legacy resource is a named state.
            const QString code = legacyCode(outcome.body);
            if (!code.isEmpty()) {
                f.statusReason = code;
                f.reason = code;
                f.reportStatus = code == QLatin1String(refusal::legacyAdoptionPending) ? QStringLiteral("provisioning") : QStringLiteral("failed");
            }
        }
        return failed(*e, f);
    }
    // { binding: { name, state: "reconciled", retention?: { mode, days } } } (§15.1, D-84).
    const QJsonDocument doc = QJsonDocument::fromJson(outcome.body);
    ExactKeyReader top(doc.object(), QStringLiteral("answer"));
    const QJsonObject binding = top.requiredObject(QStringLiteral("binding"));
    std::optional<Refusal> problem = doc.isObject() ? top.finish() : std::optional<Refusal>(Refusal{QString(refusal::requestInvalid), QStringLiteral("not a JSON object")});
    std::optional<BindingRetention> evidence;
    if (!problem) {
        ExactKeyReader r(binding, QStringLiteral("answer.binding"));
        const QString name = r.requiredString(QStringLiteral("name"));
        const QString state = r.requiredString(QStringLiteral("state"));
        if (const auto retention = r.optionalObject(QStringLiteral("retention"))) {
            ExactKeyReader rr(*retention, QStringLiteral("answer.binding.retention"));
            BindingRetention value{rr.requiredString(QStringLiteral("mode")), rr.requiredInteger(QStringLiteral("days"))};
            if (auto refusal = rr.finish())
                problem = refusal;
            else
                evidence = value;
        }
        if (!r.failed() && name != e->desired.binding.name)
            r.fail(QStringLiteral("name"), QStringLiteral("is not the binding's name"));
        if (!r.failed() && state != QLatin1String("reconciled"))
            r.fail(QStringLiteral("state"), QStringLiteral("is not reconciled"));
        if (!problem)
            problem = r.finish();
    }
    if (problem) {
        Failure f;
        f.prefix = QString(refusal::corestoreBindingFailed);
        f.line = QStringLiteral("%1: POST %2 on node %3: unreadable answer (%4)")
                     .arg(QLatin1String(refusal::corestoreUnreachable), QString::fromLatin1(kReconcileRoute), *e->desired.nodeId, problem->reason);
        f.reason = QString(refusal::corestoreUnreachable);
        return failed(*e, f);
    }
    // CS-19 (D-84): object storage under a retention promise must carry Corestore's evidence of exactly
    // the retention the grant covers (its digest includes it).
    const auto &wanted = e->desired.binding.retention;
    const bool promised = e->desired.binding.capability == QLatin1String("objectstorage") && wanted && wanted->mode != QLatin1String("none");
    if ((promised && evidence != wanted) || (evidence && evidence != wanted)) {
        Failure f;
        f.refusal = true;
        f.prefix = QString(refusal::corestoreBindingRefused);
        f.line = QStringLiteral("%1: Corestore's retention evidence does not match the granted retention").arg(kRetentionEvidence);
        f.reason = kRetentionEvidence;
        return failed(*e, f);
    }
    QByteArray body = corestoreBody(*e);
    m_corestore.post(*e->desired.nodeId, kMaterialRoute, body, e->desired.grant->authority,
                     [this, key, epoch](const CorestoreCallOutcome &o) { onMaterial(key, epoch, o); });
    Secret::wipe(body);
}

void BindingReconciler::onMaterial(const QString &key, quint64 epoch, const CorestoreCallOutcome &outcome)
{
    // The answered material goes into a Secret at once; the answer's bytes are wiped (§15.2, §19.4).
    // The outcome is the client's own value, handed by reference: its body is moved out (not shared)
    // so that the wipe below reaches the only copy this side holds.
    QByteArray body = std::move(const_cast<CorestoreCallOutcome &>(outcome).body);
    std::optional<Secret> material;
    if (outcome.kind == CorestoreCallOutcome::Kind::Answered)
        material = takeSecretObject(body, {"material"});
    const QJsonDocument blanked = material ? QJsonDocument::fromJson(body) : QJsonDocument();
    Secret::wipe(body);
    Entry *e = current(key, epoch);
    if (!e)
        return;
    if (!attemptStands(*e))
        return abandon(*e);
    if (outcome.kind != CorestoreCallOutcome::Kind::Answered)
        return failed(*e, corestoreFailure(outcome));
    QString problem;
    std::optional<CredentialMaterialFacts> facts;
    if (!material || !blanked.isObject()) {
        problem = QStringLiteral("the answer is not { material: object }");
    } else {
        ExactKeyReader top(blanked.object(), QStringLiteral("answer"));
        top.requiredObject(QStringLiteral("material"));
        if (auto refusal = top.finish()) {
            problem = refusal->reason;
        } else {
            auto read = CredentialMaterialReader::read(*material);
            if (auto *p = std::get_if<QString>(&read))
                problem = *p;
            else
                facts = std::get<CredentialMaterialFacts>(read);
        }
    }
    if (!problem.isEmpty()) {
        Failure f;
        f.prefix = QString(refusal::corestoreBindingFailed);
        f.line = QStringLiteral("%1: POST %2 on node %3: unreadable answer (%4)")
                     .arg(QLatin1String(refusal::corestoreUnreachable), QString::fromLatin1(kMaterialRoute), *e->desired.nodeId, problem);
        f.reason = QString(refusal::corestoreUnreachable);
        return failed(*e, f);
    }
    const auto &request = e->attemptRequest;
    if (facts->capability != e->desired.binding.capability || (request && request->endpoint() && facts->endpoint != request->endpoint())) {
        // CS-31: material addressed elsewhere is refused before anything is published.
        Failure f;
        f.refusal = true;
        f.prefix = QString(refusal::corestoreBindingRefused);
        f.line = QStringLiteral("%1: the answered material is addressed to another %2").arg(kMaterialMisaddressed,
                     facts->capability != e->desired.binding.capability ? QStringLiteral("capability") : QStringLiteral("database endpoint"));
        f.reason = kMaterialMisaddressed;
        return failed(*e, f);
    }
    const auto &b = e->desired.binding;
    const auto &g = *e->desired.grant;
    BindingPublicationRequest publication;
    publication.nodeId = *e->desired.nodeId;
    publication.serviceId = b.serviceId;
    publication.bindingName = b.name;
    publication.capability = b.capability;
    publication.organizationId = *b.organizationId;
    publication.clusterId = m_clusterId;
    publication.grantOperation = g.operation;
    publication.grantGeneration = g.generation;
    m_publication.publish(publication, std::move(*material),
                          [this, key, epoch](const BindingPublicationOutcome &o) { onPublished(key, epoch, o); });
}

void BindingReconciler::onPublished(const QString &key, quint64 epoch, const BindingPublicationOutcome &outcome)
{
    Entry *e = current(key, epoch);
    if (!e)
        return;
    using Kind = BindingPublicationOutcome::Kind;
    switch (outcome.kind) {
    case Kind::Published:
        return succeeded(*e);
    case Kind::Committed: {
        // CS-43: Cloudly committed another envelope under this grant; the binding stays as Cloudly
        // states it: nothing reported, no timer (the publication warns on each attempt).
        e->publicationHeld = true;
        e->committed = true;
        e->status = QStringLiteral("committed");
        e->reason = QString(refusal::cloudlyReplayConflict);
        finishAttempt(*e);
        Q_EMIT statusChanged();
        return;
    }
    case Kind::Retry:
    case Kind::Failed: {
        // §12.4: a Retry leaves the request held (never reported failed, CS-42); another named
        // refusal drops it, so that failure is reported failed (CS-41).
        e->publicationHeld = outcome.kind == Kind::Retry;
        Failure f;
        f.prefix = QString(refusal::corestoreBindingFailed);
        f.line = outcome.reason.isEmpty() ? QStringLiteral("publishCorestoreCredentialMaterial did not complete") : outcome.reason;
        f.reason = QStringLiteral("publication");
        return failed(*e, f);
    }
    }
}

void BindingReconciler::finishAttempt(Entry &e)
{
    const QString node = e.desired.nodeId.value_or(QString());
    e.inFlight = false;
    if (m_running.value(node) > 0)
        --m_running[node];
    startNext(node);
}

void BindingReconciler::succeeded(Entry &e)
{
    if (!e.loggedFailure.isEmpty()) {
        say(QtInfoMsg, QStringLiteral("%1: %2").arg(QLatin1String(refusal::corestoreBindingFailureCleared), describe(e)));
        e.loggedFailure.clear();
    }
    e.waitMs = 0;
    e.status = QStringLiteral("ready");
    e.reason.clear();
    finishAttempt(e);
    report(e, reportFor(e, QStringLiteral("ready"), std::nullopt, true)); // CS-36: only now
    Q_EMIT statusChanged();
}

void BindingReconciler::failed(Entry &e, const Failure &f)
{
    // CS-26: one line per distinct failure (grant, kind or class), not per attempt.
    const QString distinct = describe(e) + QLatin1Char('|') + f.prefix + QLatin1Char('|') + f.line;
    if (distinct != e.loggedFailure) {
        e.loggedFailure = distinct;
        say(QtWarningMsg, QStringLiteral("%1: %2: %3").arg(f.prefix, describe(e), f.line));
    }
    e.status = f.reportStatus;
    e.reason = f.reason;
    finishAttempt(e);
    // CS-42: while the publication holds a request for this grant, no failure is reported failed.
    if (!(e.publicationHeld && f.reportStatus == QLatin1String("failed")))
        report(e, reportFor(e, f.reportStatus, f.statusReason, false));
    scheduleRetry(e, f.refusal);
    Q_EMIT statusChanged();
}

void BindingReconciler::scheduleRetry(Entry &e, bool refusal)
{
    if (!m_active)
        return;
    e.waitMs = BindingBackoff::nextWaitMs(e.waitMs, refusal);
    e.nextRetryAtMs = m_clock.nowMs() + e.waitMs;
    e.timer->start(e.waitMs);
}

// --- reports ---------------------------------------------------------------------------------------------

BindingReport BindingReconciler::reportFor(const Entry &e, const QString &status, const std::optional<QString> &reason, bool endpoints) const
{
    const auto &b = e.desired.binding;
    BindingReport r;
    r.nodeId = e.desired.nodeId;
    r.serviceId = b.serviceId;
    r.bindingName = b.name;
    r.capability = b.capability;
    r.status = status;
    r.statusReason = reason;
    if (endpoints && e.desired.nodeId) {
        if (b.capability == QLatin1String("database")) {
            if (const auto db = m_corestore.databaseOf(*e.desired.nodeId))
                r.endpoints.append(BindingReportEndpoint{b.name, b.capability, QStringLiteral("mongodb"), db->host, db->port});
        } else {
            r.endpoints.append(BindingReportEndpoint{b.name, b.capability, QStringLiteral("s3"), m_corestore.corestoreHostOf(*e.desired.nodeId), std::nullopt});
        }
    }
    return r;
}

void BindingReconciler::report(Entry &e, BindingReport r)
{
    e.wanted = std::move(r);
    sendReport(e);
}

void BindingReconciler::sendReport(Entry &e)
{
    if (!m_active || e.reportInFlight || !e.wanted)
        return;
    if (e.accepted == e.wanted) {
        e.wanted.reset(); // CS-53: Cloudly holds it already
        return;
    }
    const BindingReport sent = *e.wanted;
    e.reportInFlight = true;
    const QString key = e.key;
    const quint64 acceptance = m_acceptance;
    m_cloudly.call(QString(method::reportClusterPlatformBindingStatus), sent.toJson(), [this, key, sent, acceptance](const BindingCloudlyCalls::Answer &a) {
        auto f = m_entries.find(key);
        if (f == m_entries.end() || acceptance != m_acceptance)
            return;
        Entry &e = *f->second;
        e.reportInFlight = false;
        if (a.answered) {
            e.reportWaitMs = 0;
            e.accepted = sent;
            if (e.wanted == sent)
                e.wanted.reset();
            sendReport(e);
            return;
        }
        // Refused or lost: logged, retried with the binding's backoff.
        const QString line = QStringLiteral("reportClusterPlatformBindingStatus for %1 not accepted: %2").arg(describe(e), a.words);
        if (line != e.loggedLocal) {
            e.loggedLocal = line;
            say(QtWarningMsg, line);
        }
        // The report's own wait grows like any failure's (CS-24); succeeded() resetting the attempt's
        // wait does not shorten it.
        if (!e.timer->isActive() && !e.inFlight && !e.queued && m_active) {
            e.reportWaitMs = BindingBackoff::nextWaitMs(e.reportWaitMs, false);
            e.nextRetryAtMs = m_clock.nowMs() + e.reportWaitMs;
            e.timer->start(e.reportWaitMs);
        }
        Q_EMIT statusChanged();
    });
}

// --- status ------------------------------------------------------------------------------------------

QList<status::PlatformBinding> BindingReconciler::statusBindings() const
{
    QList<status::PlatformBinding> out;
    out.reserve(m_order.size());
    for (const QString &key : m_order) {
        auto f = m_entries.find(key);
        if (f == m_entries.end())
            continue;
        const Entry &e = *f->second;
        status::PlatformBinding b;
        b.name = e.desired.binding.name;
        b.capability = e.desired.binding.capability;
        b.nodeId = e.desired.nodeId.value_or(QString());
        b.serviceId = e.desired.binding.serviceId;
        b.status = e.status;
        b.reason = e.reason;
        if (e.desired.grant) {
            b.grantOperation = e.desired.grant->operation;
            b.grantGeneration = e.desired.grant->generation;
        }
        b.attempts = e.attempts;
        b.nextRetryAtMs = e.timer->isActive() ? e.nextRetryAtMs : 0;
        out.append(b);
    }
    return out;
}

int BindingReconciler::attemptsInFlight() const
{
    int n = 0;
    for (const auto &[key, e] : m_entries)
        n += e->inFlight ? 1 : 0;
    return n;
}

} // namespace coreflow
