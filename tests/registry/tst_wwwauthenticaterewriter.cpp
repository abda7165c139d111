// tst_wwwauthenticaterewriter: the realm rewrite as a pure function (rules IP-08..IP-12).
#include "service/registry/wwwauthenticaterewriter.h"
#include "tests/support/epolltestmain.h"

#include <QTest>

using namespace coreflow;

namespace {
const QUrl kCloudly(QStringLiteral("https://cloudly.example"));
const QUrl kRelay(QStringLiteral("https://relay.cluster.internal:8443"));
} // namespace

class TstWwwAuthenticateRewriter : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void rewritesOnlyTheRealmOrigin_data();
    void rewritesOnlyTheRealmOrigin();
    void leavesThirdPartyRealmsAndReportsTheirOrigin();
    void reportsEachForeignOriginOnce();
    void splitsChallenges_data();
    void splitsChallenges();
    void handlesSeveralValues();
    void originStrings();
    void keepsNonUrlAndEscapedRealms();
    void reportsRewrittenPaths();
};

void TstWwwAuthenticateRewriter::rewritesOnlyTheRealmOrigin_data()
{
    QTest::addColumn<QByteArray>("in");
    QTest::addColumn<QByteArray>("out");
    QTest::newRow("bearer with service and scope")
        << QByteArray("Bearer realm=\"https://cloudly.example/token?x=1\",service=\"cloudly.example\",scope=\"repository:a/b:pull\"")
        << QByteArray("Bearer realm=\"https://relay.cluster.internal:8443/token?x=1\",service=\"cloudly.example\",scope=\"repository:a/b:pull\"");
    QTest::newRow("explicit default port, uppercase host")
        << QByteArray("Bearer realm=\"https://CLOUDLY.example:443/v2/token\",service=\"https://cloudly.example\"")
        << QByteArray("Bearer realm=\"https://relay.cluster.internal:8443/v2/token\",service=\"https://cloudly.example\"");
    QTest::newRow("spacing and param order kept")
        << QByteArray("Bearer   service=\"svc\" ,  realm = \"https://cloudly.example/t#frag\" ,scope=\"a\"")
        << QByteArray("Bearer   service=\"svc\" ,  realm = \"https://relay.cluster.internal:8443/t#frag\" ,scope=\"a\"");
    QTest::newRow("unquoted realm")
        << QByteArray("Bearer realm=https://cloudly.example/token,service=x")
        << QByteArray("Bearer realm=https://relay.cluster.internal:8443/token,service=x");
    QTest::newRow("realm with no path")
        << QByteArray("Bearer realm=\"https://cloudly.example\",service=\"s\"")
        << QByteArray("Bearer realm=\"https://relay.cluster.internal:8443\",service=\"s\"");
    QTest::newRow("case-insensitive parameter name")
        << QByteArray("bearer Realm=\"https://cloudly.example/token\"")
        << QByteArray("bearer Realm=\"https://relay.cluster.internal:8443/token\"");
    QTest::newRow("service naming cloudly is not a realm")
        << QByteArray("Bearer service=\"https://cloudly.example/token\",realm=\"https://cloudly.example/token\"")
        << QByteArray("Bearer service=\"https://cloudly.example/token\",realm=\"https://relay.cluster.internal:8443/token\"");
    QTest::newRow("comma inside quoted scope")
        << QByteArray("Bearer realm=\"https://cloudly.example/token\",scope=\"repository:a:pull,push\",service=\"s\"")
        << QByteArray("Bearer realm=\"https://relay.cluster.internal:8443/token\",scope=\"repository:a:pull,push\",service=\"s\"");
}

void TstWwwAuthenticateRewriter::rewritesOnlyTheRealmOrigin()
{
    QFETCH(QByteArray, in);
    QFETCH(QByteArray, out);
    const WwwAuthenticateRewrite r = WwwAuthenticateRewriter(kCloudly, kRelay).rewrite({in});
    QCOMPARE(r.values, QList<QByteArray>{out});
    QVERIFY(r.foreignRealmOrigins.isEmpty());
}

void TstWwwAuthenticateRewriter::leavesThirdPartyRealmsAndReportsTheirOrigin()
{
    const WwwAuthenticateRewriter rw(kCloudly, kRelay);
    const QList<QByteArray> cases{
        "Bearer realm=\"https://auth.docker.io/token\",service=\"registry.docker.io\"",
        "Bearer realm=\"http://cloudly.example/token\",service=\"s\"",          // other scheme
        "Bearer realm=\"https://cloudly.example:8443/token\",service=\"s\"",    // other port
        "Bearer realm=\"https://cloudly.example.evil/token\",service=\"s\"",    // other host
    };
    const QStringList origins{QStringLiteral("https://auth.docker.io"), QStringLiteral("http://cloudly.example"),
                              QStringLiteral("https://cloudly.example:8443"),
                              QStringLiteral("https://cloudly.example.evil")};
    for (qsizetype i = 0; i < cases.size(); ++i) {
        const WwwAuthenticateRewrite r = rw.rewrite({cases.at(i)});
        QCOMPARE(r.values, QList<QByteArray>{cases.at(i)});
        QCOMPARE(r.foreignRealmOrigins, QStringList{origins.at(i)});
        QVERIFY(r.rewrittenRealmPaths.isEmpty());
    }
}

void TstWwwAuthenticateRewriter::reportsEachForeignOriginOnce()
{
    const WwwAuthenticateRewrite r = WwwAuthenticateRewriter(kCloudly, kRelay)
                                         .rewrite({"Bearer realm=\"https://a.example/t1\", Bearer realm=\"https://a.example/t2\"",
                                                   "Bearer realm=\"https://b.example/t\""});
    QCOMPARE(r.foreignRealmOrigins, (QStringList{QStringLiteral("https://a.example"), QStringLiteral("https://b.example")}));
    QCOMPARE(r.values.size(), 3);
}

void TstWwwAuthenticateRewriter::splitsChallenges_data()
{
    QTest::addColumn<QByteArray>("in");
    QTest::addColumn<QList<QByteArray>>("out");
    QTest::newRow("one") << QByteArray("Bearer realm=\"r\",service=\"s\"") << QList<QByteArray>{"Bearer realm=\"r\",service=\"s\""};
    QTest::newRow("two") << QByteArray("Bearer realm=\"r\",service=\"s\", Basic realm=\"x\"")
                         << QList<QByteArray>{"Bearer realm=\"r\",service=\"s\"", "Basic realm=\"x\""};
    QTest::newRow("token68") << QByteArray("Negotiate abc==, Basic realm=\"x\"")
                             << QList<QByteArray>{"Negotiate abc==", "Basic realm=\"x\""};
    QTest::newRow("bare scheme") << QByteArray("Negotiate, Bearer realm=\"r\"")
                                 << QList<QByteArray>{"Negotiate", "Bearer realm=\"r\""};
    QTest::newRow("quoted comma and escaped quote")
        << QByteArray("Bearer realm=\"a,b\",scope=\"x\\\",y\", Basic realm=\"z\"")
        << QList<QByteArray>{"Bearer realm=\"a,b\",scope=\"x\\\",y\"", "Basic realm=\"z\""};
    QTest::newRow("empty elements") << QByteArray(", Basic realm=\"x\" ,,") << QList<QByteArray>{"Basic realm=\"x\""};
}

void TstWwwAuthenticateRewriter::splitsChallenges()
{
    QFETCH(QByteArray, in);
    QFETCH(QList<QByteArray>, out);
    QCOMPARE(WwwAuthenticateRewriter::splitChallenges(in), out);
}

void TstWwwAuthenticateRewriter::handlesSeveralValues()
{
    const WwwAuthenticateRewrite r = WwwAuthenticateRewriter(kCloudly, kRelay)
                                         .rewrite({"Bearer realm=\"https://cloudly.example/token\",service=\"s\"",
                                                   "Basic realm=\"registry\"",
                                                   "Bearer realm=\"https://other.example/token\",service=\"s2\""});
    QCOMPARE(r.values, (QList<QByteArray>{"Bearer realm=\"https://relay.cluster.internal:8443/token\",service=\"s\"",
                                          "Basic realm=\"registry\"",
                                          "Bearer realm=\"https://other.example/token\",service=\"s2\""}));
    QCOMPARE(r.foreignRealmOrigins, QStringList{QStringLiteral("https://other.example")});
}

void TstWwwAuthenticateRewriter::originStrings()
{
    QCOMPARE(WwwAuthenticateRewriter::originString(QUrl(QStringLiteral("https://Host.Example:443/x?y"))),
             QStringLiteral("https://host.example"));
    QCOMPARE(WwwAuthenticateRewriter::originString(QUrl(QStringLiteral("http://h:8080/x"))), QStringLiteral("http://h:8080"));
    QCOMPARE(WwwAuthenticateRewriter::originString(QUrl(QStringLiteral("https://[::1]:9443/"))),
             QStringLiteral("https://[::1]:9443"));
    QCOMPARE(WwwAuthenticateRewriter::originString(QUrl(QStringLiteral("registry"))), QString());
    QVERIFY(WwwAuthenticateRewriter::sameOrigin(QUrl(QStringLiteral("https://a:443/x")), QUrl(QStringLiteral("https://A/y"))));
    QVERIFY(!WwwAuthenticateRewriter::sameOrigin(QUrl(QStringLiteral("https://a:444/")), QUrl(QStringLiteral("https://a/"))));
}

void TstWwwAuthenticateRewriter::keepsNonUrlAndEscapedRealms()
{
    const QList<QByteArray> in{"Basic realm=\"registry\"", "Bearer realm=\"https://cloudly.example/t\\\"x\",service=\"s\"",
                               "Bearer service=\"s\""};
    const WwwAuthenticateRewrite r = WwwAuthenticateRewriter(kCloudly, kRelay).rewrite(in);
    QCOMPARE(r.values, in);
    QVERIFY(r.foreignRealmOrigins.isEmpty());
}

void TstWwwAuthenticateRewriter::reportsRewrittenPaths()
{
    const WwwAuthenticateRewrite r = WwwAuthenticateRewriter(kCloudly, kRelay)
                                         .rewrite({"Bearer realm=\"https://cloudly.example/auth/token?a=b\"",
                                                   "Bearer realm=\"https://cloudly.example\""});
    QCOMPARE(r.rewrittenRealmPaths, (QStringList{QStringLiteral("/auth/token"), QStringLiteral("/")}));
}

COREFLOW_EPOLL_TEST_MAIN(TstWwwAuthenticateRewriter)
#include "tst_wwwauthenticaterewriter.moc"
