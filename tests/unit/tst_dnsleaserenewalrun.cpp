// DnsLeaseRenewalRun (validateHoldRuntimeNetworkDnsLeaseRenewalsRequest, scope, verbatim bytes, ACK
// binding) and RunPrecedence. Rules: ES-02, ES-05, ES-06, ES-07, ES-10, ES-13..ES-17, ES-22, ES-30.
#include "shared/contract/envelope.h"
#include "shared/contract/refusalnames.h"
#include "tests/peers/dnsleaserenewalrunbuilder.h"
#include "service/escrow/dnsleaserenewalrun.h"
#include "service/escrow/runprecedence.h"

#include <QJsonDocument>
#include <QTest>

using namespace coreflow;
using namespace coreflow::contract;
using Builder = coreflow::peers::DnsLeaseRenewalRunBuilder;

namespace {
constexpr qint64 now = 1'700'000'000'000;
const SessionBinding binding{QStringLiteral("node-a"), QStringLiteral("cluster-1"), QStringLiteral("s-1"), 0};

QByteArray bytes(const QJsonObject &o) { return QJsonDocument(o).toJson(QJsonDocument::Compact); }

Result<DnsLeaseRenewalRun> readRun(const QJsonObject &request, qint64 at = now) { return DnsLeaseRenewalRun::read(bytes(request), at); }

DnsLeaseRenewalRun run(const QJsonObject &projection, int count, qint64 firstSequence = 1)
{
    auto r = readRun(Builder::holdRequest(binding, projection, Builder::grid(binding, projection, now, count, firstSequence)));
    if (!r)
        qFatal("fixture run invalid: %s", qPrintable(r.refusal().text()));
    return r.value();
}
} // namespace

class TstDnsLeaseRenewalRun : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // A key named twice in any object of the request is escrow-run-invalid: QJsonDocument (last wins)
    // validates one reading and simdjson's find_field_unordered (first wins) would slice another, so a
    // node could be offered a renewal that was never validated for it.
    void duplicateKeysRefused_ES05_data()
    {
        QTest::addColumn<QByteArray>("raw");
        QTest::addColumn<QString>("where");
        const auto p = Builder::projection("proj-1", 1);
        const SessionBinding other{QStringLiteral("node-b"), QStringLiteral("cluster-1"), QStringLiteral("s-2"), 0};
        const QByteArray S = bytes(binding.toJson()), P = bytes(p);
        const QJsonObject r1 = Builder::renewal(binding, p, 1, now, now + 600000);
        const QByteArray R = bytes(r1);
        // obj with one more member before its closing brace
        auto plus = [](const QByteArray &obj, const QByteArray &member) { return obj.left(obj.size() - 1) + ',' + member + '}'; };
        auto request = [](const QByteArray &session, const QByteArray &projection, const QByteArray &renewals) {
            return "{\"session\":" + session + ",\"projection\":" + projection + ",\"renewals\":" + renewals + '}';
        };
        const QByteArray foreignRenewals = '[' + bytes(Builder::renewal(other, p, 1, now, now + 600000)) + ']';
        QTest::newRow("renewals twice (first another node's)")
            << "{\"session\":" + S + ",\"projection\":" + P + ",\"renewals\":" + foreignRenewals + ",\"renewals\":[" + R + "]}"
            << "request";
        QTest::newRow("session twice") << plus(request(S, P, '[' + R + ']'), "\"session\":" + S) << "request";
        QTest::newRow("escaped renewals twice") << plus(request(S, P, '[' + R + ']'), "\"renew\\u0061ls\":[]") << "request";
        QTest::newRow("session.nodeId twice") << request(plus(S, "\"nodeId\":\"node-b\""), P, '[' + R + ']') << "request.session";
        QTest::newRow("projection.generation twice") << request(S, plus(P, "\"generation\":1"), '[' + R + ']') << "request.projection";
        QTest::newRow("renewal signature twice") << request(S, P, '[' + plus(R, "\"signature\":\"other\"") + ']') << "request.renewals[0]";
        QJsonObject second = Builder::renewal(binding, p, 2, now + 300000, now + 900000);
        second.remove("projection");
        const QByteArray nested = plus(bytes(second), "\"projection\":" + plus(P, "\"digest\":\"00\""));
        QTest::newRow("renewals[1].projection.digest twice") << request(S, P, '[' + R + ',' + nested + ']') << "request.renewals[1].projection";
    }
    void duplicateKeysRefused_ES05()
    {
        QFETCH(QByteArray, raw);
        QFETCH(QString, where);
        QVERIFY(QJsonDocument::fromJson(raw).isObject()); // well-formed JSON: only the duplicate is wrong
        auto run = DnsLeaseRenewalRun::read(raw, now);
        QVERIFY(!run);
        QCOMPARE(run.refusal().name, QString(refusal::escrowRunInvalid));
        QVERIFY2(run.refusal().reason.startsWith(QStringLiteral("field %1 names key ").arg(where)), qPrintable(run.refusal().reason));
        QVERIFY(run.refusal().reason.endsWith(QStringLiteral(" more than once")));
    }

    // The same key in different objects is no duplicate; the run is read and sliced as before.
    void sameKeyInDifferentObjectsIsNoDuplicate()
    {
        const auto p = Builder::projection("proj-1", 1);
        auto ok = readRun(Builder::holdRequest(binding, p, Builder::grid(binding, p, now, 3)));
        QVERIFY2(ok.ok(), ok.ok() ? "" : qPrintable(ok.refusal().text()));
        QCOMPARE(ok->size(), 3);
    }

    // ES-06: 32 renewals are held, 33 are escrow-run-invalid. ES-02: the signature is never checked.
    void atMost32Renewals_ES06_ES02()
    {
        const auto p = Builder::projection("proj-1", 1);
        // 32 windows on the grid end at now + 31*10 min + 15 min > 4 h, so use 5-minute steps here.
        QJsonArray renewals;
        for (int k = 0; k < 33; ++k)
            renewals.append(Builder::renewal(binding, p, k + 1, now + k * 300000, now + k * 300000 + 600000));
        QJsonArray first32 = renewals;
        first32.removeLast();
        auto ok = readRun(Builder::holdRequest(binding, p, first32));
        QVERIFY2(ok.ok(), ok.ok() ? "" : qPrintable(ok.refusal().text()));
        QCOMPARE(ok->size(), 32);
        auto tooMany = readRun(Builder::holdRequest(binding, p, renewals));
        QVERIFY(!tooMany);
        QCOMPARE(tooMany.refusal().name, QString(refusal::escrowRunInvalid));
        QVERIFY(tooMany.refusal().reason.contains("33"));
    }

    // ES-07: the last expiresAt may be now + 4 h, not a millisecond more.
    void horizonFourHours_ES07()
    {
        const auto p = Builder::projection("proj-1", 1);
        const qint64 end = now + maximumEscrowHorizonMs;
        auto ok = readRun(Builder::holdRequest(binding, p, {Builder::renewal(binding, p, 1, end - 900000, end)}));
        QVERIFY(ok.ok());
        auto beyond = readRun(Builder::holdRequest(binding, p, {Builder::renewal(binding, p, 1, end - 900000 + 1, end + 1)}));
        QVERIFY(!beyond);
        QCOMPARE(beyond.refusal().name, QString(refusal::escrowRunInvalid));
        QVERIFY(beyond.refusal().reason.contains("horizon"));
    }

    // ES-05: every other validator problem is escrow-run-invalid naming the field, never the value.
    void validatorProblems_ES05()
    {
        const auto p = Builder::projection("proj-1", 1);
        auto check = [&](const QJsonObject &request, const QString &mentions) {
            auto r = readRun(request);
            QVERIFY2(!r, qPrintable(mentions));
            QCOMPARE(r.refusal().name, QString(refusal::escrowRunInvalid));
            QVERIFY2(r.refusal().reason.contains(mentions), qPrintable(r.refusal().reason));
            QVERIFY(!r.refusal().reason.contains(binding.sessionId));
        };
        QJsonObject unknown = Builder::holdRequest(binding, p, {});
        unknown.insert("extra", 1);
        check(unknown, "request.extra is unknown");
        auto renewals = Builder::grid(binding, p, now, 2);
        QJsonObject r0 = renewals[0].toObject();
        r0.remove("signature");
        check(Builder::holdRequest(binding, p, {r0}), "request.renewals[0].signature is missing");
        check(Builder::holdRequest(binding, p, Builder::grid(binding, Builder::projection("proj-1", 2), now, 1)),
              "request.renewals[0].projection is not the request's projection");
        QJsonArray descending{renewals[1], renewals[0]};
        check(Builder::holdRequest(binding, p, descending), "request.renewals[1].sequence does not ascend");
        check(Builder::holdRequest(binding, p, {Builder::renewal(binding, p, 1, now, now + 900001)}), "spans more than 900000 ms");
        check(Builder::holdRequest(binding, p, {Builder::renewal(binding, p, 1, now, now)}), "expiresAt is not after notBefore");
        QJsonObject badDigest = p;
        badDigest["digest"] = "ABC";
        check(Builder::holdRequest(binding, badDigest, {}), "request.projection.digest");
        auto notJson = DnsLeaseRenewalRun::read("[1]", now);
        QVERIFY(!notJson);
        QCOMPARE(notJson.refusal().name, QString(refusal::escrowRunInvalid));
    }

    // ES-10: a renewal signed for another node or session is outside the session's scope.
    void scope_ES10()
    {
        const auto p = Builder::projection("proj-1", 1);
        SessionBinding other = binding;
        other.sessionId = "s-2";
        QJsonArray renewals = Builder::grid(binding, p, now, 2);
        renewals.append(Builder::grid(other, p, now + 1200000, 1, 3).at(0));
        auto r = readRun(Builder::holdRequest(binding, p, renewals));
        QVERIFY(r.ok());
        QVERIFY(r->scopeProblem().has_value());
        QCOMPARE(r->scopeProblem()->name, QString(refusal::escrowRunForeignSession));
        QVERIFY(!run(p, 2).scopeProblem());
    }

    // ES-30, ES-22: the relay keeps and offers Cloudly's exact bytes; the offer is composed from the
    // node's current binding.
    void verbatimBytes_ES30_ES22()
    {
        const QByteArray r0 = R"({ "signature" : "c2lnLTE=",  "sequence":1,"nodeId":"node-a","sessionId":"s-1","projection":{"digest":"0000000000000000000000000000000000000000000000000000000000000000","id":"p","generation":1},"notBefore":1700000000000,"expiresAt":1700000900000 })";
        const QByteArray r1 = R"({"nodeId":"node-a","sessionId":"s-1","projection":{"id":"p","generation":1,"digest":"0000000000000000000000000000000000000000000000000000000000000000"},"sequence":2.0e0,"notBefore":1700000600000,"expiresAt":1700001500000,"signature":"x"})";
        const QByteArray raw = "{\"renewals\": [ " + r0 + " ,\n " + r1 + "\n],\"session\":"
                               + bytes(binding.toJson())
                               + ",\"projection\":{\"id\":\"p\",\"generation\":1,\"digest\":\"0000000000000000000000000000000000000000000000000000000000000000\"}}";
        auto r = DnsLeaseRenewalRun::read(raw, now);
        QVERIFY2(r.ok(), r.ok() ? "" : qPrintable(r.refusal().text()));
        QCOMPARE(r->rawRenewal(0).toByteArray(), r0);
        QCOMPARE(r->rawRenewal(1).toByteArray(), r1);
        SessionBinding current = binding;
        current.relayRegistrationGeneration = 0;
        const QByteArray offer = r->offerRequest(1, current);
        QCOMPARE(offer, "{\"session\":" + Envelope::compact(current.toJson()) + ",\"renewal\":" + r1 + "}");
        QVERIFY(QJsonDocument::fromJson(offer).isObject());
    }

    // ES-22: bindApplyRuntimeNetworkDnsLeaseRenewalResponse: the ACK names the renewal's projection and sequence.
    void acknowledgementBinding_ES22()
    {
        const auto p = Builder::projection("proj-1", 1);
        const auto r = run(p, 2);
        auto ack = [&](const QJsonObject &projection, qint64 sequence, const QString &state) {
            return QJsonObject{{"projection", projection}, {"sequence", double(sequence)}, {"state", state}};
        };
        QCOMPARE(r.bindAcknowledgement(1, ack(p, 2, "admitted")).value(), QStringLiteral("admitted"));
        QCOMPARE(r.bindAcknowledgement(1, ack(p, 2, "replayed")).value(), QStringLiteral("replayed"));
        QVERIFY(!r.bindAcknowledgement(1, ack(p, 1, "admitted")));
        QVERIFY(!r.bindAcknowledgement(1, ack(Builder::projection("proj-1", 2), 2, "admitted")));
        QVERIFY(!r.bindAcknowledgement(1, ack(p, 2, "maybe")));
        QJsonObject extra = ack(p, 2, "admitted");
        extra.insert("acknowledged", true);
        QVERIFY(!r.bindAcknowledgement(1, extra));
        QVERIFY(!r.bindAcknowledgement(1, QJsonObject{{"acknowledged", true}, {"nodeId", "node-a"}}));
    }

    // ES-13..ES-17: precedence against the held run.
    void precedence_ES13_ES14_ES15_ES16_ES17()
    {
        const auto p1 = Builder::projection("proj-1", 1);
        const auto p2 = Builder::projection("proj-1", 2);
        const auto held = run(p1, 4, 10); // sequences 10..13
        QVERIFY(!RunPrecedence::judge(nullptr, held));
        // ES-13: later generation replaces.
        QVERIFY(!RunPrecedence::judge(&held, run(p2, 1)));
        // ES-14: earlier generation is stale.
        const auto heldGen2 = run(p2, 2);
        auto stale = RunPrecedence::judge(&heldGen2, held);
        QVERIFY(stale);
        QCOMPARE(stale->name, QString(refusal::escrowRunStale));
        // ES-15: same projection, lower last sequence is stale; equal or higher replaces.
        auto lower = RunPrecedence::judge(&held, run(p1, 3, 10));
        QVERIFY(lower);
        QCOMPARE(lower->name, QString(refusal::escrowRunStale));
        QCOMPARE(lower->reason, QStringLiteral("run ends at sequence 12, the held run at 13"));
        QVERIFY(!RunPrecedence::judge(&held, run(p1, 4, 10)));
        QVERIFY(!RunPrecedence::judge(&held, run(p1, 2, 13)));
        // ES-16: a run holding nothing for the same or a later projection replaces; one for an earlier is stale.
        QVERIFY(!RunPrecedence::judge(&held, run(p1, 0)));
        QVERIFY(!RunPrecedence::judge(&held, run(p2, 0)));
        QVERIFY(RunPrecedence::judge(&heldGen2, run(p1, 0)));
        const auto empty = run(p1, 0);
        QVERIFY(!RunPrecedence::judge(&empty, run(p1, 1)));
        // ES-17: another projection id, or another digest at the same generation, cannot be ordered.
        auto otherId = RunPrecedence::judge(&held, run(Builder::projection("proj-2", 5), 1));
        QVERIFY(otherId);
        QCOMPARE(otherId->name, QString(refusal::escrowRunUnordered));
        auto otherDigest = RunPrecedence::judge(&held, run(Builder::projection("proj-1", 1, "fork"), 1));
        QVERIFY(otherDigest);
        QCOMPARE(otherDigest->name, QString(refusal::escrowRunUnordered));
        QVERIFY(RunPrecedence::judge(&held, run(Builder::projection("proj-1", 1, "fork"), 0)));
    }
};

QTEST_GUILESS_MAIN(TstDnsLeaseRenewalRun)
#include "tst_dnsleaserenewalrun.moc"
