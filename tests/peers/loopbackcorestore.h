#pragma once
// LoopbackCorestore: one node's Corestore control API (docs/contract.md §15) as an in-process HTTPS
// server on 127.0.0.1, written from docs/contract.md only (§15 with §12, §13.4 and §14 for the shapes).
// It includes nothing of service/ or shared/contract/ and shares no code with the relay's HTTP client:
// it is built on Qt HttpServer (QHttpServer + sslSetup), which Debian ships under GPL-3, so it lives in
// its own library (coreflow_test_corestore_peer) that only tests, benches and the demo link
// (the CTest test `httpserver_not_in_product` keeps it out of coreflow and coreflow-console).
//
// One object per simulated node. The relay dials endpoint() = https://127.0.0.1:PORT<basePath>; every
// §15.1 route path is appended to that base ("/corestore" + "/control/inventory"). The listener
// certificate is issued by the TestCertificateAuthority given to the constructor for Options.host
// (IP SAN 127.0.0.1 by default), so a client trusting that CA verifies it.
//
// Bearer: every request must carry exactly `Authorization: Bearer <acceptedToken>`; anything else is
// answered 401 { error: { code: "unauthorized", reason } } before any script or state is looked at
// (such a request is counted, recorded, and does not consume a scripted behaviour).
//
// Routes are named "METHOD /path" without the base path and without the query, e.g.
// "GET /control/inventory", "POST /control/isolated-restore/stage" (constants below). A request for a
// route not in §15.1 gets 404 { error: { code: "route-unknown" } }.
//
// Default answers (in-memory state; JSON bodies Content-Type application/json, exact Content-Length):
//   GET  /control/inventory          200 `{"services":` + setInventory()'s bytes + `}` (default `[]`)
//   GET  /control/legacy-resources   200 `{"services":` + setLegacyResources()'s bytes + `}` (default `[]`)
//        (the array bytes are sent byte for byte, never re-serialised)
//   POST /control/credential-bindings/reconcile  { grant, request } -> { binding: { name: request.bindingName,
//        state: "reconciled", retention: request.retention (only when it is an object) } };
//        400 { error: { code: "request-invalid" } } if request/grant are missing
//   POST /control/credential-bindings/material   { grant, request } -> { material: CredentialMaterial (§15.2) }:
//        database: { capability, endpoint: request.endpoint, database: "db-<bindingName>",
//                    username: "user-<bindingName>", password: Options.materialSecret, uri: mongodb://... }
//        objectstorage: { capability, endpoint: "https://127.0.0.1:<port>/s3", bucket: "bucket-<bindingName>",
//                    accessKeyId: "key-<bindingName>", secretAccessKey: Options.materialSecret, region: "local" }
//   POST /control/backups    { serviceId, backupId, database, volumes, objectStorage }
//        -> { snapshots: { database: {snapshotId, sizeBytes}|null, volumes: [{name, snapshotId, sizeBytes}],
//             objectStorage: {snapshotId, sizeBytes}|null } }; snapshot ids "snap-<backupId>-<part>",
//        sizes Options.snapshotSizeBytes; every snapshot is remembered (for prune) with Options.now().
//        database: true for a service marked setServiceWithoutDatabase() -> database: null.
//   POST /control/volumes    { serviceId, name } -> { name, created: true } first time, created: false after
//   POST /control/restores/volume|database|objectstorage  -> { restored: true } (recorded, see restoreLog())
//   POST /control/archive/prune { serviceId|null, olderThan, keepBackupIds }
//        -> { prunedSnapshots, freedBytes }: removes remembered snapshots of that service (null: any) taken
//           before olderThan whose backupId is not kept.
//   POST /control/database-closures/export { serviceId, backupId }
//        -> 200 application/octet-stream, Content-Length = Options.closureSizeBytes,
//           X-Corestore-Closure-Sha256 (hex of the body, computed once per seed and size by running the
//           generator), X-Corestore-Closure-Receipt ("receipt:<s>:<b>:<n>");
//           the body is generated on the fly by a seeded generator (closureBytes()), never held in memory,
//           written as the socket drains (at most 256 KiB queued) and, with Options.closureBytesPerSecond > 0,
//           at that rate. 404 { error: { code: "no-database" } } for a service without a database.
//   POST /control/database-closures/restore?serviceId=&backupId=  (closure bytes)
//        -> { restored: true, sizeBytes, sha256 } when: Content-Length is present and equals the body's size,
//           no Transfer-Encoding, no Content-Encoding other than "identity", X-Corestore-Closure-Sha256 equals
//           the body's hex SHA-256, X-Corestore-Closure-Receipt present, both query items present.
//           Refusals (400): closure-length-required, closure-encoding-refused, closure-receipt-missing,
//           closure-digest-mismatch, request-invalid. Accepted restores are listed by restoredClosures().
//   POST /control/isolated-restore/<operation>  the control (§14) -> progress
//        { restoreId, revision, phase, stagedObject: {key, nextOffset, sizeBytes}|null, updatedAt, failure }
//        plus receivedObject (stage), restoredMappings (execute), deletedStaging (cleanup). Never a nodeId.
//        State per restoreId: prepare (expectedRevision null, manifest) creates it at revision 1, phase
//        "prepared"; stage/execute/cleanup need expectedRevision == revision and raise it by one; progress
//        changes nothing. stage: chunk.objectKey must be in the manifest, chunk.offset == that object's
//        nextOffset, data base64 decoding to ≤ 524288 bytes, chunkSha256 == hex SHA-256 of the decoded bytes,
//        offset + size ≤ sizeBytes; a completed object must hash to its manifest sha256. Phase: "staging"
//        until every object is complete, then "staged"; execute needs "staged" -> "restored"; cleanup ->
//        "cleaned". Refusals { error: { code, reason } }: 400 control-invalid / operation-mismatch /
//        object-unknown / chunk-too-large / chunk-digest-mismatch / object-digest-mismatch (phase "failed"),
//        403 grant-refused (setRefusedGrant()), 404 restore-unknown, 409 revision-stale / offset-mismatch /
//        restore-exists / not-staged / restore-cleaned.
//
// Scripts (per route): script(route, behaviour, times) queues `times` behaviours used by the next
// requests in order; setStanding(route, behaviour) is used once the queue is empty (until cleared).
// Behaviours (factories on Behaviour):
//   answer(status, bodyBytes, headers)  status and body written verbatim (Content-Type application/json
//                                       unless headers name one), exact Content-Length
//   unauthorized()/forbidden()          401/403 { error: { code: "unauthorized"|"forbidden", reason } }
//   legacyConflict(code)                409 { error: { code, reason } } (legacy-adoption-pending|-conflict|-mismatch)
//   serverError(status = 500)           5xx { error: { code: "internal", reason } }
//   hang()                              reads the request, never answers, keeps the connection open
//   dropConnection()                    closes the connection without a byte of answer
//   slowBody(bytesPerSecond)            the route's default answer, headers at once, body at that rate
//   truncatedBody(sentBytes)            the route's default answer's headers (full Content-Length), then only
//                                       sentBytes of body (-1: half), then the connection is closed
//   stallAfter(sentBytes)               like truncatedBody but the connection stays open, silent
//   oversizedBody(sizeBytes)            200 with a valid JSON object of exactly sizeBytes (default 16 MiB + 1),
//                                       generated while written
//   badJsonBody()                       200 application/json whose body is not JSON
//   Every behaviour may also set delayMs (wait before the first byte of the answer).
//
// How the behaviours are made with Qt 6.4's QHttpServer (which has no streaming response type):
// every request reaches QHttpServer's missing handler (no routes are registered) with its
// QHttpServerResponder, which is moved into a per-request exchange object and answered later with
// QHttpServerResponder::writeStatusLine / writeHeader / writeBody in parts. hang keeps the responder and
// writes nothing; slow bodies, stalls and the closure export write parts paced by a QTimer and the
// socket's bytesWritten (QHttpServerResponder::socket()); truncation and dropConnection close
// responder.socket() (disconnectFromHost after the partial body is flushed, abort for drop). The exchange
// watches the socket through a QPointer and stops writing once the client has gone. Qt 6.4 reads the
// whole request body before the handler runs, so restore bodies are held in memory (tests use MiB, not GiB).
//
// Observation: requestCount(route), totalRequestCount(), lastRequest(route) (body bytes and headers as
// received, e.g. to check that an isolated-restore control was posted byte-identical),
// requestLog() (routes in arrival order), sawRequestWithoutBearer() (any request without an
// `Authorization: Bearer …` header), rejectedBearerCount() (requests answered 401 for their bearer).
//
// Usage:
//   TestCertificateAuthority ca;
//   LoopbackCorestore corestore(ca);
//   QVERIFY(corestore.listen());
//   corestore.setAcceptedToken("opened-control-token");
//   corestore.setInventory(R"([{"serviceId":"s1","databases":["d"],"buckets":[],"volumes":[]}])");
//   corestore.script(LoopbackCorestore::inventoryRoute, LoopbackCorestore::Behaviour::unauthorized());
//   ... publish corestore.endpoint() as the node's corestore.endpoint ...
//   QTRY_COMPARE(corestore.requestCount(LoopbackCorestore::inventoryRoute), 2);
#include "tests/peers/testcertificateauthority.h"

#include <QByteArray>
#include <QCryptographicHash>
#include <QHash>
#include <QList>
#include <QObject>
#include <QPair>
#include <QSet>
#include <QString>
#include <QStringList>
#include <QUrl>
#include <QUrlQuery>
#include <functional>
#include <memory>
#include <optional>

class QHttpServer;
class QHttpServerRequest;
class QHttpServerResponder;

namespace coreflow::peers {

class CorestoreExchange;

class LoopbackCorestore : public QObject {
    Q_OBJECT
public:
    using HeaderList = QList<QPair<QByteArray, QByteArray>>;

    // Route names (§15.1): "METHOD /path" relative to endpoint(), no query.
    static constexpr const char *reconcileRoute = "POST /control/credential-bindings/reconcile";
    static constexpr const char *materialRoute = "POST /control/credential-bindings/material";
    static constexpr const char *inventoryRoute = "GET /control/inventory";
    static constexpr const char *legacyResourcesRoute = "GET /control/legacy-resources";
    static constexpr const char *backupsRoute = "POST /control/backups";
    static constexpr const char *volumesRoute = "POST /control/volumes";
    static constexpr const char *restoreVolumeRoute = "POST /control/restores/volume";
    static constexpr const char *restoreDatabaseRoute = "POST /control/restores/database";
    static constexpr const char *restoreObjectStorageRoute = "POST /control/restores/objectstorage";
    static constexpr const char *pruneRoute = "POST /control/archive/prune";
    static constexpr const char *closureExportRoute = "POST /control/database-closures/export";
    static constexpr const char *closureRestoreRoute = "POST /control/database-closures/restore";
    static constexpr const char *isolatedPrepareRoute = "POST /control/isolated-restore/prepare";
    static constexpr const char *isolatedStageRoute = "POST /control/isolated-restore/stage";
    static constexpr const char *isolatedProgressRoute = "POST /control/isolated-restore/progress";
    static constexpr const char *isolatedExecuteRoute = "POST /control/isolated-restore/execute";
    static constexpr const char *isolatedCleanupRoute = "POST /control/isolated-restore/cleanup";
    // Every route above, in §15.1 order.
    static QStringList routes();

    struct Options {
        quint16 port = 0;                                   // 0: an ephemeral port on 127.0.0.1
        QString host = QStringLiteral("127.0.0.1");         // endpoint() host and the certificate's name
        QString basePath = QStringLiteral("/corestore");    // endpoint() path; "" for none (no trailing '/')
        QByteArray acceptedToken = "corestore-control-token";
        QByteArray materialSecret = "corestore-material-secret"; // password / secretAccessKey in materials
        qint64 snapshotSizeBytes = 4096;                    // sizeBytes of every snapshot
        qint64 closureSizeBytes = 1024 * 1024;              // export body size, bytes
        qint64 closureBytesPerSecond = 0;                   // export pace; 0: as fast as the socket drains
        quint64 closureSeed = 1;                            // generator seed (mixed with serviceId/backupId)
        std::function<qint64()> now;                        // Unix ms; default: the system clock
    };

    struct Behaviour {
        enum class Kind {
            Default,        // the route's default answer (optionally delayed / slowed / truncated / stalled)
            Answer,         // status + body + headers verbatim
            Hang,           // never answer
            Drop,           // close without answering
            Oversized,      // 200, valid JSON of oversizedBytes, generated
            BadJson,        // 200 application/json, not JSON
        };
        Kind kind = Kind::Default;
        int status = 200;
        QByteArray body;
        HeaderList headers;
        qint64 delayMs = 0;              // wait before the first byte of the answer
        qint64 bytesPerSecond = 0;       // body pace; 0: unpaced
        qint64 sendBodyBytes = -1;       // >= 0: write only that many body bytes (-2: half of it)
        bool closeAfterPartialBody = true; // with sendBodyBytes: close (truncation) or stay silent (stall)
        qint64 oversizedBytes = 16 * 1024 * 1024 + 1;

        static Behaviour answer(int status, const QByteArray &body, const HeaderList &headers = {});
        static Behaviour unauthorized();
        static Behaviour forbidden();
        static Behaviour legacyConflict(const QByteArray &code);  // 409 legacy-adoption-*
        static Behaviour serverError(int status = 500);
        static Behaviour hang();
        static Behaviour dropConnection();
        static Behaviour slowBody(qint64 bytesPerSecond);
        static Behaviour truncatedBody(qint64 sentBytes = -2);    // -2: half of the body
        static Behaviour stallAfter(qint64 sentBytes);
        static Behaviour oversizedBody(qint64 sizeBytes = 16 * 1024 * 1024 + 1);
        static Behaviour badJsonBody();
        static Behaviour delayed(qint64 delayMs);                  // the default answer, after delayMs
        static Behaviour delayed(qint64 delayMs, Behaviour then);
    };

    // One received request, as it arrived.
    struct ObservedRequest {
        QString route;                   // "METHOD /path" (base path stripped); "" for an unknown path
        QByteArray method;
        QString path;                    // full request path, base path included
        QUrlQuery query;
        HeaderList headers;              // names as sent
        QByteArray body;
        qint64 receivedAtMs = 0;         // Options.now()
        QByteArray header(const QByteArray &name) const;   // first value, case-insensitive name; "" if absent
        bool hasHeader(const QByteArray &name) const;
    };

    struct RestoredClosure {
        QString serviceId;
        QString backupId;
        qint64 sizeBytes = 0;
        QByteArray sha256;               // hex
        QByteArray receipt;              // X-Corestore-Closure-Receipt as sent
    };

    // Issues its own certificate for options.host from `ca` (default Options without the second argument).
    explicit LoopbackCorestore(const TestCertificateAuthority &ca, QObject *parent = nullptr);
    LoopbackCorestore(const TestCertificateAuthority &ca, Options options, QObject *parent = nullptr);
    // Presents `certificate` (e.g. loaded from PEM files by loopbackcorestoremain).
    LoopbackCorestore(const IssuedCertificate &certificate, Options options, QObject *parent = nullptr);
    ~LoopbackCorestore() override;

    // Starts listening on 127.0.0.1:Options.port. False (logged) when the port is taken.
    bool listen();
    quint16 port() const;
    QUrl endpoint() const;               // https://<host>:<port><basePath>

    void setAcceptedToken(const QByteArray &token);
    QByteArray acceptedToken() const;

    // --- scripting ---
    void script(const QString &route, const Behaviour &behaviour, int times = 1);
    void setStanding(const QString &route, const Behaviour &behaviour);
    void clearScript(const QString &route);   // queued and standing behaviours of that route
    void clearAllScripts();
    int queuedBehaviours(const QString &route) const;

    // --- state ---
    void setInventory(const QByteArray &servicesJson);        // the `services` array text, sent verbatim
    void setLegacyResources(const QByteArray &servicesJson);  // the `services` array text, sent verbatim
    void setServiceWithoutDatabase(const QString &serviceId, bool withoutDatabase = true);
    void setRefusedGrant(const QByteArray &grant);            // isolated-restore controls with it get 403
    void setClosureSizeBytes(qint64 bytes);
    void setClosureBytesPerSecond(qint64 bytesPerSecond);

    // The export body for (serviceId, backupId) with the current size and seed: closureBytes() returns
    // `length` bytes from `offset` (for tests; the server never materialises the whole body) and
    // closureSha256() the hex digest of all of it (computed by streaming the generator).
    QByteArray closureBytes(const QString &serviceId, const QString &backupId, qint64 offset, qint64 length) const;
    QByteArray closureSha256(const QString &serviceId, const QString &backupId) const;

    QList<RestoredClosure> restoredClosures() const;
    QStringList restoreLog() const;       // "volume:<service>:<backup>:<name>:<snapshot>", "database:…", "objectstorage:…"
    QStringList volumes(const QString &serviceId) const;
    // Isolated-restore revision (-1 when unknown) and phase ("" when unknown).
    qint64 isolatedRestoreRevision(const QString &restoreId) const;
    QString isolatedRestorePhase(const QString &restoreId) const;

    // --- observation ---
    int requestCount(const QString &route) const;
    int totalRequestCount() const;
    std::optional<ObservedRequest> lastRequest(const QString &route) const;
    QStringList requestLog() const;
    bool sawRequestWithoutBearer() const;
    int rejectedBearerCount() const;
    int openExchanges() const;            // answers still being written or held (hang, stall, slow)
    void resetObservations();

Q_SIGNALS:
    void requestReceived(const QString &route);
    // Emitted when an answer has been written completely (not for hang/drop/truncation/stall).
    void answerFinished(const QString &route);

private:
    struct IsolatedObject {
        QString key;
        qint64 sizeBytes = 0;
        QByteArray sha256;          // hex, from the manifest
        qint64 nextOffset = 0;
        std::shared_ptr<QCryptographicHash> hash;   // over the staged bytes so far
    };
    struct IsolatedRestore {
        qint64 revision = 0;
        QString phase;
        QList<IsolatedObject> objects;
        int lastObject = -1;        // index of the object the last stage chunk went to
        QString failure;            // "" = null
        qint64 updatedAtMs = 0;
    };
    struct Snapshot {
        QString serviceId;
        QString backupId;
        QString snapshotId;
        qint64 sizeBytes = 0;
        qint64 takenAtMs = 0;
    };
    // A default (or scripted) answer before delivery: fixed bytes or a generated export body.
    struct Answer {
        int status = 200;
        HeaderList headers;
        QByteArray body;
        qint64 generatedSize = -1;  // >= 0: body comes from the closure generator with generatedSeed
        quint64 generatedSeed = 0;
    };

    void onRequest(const QHttpServerRequest &request, QHttpServerResponder &&responder);
    Answer defaultAnswer(const QString &route, const ObservedRequest &request);
    Answer isolatedRestoreAnswer(const QString &operation, const ObservedRequest &request);
    Answer closureRestoreAnswer(const ObservedRequest &request);
    Behaviour nextBehaviour(const QString &route);
    quint64 closureSeedFor(const QString &serviceId, const QString &backupId) const;
    qint64 nowMs() const;

    Options m_options;
    IssuedCertificate m_certificate;
    std::unique_ptr<QHttpServer> m_server;
    quint16 m_port = 0;

    QHash<QString, QList<Behaviour>> m_queued;
    QHash<QString, Behaviour> m_standing;

    QByteArray m_inventory = "[]";
    QByteArray m_legacyResources = "[]";
    QSet<QString> m_servicesWithoutDatabase;
    QSet<QByteArray> m_refusedGrants;
    QHash<QString, QSet<QString>> m_volumes;
    QList<Snapshot> m_snapshots;
    QHash<QString, IsolatedRestore> m_isolated;
    QList<RestoredClosure> m_restoredClosures;
    QStringList m_restoreLog;
    int m_receiptCounter = 0;
    mutable QHash<QPair<quint64, qint64>, QByteArray> m_closureDigests;   // (seed, size) -> hex SHA-256

    QHash<QString, int> m_counts;
    QHash<QString, ObservedRequest> m_last;
    QStringList m_log;
    int m_total = 0;
    bool m_sawWithoutBearer = false;
    int m_rejectedBearer = 0;
    QList<CorestoreExchange *> m_exchanges;
};

} // namespace coreflow::peers
