// loopback_corestore: LoopbackCorestore (docs/contract.md §15) checked with a plain QNetworkAccessManager
// that trusts only the test CA — no relay code involved. Each scripted behaviour does what the header
// says; the defaults answer the §15.1 shapes; the closure export's digest is right over the generated
// bytes and the closure restore checks length, encoding and digest (§13.4); the isolated-restore routes
// keep a revision and offsets and check chunk digests (§14).
// Rule ids: CS-01, CS-02 (bearer), CS-13 (401/403), CS-50..52 (legacy 409), CS-58, CS-59 (legacy
// resources verbatim), CS-65, CS-68 (closure bytes, identity encoding, exact length), IR-02 (control
// byte-identical), IR-05, IR-06 (chunk bound and digest), IR-07 (revision).
#include "tests/peers/loopbackcorestore.h"
#include "tests/peers/testcertificateauthority.h"

#include <QCryptographicHash>
#include <QEventLoop>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QSignalSpy>
#include <QSslSocket>
#include <QTest>

using namespace coreflow::peers;

namespace {

struct Reply {
    int status = 0;
    QByteArray body;
    QNetworkReply::NetworkError error = QNetworkReply::NoError;
    QList<QNetworkReply::RawHeaderPair> headers;
    int readyReads = 0;
    qint64 firstReadBytes = -1;   // bytes available at the first readyRead
    QByteArray header(const QByteArray &name) const
    {
        for (const auto &h : headers)
            if (h.first.compare(name, Qt::CaseInsensitive) == 0)
                return h.second;
        return {};
    }
    QJsonObject json() const { return QJsonDocument::fromJson(body).object(); }
    QString errorCode() const { return json().value("error").toObject().value("code").toString(); }
};

QString route(const char *name)
{
    return QString::fromLatin1(name);
}

} // namespace

class TestLoopbackCorestore : public QObject {
    Q_OBJECT

    TestCertificateAuthority m_ca;
    QByteArray m_token = "control-token-under-test";

    QNetworkRequest request(const LoopbackCorestore &corestore, const QString &pathAndQuery, bool bearer = true)
    {
        QUrl url(corestore.endpoint().toString() + pathAndQuery);
        QNetworkRequest r(url);
        r.setSslConfiguration(m_ca.clientConfiguration());
        r.setAttribute(QNetworkRequest::Http2AllowedAttribute, false);
        r.setHeader(QNetworkRequest::ContentTypeHeader, "application/json");
        if (bearer)
            r.setRawHeader("Authorization", "Bearer " + m_token);
        return r;
    }

    // A fresh manager per call: no connection is reused between checks.
    Reply send(const QNetworkRequest &r, const QByteArray &verb, const QByteArray &body = {})
    {
        QNetworkAccessManager manager;
        QNetworkReply *reply = verb == "GET" ? manager.get(r) : manager.sendCustomRequest(r, verb, body);
        Reply out;
        QObject::connect(reply, &QNetworkReply::readyRead, [&out, reply] {
            ++out.readyReads;
            out.body += reply->readAll();
            if (out.firstReadBytes < 0)
                out.firstReadBytes = out.body.size();
        });
        QEventLoop loop;
        QObject::connect(reply, &QNetworkReply::finished, &loop, &QEventLoop::quit);
        if (!reply->isFinished())
            loop.exec();
        out.body += reply->readAll();
        out.status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        out.error = reply->error();
        out.headers = reply->rawHeaderPairs();
        delete reply;
        return out;
    }

    Reply get(const LoopbackCorestore &corestore, const QString &path, bool bearer = true)
    {
        return send(request(corestore, path, bearer), "GET");
    }

    Reply post(const LoopbackCorestore &corestore, const QString &path, const QByteArray &body)
    {
        return send(request(corestore, path), "POST", body);
    }

    void start(LoopbackCorestore &corestore)
    {
        corestore.setAcceptedToken(m_token);
        QVERIFY(corestore.listen());
    }

private Q_SLOTS:
    void endpointCarriesTheBasePath()
    {
        LoopbackCorestore corestore(m_ca);
        start(corestore);
        QCOMPARE(corestore.endpoint().scheme(), QStringLiteral("https"));
        QCOMPARE(corestore.endpoint().host(), QStringLiteral("127.0.0.1"));
        QCOMPARE(corestore.endpoint().path(), QStringLiteral("/corestore"));
        QVERIFY(corestore.port() != 0);
        // A path outside the base is not a route.
        QNetworkRequest r = request(corestore, QString());
        r.setUrl(QUrl(QStringLiteral("https://127.0.0.1:%1/control/inventory").arg(corestore.port())));
        const Reply outside = send(r, "GET");
        QCOMPARE(outside.status, 404);
        QCOMPARE(outside.errorCode(), QStringLiteral("route-unknown"));
        QCOMPARE(get(corestore, "/control/nothing").status, 404);
        QCOMPARE(corestore.requestCount(QString()), 2);
    }

    // CS-01, CS-02: only exactly `Authorization: Bearer <token>` is accepted.
    void bearerIsRequired()
    {
        LoopbackCorestore corestore(m_ca);
        start(corestore);
        corestore.script(route(LoopbackCorestore::inventoryRoute), LoopbackCorestore::Behaviour::serverError(503));

        const Reply without = get(corestore, "/control/inventory", false);
        QCOMPARE(without.status, 401);
        QCOMPARE(without.errorCode(), QStringLiteral("unauthorized"));
        QVERIFY(!without.json().value("error").toObject().value("reason").toString().isEmpty());
        QVERIFY(corestore.sawRequestWithoutBearer());

        QNetworkRequest wrong = request(corestore, "/control/inventory", false);
        wrong.setRawHeader("Authorization", "Bearer " + m_token + "x");
        QCOMPARE(send(wrong, "GET").status, 401);
        QNetworkRequest basic = request(corestore, "/control/inventory", false);
        basic.setRawHeader("Authorization", "Basic " + m_token);
        QCOMPARE(send(basic, "GET").status, 401);
        QCOMPARE(corestore.rejectedBearerCount(), 3);
        // Rejected requests did not consume the scripted 503.
        QCOMPARE(corestore.queuedBehaviours(route(LoopbackCorestore::inventoryRoute)), 1);
        QCOMPARE(get(corestore, "/control/inventory").status, 503);
        QCOMPARE(get(corestore, "/control/inventory").status, 200);
        QCOMPARE(corestore.requestCount(route(LoopbackCorestore::inventoryRoute)), 5);
        QCOMPARE(corestore.totalRequestCount(), 5);
        QCOMPARE(corestore.lastRequest(route(LoopbackCorestore::inventoryRoute))->header("authorization"),
                 "Bearer " + m_token);
    }

    void bearerCanChange()
    {
        LoopbackCorestore corestore(m_ca);
        start(corestore);
        QCOMPARE(get(corestore, "/control/inventory").status, 200);
        corestore.setAcceptedToken("another");
        QCOMPARE(get(corestore, "/control/inventory").status, 401);
        QVERIFY(!corestore.sawRequestWithoutBearer());
    }

    // CS-58, CS-59: the services arrays are sent byte for byte (spacing, key order, escapes kept).
    void inventoriesAreSentVerbatim()
    {
        LoopbackCorestore corestore(m_ca);
        start(corestore);
        QCOMPARE(get(corestore, "/control/inventory").body, QByteArray(R"({"services":[]})"));
        const QByteArray inventory = R"([ {"volumes":[],"serviceId":"s\u00e9","databases":["a"] ,"buckets":[]} ])";
        const QByteArray legacy =
            R"([{"serviceId":"s1","resources":[{"name":"d\/1","kind":"database","createdAt":1700000000000}]}])";
        corestore.setInventory(inventory);
        corestore.setLegacyResources(legacy);
        const Reply inv = get(corestore, "/control/inventory");
        QCOMPARE(inv.status, 200);
        QCOMPARE(inv.body, "{\"services\":" + inventory + "}");
        QCOMPARE(inv.header("Content-Type"), QByteArray("application/json"));
        const Reply leg = get(corestore, "/control/legacy-resources");
        QCOMPARE(leg.body, "{\"services\":" + legacy + "}");
        QCOMPARE(leg.header("Content-Length").toLongLong(), qint64(leg.body.size()));
    }

    // CS-13, CS-50..52: scripted refusals, in order, then the standing behaviour, then the default.
    void scriptedAnswersInOrder()
    {
        LoopbackCorestore corestore(m_ca);
        start(corestore);
        const QString reconcile = route(LoopbackCorestore::reconcileRoute);
        corestore.script(reconcile, LoopbackCorestore::Behaviour::unauthorized());
        corestore.script(reconcile, LoopbackCorestore::Behaviour::forbidden());
        corestore.script(reconcile, LoopbackCorestore::Behaviour::legacyConflict("legacy-adoption-pending"));
        corestore.script(reconcile, LoopbackCorestore::Behaviour::serverError(502), 2);
        corestore.script(reconcile, LoopbackCorestore::Behaviour::answer(201, R"({"x" : 1})", {{"X-Extra", "yes"}}));
        const QByteArray body =
            R"({"grant":"g","request":{"capability":"database","serviceId":"s","bindingName":"b","endpoint":{"host":"db","port":27017}}})";
        Reply r = post(corestore, "/control/credential-bindings/reconcile", body);
        QCOMPARE(r.status, 401);
        QCOMPARE(r.errorCode(), QStringLiteral("unauthorized"));
        r = post(corestore, "/control/credential-bindings/reconcile", body);
        QCOMPARE(r.status, 403);
        QCOMPARE(r.errorCode(), QStringLiteral("forbidden"));
        r = post(corestore, "/control/credential-bindings/reconcile", body);
        QCOMPARE(r.status, 409);
        QCOMPARE(r.errorCode(), QStringLiteral("legacy-adoption-pending"));
        QCOMPARE(post(corestore, "/control/credential-bindings/reconcile", body).status, 502);
        QCOMPARE(post(corestore, "/control/credential-bindings/reconcile", body).status, 502);
        r = post(corestore, "/control/credential-bindings/reconcile", body);
        QCOMPARE(r.status, 201);
        QCOMPARE(r.body, QByteArray(R"({"x" : 1})"));
        QCOMPARE(r.header("X-Extra"), QByteArray("yes"));
        r = post(corestore, "/control/credential-bindings/reconcile", body);
        QCOMPARE(r.status, 200);
        QCOMPARE(r.json().value("binding").toObject().value("name").toString(), QStringLiteral("b"));
        QCOMPARE(r.json().value("binding").toObject().value("state").toString(), QStringLiteral("reconciled"));

        corestore.setStanding(reconcile, LoopbackCorestore::Behaviour::legacyConflict("legacy-adoption-mismatch"));
        corestore.script(reconcile, LoopbackCorestore::Behaviour::forbidden());
        QCOMPARE(post(corestore, "/control/credential-bindings/reconcile", body).status, 403);
        QCOMPARE(post(corestore, "/control/credential-bindings/reconcile", body).errorCode(), QStringLiteral("legacy-adoption-mismatch"));
        QCOMPARE(post(corestore, "/control/credential-bindings/reconcile", body).errorCode(), QStringLiteral("legacy-adoption-mismatch"));
        corestore.clearScript(reconcile);
        QCOMPARE(post(corestore, "/control/credential-bindings/reconcile", body).status, 200);
        QCOMPARE(corestore.requestCount(reconcile), 11);
        QCOMPARE(corestore.lastRequest(reconcile)->body, body);
    }

    void hangNeverAnswers()
    {
        LoopbackCorestore corestore(m_ca);
        start(corestore);
        corestore.script(route(LoopbackCorestore::inventoryRoute), LoopbackCorestore::Behaviour::hang());
        QNetworkAccessManager manager;
        QSignalSpy received(&corestore, &LoopbackCorestore::requestReceived);
        QNetworkReply *reply = manager.get(request(corestore, "/control/inventory"));
        QVERIFY(received.wait(10000));
        // A wait must stay: the check is that the peer never answers, and the peer has no clock to step;
        // 300 ms of event-loop turns give a wrongly answering peer time to write (a late answer could only be missed, never faked).
        QTest::qWait(300);
        QVERIFY(!reply->isFinished());
        QCOMPARE(reply->bytesAvailable(), qint64(0));
        QCOMPARE(corestore.openExchanges(), 1);
        reply->abort(); // the client gives up: the held exchange ends with its socket
        QTRY_COMPARE(corestore.openExchanges(), 0);
        delete reply;
        QCOMPARE(get(corestore, "/control/inventory").status, 200);
    }

    void dropClosesWithoutAnswer()
    {
        LoopbackCorestore corestore(m_ca);
        start(corestore);
        // Standing: QNetworkAccessManager resends a request whose connection closed before any answer.
        corestore.setStanding(route(LoopbackCorestore::inventoryRoute), LoopbackCorestore::Behaviour::dropConnection());
        const Reply r = get(corestore, "/control/inventory");
        QVERIFY(r.error != QNetworkReply::NoError);
        QCOMPARE(r.status, 0);
        QVERIFY(r.body.isEmpty());
        QVERIFY(corestore.requestCount(route(LoopbackCorestore::inventoryRoute)) >= 1);
    }

    void truncatedBodyStopsShortOfContentLength()
    {
        LoopbackCorestore corestore(m_ca);
        start(corestore);
        const QByteArray inventory = "[" + QByteArray(2000, ' ') + "]";
        corestore.setInventory(inventory);
        corestore.setStanding(route(LoopbackCorestore::inventoryRoute), LoopbackCorestore::Behaviour::truncatedBody(100));
        const Reply r = get(corestore, "/control/inventory");
        QVERIFY(r.error != QNetworkReply::NoError);
        QCOMPARE(r.header("Content-Length").toLongLong(), qint64(inventory.size() + 13));
        QVERIFY(r.body.size() <= 100);
        QVERIFY(QByteArray("{\"services\":" + inventory + "}").startsWith(r.body));
    }

    void stallKeepsTheConnectionSilent()
    {
        LoopbackCorestore corestore(m_ca);
        start(corestore);
        corestore.setInventory("[" + QByteArray(3000, ' ') + "]");
        corestore.script(route(LoopbackCorestore::inventoryRoute), LoopbackCorestore::Behaviour::stallAfter(1000));
        QNetworkAccessManager manager;
        QNetworkReply *reply = manager.get(request(corestore, "/control/inventory"));
        QByteArray got;
        connect(reply, &QNetworkReply::readyRead, this, [&] { got += reply->readAll(); });
        QTRY_COMPARE_WITH_TIMEOUT(got.size(), 1000, 10000);
        // A wait must stay: the check is that nothing follows the first 1000 bytes, on a peer without a clock.
        QTest::qWait(200);
        QCOMPARE(got.size(), 1000);
        QVERIFY(!reply->isFinished());
        QCOMPARE(corestore.openExchanges(), 1);
        reply->abort();
        QTRY_COMPARE(corestore.openExchanges(), 0);
        delete reply;
    }

    void oversizedBodyIsValidJsonOfTheGivenSize()
    {
        LoopbackCorestore corestore(m_ca);
        start(corestore);
        corestore.script(route(LoopbackCorestore::inventoryRoute), LoopbackCorestore::Behaviour::oversizedBody());
        const Reply r = get(corestore, "/control/inventory");
        QCOMPARE(r.error, QNetworkReply::NoError);
        QCOMPARE(r.status, 200);
        const qint64 expected = 16 * 1024 * 1024 + 1;
        QCOMPARE(r.header("Content-Length").toLongLong(), expected);
        QCOMPARE(qint64(r.body.size()), expected);
        QJsonParseError error;
        const QJsonDocument document = QJsonDocument::fromJson(r.body, &error);
        QCOMPARE(error.error, QJsonParseError::NoError);
        QVERIFY(document.object().value("services").isArray());
    }

    void badJsonBodyIsNotJson()
    {
        LoopbackCorestore corestore(m_ca);
        start(corestore);
        corestore.script(route(LoopbackCorestore::backupsRoute), LoopbackCorestore::Behaviour::badJsonBody());
        const Reply r = post(corestore, "/control/backups", R"({"serviceId":"s","backupId":"b"})");
        QCOMPARE(r.status, 200);
        QCOMPARE(r.header("Content-Type"), QByteArray("application/json"));
        QJsonParseError error;
        QJsonDocument::fromJson(r.body, &error);
        QVERIFY(error.error != QJsonParseError::NoError);
    }

    void slowBodyArrivesInPiecesAndWhole()
    {
        LoopbackCorestore corestore(m_ca);
        start(corestore);
        const QByteArray inventory = "[" + QByteArray(1200, ' ') + "]";
        corestore.setInventory(inventory);
        corestore.script(route(LoopbackCorestore::inventoryRoute), LoopbackCorestore::Behaviour::slowBody(4000));
        const Reply r = get(corestore, "/control/inventory");
        QCOMPARE(r.error, QNetworkReply::NoError);
        QCOMPARE(r.body, "{\"services\":" + inventory + "}");
        QVERIFY2(r.readyReads >= 3, qPrintable(QString::number(r.readyReads)));
        QVERIFY2(r.firstReadBytes < r.body.size() / 2, qPrintable(QString::number(r.firstReadBytes)));
    }

    void delayedAnswerStillArrives()
    {
        LoopbackCorestore corestore(m_ca);
        start(corestore);
        corestore.script(route(LoopbackCorestore::inventoryRoute),
                         LoopbackCorestore::Behaviour::delayed(200, LoopbackCorestore::Behaviour::forbidden()));
        QCOMPARE(get(corestore, "/control/inventory").status, 403);
    }

    // CS-65: the export is the generator's bytes, its digest header is right over what arrived.
    void closureExportDigestMatchesTheBytes()
    {
        LoopbackCorestore::Options options;
        options.closureSizeBytes = 3 * 1024 * 1024 + 5;
        LoopbackCorestore corestore(m_ca, options);
        start(corestore);
        const Reply r = post(corestore, "/control/database-closures/export", R"({"serviceId":"svc","backupId":"bk"})");
        QCOMPARE(r.status, 200);
        QCOMPARE(r.header("Content-Type"), QByteArray("application/octet-stream"));
        QCOMPARE(r.header("Content-Length").toLongLong(), options.closureSizeBytes);
        QCOMPARE(qint64(r.body.size()), options.closureSizeBytes);
        const QByteArray digest = QCryptographicHash::hash(r.body, QCryptographicHash::Sha256).toHex();
        QCOMPARE(r.header("X-Corestore-Closure-Sha256"), digest);
        QCOMPARE(corestore.closureSha256("svc", "bk"), digest);
        QVERIFY(!r.header("X-Corestore-Closure-Receipt").isEmpty());
        QCOMPARE(corestore.closureBytes("svc", "bk", 1000003, 777), r.body.mid(1000003, 777));
        // Different backups get different content; the content is not a constant fill.
        QVERIFY(corestore.closureBytes("svc", "other", 0, 64) != r.body.left(64));
        QVERIFY(r.body.count(r.body.at(0)) < r.body.size() / 64);

        corestore.setServiceWithoutDatabase("nodb");
        const Reply none = post(corestore, "/control/database-closures/export", R"({"serviceId":"nodb","backupId":"bk"})");
        QCOMPARE(none.status, 404);
        QCOMPARE(none.errorCode(), QStringLiteral("no-database"));
    }

    void closureExportCanBePacedAndStalled()
    {
        LoopbackCorestore::Options options;
        options.closureSizeBytes = 64 * 1024;
        options.closureBytesPerSecond = 256 * 1024;
        LoopbackCorestore corestore(m_ca, options);
        start(corestore);
        const Reply paced = post(corestore, "/control/database-closures/export", R"({"serviceId":"s","backupId":"b"})");
        QCOMPARE(qint64(paced.body.size()), options.closureSizeBytes);
        QVERIFY(paced.readyReads >= 3);
        QCOMPARE(QCryptographicHash::hash(paced.body, QCryptographicHash::Sha256).toHex(), paced.header("X-Corestore-Closure-Sha256"));

        corestore.setClosureBytesPerSecond(0);
        corestore.setStanding(route(LoopbackCorestore::closureExportRoute), LoopbackCorestore::Behaviour::truncatedBody(10000));
        const Reply cut = post(corestore, "/control/database-closures/export", R"({"serviceId":"s","backupId":"b"})");
        QVERIFY(cut.error != QNetworkReply::NoError);
        QVERIFY(cut.body.size() <= 10000);
        QCOMPARE(cut.body, corestore.closureBytes("s", "b", 0, cut.body.size()));
    }

    // CS-68: exact Content-Length, identity encoding, digest checked.
    void closureRestoreChecksLengthEncodingAndDigest()
    {
        LoopbackCorestore corestore(m_ca);
        start(corestore);
        const QByteArray closure = corestore.closureBytes("svc", "bk", 0, 300000);
        const QByteArray digest = QCryptographicHash::hash(closure, QCryptographicHash::Sha256).toHex();
        const auto restoreRequest = [&](const QByteArray &sha, const QByteArray &receipt) {
            QNetworkRequest r = request(corestore, "/control/database-closures/restore?serviceId=svc&backupId=bk");
            r.setHeader(QNetworkRequest::ContentTypeHeader, "application/octet-stream");
            r.setRawHeader("X-Corestore-Closure-Sha256", sha);
            if (!receipt.isEmpty())
                r.setRawHeader("X-Corestore-Closure-Receipt", receipt);
            return r;
        };

        Reply r = send(restoreRequest(digest, "receipt-1"), "POST", closure);
        QCOMPARE(r.status, 200);
        QCOMPARE(r.json().value("restored").toBool(), true);
        QCOMPARE(r.json().value("sizeBytes").toInteger(), qint64(closure.size()));
        QCOMPARE(r.json().value("sha256").toString().toLatin1(), digest);
        QCOMPARE(corestore.restoredClosures().size(), 1);
        QCOMPARE(corestore.restoredClosures().at(0).receipt, QByteArray("receipt-1"));
        QCOMPARE(corestore.lastRequest(route(LoopbackCorestore::closureRestoreRoute))->body, closure);

        QByteArray flipped = closure;
        flipped[12345] = char(flipped[12345] ^ 1);
        r = send(restoreRequest(digest, "receipt-2"), "POST", flipped);
        QCOMPARE(r.status, 400);
        QCOMPARE(r.errorCode(), QStringLiteral("closure-digest-mismatch"));

        r = send(restoreRequest(digest, QByteArray()), "POST", closure);
        QCOMPARE(r.errorCode(), QStringLiteral("closure-receipt-missing"));

        QNetworkRequest encoded = restoreRequest(digest, "receipt-3");
        encoded.setRawHeader("Content-Encoding", "gzip");
        r = send(encoded, "POST", closure);
        QCOMPARE(r.errorCode(), QStringLiteral("closure-encoding-refused"));

        QNetworkRequest noQuery = restoreRequest(digest, "receipt-4");
        noQuery.setUrl(QUrl(corestore.endpoint().toString() + "/control/database-closures/restore"));
        QCOMPARE(send(noQuery, "POST", closure).errorCode(), QStringLiteral("request-invalid"));
        QCOMPARE(corestore.restoredClosures().size(), 1);
    }

    // CS-68: a chunked body (no Content-Length) is refused; written by hand on a TLS socket.
    void closureRestoreRefusesChunkedTransfer()
    {
        LoopbackCorestore corestore(m_ca);
        start(corestore);
        const QByteArray closure = "closure-bytes";
        const QByteArray digest = QCryptographicHash::hash(closure, QCryptographicHash::Sha256).toHex();
        QSslSocket socket;
        socket.setSslConfiguration(m_ca.clientConfiguration());
        socket.connectToHostEncrypted(QStringLiteral("127.0.0.1"), corestore.port());
        QTRY_VERIFY_WITH_TIMEOUT(socket.isEncrypted(), 10000); // the server runs on this thread: no blocking wait
        socket.write("POST /corestore/control/database-closures/restore?serviceId=s&backupId=b HTTP/1.1\r\n"
                     "Host: 127.0.0.1\r\nAuthorization: Bearer " + m_token + "\r\n"
                     "X-Corestore-Closure-Sha256: " + digest + "\r\nX-Corestore-Closure-Receipt: r\r\n"
                     "Transfer-Encoding: chunked\r\n\r\n" + QByteArray::number(closure.size(), 16) + "\r\n" + closure
                     + "\r\n0\r\n\r\n");
        QByteArray answer;
        QTRY_VERIFY_WITH_TIMEOUT((answer += socket.readAll()).contains("closure-"), 10000);
        QVERIFY2(answer.startsWith("HTTP/1.1 400"), answer.constData());
        QVERIFY(answer.contains("closure-encoding-refused") || answer.contains("closure-length-required"));
        QVERIFY(corestore.restoredClosures().isEmpty());
    }

    // IR-02, IR-05, IR-06, IR-07: revision, offsets and chunk digests kept as §14 says.
    void isolatedRestoreKeepsRevisionOffsetsAndDigests()
    {
        LoopbackCorestore corestore(m_ca);
        start(corestore);
        const QByteArray object = corestore.closureBytes("x", "y", 0, 700000);
        const QByteArray objectSha = QCryptographicHash::hash(object, QCryptographicHash::Sha256).toHex();
        const auto control = [](const QString &operation, const QJsonValue &expected, const QJsonObject &extra = {}) {
            QJsonObject c{{"operation", operation}, {"restoreId", "r1"}, {"grant", "grant-1"}, {"expectedRevision", expected}};
            for (auto it = extra.begin(); it != extra.end(); ++it)
                c.insert(it.key(), it.value());
            return QJsonDocument(c).toJson(QJsonDocument::Compact);
        };
        const auto chunk = [&](qint64 offset, const QByteArray &data, const QByteArray &sha = {}) {
            return QJsonObject{{"chunk", QJsonObject{{"objectKey", "obj"}, {"offset", offset},
                                                     {"data", QString::fromLatin1(data.toBase64())},
                                                     {"chunkSha256", QString::fromLatin1(sha.isEmpty()
                                                          ? QCryptographicHash::hash(data, QCryptographicHash::Sha256).toHex() : sha)}}}};
        };

        const QByteArray prepare = control("prepare", QJsonValue::Null,
            {{"manifest", QJsonObject{{"objects", QJsonArray{QJsonObject{{"key", "obj"}, {"sizeBytes", qint64(object.size())},
                                                                         {"sha256", QString::fromLatin1(objectSha)}}}}}}});
        Reply r = post(corestore, "/control/isolated-restore/prepare", prepare);
        QCOMPARE(r.status, 200);
        QCOMPARE(r.json().value("revision").toInteger(), 1);
        QCOMPARE(r.json().value("phase").toString(), QStringLiteral("prepared"));
        QVERIFY(r.json().value("stagedObject").isNull());
        QVERIFY(!r.json().contains("nodeId"));
        QCOMPARE(corestore.lastRequest(route(LoopbackCorestore::isolatedPrepareRoute))->body, prepare); // IR-02
        QCOMPARE(post(corestore, "/control/isolated-restore/prepare", prepare).errorCode(), QStringLiteral("restore-exists"));
        QCOMPARE(post(corestore, "/control/isolated-restore/stage", prepare).errorCode(), QStringLiteral("operation-mismatch"));

        const QByteArray first = object.left(524288);
        r = post(corestore, "/control/isolated-restore/stage", control("stage", 2, chunk(0, first)));
        QCOMPARE(r.status, 409);
        QCOMPARE(r.errorCode(), QStringLiteral("revision-stale"));
        r = post(corestore, "/control/isolated-restore/stage", control("stage", 1, chunk(0, first, QByteArray(64, 'a'))));
        QCOMPARE(r.status, 400);
        QCOMPARE(r.errorCode(), QStringLiteral("chunk-digest-mismatch"));
        r = post(corestore, "/control/isolated-restore/stage", control("stage", 1, chunk(0, object.left(524289))));
        QCOMPARE(r.errorCode(), QStringLiteral("chunk-too-large"));
        r = post(corestore, "/control/isolated-restore/stage", control("stage", 1, chunk(10, first.left(10))));
        QCOMPARE(r.status, 409);
        QCOMPARE(r.errorCode(), QStringLiteral("offset-mismatch"));
        QCOMPARE(post(corestore, "/control/isolated-restore/execute", control("execute", 1)).errorCode(), QStringLiteral("not-staged"));
        QCOMPARE(corestore.isolatedRestoreRevision("r1"), 1);

        const QByteArray stage1 = control("stage", 1, chunk(0, first));
        r = post(corestore, "/control/isolated-restore/stage", stage1);
        QCOMPARE(r.status, 200);
        QCOMPARE(r.json().value("revision").toInteger(), 2);
        QCOMPARE(r.json().value("phase").toString(), QStringLiteral("staging"));
        QCOMPARE(r.json().value("stagedObject").toObject().value("nextOffset").toInteger(), 524288);
        QCOMPARE(r.json().value("stagedObject").toObject().value("sizeBytes").toInteger(), qint64(object.size()));
        QVERIFY(r.json().contains("receivedObject"));
        QCOMPARE(corestore.lastRequest(route(LoopbackCorestore::isolatedStageRoute))->body, stage1);

        r = post(corestore, "/control/isolated-restore/progress", control("progress", QJsonValue::Null));
        QCOMPARE(r.json().value("revision").toInteger(), 2);
        r = post(corestore, "/control/isolated-restore/stage", control("stage", 2, chunk(524288, object.mid(524288))));
        QCOMPARE(r.json().value("phase").toString(), QStringLiteral("staged"));
        QCOMPARE(r.json().value("revision").toInteger(), 3);
        r = post(corestore, "/control/isolated-restore/execute", control("execute", 3));
        QCOMPARE(r.json().value("phase").toString(), QStringLiteral("restored"));
        QVERIFY(r.json().value("restoredMappings").isArray());
        r = post(corestore, "/control/isolated-restore/cleanup", control("cleanup", 4));
        QCOMPARE(r.json().value("phase").toString(), QStringLiteral("cleaned"));
        QCOMPARE(r.json().value("revision").toInteger(), 5);
        QCOMPARE(r.json().value("deletedStaging").toBool(), true);
        QCOMPARE(corestore.isolatedRestorePhase("r1"), QStringLiteral("cleaned"));

        QByteArray unknown = control("progress", QJsonValue::Null);
        unknown.replace("\"r1\"", "\"r2\"");
        QCOMPARE(post(corestore, "/control/isolated-restore/progress", unknown).status, 404);
        corestore.setRefusedGrant("grant-1");
        r = post(corestore, "/control/isolated-restore/progress", control("progress", QJsonValue::Null));
        QCOMPARE(r.status, 403);
        QCOMPARE(r.errorCode(), QStringLiteral("grant-refused"));
    }

    void isolatedRestoreObjectDigestIsChecked()
    {
        LoopbackCorestore corestore(m_ca);
        start(corestore);
        const QByteArray data = "object-content";
        const QByteArray prepare = QJsonDocument(QJsonObject{
            {"operation", "prepare"}, {"restoreId", "r"}, {"grant", "g"}, {"expectedRevision", QJsonValue::Null},
            {"manifest", QJsonObject{{"objects", QJsonArray{QJsonObject{{"key", "k"}, {"sizeBytes", qint64(data.size())},
                                                                        {"sha256", QString(64, QLatin1Char('0'))}}}}}}}).toJson();
        QCOMPARE(post(corestore, "/control/isolated-restore/prepare", prepare).status, 200);
        const QByteArray stage = QJsonDocument(QJsonObject{
            {"operation", "stage"}, {"restoreId", "r"}, {"grant", "g"}, {"expectedRevision", 1},
            {"chunk", QJsonObject{{"objectKey", "k"}, {"offset", 0}, {"data", QString::fromLatin1(data.toBase64())},
                                  {"chunkSha256", QString::fromLatin1(QCryptographicHash::hash(data, QCryptographicHash::Sha256).toHex())}}}}).toJson();
        const Reply r = post(corestore, "/control/isolated-restore/stage", stage);
        QCOMPARE(r.status, 400);
        QCOMPARE(r.errorCode(), QStringLiteral("object-digest-mismatch"));
        QCOMPARE(corestore.isolatedRestorePhase("r"), QStringLiteral("failed"));
    }

    void backupsVolumesRestoresAndPrune()
    {
        qint64 now = 1000;
        LoopbackCorestore::Options options;
        options.now = [&now] { return now; };
        LoopbackCorestore corestore(m_ca, options);
        start(corestore);
        corestore.setServiceWithoutDatabase("nodb");
        Reply r = post(corestore, "/control/backups",
                       R"({"serviceId":"s","backupId":"b1","database":true,"volumes":["v1","v2"],"objectStorage":true})");
        QCOMPARE(r.status, 200);
        const QJsonObject snapshots = r.json().value("snapshots").toObject();
        QVERIFY(!snapshots.value("database").toObject().value("snapshotId").toString().isEmpty());
        QCOMPARE(snapshots.value("volumes").toArray().size(), 2);
        QCOMPARE(snapshots.value("volumes").toArray().at(1).toObject().value("name").toString(), QStringLiteral("v2"));
        QVERIFY(snapshots.value("objectStorage").toObject().value("sizeBytes").toInteger() > 0);
        r = post(corestore, "/control/backups", R"({"serviceId":"nodb","backupId":"b2","database":true,"volumes":[],"objectStorage":false})");
        QVERIFY(r.json().value("snapshots").toObject().value("database").isNull());
        QVERIFY(r.json().value("snapshots").toObject().value("objectStorage").isNull());
        QCOMPARE(post(corestore, "/control/backups", "not json").errorCode(), QStringLiteral("request-invalid"));

        r = post(corestore, "/control/volumes", R"({"serviceId":"s","name":"v1"})");
        QCOMPARE(r.json().value("created").toBool(), true);
        r = post(corestore, "/control/volumes", R"({"serviceId":"s","name":"v1"})");
        QCOMPARE(r.json().value("created").toBool(), false);
        QCOMPARE(r.json().value("name").toString(), QStringLiteral("v1"));
        QCOMPARE(corestore.volumes("s"), QStringList{"v1"});

        QCOMPARE(post(corestore, "/control/restores/volume", R"({"serviceId":"s","backupId":"b1","name":"v1","snapshotId":"x"})")
                     .json().value("restored").toBool(), true);
        QCOMPARE(post(corestore, "/control/restores/database", R"({"serviceId":"s","backupId":"b1","snapshotId":"d"})").status, 200);
        QCOMPARE(post(corestore, "/control/restores/objectstorage", R"({"serviceId":"s","backupId":"b1","snapshotId":"o"})").status, 200);
        QCOMPARE(corestore.restoreLog(), (QStringList{"volume:s:b1:v1:x", "database:s:b1:d", "objectstorage:s:b1:o"}));

        now = 5000;
        r = post(corestore, "/control/archive/prune", R"({"serviceId":"s","olderThan":4000,"keepBackupIds":[]})");
        QCOMPARE(r.json().value("prunedSnapshots").toInteger(), 4);
        QCOMPARE(r.json().value("freedBytes").toInteger(), 4 * options.snapshotSizeBytes);
        r = post(corestore, "/control/archive/prune", R"({"serviceId":null,"olderThan":4000,"keepBackupIds":[]})");
        QCOMPARE(r.json().value("prunedSnapshots").toInteger(), 0); // b2 took no snapshot
    }

    void credentialMaterialShapes()
    {
        LoopbackCorestore::Options options;
        options.materialSecret = "material-canary";
        LoopbackCorestore corestore(m_ca, options);
        start(corestore);
        Reply r = post(corestore, "/control/credential-bindings/material",
                       R"({"grant":"g","request":{"capability":"database","serviceId":"s","bindingName":"main","endpoint":{"host":"db.local","port":27017}}})");
        QJsonObject m = r.json().value("material").toObject();
        QCOMPARE(m.value("capability").toString(), QStringLiteral("database"));
        QCOMPARE(m.value("endpoint").toObject().value("host").toString(), QStringLiteral("db.local"));
        QCOMPARE(m.value("password").toString(), QStringLiteral("material-canary"));
        QVERIFY(m.value("uri").toString().startsWith("mongodb://"));
        r = post(corestore, "/control/credential-bindings/material",
                 R"({"grant":"g","request":{"capability":"objectstorage","serviceId":"s","bindingName":"files","retention":null}})");
        m = r.json().value("material").toObject();
        QCOMPARE(m.value("bucket").toString(), QStringLiteral("bucket-files"));
        QCOMPARE(m.value("secretAccessKey").toString(), QStringLiteral("material-canary"));
        QCOMPARE(post(corestore, "/control/credential-bindings/material", R"({"request":{}})").status, 400);
    }

    void observationsCanBeReset()
    {
        LoopbackCorestore corestore(m_ca);
        start(corestore);
        QSignalSpy finished(&corestore, &LoopbackCorestore::answerFinished);
        get(corestore, "/control/inventory", false);
        QCOMPARE(corestore.requestLog(), QStringList{route(LoopbackCorestore::inventoryRoute)});
        QTRY_COMPARE(finished.size(), 1);
        corestore.resetObservations();
        QCOMPARE(corestore.totalRequestCount(), 0);
        QVERIFY(!corestore.sawRequestWithoutBearer());
        QVERIFY(!corestore.lastRequest(route(LoopbackCorestore::inventoryRoute)).has_value());
        QCOMPARE(LoopbackCorestore::routes().size(), 17);
    }
};

QTEST_GUILESS_MAIN(TestLoopbackCorestore)
#include "tst_loopbackcorestore.moc"
