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

    // Issue 14 defect 8: an unknown key's name is chosen by the peer. A refusal quotes it only when it
    // is a short plain name (docs/contract.md §1 "Exact keys", RefusalQuote); otherwise the field is
    // named by its path, so a reason never carries control characters, markup or a megabyte of key.
    void unknownKeyNamesAreBoundedAndSanitised_data()
    {
        QTest::addColumn<QString>("key");
        QTest::newRow("control characters") << QStringLiteral("a\nb\x1b[31mred");
        QTest::newRow("quote and backslash") << QStringLiteral("a\"b\\c");
        QTest::newRow("very long") << QString(100000, QLatin1Char('k'));
        QTest::newRow("65 characters") << QString(65, QLatin1Char('k'));
        QTest::newRow("non-ascii") << QStringLiteral("sch\u00fcssel");
        QTest::newRow("spaces") << QStringLiteral("two words");
    }
    void unknownKeyNamesAreBoundedAndSanitised()
    {
        QFETCH(QString, key);
        QJsonObject o{{QStringLiteral("s"), QStringLiteral("x")}, {QStringLiteral("i"), 1}, {key, true}};
        ExactKeyReader r(o, QStringLiteral("request.session"));
        r.requiredString("s");
        r.requiredInteger("i");
        const auto refusal = r.finish();
        QVERIFY(refusal.has_value());
        QCOMPARE(refusal->name, QString(refusal::requestInvalid));
        QCOMPARE(refusal->reason, QStringLiteral("field request.session has a member the contract does not name"));
    }
    void aPlainUnknownKeyIsStillNamed()
    {
        const QString key(64, QLatin1Char('k'));
        ExactKeyReader r(QJsonObject{{key, 1}}, QStringLiteral("request"));
        QCOMPARE(r.finish()->reason, QStringLiteral("field request.%1 is unknown").arg(key));
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
