// The shared offer judgements both hops use (docs/contract.md §2.2, §2.3) and the contract id rule
// (§1 "Strings"): the verdicts written out from the contract's text, release 33.1.0.
#include "shared/contract/ids.h"
#include "shared/contract/offers.h"
#include "shared/contract/refusalnames.h"

#include <QJsonDocument>
#include <QTest>

using namespace coreflow::contract;

namespace {
QJsonObject obj(const char *json) { return QJsonDocument::fromJson(json).object(); }
} // namespace

class TstOfferJudgement : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // §2.3: Cloudly's answer names cloudlyClient of this build's major: served.
    void answeredOfferOfThisMajorIsServed()
    {
        const QJsonObject response = obj(R"({"offer":{"sessionKind":"cloudlyClient","release":"33.0.7"}})");
        const AnsweredOffer judged = judgeAnsweredOffer(&response, response.value("offer").toObject(), std::nullopt);
        QCOMPARE(int(judged.verdict), int(AnsweredOffer::Verdict::Served));
        QVERIFY(judged.offer);
        QCOMPARE(judged.offer->describe(), QStringLiteral("cloudlyClient@33.0.7"));
        QVERIFY(!judged.problem);
    }

    // §2.3: a readable offer of another major or another kind is a disagreement, not a contract break.
    void answeredOfferOfAnotherMajorOrKindIsNotServable()
    {
        for (const char *json : {R"({"offer":{"sessionKind":"cloudlyClient","release":"34.0.0"}})",
                                 R"({"offer":{"sessionKind":"palletRuntime","release":"33.1.0"}})"}) {
            const QJsonObject response = obj(json);
            const AnsweredOffer judged = judgeAnsweredOffer(&response, response.value("offer").toObject(), std::nullopt);
            QCOMPARE(int(judged.verdict), int(AnsweredOffer::Verdict::NotServable));
            QVERIFY(judged.offer);
            QVERIFY(!judged.problem);
        }
    }

    // An offer that does not read exactly makes the answer not the contract's, with the reader's reason.
    void unreadableAnsweredOfferIsNotContract()
    {
        const QJsonObject response = obj(R"({"offer":{"sessionKind":"cloudlyClient","release":"latest"}})");
        const AnsweredOffer judged = judgeAnsweredOffer(&response, response.value("offer").toObject(), std::nullopt);
        QCOMPARE(int(judged.verdict), int(AnsweredOffer::Verdict::NotContract));
        QVERIFY(!judged.offer);
        QVERIFY(judged.problem);
        QVERIFY(judged.problem->reason.contains("response.offer.release"));
        QVERIFY(!judged.namesServableOffer);
    }

    // The caller's problem (another member of the answer) wins, even over a servable offer, which then
    // only ends a standing disagreement (namesServableOffer).
    void callersProblemWinsAndAServableOfferIsStillNamed()
    {
        const QJsonObject response = obj(R"({"offer":{"sessionKind":"cloudlyClient","release":"33.1.0"},"extra":1})");
        const Refusal problem{QString(refusal::requestInvalid), QStringLiteral("field response.extra is unknown")};
        const AnsweredOffer judged = judgeAnsweredOffer(&response, response.value("offer").toObject(), problem);
        QCOMPARE(int(judged.verdict), int(AnsweredOffer::Verdict::NotContract));
        QCOMPARE(judged.problem->reason, QStringLiteral("field response.extra is unknown"));
        QVERIFY(judged.namesServableOffer);
        QVERIFY(!judged.offer);
    }

    // No readable response member at all: not the contract's, and nothing named.
    void noResponseIsNotContract()
    {
        const Refusal problem{QString(refusal::requestInvalid), QStringLiteral("the answer has no response object")};
        const AnsweredOffer judged = judgeAnsweredOffer(nullptr, QJsonObject(), problem);
        QCOMPARE(int(judged.verdict), int(AnsweredOffer::Verdict::NotContract));
        QVERIFY(!judged.namesServableOffer);
    }

    // §2.2: the refused peer's offer as "kind@release", or nothing when it sent none readable.
    void peerOfferInRefusalNamesTheOfferSent()
    {
        auto refused = judgePeerOffer(obj(R"({"sessionKind":"palletRuntime","release":"32.9.0"})"), sessionKind::palletRuntime);
        QVERIFY(refused);
        QCOMPARE(peerOfferInRefusal(*refused), QStringLiteral("palletRuntime@32.9.0"));
        auto none = judgePeerOffer(QJsonValue(QJsonValue::Undefined), sessionKind::clusterIngress);
        QVERIFY(none);
        QCOMPARE(peerOfferInRefusal(*none), QString());
    }

    // §1: an id is non-empty, at most 256 characters, without control characters.
    void idRule()
    {
        QVERIFY(isId(QStringLiteral("node-a")));
        QVERIFY(isId(QString(256, QLatin1Char('x'))));
        QVERIFY(!isId(QString()));
        QVERIFY(!isId(QString(257, QLatin1Char('x'))));
        QVERIFY(!isId(QStringLiteral("node\na")));
        QVERIFY(!isId(QStringLiteral("node") + QChar(0x7f)));
    }
};

QTEST_GUILESS_MAIN(TstOfferJudgement)
#include "tst_offerjudgement.moc"
