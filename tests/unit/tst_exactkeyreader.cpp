// Exact-key reading: a missing key, an unknown key or a wrong type is a named refusal naming the
// field by path (docs/contract.md §1 "Exact keys"; §2: the validators are exact-key).
#include "shared/contract/exactkeyreader.h"
#include "shared/contract/refusalnames.h"

#include <QJsonDocument>
#include <QTest>

using namespace coreflow::contract;

namespace {
QJsonObject obj(const char *json) { return QJsonDocument::fromJson(json).object(); }
} // namespace

class TstExactKeyReader : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void readsAllKinds()
    {
        ExactKeyReader r(obj(R"({"s":"x","i":42,"b":true,"o":{},"a":[1],"n":null})"), QStringLiteral("request"));
        QCOMPARE(r.requiredString("s"), QStringLiteral("x"));
        QCOMPARE(r.requiredInteger("i"), 42);
        QCOMPARE(r.requiredBool("b"), true);
        QVERIFY(r.requiredObject("o").isEmpty());
        QCOMPARE(r.requiredArray("a").size(), 1);
        QVERIFY(!r.nullableObject("n").has_value());
        QVERIFY(!r.finish().has_value());
    }

    void problems_data()
    {
        QTest::addColumn<QByteArray>("json");
        QTest::addColumn<QString>("expected");
        QTest::newRow("missing") << QByteArray(R"({"s":"x"})") << "field request.session.i is missing";
        QTest::newRow("unknown") << QByteArray(R"({"s":"x","i":1,"extra":true})") << "field request.session.extra is unknown";
        QTest::newRow("wrong type string") << QByteArray(R"({"s":1,"i":1})") << "field request.session.s is not a string";
        QTest::newRow("wrong type integer") << QByteArray(R"({"s":"x","i":"1"})") << "field request.session.i is not an integer";
        QTest::newRow("fraction is not integer") << QByteArray(R"({"s":"x","i":1.5})") << "field request.session.i is not an integer";
    }
    void problems()
    {
        QFETCH(QByteArray, json);
        QFETCH(QString, expected);
        ExactKeyReader r(QJsonDocument::fromJson(json).object(), QStringLiteral("request.session"));
        r.requiredString("s");
        r.requiredInteger("i");
        const auto refusal = r.finish();
        QVERIFY(refusal.has_value());
        QCOMPARE(refusal->name, QString(refusal::requestInvalid));
        QCOMPARE(refusal->reason, expected);
        // The reason never quotes the value it found.
        QVERIFY(!refusal->reason.contains(QStringLiteral("1.5")));
    }

    void customRefusalName()
    {
        ExactKeyReader r(obj(R"({})"), QStringLiteral("run"), QString(refusal::escrowRunInvalid));
        r.requiredString("projection");
        QCOMPARE(r.finish()->name, QString(refusal::escrowRunInvalid));
    }
};

QTEST_GUILESS_MAIN(TstExactKeyReader)
#include "tst_exactkeyreader.moc"
