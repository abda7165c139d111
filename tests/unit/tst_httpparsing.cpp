// tst_httpparsing: the transport's HTTP/1.1 primitives (docs/contract.md §3 listener handshake, §17
// listener HTTP surface and the relay's own HTTP client): HttpMessageParser (the one http_parser
// setup), HttpResponseParser (the HTTP client's answers), the head writers httpRequestHead /
// httpResponseHead, and the refusal shape contract::httpRefusal. Inputs are written out by hand
// here, from HTTP/1.1 itself; nothing is produced by the code under test and read back.
#include "service/transport/httpmessageparser.h"
#include "service/transport/httprequesthead.h"
#include "service/transport/httpresponsehead.h"
#include "service/transport/httpresponseparser.h"
#include "shared/contract/httprefusal.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

using namespace coreflow;
using Event = HttpMessageParser::Event;

namespace {

// Every event of the parser over `bytes`, fed in pieces of `piece` bytes (the rest after each event
// fed again, as a caller does).
struct Seen {
    QList<Event> events;
    QList<QByteArray> urls;
    QList<HttpHeaderPairs> headers;
    QList<qsizetype> headBytes;
};

Seen parseRequests(const QByteArray &bytes, qsizetype piece)
{
    HttpMessageParser parser(HttpMessageParser::Kind::Request);
    Seen seen;
    for (qsizetype at = 0; at < bytes.size(); at += piece) {
        const QByteArray chunk = bytes.mid(at, piece);
        qsizetype offset = 0;
        while (offset < chunk.size()) {
            const HttpMessageParser::Step step = parser.execute(chunk.constData() + offset, chunk.size() - offset);
            offset += step.used;
            if (step.event == Event::None)
                break;
            seen.events.append(step.event);
            if (step.event == Event::HeadersComplete) {
                seen.urls.append(parser.url());
                seen.headers.append(parser.headers().headers());
                seen.headBytes.append(parser.headBytes());
            } else if (step.event == Event::MessageComplete) {
                parser.nextMessage();
            } else {
                return seen;
            }
        }
    }
    return seen;
}

struct Answer : HttpResponseParser::Events {
    QList<int> statuses;
    HttpHeaderPairs headers;
    QByteArray body;
    int completes = 0;
    void head(int status, const HttpHeaderPairs &h) override
    {
        statuses.append(status);
        headers = h;
    }
    void httpBody(const char *data, qsizetype size) override { body.append(data, size); }
    void complete() override { ++completes; }
};

// Feeds `bytes` in pieces of `piece` bytes; returns the bytes consumed.
qsizetype feedAll(HttpResponseParser &parser, const QByteArray &bytes, qsizetype piece)
{
    qsizetype used = 0;
    for (qsizetype at = 0; at < bytes.size(); at += piece) {
        const qsizetype n = qMin(piece, bytes.size() - at);
        const qsizetype consumed = parser.feed(bytes.constData() + at, n);
        used += consumed;
        if (consumed < n)
            break;
    }
    return used;
}

} // namespace

class TstHttpParsing : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void requestInAnySplit_data();
    void requestInAnySplit();
    void pipelinedRequestsOneAfterTheOther();
    void requestWithControlCharacterFails();
    void headerLinesOverTheBoundFail();
    void boundsHoldWhileTheBlockArrives();
    void chunkedAnswerIsDecoded();
    void interimAnswerIsSkipped();
    void answerToHeadHasNoBody();
    void closeDelimitedAnswerEndsAtEof();
    void answerCutShortIsNotComplete();
    void answerFailures();
    void bytesAfterTheAnswerAreNotConsumed();
    void requestHeadBytes();
    void responseHeadBytes();
    void refusalShape();
};

void TstHttpParsing::requestInAnySplit_data()
{
    QTest::addColumn<qsizetype>("piece");
    for (qsizetype piece : {1, 2, 7, 4096})
        QTest::addRow("%lld", qlonglong(piece)) << piece;
}

void TstHttpParsing::requestInAnySplit()
{
    QFETCH(qsizetype, piece);
    const QByteArray request = "\r\nGET /v2/library/x/manifests/1?n=2 HTTP/1.1\r\nHost: relay\r\nAccept:  a/b \r\n\r\n";
    const Seen seen = parseRequests(request, piece);
    QCOMPARE(seen.events, (QList<Event>{Event::HeadersComplete, Event::MessageComplete}));
    QCOMPARE(seen.urls.value(0), QByteArray("/v2/library/x/manifests/1?n=2"));
    QCOMPARE(seen.headers.value(0), (HttpHeaderPairs{{"Host", "relay"}, {"Accept", "a/b"}}));
    QCOMPARE(seen.headBytes.value(0), request.size()); // the leading blank line counts
}

void TstHttpParsing::pipelinedRequestsOneAfterTheOther()
{
    const QByteArray first = "GET /a HTTP/1.1\r\nHost: h\r\n\r\n";
    const QByteArray second = "HEAD /b HTTP/1.1\r\nHost: h\r\nX-One: 1\r\n\r\n";
    const Seen seen = parseRequests(first + second, 4096);
    QCOMPARE(seen.events, (QList<Event>{Event::HeadersComplete, Event::MessageComplete, Event::HeadersComplete,
                                        Event::MessageComplete}));
    QCOMPARE(seen.urls, (QList<QByteArray>{"/a", "/b"}));
    QCOMPARE(seen.headers.value(1), (HttpHeaderPairs{{"Host", "h"}, {"X-One", "1"}}));
    QCOMPARE(seen.headBytes, (QList<qsizetype>{first.size(), second.size()}));
}

void TstHttpParsing::requestWithControlCharacterFails()
{
    const Seen seen = parseRequests("GET / HTTP/1.1\r\nX-A: a\x01z\r\n\r\n", 4096);
    QCOMPARE(seen.events, (QList<Event>{Event::Failed}));
}

void TstHttpParsing::headerLinesOverTheBoundFail()
{
    HttpMessageParser parser(HttpMessageParser::Kind::Request);
    parser.setMaxHeaderLines(2);
    const QByteArray two = "GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\n\r\n";
    QCOMPARE(parser.execute(two.constData(), two.size()).event, Event::HeadersComplete);

    HttpMessageParser bounded(HttpMessageParser::Kind::Request);
    bounded.setMaxHeaderLines(2);
    const QByteArray three = "GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n";
    QCOMPARE(bounded.execute(three.constData(), three.size()).event, Event::Failed);
    QVERIFY(bounded.headers().overflowed());
}

// D-60: the line and byte bounds refuse the piece that crosses them while the block is still
// arriving (no blank line is ever sent); what is held stays within the bound.
void TstHttpParsing::boundsHoldWhileTheBlockArrives()
{
    HttpMessageParser lines(HttpMessageParser::Kind::Request);
    lines.setMaxHeaderLines(32);
    QByteArray head = "GET /v2/ HTTP/1.1\r\n";
    for (int i = 0; i < 1000; ++i)
        head += "a:\r\n";
    const HttpMessageParser::Step step = lines.execute(head.constData(), head.size());
    QCOMPARE(step.event, Event::Failed);
    QCOMPARE(lines.overflow(), HttpHeaderCollector::Overflow::Lines);
    QCOMPARE(lines.headers().headers().size(), 32);
    QVERIFY(step.used < head.size()); // stopped at the 33rd line, the rest unread

    HttpMessageParser bytes(HttpMessageParser::Kind::Request);
    bytes.setMaxHeldBytes(1000);
    const QByteArray value(300, 'v');
    QByteArray big = "GET /v2/ HTTP/1.1\r\n";
    for (int i = 0; i < 10; ++i)
        big += "X-" + QByteArray::number(i) + ": " + value + "\r\n";
    for (qsizetype piece : {qsizetype(7), big.size()}) {
        bytes.reset();
        qsizetype at = 0;
        HttpMessageParser::Event event = Event::None;
        while (at < big.size() && event != Event::Failed) {
            const auto s = bytes.execute(big.constData() + at, qMin(piece, big.size() - at));
            at += s.used;
            event = s.event;
            QVERIFY(bytes.heldBytes() <= 1000);
        }
        QCOMPARE(event, Event::Failed);
        QCOMPARE(bytes.overflow(), HttpHeaderCollector::Overflow::Bytes);
    }
    // A URL alone over the bound is refused as bytes too.
    const QByteArray longUrl = "GET /" + QByteArray(2000, 'u') + " HTTP/1.1\r\n";
    bytes.reset();
    QCOMPARE(bytes.execute(longUrl.constData(), longUrl.size()).event, Event::Failed);
    QCOMPARE(bytes.overflow(), HttpHeaderCollector::Overflow::Bytes);
    QVERIFY(bytes.heldBytes() <= 1000);
}

void TstHttpParsing::chunkedAnswerIsDecoded()
{
    const QByteArray answer = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nETag:  \"x\"\r\n\r\n"
                              "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n";
    for (qsizetype piece : {1, 3, 4096}) {
        Answer events;
        HttpResponseParser parser(events, 128);
        parser.reset(false);
        QCOMPARE(feedAll(parser, answer, piece), answer.size());
        QCOMPARE(events.statuses, QList<int>{200});
        QCOMPARE(events.headers, (HttpHeaderPairs{{"Transfer-Encoding", "chunked"}, {"ETag", "\"x\""}}));
        QCOMPARE(events.body, QByteArray("hello world"));
        QCOMPARE(events.completes, 1);
        QVERIFY(parser.isComplete());
        QVERIFY(parser.keepAlive());
    }
}

void TstHttpParsing::interimAnswerIsSkipped()
{
    Answer events;
    HttpResponseParser parser(events, 128);
    const QByteArray answer = "HTTP/1.1 100 Continue\r\nX-Interim: 1\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
    QCOMPARE(feedAll(parser, answer, 4096), answer.size());
    QCOMPARE(events.statuses, QList<int>{200});
    QCOMPARE(events.headers, (HttpHeaderPairs{{"Content-Length", "2"}}));
    QCOMPARE(events.body, QByteArray("ok"));
    QCOMPARE(events.completes, 1);
}

void TstHttpParsing::answerToHeadHasNoBody()
{
    Answer events;
    HttpResponseParser parser(events, 128);
    parser.reset(true);
    const QByteArray answer = "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n";
    QCOMPARE(feedAll(parser, answer, 4096), answer.size());
    QVERIFY(parser.isComplete());
    QVERIFY(events.body.isEmpty());
    QVERIFY(parser.keepAlive());
    // The next answer on the connection, after reset, has its body again.
    parser.reset(false);
    const QByteArray next = "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc";
    QCOMPARE(feedAll(parser, next, 4096), next.size());
    QCOMPARE(events.body, QByteArray("abc"));
    QCOMPARE(events.completes, 2);
}

void TstHttpParsing::closeDelimitedAnswerEndsAtEof()
{
    Answer events;
    HttpResponseParser parser(events, 128);
    feedAll(parser, "HTTP/1.1 200 OK\r\n\r\nabc", 4096);
    QVERIFY(!parser.isComplete());
    QVERIFY(parser.feedEof());
    QCOMPARE(events.body, QByteArray("abc"));
    QCOMPARE(events.completes, 1);
    QVERIFY(!parser.keepAlive());
}

void TstHttpParsing::answerCutShortIsNotComplete()
{
    Answer events;
    HttpResponseParser parser(events, 128);
    feedAll(parser, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", 4096);
    QVERIFY(!parser.feedEof());
    QVERIFY(!parser.isComplete());
    QCOMPARE(events.completes, 0);
}

void TstHttpParsing::answerFailures()
{
    {
        Answer events;
        HttpResponseParser parser(events, 2);
        feedAll(parser, "HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n", 4096);
        QVERIFY(parser.failed());
        QCOMPARE(parser.failure(), HttpClientFailure::HeadersTooLarge);
        QVERIFY(events.statuses.isEmpty());
    }
    {
        Answer events;
        HttpResponseParser parser(events, 128);
        feedAll(parser, "HTTP/1.1 200 OK\r\nX: " + QByteArray(90 * 1024, 'a') + "\r\n\r\n", 4096);
        QCOMPARE(parser.failure(), HttpClientFailure::HeadersTooLarge); // http_parser's 80 KiB
    }
    {
        Answer events;
        HttpResponseParser parser(events, 128);
        feedAll(parser, "HTTP/1.1 200 OK\r\nX: a\x01\r\n\r\n", 4096);
        QVERIFY(parser.failed());
        QCOMPARE(parser.failure(), HttpClientFailure::Protocol);
    }
    {
        Answer events;
        HttpResponseParser parser(events, 128);
        feedAll(parser, "NOT HTTP\r\n\r\n", 4096);
        QCOMPARE(parser.failure(), HttpClientFailure::Protocol);
    }
}

void TstHttpParsing::bytesAfterTheAnswerAreNotConsumed()
{
    Answer events;
    HttpResponseParser parser(events, 128);
    const QByteArray answer = "HTTP/1.1 204 No Content\r\n\r\n";
    const QByteArray bytes = answer + "XYZ";
    QCOMPARE(parser.feed(bytes.constData(), bytes.size()), answer.size());
    QVERIFY(parser.isComplete());
    QCOMPARE(parser.feed("more", 4), qsizetype(0));
}

void TstHttpParsing::requestHeadBytes()
{
    const HttpClientRequest request{"GET", "/v2/x?y=1", {{"Accept", "a"}, {"User-Agent", "u"}}};
    QCOMPARE(httpRequestHead(request, "registry:5000", "keep-alive"),
             QByteArray("GET /v2/x?y=1 HTTP/1.1\r\nHost: registry:5000\r\nAccept: a\r\nUser-Agent: u\r\n"
                        "Connection: keep-alive\r\n\r\n"));
    QCOMPARE(httpRequestHead({"HEAD", "/", {}}, "h"), QByteArray("HEAD / HTTP/1.1\r\nHost: h\r\n\r\n"));
    // A bearer (contract §19.4): the plain writer never writes it; the guarded one writes its line
    // after the headers, in guarded memory.
    HttpClientRequest withBearer{"GET", "/v1/x", {{"Accept", "a"}}, Secret(QByteArrayView("tok-canary"))};
    QVERIFY(!httpRequestHead(withBearer, "h").contains("tok-canary"));
    const Secret head = httpRequestHeadWithBearer(withBearer, "h", "keep-alive");
    QVERIFY(head.isGuarded());
    QCOMPARE(head.reveal(), QByteArrayView("GET /v1/x HTTP/1.1\r\nHost: h\r\nAccept: a\r\nAuthorization: Bearer tok-canary\r\n"
                                           "Connection: keep-alive\r\n\r\n"));
    // A request body (the Corestore POSTs, contract §15): Content-Length and the bytes after the head,
    // in the same buffer; guarded with the head when a bearer is present. A POST without a body
    // still states its length.
    HttpClientRequest post{"POST", "/v1/p", {{"Content-Type", "application/json"}}, Secret(QByteArrayView("tok-canary")),
                           QByteArray("{\"a\":1}")};
    QCOMPARE(httpRequestHeadWithBearer(post, "h", "keep-alive").reveal(),
             QByteArrayView("POST /v1/p HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\nContent-Length: 7\r\n"
                            "Authorization: Bearer tok-canary\r\nConnection: keep-alive\r\n\r\n{\"a\":1}"));
    QCOMPARE(httpRequestHead({"POST", "/p", {}}, "h"), QByteArray("POST /p HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n"));
}

void TstHttpParsing::responseHeadBytes()
{
    QCOMPARE(httpResponseHead(431, {{"Content-Length", "0"}}),
             QByteArray("HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Length: 0\r\n\r\n"));
    QCOMPARE(httpStatusLine(299), QByteArray("HTTP/1.1 299 Unknown\r\n"));
}

void TstHttpParsing::refusalShape()
{
    const contract::HttpRefusal notServed =
        contract::httpRefusal(404, QLatin1StringView("path-not-served"), "only /v2/", {}, {{"Allow", "GET"}});
    QCOMPARE(notServed.status, 404);
    QCOMPARE(notServed.headers, (QList<QPair<QByteArray, QByteArray>>{
                                    {"Content-Type", "application/json"},
                                    {"Content-Length", QByteArray::number(notServed.body.size())},
                                    {"Docker-Distribution-API-Version", "registry/2.0"},
                                    {"Allow", "GET"}}));
    const QJsonObject error = QJsonDocument::fromJson(notServed.body).object()["errors"].toArray().at(0).toObject();
    QCOMPARE(error["code"].toString(), QStringLiteral("UNSUPPORTED"));
    QCOMPARE(error["message"].toString(), QStringLiteral("path-not-served: only /v2/"));
    QCOMPARE(error["detail"].toObject()["name"].toString(), QStringLiteral("path-not-served"));

    const contract::HttpRefusal unreachable =
        contract::httpRefusal(502, QLatin1StringView("registry-unreachable"), "down", "Timeout");
    const QJsonObject e502 = QJsonDocument::fromJson(unreachable.body).object()["errors"].toArray().at(0).toObject();
    QCOMPARE(e502["code"].toString(), QStringLiteral("UNAVAILABLE"));
    QCOMPARE(e502["detail"].toObject()["class"].toString(), QStringLiteral("Timeout"));
}

QTEST_GUILESS_MAIN(TstHttpParsing)
#include "tst_httpparsing.moc"
