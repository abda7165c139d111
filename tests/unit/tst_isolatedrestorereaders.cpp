// The isolated-restore lane's pure parts (docs/contract.md §14, §15.1): the exact-key readers of the
// request and the control (IR-04..IR-07), the progress reader (IR-15..IR-17) and the mapping of a
// Corestore outcome onto the restore's refusals (IR-09..IR-12, IR-18). Digests here are computed with
// Qt's QCryptographicHash, independently of the relay's libsodium.
#include "service/isolatedrestore/isolatedrestoreoutcome.h"
#include "service/isolatedrestore/isolatedrestoreprogress.h"
#include "service/isolatedrestore/isolatedrestorerequest.h"
#include "service/isolatedrestore/jsonduplicatekeys.h"

#include <QCryptographicHash>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

using namespace coreflow;

namespace {

const QByteArray kGrant = "grant-canary-7f3a91c2e4b84d0f9a6e5c1b2d3f4a5b";

QByteArray sha256Hex(const QByteArray &bytes) { return QCryptographicHash::hash(bytes, QCryptographicHash::Sha256).toHex(); }

QByteArray stageRequest(const QByteArray &data, const QByteArray &digest, const QByteArray &extraControl = {})
{
    return QByteArrayLiteral("{\"nodeId\":\"node-a\",\"control\":{\"operation\":\"stage\",\"restoreId\":\"r1\",\"grant\":\"") + kGrant
        + QByteArrayLiteral("\",\"expectedRevision\":3,\"chunk\":{\"objectKey\":\"db/archive\",\"offset\":0,\"data\":\"") + data.toBase64()
        + QByteArrayLiteral("\",\"chunkSha256\":\"") + digest + QByteArrayLiteral("\"}") + extraControl + QByteArrayLiteral("}}");
}

QByteArray control(const QByteArray &operation, const QByteArray &revision, const QByteArray &more = {})
{
    return QByteArrayLiteral("{\"nodeId\":\"node-a\",\"control\":{\"operation\":\"") + operation
        + QByteArrayLiteral("\",\"restoreId\":\"r1\",\"grant\":\"") + kGrant + QByteArrayLiteral("\",\"expectedRevision\":") + revision + more
        + QByteArrayLiteral("}}");
}

const QByteArray kManifest = ",\"manifest\":{\"objects\":[{\"key\":\"db/archive\",\"sizeBytes\":10,\"sha256\":\""
                             "0000000000000000000000000000000000000000000000000000000000000000\"}]}";

QString refusalText(const contract::Result<IsolatedRestoreRequest> &read) { return read ? QString() : read.refusal().text(); }

} // namespace

class TstIsolatedRestoreReaders : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // IR-02: the control member's bytes are kept exactly as sent (spacing, key order, number spelling).
    void controlBytesAreKeptVerbatim_IR02()
    {
        const QByteArray controlBytes = "{ \"restoreId\" : \"r1\",\"operation\":\"progress\",  \"grant\":\"g\",\"expectedRevision\" : null }";
        const QByteArray body = QByteArrayLiteral("{\"control\":  ") + controlBytes + QByteArrayLiteral("  ,\"nodeId\":\"node-a\"}");
        const auto read = IsolatedRestoreRequest::read(body, QStringLiteral("progress"));
        QVERIFY2(read, qPrintable(refusalText(read)));
        QCOMPARE(read->control, controlBytes);
        QCOMPARE(read->nodeId, QStringLiteral("node-a"));
        QVERIFY(!read->judged.expectedRevision);
    }

    // IR-04, IR-12: every malformed body is restore-control-invalid naming the field; the grant never.
    void malformedBodiesAreRefusedByField_IR04_IR12_data()
    {
        QTest::addColumn<QString>("operation");
        QTest::addColumn<QByteArray>("body");
        QTest::addColumn<QString>("reason");
        QTest::newRow("not an object") << "progress" << QByteArray("[1]") << "field request is not one readable JSON object";
        QTest::newRow("not json") << "progress" << QByteArray("{\"nodeId\":") << "field request is not one readable JSON object";
        QTest::newRow("nodeId missing") << "progress" << QByteArray("{\"control\":{}}") << "field request.nodeId is missing";
        QTest::newRow("nodeId empty") << "progress" << QByteArray("{\"nodeId\":\"\",\"control\":{}}")
                                      << "field request.nodeId is not an id (non-empty, at most 256 characters, no control characters)";
        QTest::newRow("unknown envelope member") << "progress" << QByteArray("{\"nodeId\":\"n\",\"control\":{},\"extraKey\":1}")
                                                 << "field request has a member the contract does not name";
        QTest::newRow("duplicate key") << "progress" << QByteArray("{\"nodeId\":\"n\",\"nodeId\":\"m\",\"control\":{}}")
                                       << "field request names a key more than once";
        QTest::newRow("duplicate in control") << "progress" << control("progress", "null", ",\"grant\":\"other\"")
                                              << "field request.control names a key more than once";
        QTest::newRow("operation of another method") << "stage" << control("progress", "null")
                                                     << "field request.control.operation is not stage, the operation of this method";
        QTest::newRow("operation unknown") << "stage" << control("wipe", "1")
                                           << "field request.control.operation is not one of prepare, stage, progress, execute, cleanup";
        QTest::newRow("unknown control member") << "progress" << control("progress", "null", ",\"grantOverride\":true")
                                                << "field request.control has a member the contract does not name";
        QTest::newRow("revision missing") << "execute"
                                          << QByteArray("{\"nodeId\":\"n\",\"control\":{\"operation\":\"execute\",\"restoreId\":\"r1\",\"grant\":\"g\"}}")
                                          << "field request.control.expectedRevision is missing";
        QTest::newRow("revision null on execute") << "execute" << control("execute", "null")
                                                  << "field request.control.expectedRevision is null (execute needs the revision of the node's last answer)";
        QTest::newRow("revision on prepare") << "prepare" << control("prepare", "1", kManifest)
                                             << "field request.control.expectedRevision is not null (a restore being prepared has no revision yet)";
        QTest::newRow("revision fraction") << "cleanup" << control("cleanup", "1.5")
                                           << "field request.control.expectedRevision is not an integer or null";
        QTest::newRow("revision negative") << "cleanup" << control("cleanup", "-1") << "field request.control.expectedRevision is negative";
        QTest::newRow("prepare without manifest") << "prepare" << control("prepare", "null")
                                                  << "field request.control.manifest is missing (prepare states the archive's manifest)";
        QTest::newRow("manifest on execute") << "execute" << control("execute", "2", kManifest)
                                             << "field request.control.manifest is for prepare only";
        QTest::newRow("manifest digest") << "prepare"
                                         << control("prepare", "null", ",\"manifest\":{\"objects\":[{\"key\":\"k\",\"sizeBytes\":1,\"sha256\":\"ABC\"}]}")
                                         << "field request.control.manifest.objects[0].sha256 is not 64 lowercase hex digits";
        QTest::newRow("stage without chunk") << "stage" << control("stage", "2")
                                             << "field request.control.chunk is missing (stage carries one chunk)";
        QTest::newRow("chunk without digest") << "stage"
                                              << control("stage", "2", ",\"chunk\":{\"objectKey\":\"k\",\"offset\":0,\"data\":\"AAAA\"}")
                                              << "field request.control.chunk.chunkSha256 is missing";
        QTest::newRow("chunk not base64") << "stage"
                                          << control("stage", "2", ",\"chunk\":{\"objectKey\":\"k\",\"offset\":0,\"data\":\"AAA\",\"chunkSha256\":\"00\"}")
                                          << "field request.control.chunk.data is not base64 (standard alphabet, padded)";
        QTest::newRow("chunk url alphabet") << "stage"
                                            << control("stage", "2", ",\"chunk\":{\"objectKey\":\"k\",\"offset\":0,\"data\":\"-_-_\",\"chunkSha256\":\"00\"}")
                                            << "field request.control.chunk.data is not base64 (standard alphabet, padded)";
        QTest::newRow("chunk offset negative") << "stage"
                                               << control("stage", "2", ",\"chunk\":{\"objectKey\":\"k\",\"offset\":-1,\"data\":\"\",\"chunkSha256\":\"00\"}")
                                               << "field request.control.chunk.offset is negative";
    }
    void malformedBodiesAreRefusedByField_IR04_IR12()
    {
        QFETCH(QString, operation);
        QFETCH(QByteArray, body);
        QFETCH(QString, reason);
        const auto read = IsolatedRestoreRequest::read(body, operation);
        QVERIFY(!read);
        QCOMPARE(read.refusal().name, QStringLiteral("restore-control-invalid"));
        QCOMPARE(read.refusal().reason, reason);
        QVERIFY(!read.refusal().text().contains(QString::fromLatin1(kGrant)));
    }

    // REVIEW (§14, D-79 (3)): members the contract does not name are refused without their name, at
    // any level: also when the problem found first is a key named twice inside such a member.
    void duplicateInsideUnknownMemberDoesNotNameIt_D79()
    {
        const auto read = IsolatedRestoreRequest::read(control("progress", "null", ",\"canaryMemberName\":{\"x\":1,\"x\":2}"),
                                                       QStringLiteral("progress"));
        QVERIFY(!read);
        QVERIFY2(!read.refusal().text().contains(QStringLiteral("canaryMemberName")), qPrintable(read.refusal().text()));
    }

    // IR-05: 524288 decoded bytes are carried, 524289 refused (judged from the text's length).
    void chunkBoundIsExact_IR05()
    {
        const QByteArray atBound(524288, 'x');
        const auto accepted = IsolatedRestoreRequest::read(stageRequest(atBound, sha256Hex(atBound)), QStringLiteral("stage"));
        QVERIFY2(accepted, qPrintable(refusalText(accepted)));
        QCOMPARE(accepted->judged.chunkBytes, qsizetype(524288));
        const QByteArray over(524289, 'x');
        const auto refused = IsolatedRestoreRequest::read(stageRequest(over, sha256Hex(over)), QStringLiteral("stage"));
        QVERIFY(!refused);
        QCOMPARE(refused.refusal().text(), QStringLiteral("restore-control-invalid: field request.control.chunk.data decodes to 524289 "
                                                          "bytes, above the 524288 a staged chunk may hold"));
    }

    // IR-06: chunkSha256 must be the digest of exactly the decoded bytes.
    void chunkDigestIsVerified_IR06()
    {
        const QByteArray data = QByteArray("archive bytes ") + QByteArray(100, '\x01');
        QVERIFY(IsolatedRestoreRequest::read(stageRequest(data, sha256Hex(data)), QStringLiteral("stage")));
        const auto wrong = IsolatedRestoreRequest::read(stageRequest(data, sha256Hex(data + 'x')), QStringLiteral("stage"));
        QVERIFY(!wrong);
        QCOMPARE(wrong.refusal().reason,
                 QStringLiteral("field request.control.chunk.chunkSha256 is not the SHA-256 of the %1 decoded bytes of data").arg(data.size()));
        const auto upper = IsolatedRestoreRequest::read(stageRequest(data, sha256Hex(data).toUpper()), QStringLiteral("stage"));
        QVERIFY(!upper);
        QCOMPARE(upper.refusal().reason, QStringLiteral("field request.control.chunk.chunkSha256 is not 64 lowercase hex digits"));
    }

    // IR-07: the revision is read, not changed; progress may carry null or a number.
    void revisionPassesAsRead_IR07()
    {
        const auto progressNull = IsolatedRestoreRequest::read(control("progress", "null"), QStringLiteral("progress"));
        QVERIFY(progressNull);
        const auto progressNumber = IsolatedRestoreRequest::read(control("progress", "9007199254740991"), QStringLiteral("progress"));
        QVERIFY(progressNumber);
        QCOMPARE(*progressNumber->judged.expectedRevision, qint64(9007199254740991));
        QVERIFY(progressNumber->control.contains("9007199254740991"));
        const auto prepare = IsolatedRestoreRequest::read(control("prepare", "null", kManifest), QStringLiteral("prepare"));
        QVERIFY2(prepare, qPrintable(refusalText(prepare)));
    }

    void duplicateKeysAreFoundInArraysToo()
    {
        const QSet<QString> nameable{QStringLiteral("a"), QStringLiteral("k"), QStringLiteral("x")};
        const auto finding = JsonDuplicateKeys::find("{\"a\":[{\"k\":1},{\"k\":1,\"k\":2}]}", QStringLiteral("request"), nameable);
        QCOMPARE(finding.verdict, JsonDuplicateKeys::Verdict::Duplicate);
        QCOMPARE(finding.path, QStringLiteral("request.a[1]"));
        // A key that is not plain is never repeated in the path.
        const auto hidden = JsonDuplicateKeys::find("{\"bad\\u0001key\":{\"x\":1,\"x\":1}}", QStringLiteral("request"), nameable);
        // Nor is a key the contract does not name (it may be the sender's value, D-79).
        const auto unnamed = JsonDuplicateKeys::find("{\"secret-name\":{\"x\":1,\"x\":1}}", QStringLiteral("request"), nameable);
        QCOMPARE(unnamed.path, QStringLiteral("request"));
        QCOMPARE(hidden.verdict, JsonDuplicateKeys::Verdict::Duplicate);
        QCOMPARE(hidden.path, QStringLiteral("request"));
        QCOMPARE(JsonDuplicateKeys::find("{\"a\":1,\"b\":{\"a\":1}}", QStringLiteral("r"), nameable).verdict, JsonDuplicateKeys::Verdict::Clean);
    }

    // IR-15, IR-16, IR-17: extras dropped, nodeId added, unreadable or self-stated answers refused.
    void progressIsReadAndRecomposed_IR15()
    {
        const QByteArray body = "{\"restoreId\":\"r1\",\"revision\":4,\"phase\":\"staging\",\"stagedObject\":{\"key\":\"db/archive\",\"nextOffset\":524288,"
                                "\"sizeBytes\":3145728},\"updatedAt\":1764547200000,\"failure\":null,\"receivedObject\":{\"key\":\"db/archive\"},"
                                "\"restoredMappings\":[],\"deletedStaging\":true}";
        const auto progress = IsolatedRestoreProgress::read(body, QStringLiteral("r1"), QString::fromLatin1(kGrant));
        QVERIFY2(progress, qPrintable(progress ? QString() : progress.refusal().text()));
        QCOMPARE(progress->answer(QStringLiteral("node-a")),
                 QByteArray("{\"nodeId\":\"node-a\",\"restoreId\":\"r1\",\"revision\":4,\"phase\":\"staging\",\"stagedObject\":{\"key\":\"db/archive\","
                            "\"nextOffset\":524288,\"sizeBytes\":3145728},\"updatedAt\":1764547200000,\"failure\":null}"));
    }
    void badProgressIsRefused_IR16_IR17_data()
    {
        QTest::addColumn<QByteArray>("body");
        QTest::addColumn<QString>("reason");
        const QByteArray tail = "\"phase\":\"prepared\",\"stagedObject\":null,\"updatedAt\":1,\"failure\":null}";
        QTest::newRow("own nodeId") << QByteArray("{\"nodeId\":\"node-b\",\"restoreId\":\"r1\",\"revision\":1,") + tail
                                    << "the node's answer states a nodeId of its own";
        QTest::newRow("not json") << QByteArray("{\"restoreId\"") << "the node's answer is not a JSON object";
        QTest::newRow("revision missing") << QByteArray("{\"restoreId\":\"r1\",") + tail << "field answer.revision is missing";
        QTest::newRow("revision text") << QByteArray("{\"restoreId\":\"r1\",\"revision\":\"1\",") + tail << "field answer.revision is not an integer";
        QTest::newRow("unknown member") << QByteArray("{\"restoreId\":\"r1\",\"revision\":1,\"mood\":\"ok\",") + tail
                                        << "field answer has a member the contract does not name";
        QTest::newRow("other restore") << QByteArray("{\"restoreId\":\"r2\",\"revision\":1,") + tail
                                       << "field answer.restoreId names another restore than the control's";
        QTest::newRow("phase") << QByteArray("{\"restoreId\":\"r1\",\"revision\":1,\"phase\":\"done\",\"stagedObject\":null,\"updatedAt\":1,\"failure\":null}")
                               << "field answer.phase is not one of prepared, staging, staged, executing, restored, failed, cleaned";
        QTest::newRow("offset past size")
            << QByteArray("{\"restoreId\":\"r1\",\"revision\":1,\"phase\":\"staging\",\"stagedObject\":{\"key\":\"k\",\"nextOffset\":5,\"sizeBytes\":4},\"updatedAt\":1,\"failure\":null}")
            << "field answer.stagedObject.nextOffset is not between 0 and sizeBytes";
        QTest::newRow("grant echoed") << QByteArray("{\"restoreId\":\"r1\",\"revision\":1,\"phase\":\"failed\",\"stagedObject\":null,\"updatedAt\":1,\"failure\":\"bad ")
                + kGrant + QByteArray("\"}")
                                      << "field answer.failure repeats the control's grant";
        QTest::newRow("duplicate") << QByteArray("{\"restoreId\":\"r1\",\"revision\":1,\"revision\":2,") + tail
                                   << "field answer names a key more than once";
    }
    void badProgressIsRefused_IR16_IR17()
    {
        QFETCH(QByteArray, body);
        QFETCH(QString, reason);
        const auto progress = IsolatedRestoreProgress::read(body, QStringLiteral("r1"), QString::fromLatin1(kGrant));
        QVERIFY(!progress);
        QCOMPARE(progress.refusal().name, QStringLiteral("restore-progress-invalid"));
        QCOMPARE(progress.refusal().reason, reason);
    }

    // IR-09..IR-12, IR-18: each client outcome has its restore name; Corestore's reason is bounded.
    void outcomesMapOntoTheRestoreNames_IR09_IR10_IR11_IR12_IR18()
    {
        IsolatedRestoreControl c;
        c.restoreId = QStringLiteral("r1");
        c.grant = QString::fromLatin1(kGrant);
        const auto noToken = [](QByteArrayView) { return false; };
        const auto judge = [&](CorestoreCallOutcome o) {
            const auto r = IsolatedRestoreOutcome::judge(o, QStringLiteral("node-a"), c, noToken);
            return r ? QString::fromUtf8(r.value()) : r.refusal().text();
        };
        CorestoreCallOutcome o;
        o.kind = CorestoreCallOutcome::Kind::EndpointUnknown;
        QCOMPARE(judge(o), QStringLiteral("restore-node-not-carried: node node-a publishes no Corestore endpoint"));
        o.kind = CorestoreCallOutcome::Kind::Credential;
        o.refusal = {QStringLiteral("corestore-credential-missing"), QStringLiteral("no Corestore control credential is held")};
        QCOMPARE(judge(o), QStringLiteral("restore-node-unreachable: node node-a: no Corestore control credential is held "
                                          "(corestore-credential-missing: no Corestore control credential is held); nothing was dialled"));
        o.kind = CorestoreCallOutcome::Kind::Unreachable;
        o.refusal = {QStringLiteral("CORESTORE_UNREACHABLE"),
                     QStringLiteral("POST /c/control/isolated-restore/stage on node node-a: timeout after 10000 ms")};
        QCOMPARE(judge(o), QStringLiteral("restore-node-unreachable: POST /c/control/isolated-restore/stage on node node-a: timed out "
                                          "after 10000 ms; the control may have been applied — read getIsolatedRestoreProgressOnNode"));
        o.refusal.reason = QStringLiteral("POST /c/control/isolated-restore/stage on node node-a: 503");
        QCOMPARE(judge(o), QStringLiteral("restore-node-unreachable: POST /c/control/isolated-restore/stage on node node-a: 503"));
        o.kind = CorestoreCallOutcome::Kind::Refused;
        o.status = 409;
        o.refusal = {QStringLiteral("corestore-refused"),
                     QStringLiteral("POST /c/control/isolated-restore/stage on node node-a answered 409: revision-stale")};
        o.body = "{\"error\":{\"code\":\"revision-stale\",\"reason\":\"expectedRevision is not the current revision 4\"}}";
        QCOMPARE(judge(o), QStringLiteral("restore-node-refused: 409 revision-stale: expectedRevision is not the current revision 4"));
        // Bounded, one line, and never the grant or the token.
        o.body = QByteArray("{\"error\":{\"code\":\"x\",\"reason\":\"") + QByteArray(300, 'a') + QByteArray("\\n\\u001b[2J\"}}");
        QCOMPARE(judge(o), QStringLiteral("restore-node-refused: 409 revision-stale: ") + QString(256, QLatin1Char('a')));
        o.body = QByteArray("{\"error\":{\"code\":\"x\",\"reason\":\"line\\nbreak\"}}").replace("\n", "\\n");
        QCOMPARE(judge(o), QStringLiteral("restore-node-refused: 409 revision-stale: line?break"));
        o.body = QByteArray("{\"error\":{\"code\":\"x\",\"reason\":\"grant ") + kGrant.left(20) + QByteArray(" refused\"}}");
        QCOMPARE(judge(o), QStringLiteral("restore-node-refused: 409 revision-stale: withheld"));
        o.body = "not json";
        QCOMPARE(judge(o), QStringLiteral("restore-node-refused: 409 revision-stale: unreadable"));
        const auto tokenIs = [](QByteArrayView b) { return b == QByteArrayView("the-token"); };
        o.body = "{\"error\":{\"code\":\"x\",\"reason\":\"the-token\"}}";
        QCOMPARE(IsolatedRestoreOutcome::judge(o, QStringLiteral("node-a"), c, tokenIs).refusal().reason,
                 QStringLiteral("409 revision-stale: withheld"));
        o.kind = CorestoreCallOutcome::Kind::Answered;
        o.status = 200;
        o.body = "{\"restoreId\":\"r1\",\"revision\":1,\"phase\":\"prepared\",\"stagedObject\":null,\"updatedAt\":5,\"failure\":null}";
        QCOMPARE(judge(o), QStringLiteral("{\"nodeId\":\"node-a\",\"restoreId\":\"r1\",\"revision\":1,\"phase\":\"prepared\",\"stagedObject\":null,\"updatedAt\":5,\"failure\":null}"));
    }
};

QTEST_GUILESS_MAIN(TstIsolatedRestoreReaders)
#include "tst_isolatedrestorereaders.moc"
