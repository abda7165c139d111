// Envelope decoding and building (../shared/reference/envelope.md; rules CL-06, FW-20/21 context).
#include "shared/contract/envelope.h"
#include "shared/contract/refusalnames.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

using namespace coreflow::contract;

class TstEnvelope : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // CL-06: the request member is kept as the exact bytes that arrived (key order, spacing, escapes).
    void requestBytesAreKeptVerbatim_CL06()
    {
        const QByteArray body = R"({ "zeta" : 1,"alpha":[1, 2.50, "\u00e9"], "nested": {"b":true, "a":null} })";
        const QByteArray frame = R"({"method":"reportRuntimeAssignmentObservation","request":)" + body
                                 + R"(,"correlation":{"id":"n-1","phase":"request"},"localData":{"x":1}})";
        auto parsed = Envelope::parse(frame);
        QVERIFY(parsed.ok());
        QCOMPARE(parsed->method, QStringLiteral("reportRuntimeAssignmentObservation"));
        QCOMPARE(parsed->correlationId, QStringLiteral("n-1"));
        QCOMPARE(parsed->phase, Phase::Request);
        QCOMPARE(parsed->request.toByteArray(), body);
        // Rebuilt with another correlation id: the body bytes are identical, localData is dropped.
        const QByteArray rebuilt = Envelope::request(parsed->method, QStringLiteral("c7"), parsed->request);
        QVERIFY(rebuilt.contains(body));
        QVERIFY(!rebuilt.contains("localData"));
        auto again = Envelope::parse(rebuilt);
        QVERIFY(again.ok());
        QCOMPARE(again->request.toByteArray(), body);
        QCOMPARE(again->correlationId, QStringLiteral("c7"));
    }

    void responseAndErrorMembers()
    {
        const QByteArray frame = R"({"method":"m","request":{},"response":null,"error":{"text":"x-y: because","data":{"name":"x-y"}},"retry":{"waitForMs":5000,"reason":"r"},"correlation":{"id":"1","phase":"response"}})";
        auto parsed = Envelope::parse(frame);
        QVERIFY(parsed.ok());
        QCOMPARE(parsed->phase, Phase::Response);
        QVERIFY(parsed->response.isEmpty());
        QVERIFY(parsed->hasError());
        QCOMPARE(parsed->errorRefusal().name, QStringLiteral("x-y"));
        QCOMPARE(parsed->errorRefusal().reason, QStringLiteral("because"));
        QCOMPARE(parsed->retry.toByteArray(), QByteArray(R"({"waitForMs":5000,"reason":"r"})"));
    }

    void refusalFrameShape()
    {
        const Refusal r{QStringLiteral("node-not-connected"), QStringLiteral("node n1 is not connected to this relay")};
        const QByteArray frame = Envelope::refusal(u"applyRuntimeAssignment", u"c\"1", QByteArrayView(R"({"a":1})"), r);
        const QJsonObject o = QJsonDocument::fromJson(frame).object();
        QCOMPARE(o.value("error").toObject().value("text").toString(), r.text());
        QCOMPARE(o.value("error").toObject().value("data").toObject().value("name").toString(), r.name);
        QCOMPARE(o.value("correlation").toObject().value("id").toString(), QStringLiteral("c\"1"));
        QCOMPARE(o.value("correlation").toObject().value("phase").toString(), QStringLiteral("response"));
        QVERIFY(o.value("response").isNull());
    }

    void malformedFramesAreNamedRefusals_data()
    {
        QTest::addColumn<QByteArray>("frame");
        QTest::addColumn<QString>("reasonPart");
        QTest::newRow("not json") << QByteArray("{nope") << "not JSON";
        QTest::newRow("array") << QByteArray("[1]") << "not a JSON object";
        QTest::newRow("no method") << QByteArray(R"({"request":{},"correlation":{"id":"1","phase":"request"}})") << "method is missing";
        QTest::newRow("method type") << QByteArray(R"({"method":3,"request":{},"correlation":{"id":"1","phase":"request"}})") << "method is not a string";
        QTest::newRow("no correlation") << QByteArray(R"({"method":"m","request":{}})") << "correlation is missing";
        QTest::newRow("bad phase") << QByteArray(R"({"method":"m","request":{},"correlation":{"id":"1","phase":"x"}})") << "phase";
        QTest::newRow("request not object") << QByteArray(R"({"method":"m","request":[],"correlation":{"id":"1","phase":"request"}})") << "request is not an object";
        QTest::newRow("trailing") << QByteArray(R"({"method":"m","request":{},"correlation":{"id":"1","phase":"request"}} x)") << "JSON";
        QTest::newRow("bad scalar inside body") << QByteArray(R"({"method":"m","request":{"a":tru},"correlation":{"id":"1","phase":"request"}})") << "not JSON";
    }
    void malformedFramesAreNamedRefusals()
    {
        QFETCH(QByteArray, frame);
        QFETCH(QString, reasonPart);
        auto parsed = Envelope::parse(frame);
        QVERIFY(!parsed.ok());
        QCOMPARE(parsed.refusal().name, QString(refusal::requestInvalid));
        QVERIFY2(parsed.refusal().reason.contains(reasonPart), qPrintable(parsed.refusal().reason));
    }

    // A key written twice counts by its last occurrence, and keys compare after JSON unescaping, so the
    // relay reads the same member a JSON library (Qt's, a peer's) reads (docs/contract.md §3).
    void duplicateAndEscapedTopLevelKeysCountLikeAJsonReader()
    {
        const QByteArray twice = R"({"method":"first","method":"second","request":{"x":1},"request":{"y":2},)"
                                 R"("correlation":{"id":"1","phase":"request"},"correlation":{"id":"2","phase":"response"}})";
        auto parsed = Envelope::parse(twice);
        QVERIFY(parsed.ok());
        QCOMPARE(parsed->method, QStringLiteral("second"));
        QCOMPARE(parsed->request.toByteArray(), QByteArray(R"({"y":2})"));
        QCOMPARE(parsed->correlationId, QStringLiteral("2"));
        QCOMPARE(parsed->phase, Phase::Response);
        const QJsonObject qt = QJsonDocument::fromJson(twice).object();
        QCOMPARE(qt.value("method").toString(), parsed->method);

        const QByteArray escaped = R"({"method":"m2","request":{"a":1},"correlation":{"id":"7","phase":"request"}})";
        auto e = Envelope::parse(escaped);
        QVERIFY2(e.ok(), e.ok() ? "" : qPrintable(e.refusal().text()));
        QCOMPARE(e->method, QStringLiteral("m2"));
        QCOMPARE(e->correlationId, QStringLiteral("7"));
        QCOMPARE(e->request.toByteArray(), QByteArray(R"({"a":1})"));
    }

    // Frame::requestMember, the fast path the forwarding lane reads request.session with before it
    // binds a node's call to a session (sessionforwarder.cpp): it must find exactly the member
    // requestObject() finds, bytes as sent, never a nested or decoy one.
    void requestMemberFindsWhatAJsonReaderFinds_data()
    {
        QTest::addColumn<QByteArray>("body");
        QTest::addColumn<QByteArray>("expected"); // empty: absent
        QTest::newRow("present") << QByteArray(R"({"a":1,"session":{"id":"s1","n":2},"b":[3]})") << QByteArray(R"({"id":"s1","n":2})");
        QTest::newRow("spacing kept") << QByteArray(R"({ "session" : {"id" : "s1"} , "b":2})") << QByteArray(R"({"id" : "s1"})");
        QTest::newRow("last of two") << QByteArray(R"({"session":{"id":"first"},"x":0,"session":{"id":"last"}})")
                                     << QByteArray(R"({"id":"last"})");
        QTest::newRow("escaped key") << QByteArray(R"({"session":{"id":"esc"}})") << QByteArray(R"({"id":"esc"})");
        QTest::newRow("escaped decoy after") << QByteArray(R"({"session":{"id":"plain"},"session":{"id":"decoy"}})")
                                             << QByteArray(R"({"id":"decoy"})");
        QTest::newRow("string value") << QByteArray(R"({"session":"s-1"})") << QByteArray(R"("s-1")");
        QTest::newRow("nested only") << QByteArray(R"({"other":{"session":{"id":"deep"}}})") << QByteArray();
        QTest::newRow("absent") << QByteArray(R"({"sessions":{"id":"near"}})") << QByteArray();
        QTest::newRow("key in a string") << QByteArray("{\"note\":\"\\\"session\\\":{}\"}") << QByteArray();
    }
    void requestMemberFindsWhatAJsonReaderFinds()
    {
        QFETCH(QByteArray, body);
        QFETCH(QByteArray, expected);
        auto parsed = Envelope::parse(R"({"method":"m","request":)" + body + R"(,"correlation":{"id":"1","phase":"request"}})");
        QVERIFY(parsed.ok());
        bool readable = false;
        const auto member = parsed->requestMember("session", &readable);
        QVERIFY(readable);
        QCOMPARE(member.has_value(), !expected.isEmpty());
        if (member)
            QCOMPARE(member->toByteArray(), expected);
        // The same answer as the full reader.
        const QJsonObject whole = QJsonDocument::fromJson(body).object();
        QCOMPARE(whole.contains("session"), member.has_value());
        if (member)
            QCOMPARE(QJsonDocument::fromJson("[" + member->toByteArray() + "]").array().at(0), whole.value("session"));
    }

    // A Frame not made by parse() (or a request defaulted to {}) is not readable by the fast path: the
    // caller must fall back to requestObject().
    void requestMemberSaysWhenItCannotRead()
    {
        Frame built;
        built.raw = R"({"session":{"id":"x"}})";
        built.request = QByteArrayView("{\"session\":{}}");
        bool readable = true;
        QVERIFY(!built.requestMember("session", &readable));
        QVERIFY(!readable);
        auto defaulted = Envelope::parse(R"({"method":"m","correlation":{"id":"1","phase":"request"}})");
        QVERIFY(defaulted.ok());
        QCOMPARE(defaulted->request.toByteArray(), QByteArray("{}"));
        readable = true;
        QVERIFY(!defaulted->requestMember("session", &readable));
        QVERIFY(!readable);
    }

    void frameTooLarge()
    {
        QByteArray big(Envelope::maxFrameBytes + 1, ' ');
        auto parsed = Envelope::parse(big);
        QVERIFY(!parsed.ok());
        QCOMPARE(parsed.refusal().name, QString(refusal::frameTooLarge));
    }

    // Issue 14 defect 5 (docs/contract.md §3 "Parser memory"): a frame near the 16 MiB bound grows the
    // JSON parsers to many times its size; once it is decoded the parsers give that memory back and
    // keep capacity only for documents up to Envelope::retainedParserCapacityBytes each.
    void parserCapacityIsReleasedAfterAnOversizedFrame()
    {
        const QByteArray padding(12 * 1024 * 1024, 'p');
        const QByteArray big = "{\"method\":\"registerPalletRuntimeSession\",\"request\":{\"session\":{\"nodeId\":\"n1\"},\"pad\":\""
                               + padding + "\"},\"correlation\":{\"id\":\"c1\",\"phase\":\"request\"}}";
        {
            auto parsed = Envelope::parse(big);
            QVERIFY(parsed.ok());
            bool readable = false;
            const auto session = parsed->requestMember("session", &readable);
            QVERIFY(readable);
            QVERIFY(session.has_value());
            QCOMPARE(session->toByteArray(), QByteArray("{\"nodeId\":\"n1\"}"));
        }
        QVERIFY2(Envelope::heldParserCapacityBytes() <= 3 * Envelope::retainedParserCapacityBytes,
                 qPrintable(QString::number(Envelope::heldParserCapacityBytes())));
        // A small frame afterwards parses as before, and its capacity is kept.
        const QByteArray small = "{\"method\":\"m\",\"request\":{\"session\":{\"a\":1}},\"correlation\":{\"id\":\"c2\",\"phase\":\"request\"}}";
        auto parsed = Envelope::parse(small);
        QVERIFY(parsed.ok());
        bool readable = false;
        QVERIFY(parsed->requestMember("session", &readable).has_value());
        QVERIFY(readable);
        QVERIFY(Envelope::heldParserCapacityBytes() > 0);
        QVERIFY(Envelope::heldParserCapacityBytes() <= 3 * Envelope::retainedParserCapacityBytes);
    }
};

QTEST_GUILESS_MAIN(TstEnvelope)
#include "tst_envelope.moc"
