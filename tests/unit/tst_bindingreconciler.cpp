// The bindings lane without sockets (docs/contract.md §6.9, §7.1, §12.2, §12.3, §12.5): BindingRequest's
// canonical form against digests computed independently (Python's json.dumps(sort_keys=True,
// separators=(',',':'), ensure_ascii=False) | sha256, and `jq -S -c . | sha256sum` for the first), the
// desired-state reader, the material reader, the backoff, and BindingReconciler against doubles of
// Corestore, Cloudly and the publication seam on a ManualClock.
// Rules: CS-15..CS-33, CS-36, CS-39, CS-40, CS-42, CS-43, CS-46..CS-55, WD-06..WD-12.
#include "service/bindings/bindingbackoff.h"
#include "service/bindings/bindingcloudlycalls.h"
#include "service/bindings/bindingcorestorecalls.h"
#include "service/bindings/bindingpublication.h"
#include "service/bindings/bindingreconciler.h"
#include "service/bindings/bindingrequest.h"
#include "service/bindings/credentialmaterialreader.h"
#include "service/bindings/platformdesiredstate.h"
#include "shared/status/relaystatus.h"
#include "shared/util/manualclock.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>
#include <deque>

using namespace coreflow;

namespace {

// --- log capture (canaries) ---------------------------------------------------------------------------
QStringList *g_lines = nullptr;
void captureMessages(QtMsgType, const QMessageLogContext &, const QString &message)
{
    if (g_lines)
        g_lines->append(message);
}

const QByteArray kAuthorityCanary = "grant-authority-canary-7f3a";
const QByteArray kPasswordCanary = "password-canary-91b2";
const QByteArray kSecretKeyCanary = "secret-access-key-canary-44c1";
const QByteArray kUriCanary = "mongodb://user:uri-canary-0d9e@10.0.0.5:27017/db";

// --- Corestore double ------------------------------------------------------------------------------------
struct CorestoreDouble : BindingCorestoreCalls {
    struct Call {
        QString nodeId;
        QByteArray route;
        QJsonObject body;
        QByteArray rawBody;
        Done done;
    };
    struct Script {
        CorestoreCallOutcome::Kind kind = CorestoreCallOutcome::Kind::Answered;
        int status = 200;
        QByteArray body;
    };
    std::deque<Call> pending;
    QList<Call> seen;
    QHash<QString, DatabaseEndpoint> databases;
    QHash<QString, QString> hosts;
    QHash<QString, Script> standing;   // "node route" -> answer
    QHash<QString, std::deque<Script>> queued;
    QSet<QString> down;                // nodes whose Corestore is unreachable
    bool misaddress = false;           // material answered for another endpoint

    void post(const QString &nodeId, const QByteArray &route, const QByteArray &jsonBody, const Secret &, Done done) override
    {
        Call c{nodeId, route, QJsonDocument::fromJson(jsonBody).object(), jsonBody, std::move(done)};
        seen.append(Call{c.nodeId, c.route, c.body, c.rawBody, {}});
        pending.push_back(std::move(c));
    }
    std::optional<DatabaseEndpoint> databaseOf(const QString &nodeId) const override
    {
        if (!databases.contains(nodeId))
            return std::nullopt;
        return databases.value(nodeId);
    }
    QString corestoreHostOf(const QString &nodeId) const override { return hosts.value(nodeId); }

    static CorestoreCallOutcome refused(int status, const QByteArray &body = {})
    {
        CorestoreCallOutcome o;
        o.kind = CorestoreCallOutcome::Kind::Refused;
        o.status = status;
        o.body = body;
        o.refusal = {QStringLiteral("corestore-refused"), QStringLiteral("POST /control/credential-bindings/reconcile on node n answered %1: x").arg(status)};
        return o;
    }
    CorestoreCallOutcome answerFor(const Call &c)
    {
        const QString key = c.nodeId + QLatin1Char(' ') + QString::fromLatin1(c.route);
        std::optional<Script> script;
        if (auto q = queued.find(key); q != queued.end() && !q->empty()) {
            script = q->front();
            q->pop_front();
        } else if (standing.contains(key)) {
            script = standing.value(key);
        }
        if (down.contains(c.nodeId)) {
            CorestoreCallOutcome o;
            o.kind = CorestoreCallOutcome::Kind::Unreachable;
            o.refusal = {QStringLiteral("CORESTORE_UNREACHABLE"), QStringLiteral("POST %1 on node %2: connection refused").arg(QString::fromLatin1(c.route), c.nodeId)};
            return o;
        }
        if (script && script->kind != CorestoreCallOutcome::Kind::Answered) {
            if (script->kind == CorestoreCallOutcome::Kind::Refused)
                return refused(script->status, script->body);
            CorestoreCallOutcome o;
            o.kind = script->kind;
            o.status = script->status;
            o.refusal = {QStringLiteral("CORESTORE_UNREACHABLE"), QStringLiteral("POST %1 on node %2: %3").arg(QString::fromLatin1(c.route), c.nodeId).arg(script->status)};
            return o;
        }
        CorestoreCallOutcome o;
        o.kind = CorestoreCallOutcome::Kind::Answered;
        o.status = 200;
        if (script) {
            o.body = script->body;
            return o;
        }
        const QJsonObject request = c.body.value(QStringLiteral("request")).toObject();
        if (c.route.endsWith("/reconcile")) {
            QJsonObject binding{{QStringLiteral("name"), request.value(QStringLiteral("bindingName"))}, {QStringLiteral("state"), QStringLiteral("reconciled")}};
            if (request.value(QStringLiteral("retention")).isObject())
                binding.insert(QStringLiteral("retention"), request.value(QStringLiteral("retention")));
            o.body = QJsonDocument(QJsonObject{{QStringLiteral("binding"), binding}}).toJson(QJsonDocument::Compact);
        } else if (request.value(QStringLiteral("capability")) == QLatin1String("database")) {
            QJsonObject endpoint = request.value(QStringLiteral("endpoint")).toObject();
            if (misaddress)
                endpoint.insert(QStringLiteral("host"), QStringLiteral("203.0.113.9"));
            o.body = QJsonDocument(QJsonObject{{QStringLiteral("material"),
                                                QJsonObject{{QStringLiteral("capability"), QStringLiteral("database")},
                                                            {QStringLiteral("endpoint"), endpoint},
                                                            {QStringLiteral("database"), QStringLiteral("db")},
                                                            {QStringLiteral("username"), QStringLiteral("user")},
                                                            {QStringLiteral("password"), QString::fromLatin1(kPasswordCanary)},
                                                            {QStringLiteral("uri"), QString::fromLatin1(kUriCanary)}}}})
                         .toJson(QJsonDocument::Compact);
        } else {
            o.body = QJsonDocument(QJsonObject{{QStringLiteral("material"),
                                                QJsonObject{{QStringLiteral("capability"), QStringLiteral("objectstorage")},
                                                            {QStringLiteral("endpoint"), QStringLiteral("https://s3.local")},
                                                            {QStringLiteral("bucket"), QStringLiteral("b")},
                                                            {QStringLiteral("accessKeyId"), QStringLiteral("k")},
                                                            {QStringLiteral("secretAccessKey"), QString::fromLatin1(kSecretKeyCanary)},
                                                            {QStringLiteral("region"), QStringLiteral("local")}}}})
                         .toJson(QJsonDocument::Compact);
        }
        return o;
    }
    std::function<bool()> alsoFlush; // the publication's pending answers
    // Answers every pending call (and those the answers cause) until none is left.
    void flush()
    {
        while (!pending.empty() || (alsoFlush && alsoFlush())) {
            if (pending.empty())
                continue;
            Call c = std::move(pending.front());
            pending.pop_front();
            const CorestoreCallOutcome o = answerFor(c);
            c.done(o);
        }
    }
    int count(const QByteArray &suffix, const QString &node = {}) const
    {
        int n = 0;
        for (const auto &c : seen)
            n += (c.route.endsWith(suffix) && (node.isEmpty() || c.nodeId == node)) ? 1 : 0;
        return n;
    }
};

// --- Cloudly double ----------------------------------------------------------------------------------------
struct CloudlyDouble : BindingCloudlyCalls {
    QByteArray desiredStateAnswer = R"({"desiredState":{"bindings":[]}})";
    QString refuseDesiredState;   // a name: refuse the read with it
    int refuseReports = 0;        // the next n reports are refused
    QList<QJsonObject> reports;
    int desiredStateReads = 0;
    void call(const QString &method, const QByteArray &body, Done done) override
    {
        Answer a;
        if (method == QLatin1String("getClusterPlatformDesiredState")) {
            ++desiredStateReads;
            if (!refuseDesiredState.isEmpty()) {
                a.refusalName = refuseDesiredState;
                a.words = refuseDesiredState + QStringLiteral(": Cloudly elects another relay (words of Cloudly)");
            } else {
                a.answered = true;
                a.response = desiredStateAnswer;
            }
        } else if (method == QLatin1String("reportClusterPlatformBindingStatus")) {
            reports.append(QJsonDocument::fromJson(body).object());
            if (refuseReports > 0) {
                --refuseReports;
                a.refusalName = QStringLiteral("relay-not-connected");
                a.words = QStringLiteral("relay-not-connected: no accepted registration");
            } else {
                a.answered = true;
                a.response = R"({"accepted":true})";
            }
        }
        done(a);
    }
};

// --- publication seam double ----------------------------------------------------------------------------
struct PublicationDouble : BindingPublication {
    struct Published {
        BindingPublicationRequest request;
        QByteArray material;
    };
    QList<Published> published;
    QSet<QString> receipts;
    QStringList forgotten;
    std::deque<BindingPublicationOutcome::Kind> script;
    std::deque<std::function<void()>> pending; // the seam never answers from inside publish()
    void publish(const BindingPublicationRequest &request, Secret material, Done done) override
    {
        published.append(Published{request, QByteArray(material.reveal().data(), material.size())});
        BindingPublicationOutcome o;
        o.kind = BindingPublicationOutcome::Kind::Published;
        if (!script.empty()) {
            o.kind = script.front();
            script.pop_front();
            o.reason = QStringLiteral("INTERNAL_ERROR: publishCorestoreCredentialMaterial failed");
        }
        if (o.kind == BindingPublicationOutcome::Kind::Published)
            receipts.insert(request.grantOperation);
        pending.push_back([o, done = std::move(done)] { done(o); });
    }
    bool flush()
    {
        const bool any = !pending.empty();
        while (!pending.empty()) {
            auto f = std::move(pending.front());
            pending.pop_front();
            f();
        }
        return any;
    }
    void forget(const QString &grantOperation) override
    {
        forgotten.append(grantOperation);
        receipts.remove(grantOperation);
    }
    bool holdsReceipt(const QString &grantOperation) const override { return receipts.contains(grantOperation); }
};

// --- desired-state builders ------------------------------------------------------------------------------
QJsonObject databaseBinding(const QString &service, const QString &name)
{
    return {{QStringLiteral("name"), name}, {QStringLiteral("capability"), QStringLiteral("database")}, {QStringLiteral("serviceId"), service},
            {QStringLiteral("organizationId"), QStringLiteral("org-1")}, {QStringLiteral("clusterId"), QStringLiteral("cluster-1")},
            {QStringLiteral("retention"), QJsonValue::Null}};
}
QJsonObject grantFor(const QJsonObject &binding, const QByteArray &digest, const QString &operation = {}, qint64 generation = 1)
{
    return {{QStringLiteral("operation"), operation.isEmpty() ? QStringLiteral("op-") + binding.value(QStringLiteral("name")).toString() : operation},
            {QStringLiteral("generation"), generation},
            {QStringLiteral("serviceId"), binding.value(QStringLiteral("serviceId"))},
            {QStringLiteral("capability"), binding.value(QStringLiteral("capability"))},
            {QStringLiteral("bindingName"), binding.value(QStringLiteral("name"))},
            {QStringLiteral("requestDigest"), QString::fromLatin1(digest)},
            {QStringLiteral("expiresAt"), 1'900'000'000'000LL},
            {QStringLiteral("authority"), QString::fromLatin1(kAuthorityCanary)}};
}
// The digest of a database binding's request, computed here the way Cloudly states it (sorted keys,
// compact) with Qt's writer (an implementation other than BindingRequest::canonical).
QByteArray databaseDigest(const QString &service, const QString &name, const QString &host, int port)
{
    const QJsonObject request{{QStringLiteral("capability"), QStringLiteral("database")}, {QStringLiteral("serviceId"), service},
                              {QStringLiteral("bindingName"), name},
                              {QStringLiteral("endpoint"), QJsonObject{{QStringLiteral("host"), host}, {QStringLiteral("port"), port}}}};
    return QCryptographicHash::hash(QJsonDocument(request).toJson(QJsonDocument::Compact), QCryptographicHash::Sha256).toHex();
}
QByteArray stateJson(const QJsonArray &bindings)
{
    return QJsonDocument(QJsonObject{{QStringLiteral("desiredState"), QJsonObject{{QStringLiteral("bindings"), bindings}}}}).toJson(QJsonDocument::Compact);
}
QJsonObject entry(const QJsonValue &node, const QJsonObject &binding, const QJsonValue &grant)
{
    return {{QStringLiteral("nodeId"), node}, {QStringLiteral("binding"), binding}, {QStringLiteral("grant"), grant}};
}
PlatformDesiredState readState(QByteArray json)
{
    const QList<Secret> authorities = PlatformDesiredState::takeAuthorities(json);
    const QJsonObject object = QJsonDocument::fromJson(json).object().value(QStringLiteral("desiredState")).toObject();
    auto read = PlatformDesiredState::read(object, QStringLiteral("desiredState"), authorities);
    if (!read)
        qFatal("%s", qPrintable(read.refusal().text()));
    return std::move(read).value();
}

// One reconciler with its doubles.
struct Rig {
    ManualClock clock;
    CorestoreDouble corestore;
    CloudlyDouble cloudly;
    PublicationDouble publication;
    BindingReconciler reconciler{corestore, cloudly, publication, clock};
    Rig()
    {
        reconciler.setClusterId(QStringLiteral("cluster-1"));
        corestore.alsoFlush = [this] { return publication.flush(); };
    }
    void accept(const QJsonArray &bindings)
    {
        cloudly.desiredStateAnswer = stateJson(bindings);
        reconciler.acceptanceStood();
        corestore.flush();
    }
    status::PlatformBinding statusOf(const QString &name) const
    {
        for (const auto &b : reconciler.statusBindings())
            if (b.name == name)
                return b;
        return {};
    }
};

} // namespace

class TstBindingReconciler : public QObject {
    Q_OBJECT
private:
    QStringList m_lines;

private Q_SLOTS:
    void init()
    {
        m_lines.clear();
        g_lines = &m_lines;
        qInstallMessageHandler(captureMessages);
    }
    void cleanup()
    {
        qInstallMessageHandler(nullptr);
        g_lines = nullptr;
    }

    // --- pure parts ----------------------------------------------------------------------------------
    void canonicalDigestMatchesIndependentDigests_CS15_CS30()
    {
        const auto db = BindingRequest::database(QStringLiteral("svc-1"), QStringLiteral("main-db"), {QStringLiteral("10.0.0.5"), 27017});
        QCOMPARE(db.canonical(), QByteArray(R"({"bindingName":"main-db","capability":"database","endpoint":{"host":"10.0.0.5","port":27017},"serviceId":"svc-1"})"));
        QCOMPARE(db.digestHex(), QStringLiteral("f39f600eecc8e6d211f2180a424e219491b5cb76515fd3afed0f4d05f16be3f0")); // jq and Python
        const auto media = BindingRequest::objectStorage(QStringLiteral("svc-1"), QStringLiteral("media"), BindingRetention{QStringLiteral("compliance"), 30});
        QCOMPARE(media.digestHex(), QStringLiteral("d4ddefef63c34076af9f149d3262bfe0ccf608c85a101ab4545ab7260381e6d9"));
        const auto files = BindingRequest::objectStorage(QStringLiteral("svc-2"), QStringLiteral("files"), std::nullopt);
        QCOMPARE(files.digestHex(), QStringLiteral("a6c7af355d8c689b0dc384d60d2ff9f63b1b631eb2b6f2fc29d6356a910b68b5"));
        const auto escaped = BindingRequest::database(QStringLiteral("caf\u00e9 \"q\"\\\n\t\x01"), QStringLiteral("b\u2603"),
                                                      {QStringLiteral("db.internal"), 1});
        QCOMPARE(escaped.digestHex(), QStringLiteral("53f0b549867090a4449f6c382d8f589a474c5b8dba7fb2055dc746d2ffe7a297"));
    }

    void desiredStateIsReadExactly_CS54()
    {
        const QJsonObject b = databaseBinding(QStringLiteral("s"), QStringLiteral("d"));
        QByteArray json = stateJson({entry(QStringLiteral("n1"), b, grantFor(b, "00"))});
        const PlatformDesiredState state = readState(json);
        QCOMPARE(state.bindings.size(), 1);
        QVERIFY(state.bindings[0].grant);
        QCOMPARE(state.bindings[0].grant->authority.reveal(), QByteArrayView(kAuthorityCanary));
        // The authority is lifted out of the text before it is parsed.
        QByteArray lifted = stateJson({entry(QStringLiteral("n1"), b, grantFor(b, "00"))});
        PlatformDesiredState::takeAuthorities(lifted);
        QVERIFY(!lifted.contains(kAuthorityCanary));
        // An unknown member and a wrong capability are refused by field, never by value.
        QJsonObject extra = b;
        extra.insert(QStringLiteral("surprise"), 1);
        QJsonObject state2 = QJsonDocument::fromJson(stateJson({entry(QStringLiteral("n1"), extra, QJsonValue::Null)})).object();
        auto read = PlatformDesiredState::read(state2.value(QStringLiteral("desiredState")).toObject(), QStringLiteral("desiredState"), {});
        QVERIFY(!read);
        QVERIFY2(read.refusal().reason.contains(QStringLiteral("desiredState.bindings[0].binding")), qPrintable(read.refusal().reason));
    }

    void materialReaderTellsFactsAndNoValue_CS31()
    {
        QJsonObject db{{QStringLiteral("capability"), QStringLiteral("database")},
                       {QStringLiteral("endpoint"), QJsonObject{{QStringLiteral("host"), QStringLiteral("10.0.0.5")}, {QStringLiteral("port"), 27017}}},
                       {QStringLiteral("database"), QStringLiteral("d")}, {QStringLiteral("username"), QStringLiteral("u")},
                       {QStringLiteral("password"), QString::fromLatin1(kPasswordCanary)}, {QStringLiteral("uri"), QStringLiteral("x")}};
        const Secret good(QJsonDocument(db).toJson(QJsonDocument::Compact));
        auto read = CredentialMaterialReader::read(good);
        QVERIFY(std::holds_alternative<CredentialMaterialFacts>(read));
        QCOMPARE(std::get<CredentialMaterialFacts>(read).endpoint->host, QStringLiteral("10.0.0.5"));
        db.remove(QStringLiteral("password"));
        db.insert(QStringLiteral("uri"), QString::fromLatin1(kUriCanary));
        const Secret missing(QJsonDocument(db).toJson(QJsonDocument::Compact));
        auto bad = CredentialMaterialReader::read(missing);
        QVERIFY(std::holds_alternative<QString>(bad));
        QCOMPARE(std::get<QString>(bad), QStringLiteral("material.password is missing"));
        const QJsonObject os{{QStringLiteral("capability"), QStringLiteral("objectstorage")}, {QStringLiteral("endpoint"), QStringLiteral("https://x")},
                             {QStringLiteral("bucket"), QStringLiteral("b")}, {QStringLiteral("accessKeyId"), QStringLiteral("a")},
                             {QStringLiteral("secretAccessKey"), QStringLiteral("s")}, {QStringLiteral("region"), QStringLiteral("r")},
                             {QString::fromLatin1(kSecretKeyCanary), 1}};
        const Secret unknown(QJsonDocument(os).toJson(QJsonDocument::Compact));
        auto u = CredentialMaterialReader::read(unknown);
        QVERIFY(std::holds_alternative<QString>(u));
        QVERIFY(!std::get<QString>(u).contains(QString::fromLatin1(kSecretKeyCanary)));
    }

    void backoffDoublesToItsCaps_CS21_CS23_CS24()
    {
        QList<long long> refusal, other;
        long long w = 0, v = 0;
        for (int i = 0; i < 8; ++i) {
            refusal << (w = BindingBackoff::nextWaitMs(w, true));
            other << (v = BindingBackoff::nextWaitMs(v, false));
        }
        QCOMPARE(refusal, (QList<long long>{5000, 10000, 20000, 40000, 80000, 160000, 300000, 300000}));
        QCOMPARE(other, (QList<long long>{5000, 10000, 20000, 40000, 60000, 60000, 60000, 60000}));
        QVERIFY(BindingBackoff::isRefusalStatus(404));
        QVERIFY(BindingBackoff::isRefusalStatus(409));
        for (int s : {401, 403, 408, 425, 429, 500, 503})
            QVERIFY(!BindingBackoff::isRefusalStatus(s));
    }

    // --- the reconciler -------------------------------------------------------------------------------
    void nothingBeforeAnAcceptance_WD07_CS54()
    {
        Rig rig;
        rig.corestore.databases.insert(QStringLiteral("n1"), {QStringLiteral("10.0.0.5"), 27017});
        const QJsonObject b = databaseBinding(QStringLiteral("s"), QStringLiteral("d"));
        rig.reconciler.adoptPushed(readState(stateJson({entry(QStringLiteral("n1"), b, grantFor(b, databaseDigest("s", "d", "10.0.0.5", 27017)))})));
        rig.corestore.flush();
        QCOMPARE(rig.cloudly.desiredStateReads, 0);
        QCOMPARE(rig.corestore.seen.size(), 0);
        QCOMPARE(rig.cloudly.reports.size(), 0);
        QVERIFY(!rig.reconciler.isReconciling());
    }

    void grantedDatabaseBindingIsPublishedThenReportedReady_CS16_CS30_CS34_CS36_CS47_CS49()
    {
        Rig rig;
        rig.corestore.databases.insert(QStringLiteral("n1"), {QStringLiteral("10.0.0.5"), 27017});
        const QJsonObject b = databaseBinding(QStringLiteral("s"), QStringLiteral("d"));
        rig.accept({entry(QStringLiteral("n1"), b, grantFor(b, databaseDigest("s", "d", "10.0.0.5", 27017)))});
        QCOMPARE(rig.cloudly.desiredStateReads, 1);
        QCOMPARE(rig.corestore.seen.size(), 2);
        for (const auto &c : rig.corestore.seen) {
            QVERIFY(c.route.startsWith("/control/credential-bindings/"));   // CS-16
            QCOMPARE(c.body.value(QStringLiteral("grant")).toString(), QString::fromLatin1(kAuthorityCanary));
            const QJsonObject endpoint = c.body.value(QStringLiteral("request")).toObject().value(QStringLiteral("endpoint")).toObject();
            QCOMPARE(endpoint.value(QStringLiteral("host")).toString(), QStringLiteral("10.0.0.5")); // CS-30
            QCOMPARE(endpoint.value(QStringLiteral("port")).toInt(), 27017);
        }
        QCOMPARE(rig.corestore.seen[0].route, QByteArray("/control/credential-bindings/reconcile"));
        QCOMPARE(rig.corestore.seen[1].route, QByteArray("/control/credential-bindings/material"));
        QCOMPARE(rig.publication.published.size(), 1);
        QVERIFY(rig.publication.published[0].material.contains(kPasswordCanary)); // intact, to the seam only
        QCOMPARE(rig.publication.published[0].request.organizationId, QStringLiteral("org-1"));
        QCOMPARE(rig.publication.published[0].request.clusterId, QStringLiteral("cluster-1"));
        QCOMPARE(rig.cloudly.reports.size(), 1);
        const QJsonObject report = rig.cloudly.reports[0];
        QCOMPARE(report.value(QStringLiteral("status")).toString(), QStringLiteral("ready"));
        QVERIFY(report.value(QStringLiteral("statusReason")).isNull());
        const QJsonArray endpoints = report.value(QStringLiteral("endpoints")).toArray();
        QCOMPARE(endpoints.size(), 1);
        const QJsonObject ep = endpoints[0].toObject();
        QCOMPARE(ep.keys(), (QStringList{"capability", "name", "networkAlias", "port", "protocol"})); // CS-47, CS-49
        QCOMPARE(ep.value(QStringLiteral("protocol")).toString(), QStringLiteral("mongodb"));
        QCOMPARE(ep.value(QStringLiteral("networkAlias")).toString(), QStringLiteral("10.0.0.5"));
        QCOMPARE(ep.value(QStringLiteral("port")).toInt(), 27017);
        QCOMPARE(rig.statusOf(QStringLiteral("d")).status, QStringLiteral("ready"));
        QCOMPARE(rig.statusOf(QStringLiteral("d")).grantOperation, QStringLiteral("op-d"));
        // CS-53, CS-40: an unchanged push under a published grant sends nothing more.
        rig.reconciler.adoptPushed(std::nullopt);
        rig.corestore.flush();
        QCOMPARE(rig.corestore.seen.size(), 2);
        QCOMPARE(rig.publication.published.size(), 1);
        QCOMPARE(rig.cloudly.reports.size(), 1);
    }

    void objectStorageReportsTheCorestoreHostWithoutPort_CS48_CS19()
    {
        Rig rig;
        rig.corestore.hosts.insert(QStringLiteral("n2"), QStringLiteral("corestore.n2.local"));
        QJsonObject b = databaseBinding(QStringLiteral("svc-1"), QStringLiteral("media"));
        b.insert(QStringLiteral("capability"), QStringLiteral("objectstorage"));
        b.insert(QStringLiteral("retention"), QJsonObject{{QStringLiteral("mode"), QStringLiteral("compliance")}, {QStringLiteral("days"), 30}});
        const QByteArray digest = "d4ddefef63c34076af9f149d3262bfe0ccf608c85a101ab4545ab7260381e6d9"; // Python, as above
        rig.accept({entry(QStringLiteral("n2"), b, grantFor(b, digest))});
        QCOMPARE(rig.cloudly.reports.size(), 1);
        const QJsonObject ep = rig.cloudly.reports[0].value(QStringLiteral("endpoints")).toArray()[0].toObject();
        QCOMPARE(ep.keys(), (QStringList{"capability", "name", "networkAlias", "protocol"}));
        QCOMPARE(ep.value(QStringLiteral("protocol")).toString(), QStringLiteral("s3"));
        QCOMPARE(ep.value(QStringLiteral("networkAlias")).toString(), QStringLiteral("corestore.n2.local"));
    }

    void retentionEvidenceMustMatchTheGrant_CS19()
    {
        Rig rig;
        rig.corestore.hosts.insert(QStringLiteral("n2"), QStringLiteral("h"));
        QJsonObject b = databaseBinding(QStringLiteral("s"), QStringLiteral("media"));
        b.insert(QStringLiteral("capability"), QStringLiteral("objectstorage"));
        b.insert(QStringLiteral("retention"), QJsonObject{{QStringLiteral("mode"), QStringLiteral("compliance")}, {QStringLiteral("days"), 30}});
        const QByteArray digest = BindingRequest::objectStorage("s", "media", BindingRetention{"compliance", 30}).digestHex().toLatin1();
        // Corestore answers the reconcile without evidence of the promised retention.
        rig.corestore.standing.insert(QStringLiteral("n2 /control/credential-bindings/reconcile"),
                                      {CorestoreCallOutcome::Kind::Answered, 200, R"({"binding":{"name":"media","state":"reconciled"}})"});
        rig.accept({entry(QStringLiteral("n2"), b, grantFor(b, digest))});
        QCOMPARE(rig.corestore.count("/material"), 0);
        QCOMPARE(rig.publication.published.size(), 0);
        QCOMPARE(rig.statusOf(QStringLiteral("media")).reason, QStringLiteral("retention-evidence-invalid"));
        QCOMPARE(rig.cloudly.reports.size(), 1);
        QCOMPARE(rig.cloudly.reports[0].value(QStringLiteral("status")).toString(), QStringLiteral("failed"));
    }

    void pushNotificationAndUngrantedAreUntouched_WD06_CS17()
    {
        Rig rig;
        rig.corestore.databases.insert(QStringLiteral("n1"), {QStringLiteral("10.0.0.5"), 27017});
        QJsonObject push = databaseBinding(QStringLiteral("s"), QStringLiteral("notify"));
        push.insert(QStringLiteral("capability"), QStringLiteral("pushnotification"));
        const QJsonObject ungranted = databaseBinding(QStringLiteral("s"), QStringLiteral("later"));
        rig.accept({entry(QStringLiteral("n1"), push, QJsonValue::Null), entry(QStringLiteral("n1"), ungranted, QJsonValue::Null)});
        QCOMPARE(rig.corestore.seen.size(), 0);
        QCOMPARE(rig.cloudly.reports.size(), 0);
        QCOMPARE(rig.reconciler.bindingCount(), 1); // the pushnotification binding is not even held
        QCOMPARE(rig.statusOf(QStringLiteral("later")).status, QStringLiteral("ungranted"));
    }

    void localRefusalsAreReportedWithoutACorestoreCall_CS18_CS32_CS33()
    {
        Rig rig;
        rig.corestore.databases.insert(QStringLiteral("n1"), {QStringLiteral("10.0.0.5"), 27017});
        const QJsonObject unplaced = databaseBinding(QStringLiteral("s"), QStringLiteral("unplaced"));
        const QJsonObject foreign = databaseBinding(QStringLiteral("s"), QStringLiteral("foreign"));
        QJsonObject foreignGrant = grantFor(foreign, "00");
        foreignGrant.insert(QStringLiteral("serviceId"), QStringLiteral("other-service"));
        const QJsonObject noDb = databaseBinding(QStringLiteral("s"), QStringLiteral("nodb"));
        rig.accept({entry(QJsonValue::Null, unplaced, grantFor(unplaced, "00")), entry(QStringLiteral("n1"), foreign, foreignGrant),
                    entry(QStringLiteral("n9"), noDb, grantFor(noDb, "00"))});
        QCOMPARE(rig.corestore.seen.size(), 0);
        QCOMPARE(rig.cloudly.reports.size(), 3);
        QHash<QString, QString> reasons;
        for (const auto &r : rig.cloudly.reports) {
            QCOMPARE(r.value(QStringLiteral("status")).toString(), QStringLiteral("failed"));
            QCOMPARE(r.value(QStringLiteral("endpoints")).toArray().size(), 0);
            reasons.insert(r.value(QStringLiteral("bindingName")).toString(), r.value(QStringLiteral("statusReason")).toString());
        }
        QCOMPARE(reasons.value(QStringLiteral("unplaced")), QStringLiteral("binding-not-placed"));
        QCOMPARE(reasons.value(QStringLiteral("foreign")), QStringLiteral("binding-not-granted"));
        QCOMPARE(reasons.value(QStringLiteral("nodb")), QStringLiteral("database-endpoint-missing"));
        QVERIFY(rig.cloudly.reports[0].value(QStringLiteral("nodeId")).isNull());
        // CS-32: until Cloudly states one; then the binding is reconciled.
        rig.corestore.databases.insert(QStringLiteral("n9"), {QStringLiteral("10.0.0.9"), 27017});
        rig.reconciler.adoptPushed(std::nullopt);
        rig.corestore.flush();
        QCOMPARE(rig.corestore.count("/reconcile", QStringLiteral("n9")), 0); // the grant's digest was "00": CS-15 holds it
        QCOMPARE(rig.statusOf(QStringLiteral("nodb")).reason, QStringLiteral("binding-request-digest-mismatch"));
    }

    void digestMismatchSendsNothing_CS15()
    {
        Rig rig;
        rig.corestore.databases.insert(QStringLiteral("n1"), {QStringLiteral("10.0.0.5"), 27017});
        const QJsonObject b = databaseBinding(QStringLiteral("s"), QStringLiteral("d"));
        // A digest over another port than the node publishes.
        rig.accept({entry(QStringLiteral("n1"), b, grantFor(b, databaseDigest("s", "d", "10.0.0.5", 27018)))});
        QCOMPARE(rig.corestore.seen.size(), 0);
        QCOMPARE(rig.cloudly.reports.size(), 0);
        QCOMPARE(rig.publication.published.size(), 0);
        QCOMPARE(rig.statusOf(QStringLiteral("d")).status, QStringLiteral("failed"));
        QCOMPARE(rig.statusOf(QStringLiteral("d")).reason, QStringLiteral("binding-request-digest-mismatch"));
    }

    // Review of issue 18 (CS-15: the relay "sends nothing unless" the request's digest equals
    // grant.requestDigest): the node's corestoreDatabase changes (a config push) while the reconcile
    // call is in flight; the material call that follows must not carry a BindingRequest for the new
    // endpoint, whose digest is not the grant's.
    void endpointChangedMidAttemptSendsNoUngrantedRequest_CS15()
    {
        Rig rig;
        rig.corestore.databases.insert(QStringLiteral("n1"), {QStringLiteral("10.0.0.5"), 27017});
        const QJsonObject b = databaseBinding(QStringLiteral("s"), QStringLiteral("d"));
        const QByteArray digest = databaseDigest("s", "d", "10.0.0.5", 27017);
        rig.cloudly.desiredStateAnswer = stateJson({entry(QStringLiteral("n1"), b, grantFor(b, digest))});
        rig.reconciler.acceptanceStood();
        QCOMPARE(rig.corestore.pending.size(), size_t(1)); // the reconcile call, not answered yet
        rig.corestore.databases.insert(QStringLiteral("n1"), {QStringLiteral("10.9.9.9"), 27018});
        rig.corestore.flush();
        for (const auto &c : rig.corestore.seen) {
            const QJsonObject endpoint = c.body.value(QStringLiteral("request")).toObject().value(QStringLiteral("endpoint")).toObject();
            QVERIFY2(endpoint.value(QStringLiteral("host")).toString() == QStringLiteral("10.0.0.5"),
                     qPrintable(QStringLiteral("%1 carried a request for %2, not the granted endpoint")
                                    .arg(QString::fromLatin1(c.route), endpoint.value(QStringLiteral("host")).toString())));
        }
        QCOMPARE(rig.publication.published.size(), 0);
    }

    // Review of issue 18 (CS-32: without a corestoreDatabase the binding is failed
    // database-endpoint-missing with no Corestore call): the node's corestoreDatabase disappears (a
    // config push) while the reconcile call is in flight. The material call must not be made (its
    // BindingRequest cannot be built; corestoreBody() dereferenced an empty optional).
    void endpointRemovedMidAttemptMakesNoMaterialCall_CS32()
    {
        Rig rig;
        rig.corestore.databases.insert(QStringLiteral("n1"), {QStringLiteral("10.0.0.5"), 27017});
        const QJsonObject b = databaseBinding(QStringLiteral("s"), QStringLiteral("d"));
        rig.cloudly.desiredStateAnswer = stateJson({entry(QStringLiteral("n1"), b, grantFor(b, databaseDigest("s", "d", "10.0.0.5", 27017)))});
        rig.reconciler.acceptanceStood();
        QCOMPARE(rig.corestore.pending.size(), size_t(1)); // the reconcile call, not answered yet
        rig.corestore.databases.remove(QStringLiteral("n1"));
        rig.corestore.flush();
        QCOMPARE(rig.corestore.count("/material"), 0);
        QCOMPARE(rig.publication.published.size(), 0);
    }

    void misaddressedMaterialIsNotPublished_CS31()
    {
        Rig rig;
        rig.corestore.databases.insert(QStringLiteral("n1"), {QStringLiteral("10.0.0.5"), 27017});
        rig.corestore.misaddress = true;
        const QJsonObject b = databaseBinding(QStringLiteral("s"), QStringLiteral("d"));
        rig.accept({entry(QStringLiteral("n1"), b, grantFor(b, databaseDigest("s", "d", "10.0.0.5", 27017)))});
        QCOMPARE(rig.corestore.count("/material"), 1);
        QCOMPARE(rig.publication.published.size(), 0);
        QCOMPARE(rig.statusOf(QStringLiteral("d")).reason, QStringLiteral("material-endpoint-mismatch"));
        QCOMPARE(rig.cloudly.reports.size(), 1);
        QCOMPARE(rig.cloudly.reports[0].value(QStringLiteral("status")).toString(), QStringLiteral("failed"));
    }

    void refusalBackoffOnTheClock_CS22_CS23_CS26_CS27_CS28_CS29()
    {
        Rig rig;
        rig.corestore.databases.insert(QStringLiteral("n1"), {QStringLiteral("10.0.0.5"), 27017});
        const QJsonObject b = databaseBinding(QStringLiteral("s"), QStringLiteral("d"));
        const QString key = QStringLiteral("n1 /control/credential-bindings/reconcile");
        rig.corestore.standing.insert(key, {CorestoreCallOutcome::Kind::Refused, 404, {}});
        rig.accept({entry(QStringLiteral("n1"), b, grantFor(b, databaseDigest("s", "d", "10.0.0.5", 27017)))});
        QCOMPARE(rig.corestore.count("/reconcile"), 1);
        QList<qint64> gaps;
        qint64 last = rig.clock.nowMs();
        for (int i = 0; i < 8; ++i) {
            const qint64 due = rig.statusOf(QStringLiteral("d")).nextRetryAtMs;
            QVERIFY(due > rig.clock.nowMs());
            rig.clock.advance(due - rig.clock.nowMs() - 1);
            rig.corestore.flush();
            QCOMPARE(rig.corestore.count("/reconcile"), i + 1); // not a millisecond early
            rig.clock.advance(1);
            rig.corestore.flush();
            QCOMPARE(rig.corestore.count("/reconcile"), i + 2); // the relay woke itself
            gaps << rig.clock.nowMs() - last;
            last = rig.clock.nowMs();
        }
        QCOMPARE(gaps, (QList<qint64>{5000, 10000, 20000, 40000, 80000, 160000, 300000, 300000}));
        QCOMPARE(rig.statusOf(QStringLiteral("d")).attempts, 9);
        // One line and one report for nine identical refusals.
        const QStringList refused = m_lines.filter(QStringLiteral("corestore-binding-refused: "));
        QCOMPARE(refused.size(), 1);
        QVERIFY(refused[0].contains(QStringLiteral("node n1 binding s/d grant op-d generation 1")));
        QCOMPARE(rig.cloudly.reports.size(), 1);
        // Recovery logs the clearing line and reports ready.
        rig.corestore.standing.remove(key);
        rig.clock.advance(300000);
        rig.corestore.flush();
        QCOMPARE(m_lines.filter(QStringLiteral("corestore-binding-failure-cleared: node n1 binding s/d grant op-d generation 1")).size(), 1);
        QCOMPARE(rig.cloudly.reports.last().value(QStringLiteral("status")).toString(), QStringLiteral("ready"));
        for (const QString &line : std::as_const(m_lines)) {
            QVERIFY2(!line.contains(QString::fromLatin1(kAuthorityCanary)), qPrintable(line));
            QVERIFY2(!line.contains(QString::fromLatin1(kPasswordCanary)), qPrintable(line));
        }
    }

    void otherFailuresCapAtSixtySecondsAndANewGrantIsTriedAtOnce_CS21_CS24_CS25()
    {
        Rig rig;
        rig.corestore.databases.insert(QStringLiteral("n1"), {QStringLiteral("10.0.0.5"), 27017});
        const QJsonObject b = databaseBinding(QStringLiteral("s"), QStringLiteral("d"));
        const QByteArray digest = databaseDigest("s", "d", "10.0.0.5", 27017);
        rig.corestore.standing.insert(QStringLiteral("n1 /control/credential-bindings/reconcile"), {CorestoreCallOutcome::Kind::Refused, 429, {}});
        rig.accept({entry(QStringLiteral("n1"), b, grantFor(b, digest))});
        QList<qint64> gaps;
        for (int i = 0; i < 6; ++i) {
            const qint64 wait = rig.statusOf(QStringLiteral("d")).nextRetryAtMs - rig.clock.nowMs();
            gaps << wait;
            rig.clock.advance(wait);
            rig.corestore.flush();
        }
        QCOMPARE(gaps, (QList<qint64>{5000, 10000, 20000, 40000, 60000, 60000}));
        QCOMPARE(m_lines.filter(QStringLiteral("corestore-binding-failed: ")).size(), 1); // 429 is not a refusal
        // A push with the same grant during the wait changes nothing; a new grant is tried at once.
        const int before = rig.corestore.count("/reconcile");
        rig.reconciler.adoptPushed(readState(stateJson({entry(QStringLiteral("n1"), b, grantFor(b, digest))})));
        rig.corestore.flush();
        QCOMPARE(rig.corestore.count("/reconcile"), before);
        rig.reconciler.adoptPushed(readState(stateJson({entry(QStringLiteral("n1"), b, grantFor(b, digest, QStringLiteral("op-2"), 2))})));
        rig.corestore.flush();
        QCOMPARE(rig.corestore.count("/reconcile"), before + 1);
        QCOMPARE(rig.statusOf(QStringLiteral("d")).nextRetryAtMs - rig.clock.nowMs(), 5000);
        QCOMPARE(rig.publication.forgotten, QStringList{QStringLiteral("op-d")}); // CS-39
        QCOMPARE(m_lines.filter(QStringLiteral("corestore-binding-failed: ")).size(), 2); // a new grant is a distinct failure
    }

    void legacyRefusalsAreNamedStatesAndClearLater_CS50_CS51_CS52()
    {
        for (const char *code : {"legacy-adoption-pending", "legacy-adoption-conflict", "legacy-adoption-mismatch"}) {
            Rig rig;
            rig.corestore.databases.insert(QStringLiteral("n1"), {QStringLiteral("10.0.0.5"), 27017});
            const QJsonObject b = databaseBinding(QStringLiteral("s"), QStringLiteral("d"));
            const QByteArray body = QJsonDocument(QJsonObject{{QStringLiteral("error"), QJsonObject{{QStringLiteral("code"), QLatin1String(code)},
                                                                                                     {QStringLiteral("reason"), QStringLiteral("beside /resources/provision")}}}})
                                        .toJson(QJsonDocument::Compact);
            rig.corestore.queued[QStringLiteral("n1 /control/credential-bindings/reconcile")].push_back({CorestoreCallOutcome::Kind::Refused, 409, body});
            rig.accept({entry(QStringLiteral("n1"), b, grantFor(b, databaseDigest("s", "d", "10.0.0.5", 27017)))});
            QCOMPARE(rig.cloudly.reports.size(), 1);
            QCOMPARE(rig.cloudly.reports[0].value(QStringLiteral("status")).toString(),
                     QLatin1String(code) == QLatin1String("legacy-adoption-pending") ? QStringLiteral("provisioning") : QStringLiteral("failed"));
            QCOMPARE(rig.cloudly.reports[0].value(QStringLiteral("statusReason")).toString(), QLatin1String(code));
            QCOMPARE(m_lines.filter(QStringLiteral("corestore-binding-refused: ")).size(), 1);
            rig.clock.advance(5000);
            rig.corestore.flush();
            QCOMPARE(rig.cloudly.reports.size(), 2);
            QVERIFY(rig.cloudly.reports[1].value(QStringLiteral("statusReason")).isNull()); // cleared
            m_lines.clear();
        }
        // Another 409 is an ordinary failure without a reason.
        Rig rig;
        rig.corestore.databases.insert(QStringLiteral("n1"), {QStringLiteral("10.0.0.5"), 27017});
        const QJsonObject b = databaseBinding(QStringLiteral("s"), QStringLiteral("d"));
        rig.corestore.queued[QStringLiteral("n1 /control/credential-bindings/reconcile")].push_back(
            {CorestoreCallOutcome::Kind::Refused, 409, R"({"error":{"code":"other","reason":"r"}})"});
        rig.accept({entry(QStringLiteral("n1"), b, grantFor(b, databaseDigest("s", "d", "10.0.0.5", 27017)))});
        QCOMPARE(rig.cloudly.reports[0].value(QStringLiteral("status")).toString(), QStringLiteral("failed"));
        QVERIFY(rig.cloudly.reports[0].value(QStringLiteral("statusReason")).isNull());
    }

    void heldPublicationIsNeverReportedFailedAndCommittedSendsNothing_CS42_CS43()
    {
        Rig rig;
        rig.corestore.databases.insert(QStringLiteral("n1"), {QStringLiteral("10.0.0.5"), 27017});
        const QJsonObject b = databaseBinding(QStringLiteral("s"), QStringLiteral("d"));
        rig.publication.script = {BindingPublicationOutcome::Kind::Retry};
        rig.accept({entry(QStringLiteral("n1"), b, grantFor(b, databaseDigest("s", "d", "10.0.0.5", 27017)))});
        QCOMPARE(rig.cloudly.reports.size(), 0);
        // A later Corestore failure under the same grant is not reported failed either.
        rig.corestore.queued[QStringLiteral("n1 /control/credential-bindings/reconcile")].push_back({CorestoreCallOutcome::Kind::Unreachable, 503, {}});
        rig.clock.advance(5000);
        rig.corestore.flush();
        QCOMPARE(rig.cloudly.reports.size(), 0);
        rig.clock.advance(10000);
        rig.corestore.flush();
        QCOMPARE(rig.publication.published.size(), 2);
        QCOMPARE(rig.cloudly.reports.size(), 1);
        QCOMPARE(rig.cloudly.reports[0].value(QStringLiteral("status")).toString(), QStringLiteral("ready"));

        Rig committed;
        committed.corestore.databases.insert(QStringLiteral("n1"), {QStringLiteral("10.0.0.5"), 27017});
        committed.publication.script = {BindingPublicationOutcome::Kind::Committed};
        committed.accept({entry(QStringLiteral("n1"), b, grantFor(b, databaseDigest("s", "d", "10.0.0.5", 27017)))});
        QCOMPARE(committed.cloudly.reports.size(), 0);
        QCOMPARE(committed.statusOf(QStringLiteral("d")).status, QStringLiteral("committed"));
        QCOMPARE(committed.statusOf(QStringLiteral("d")).nextRetryAtMs, 0);
    }

    // Review of issue 18 (CS-41, CS-42; contract §12.4 "a named refusal of the publish other than
    // INTERNAL_ERROR and REPLAY_CONFLICT drops the held request" and reports failed): once a lost
    // answer made the publication hold a request, a later named refusal drops it; from then on the
    // publication holds nothing for the grant, so the failure is reported failed.
    void namedRefusalAfterAHeldRequestIsReportedFailed_CS41_CS42()
    {
        Rig rig;
        rig.corestore.databases.insert(QStringLiteral("n1"), {QStringLiteral("10.0.0.5"), 27017});
        const QJsonObject b = databaseBinding(QStringLiteral("s"), QStringLiteral("d"));
        rig.publication.script = {BindingPublicationOutcome::Kind::Retry, BindingPublicationOutcome::Kind::Failed};
        rig.accept({entry(QStringLiteral("n1"), b, grantFor(b, databaseDigest("s", "d", "10.0.0.5", 27017)))});
        QCOMPARE(rig.cloudly.reports.size(), 0); // held: never reported failed
        rig.clock.advance(5000);
        rig.corestore.flush();
        QCOMPARE(rig.publication.published.size(), 2);
        QCOMPARE(rig.statusOf(QStringLiteral("d")).status, QStringLiteral("failed"));
        QCOMPARE(rig.cloudly.reports.size(), 1); // the named refusal dropped the held request: reported failed
        QCOMPARE(rig.cloudly.reports[0].value(QStringLiteral("status")).toString(), QStringLiteral("failed"));
    }

    // Review of issue 18 (CS-43; contract §12.4 REPLAY_CONFLICT: "nothing is read, sealed or sent
    // under it again"): after Cloudly answered REPLAY_CONFLICT, a later config push (or acceptance)
    // under the same grant reads no material from Corestore again and hands nothing to the publication.
    void committedGrantReadsNothingAgainOnAPush_CS43()
    {
        Rig rig;
        rig.corestore.databases.insert(QStringLiteral("n1"), {QStringLiteral("10.0.0.5"), 27017});
        const QJsonObject b = databaseBinding(QStringLiteral("s"), QStringLiteral("d"));
        rig.publication.script = {BindingPublicationOutcome::Kind::Committed};
        rig.accept({entry(QStringLiteral("n1"), b, grantFor(b, databaseDigest("s", "d", "10.0.0.5", 27017)))});
        QCOMPARE(rig.statusOf(QStringLiteral("d")).status, QStringLiteral("committed"));
        QCOMPARE(rig.corestore.count("/material"), 1);
        rig.reconciler.adoptPushed(std::nullopt); // a config push keeping the held desired state
        rig.corestore.flush();
        QCOMPARE(rig.corestore.count("/material"), 1);
        QCOMPARE(rig.publication.published.size(), 1);
        QCOMPARE(rig.cloudly.reports.size(), 0);
    }

    void refusedReadIsLoggedInCloudlysWords_WD12_CS55()
    {
        Rig rig;
        rig.cloudly.refuseDesiredState = QStringLiteral("relay-ambiguous");
        rig.reconciler.acceptanceStood();
        QCOMPARE(rig.corestore.seen.size(), 0);
        QCOMPARE(m_lines.filter(QStringLiteral("relay-ambiguous: Cloudly elects another relay (words of Cloudly)")).size(), 1);
    }

    void lostSessionPausesUntilTheNextAcceptance_WD08_WD09_WD10_WD11()
    {
        Rig rig;
        rig.corestore.databases.insert(QStringLiteral("n1"), {QStringLiteral("10.0.0.5"), 27017});
        const QJsonObject b = databaseBinding(QStringLiteral("s"), QStringLiteral("d"));
        rig.corestore.standing.insert(QStringLiteral("n1 /control/credential-bindings/reconcile"), {CorestoreCallOutcome::Kind::Unreachable, 503, {}});
        const QByteArray state = stateJson({entry(QStringLiteral("n1"), b, grantFor(b, databaseDigest("s", "d", "10.0.0.5", 27017)))});
        rig.accept(QJsonDocument::fromJson(state).object()[QStringLiteral("desiredState")].toObject()[QStringLiteral("bindings")].toArray());
        QCOMPARE(rig.corestore.count("/reconcile"), 1);
        rig.reconciler.pause(QStringLiteral("the Cloudly session was lost"));
        rig.clock.advance(600000);
        rig.reconciler.adoptPushed(readState(state)); // WD-11: pushes reconcile nothing while paused
        rig.corestore.flush();
        QCOMPARE(rig.corestore.count("/reconcile"), 1);
        QCOMPARE(rig.statusOf(QStringLiteral("d")).nextRetryAtMs, 0);
        rig.corestore.standing.clear();
        rig.reconciler.acceptanceStood(); // WD-08: the next acceptance reads and reconciles
        rig.corestore.flush();
        QCOMPARE(rig.cloudly.desiredStateReads, 2);
        QCOMPARE(rig.corestore.count("/reconcile"), 2);
        QCOMPARE(rig.statusOf(QStringLiteral("d")).status, QStringLiteral("ready"));
    }

    void removedBindingsAreRetainedNeverDeleted_CS20_CS39()
    {
        Rig rig;
        rig.corestore.databases.insert(QStringLiteral("n1"), {QStringLiteral("10.0.0.5"), 27017});
        const QJsonObject b = databaseBinding(QStringLiteral("s"), QStringLiteral("d"));
        rig.accept({entry(QStringLiteral("n1"), b, grantFor(b, databaseDigest("s", "d", "10.0.0.5", 27017)))});
        const int calls = rig.corestore.seen.size();
        rig.reconciler.adoptPushed(readState(stateJson({})));
        rig.corestore.flush();
        QCOMPARE(rig.corestore.seen.size(), calls);
        for (const auto &c : rig.corestore.seen)
            QVERIFY(c.route.startsWith("/control/credential-bindings/"));
        QCOMPARE(rig.publication.forgotten, QStringList{QStringLiteral("op-d")});
        QCOMPARE(rig.reconciler.bindingCount(), 0);
        QCOMPARE(m_lines.filter(QStringLiteral("retained as it is on node n1 (never deleted)")).size(), 1);
    }

    void fiftyBindingsOverFiveNodesWithOneCorestoreDown()
    {
        Rig rig;
        QJsonArray bindings;
        for (int node = 1; node <= 5; ++node) {
            const QString n = QStringLiteral("n%1").arg(node);
            rig.corestore.databases.insert(n, {QStringLiteral("10.0.0.%1").arg(node), 27017});
            for (int i = 0; i < 10; ++i) {
                const QString name = QStringLiteral("db-%1-%2").arg(node).arg(i);
                const QJsonObject b = databaseBinding(QStringLiteral("svc-%1").arg(i), name);
                bindings.append(entry(n, b, grantFor(b, databaseDigest(QStringLiteral("svc-%1").arg(i), name, QStringLiteral("10.0.0.%1").arg(node), 27017))));
            }
        }
        rig.corestore.down.insert(QStringLiteral("n3"));
        rig.accept(bindings);
        int ready = 0, failed = 0;
        for (const auto &b : rig.reconciler.statusBindings()) {
            if (b.status == QLatin1String("ready"))
                ++ready;
            else if (b.status == QLatin1String("failed") && b.nodeId == QLatin1String("n3"))
                ++failed;
        }
        QCOMPARE(ready, 40);
        QCOMPARE(failed, 10);
        QCOMPARE(rig.publication.published.size(), 40);
        // The node comes back: its bindings reconcile after their wait.
        rig.corestore.down.clear();
        rig.clock.advance(5000);
        rig.corestore.flush();
        QCOMPARE(rig.publication.published.size(), 50);
    }

    void reportsRefusedAreRetried_CS53()
    {
        Rig rig;
        rig.corestore.databases.insert(QStringLiteral("n1"), {QStringLiteral("10.0.0.5"), 27017});
        rig.cloudly.refuseReports = 1;
        const QJsonObject b = databaseBinding(QStringLiteral("s"), QStringLiteral("d"));
        rig.accept({entry(QStringLiteral("n1"), b, grantFor(b, databaseDigest("s", "d", "10.0.0.5", 27017)))});
        QCOMPARE(rig.cloudly.reports.size(), 1);
        rig.clock.advance(5000);
        rig.corestore.flush();
        QCOMPARE(rig.cloudly.reports.size(), 2);
        QCOMPARE(rig.publication.published.size(), 1); // the kept receipt answers; nothing sealed again
        rig.clock.advance(60000);
        rig.corestore.flush();
        QCOMPARE(rig.cloudly.reports.size(), 2);
    }

    // Review of issue 18 (§12.5 "logged, retried with the binding's backoff"; CS-21, CS-24): a ready
    // binding whose report Cloudly keeps refusing is retried after 5 s, then 10 s, ... (doubling to
    // 60 s), not every 5 s for ever (a Cloudly refusing reports would otherwise draw one report per
    // binding every 5 s).
    void refusedReadyReportIsRetriedOnAGrowingBackoff_CS53_CS24()
    {
        Rig rig;
        rig.corestore.databases.insert(QStringLiteral("n1"), {QStringLiteral("10.0.0.5"), 27017});
        rig.cloudly.refuseReports = 100;
        const QJsonObject b = databaseBinding(QStringLiteral("s"), QStringLiteral("d"));
        rig.accept({entry(QStringLiteral("n1"), b, grantFor(b, databaseDigest("s", "d", "10.0.0.5", 27017)))});
        QCOMPARE(rig.cloudly.reports.size(), 1);
        rig.clock.advance(5000);  // first wait: 5 s
        rig.corestore.flush();
        QCOMPARE(rig.cloudly.reports.size(), 2);
        rig.clock.advance(5000);  // second wait is 10 s: nothing yet
        rig.corestore.flush();
        QCOMPARE(rig.cloudly.reports.size(), 2);
        rig.clock.advance(5000);
        rig.corestore.flush();
        QCOMPARE(rig.cloudly.reports.size(), 3);
    }

    void statusCarriesNoSecret_CS49()
    {
        Rig rig;
        rig.corestore.databases.insert(QStringLiteral("n1"), {QStringLiteral("10.0.0.5"), 27017});
        const QJsonObject b = databaseBinding(QStringLiteral("s"), QStringLiteral("d"));
        rig.accept({entry(QStringLiteral("n1"), b, grantFor(b, databaseDigest("s", "d", "10.0.0.5", 27017)))});
        status::RelayStatus s;
        s.bindings = rig.reconciler.statusBindings();
        const QByteArray json = QJsonDocument(s.toJson()).toJson();
        for (const QByteArray &canary : {kAuthorityCanary, kPasswordCanary, kUriCanary, kSecretKeyCanary})
            QVERIFY(!json.contains(canary));
        for (const auto &r : rig.cloudly.reports)
            for (const QByteArray &canary : {kAuthorityCanary, kPasswordCanary, kUriCanary})
                QVERIFY(!QJsonDocument(r).toJson().contains(canary));
        QVERIFY(json.contains("\"grantOperation\": \"op-d\""));
    }
};

QTEST_GUILESS_MAIN(TstBindingReconciler)
#include "tst_bindingreconciler.moc"
