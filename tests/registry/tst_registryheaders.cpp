// tst_registryheaders: the allow-lists and bounds of the headers crossing the pull endpoint (IP-15..19).
#include "service/registry/registryheaders.h"
#include "tests/support/epolltestmain.h"

#include <QTest>

using namespace coreflow;

class TstRegistryHeaders : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void requestKeepsOnlyPullHeaders();
    void requestMergesAcceptLines();
    void requestAlwaysAsksForIdentity();
    void requestBounds();
    void responseKeepsOnlyAllowedHeaders();
    void responseIdentityKeepsLength();
    void responseEncodedDropsLengthKeepsEncoding();
    void responseBounds();
    void requestControlCharactersRefused();
    void responseControlCharactersDroppedOrFatal();
};

void TstRegistryHeaders::requestKeepsOnlyPullHeaders()
{
    const auto r = RegistryHeaders::forwardRequest({{"Host", "evil"}, {"authorization", "Bearer t"}, {"Cookie", "c"},
                                                    {"Connection", "close"}, {"TE", "trailers"}, {"Upgrade", "h2c"},
                                                    {"Range", "bytes=0-1"}, {"If-None-Match", "\"e\""},
                                                    {"Proxy-Authorization", "x"}, {"Content-Length", "0"},
                                                    {"User-Agent", "containerd"}});
    QVERIFY(r.ok);
    QCOMPARE(r.headers, (HeaderPairs{{"Authorization", "Bearer t"}, {"Range", "bytes=0-1"}, {"If-None-Match", "\"e\""},
                                     {"User-Agent", "containerd"}, {"Accept-Encoding", "identity"}}));
}

void TstRegistryHeaders::requestMergesAcceptLines()
{
    const auto r = RegistryHeaders::forwardRequest({{"Accept", "a/b"}, {"accept", "c/d, e/f"}, {"ACCEPT", "g/h"}});
    QVERIFY(r.ok);
    QCOMPARE(r.headers, (HeaderPairs{{"Accept", "a/b, c/d, e/f, g/h"}, {"Accept-Encoding", "identity"}}));
}

void TstRegistryHeaders::requestAlwaysAsksForIdentity()
{
    const auto none = RegistryHeaders::forwardRequest({});
    QCOMPARE(none.headers, (HeaderPairs{{"Accept-Encoding", "identity"}}));
    const auto gzip = RegistryHeaders::forwardRequest({{"Accept-Encoding", "gzip"}});
    QCOMPARE(gzip.headers, (HeaderPairs{{"Accept-Encoding", "identity"}}));
}

void TstRegistryHeaders::requestBounds()
{
    QVERIFY(!RegistryHeaders::forwardRequest({{"Authorization", "a"}, {"Authorization", "b"}}).ok);
    QVERIFY(!RegistryHeaders::forwardRequest({{"Authorization", QByteArray(RegistryHeaders::kMaxValueBytes + 1, 'x')}}).ok);
    QVERIFY(RegistryHeaders::forwardRequest({{"Authorization", QByteArray(RegistryHeaders::kMaxValueBytes, 'x')}}).ok);
    HeaderPairs many;
    for (int i = 0; i <= RegistryHeaders::kMaxLines; ++i)
        many.append(qMakePair(QByteArray("X-Filler"), QByteArray("1")));
    QVERIFY(!RegistryHeaders::forwardRequest(many).ok);
    HeaderPairs accepts;
    for (int i = 0; i < 5; ++i)
        accepts.append(qMakePair(QByteArray("Accept"), QByteArray(4000, 'a')));
    QVERIFY(!RegistryHeaders::forwardRequest(accepts).ok);
    // A dropped header does not count towards the total.
    QVERIFY(RegistryHeaders::forwardRequest({{"Cookie", QByteArray(RegistryHeaders::kMaxTotalBytes + 1, 'c')}}).ok);
}

void TstRegistryHeaders::responseKeepsOnlyAllowedHeaders()
{
    const auto r = RegistryHeaders::returnResponse({{"Content-Type", "application/json"}, {"Set-Cookie", "a=b"},
                                                    {"Connection", "keep-alive"}, {"Transfer-Encoding", "chunked"},
                                                    {"Server", "x"}, {"docker-content-digest", "sha256:1"},
                                                    {"WWW-Authenticate", "Bearer realm=\"r\""},
                                                    {"Www-Authenticate", "Basic realm=\"b\""}, {"Link", "<x>; rel=\"next\""}});
    QVERIFY(r.ok);
    QCOMPARE(r.headers, (HeaderPairs{{"Content-Type", "application/json"}, {"Docker-Content-Digest", "sha256:1"},
                                     {"Link", "<x>; rel=\"next\""}}));
    QCOMPARE(r.wwwAuthenticate, (QList<QByteArray>{"Bearer realm=\"r\"", "Basic realm=\"b\""}));
    QCOMPARE(r.contentLength, -1);
}

void TstRegistryHeaders::responseIdentityKeepsLength()
{
    const auto r = RegistryHeaders::returnResponse({{"Content-Length", "1234"}, {"Content-Encoding", "identity"}});
    QVERIFY(r.ok);
    QCOMPARE(r.contentLength, 1234);
    QVERIFY(!r.encoded);
    QVERIFY(r.headers.contains(qMakePair(QByteArray("Content-Length"), QByteArray("1234"))));
    QVERIFY(!RegistryHeaders::returnResponse({{"Content-Length", "12x"}}).ok);
}

void TstRegistryHeaders::responseEncodedDropsLengthKeepsEncoding()
{
    const auto r = RegistryHeaders::returnResponse({{"Content-Length", "99"}, {"Content-Encoding", "gzip"}});
    QVERIFY(r.ok);
    QVERIFY(r.encoded);
    QCOMPARE(r.contentLength, -1);
    QCOMPARE(r.headers, (HeaderPairs{{"Content-Encoding", "gzip"}}));
}

void TstRegistryHeaders::responseBounds()
{
    QVERIFY(!RegistryHeaders::returnResponse({{"Link", QByteArray(RegistryHeaders::kMaxValueBytes + 1, 'l')}}).ok);
    HeaderPairs many;
    for (int i = 0; i < 5; ++i)
        many.append(qMakePair(QByteArray("WWW-Authenticate"), QByteArray(RegistryHeaders::kMaxValueBytes, 'w')));
    QVERIFY(!RegistryHeaders::returnResponse(many).ok);
}

void TstRegistryHeaders::requestControlCharactersRefused()
{
    for (const QByteArray &bad : {QByteArray("Bearer a\rb"), QByteArray("a\nb"), QByteArray("a\x00" "b", 3),
                                  QByteArray("a\x1f"), QByteArray("a\x7f")}) {
        const auto out = RegistryHeaders::forwardRequest({{"Authorization", bad}});
        QVERIFY(!out.ok);
        QVERIFY(!out.why.contains(bad));
        // Not forwarded headers count too: the request is malformed.
        QVERIFY(!RegistryHeaders::forwardRequest({{"X-Other", bad}}).ok);
    }
    QVERIFY(RegistryHeaders::forwardRequest({{"User-Agent", "a\tb"}}).ok);
    QVERIFY(RegistryHeaders::hasControlCharacter("\r"));
    QVERIFY(!RegistryHeaders::hasControlCharacter("plain \t value"));
}

void TstRegistryHeaders::responseControlCharactersDroppedOrFatal()
{
    const auto dropped = RegistryHeaders::returnResponse(
        {{"Docker-Content-Digest", "sha256:aa\rX: 1"}, {"ETag", "\"e\""}, {"Content-Length", "2"}});
    QVERIFY(dropped.ok);
    QCOMPARE(dropped.droppedForControlCharacters, 1);
    for (const auto &[name, value] : dropped.headers)
        QVERIFY(name != "Docker-Content-Digest");
    const auto fatal = RegistryHeaders::returnResponse({{"WWW-Authenticate", "Bearer realm=\"https://a/t\r\""}});
    QVERIFY(!fatal.ok);
    QCOMPARE(fatal.failureClass, QByteArray("Protocol"));
    const auto tooMany = RegistryHeaders::returnResponse(HeaderPairs(RegistryHeaders::kMaxLines + 1, {"ETag", "x"}));
    QVERIFY(!tooMany.ok);
    QCOMPARE(tooMany.failureClass, QByteArray("HeadersTooLarge"));
}

COREFLOW_EPOLL_TEST_MAIN(TstRegistryHeaders)
#include "tst_registryheaders.moc"
