// Configuration (docs/contract.md §19.1, rules CF-02, CF-04, CF-08, CF-11, UC-06, ON-02).
#include "service/app/relayconfiguration.h"

#include <QTemporaryDir>
#include <QTest>

using namespace coreflow;

class TstRelayConfiguration : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // CF-04/CF-08: every missing required variable is named at once.
    void missingRequiredAreNamedTogether_CF04()
    {
        ConfigurationReader reader(QProcessEnvironment(), QStringLiteral("/nonexistent"));
        auto r = reader.read();
        QVERIFY(!r.ok());
        QCOMPARE(r.refusal().name, QStringLiteral("configuration-invalid"));
        QVERIFY(r.refusal().reason.contains("CLOUDLY_URL"));
        QVERIFY(r.refusal().reason.contains("SERVEZONE_CLUSTER_RELAY_AUTHORIZATION"));
    }

    // ON-02: the Swarm-era secret set (JUMPCODE) does not boot; the bearer variable is named.
    void swarmEraSecretDoesNotBoot_ON02()
    {
        QProcessEnvironment env;
        env.insert("CLOUDLY_URL", "https://cloudly.example.com");
        env.insert("JUMPCODE", "jump");
        env.insert("SERVEZONE_ENVIRONMENT", "production");
        auto r = ConfigurationReader(env, "/nonexistent").read();
        QVERIFY(!r.ok());
        QVERIFY(r.refusal().reason.contains("SERVEZONE_CLUSTER_RELAY_AUTHORIZATION"));
        QVERIFY(!r.refusal().reason.contains("CLOUDLY_URL"));
    }

    // CF-02/UC-06: the bearer from $CREDENTIALS_DIRECTORY, byte for byte (a trailing newline is kept).
    void credentialsDirectoryByteForByte_CF02_UC06()
    {
        QTemporaryDir dir;
        QFile f(dir.filePath("SERVEZONE_CLUSTER_RELAY_AUTHORIZATION"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("bearer-value\n");
        f.close();
        QProcessEnvironment env;
        env.insert("CLOUDLY_URL", "https://cloudly.example.com/socket");
        env.insert("CREDENTIALS_DIRECTORY", dir.path());
        auto r = ConfigurationReader(env, "/nonexistent").read();
        QVERIFY2(r.ok(), r.ok() ? "" : qPrintable(r.refusal().text()));
        QCOMPARE(r->bearer.reveal().toByteArray(), QByteArray("bearer-value\n"));
        QCOMPARE(r->cloudlyUrl.toString(), QStringLiteral("wss://cloudly.example.com/socket"));
        QCOMPARE(r->bindPort, quint16(8443)); // CF-11 default
    }

    void environmentWinsOverCredentials()
    {
        QTemporaryDir dir;
        QFile f(dir.filePath("COREFLOW_NODE_ID"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("from-file");
        f.close();
        QProcessEnvironment env;
        env.insert("CLOUDLY_URL", "wss://cloudly.example.com");
        env.insert("SERVEZONE_CLUSTER_RELAY_AUTHORIZATION", "b");
        env.insert("CREDENTIALS_DIRECTORY", dir.path());
        env.insert("COREFLOW_NODE_ID", "from-env");
        auto r = ConfigurationReader(env, "/nonexistent").read();
        QVERIFY(r.ok());
        QCOMPARE(r->nodeId, QStringLiteral("from-env"));
    }

    void invalidValues_data()
    {
        QTest::addColumn<QString>("url");
        QTest::addColumn<QString>("port");
        QTest::addColumn<QString>("expected");
        QTest::newRow("plain ws off loopback") << "ws://cloudly.example.com" << "" << "only TLS";
        QTest::newRow("ftp") << "ftp://cloudly.example.com" << "" << "scheme ftp";
        QTest::newRow("bad port") << "https://cloudly.example.com" << "70000" << "COREFLOW_RELAY_BIND_PORT";
        QTest::newRow("word port") << "https://cloudly.example.com" << "https" << "COREFLOW_RELAY_BIND_PORT";
    }
    void invalidValues()
    {
        QFETCH(QString, url);
        QFETCH(QString, port);
        QFETCH(QString, expected);
        QProcessEnvironment env;
        env.insert("CLOUDLY_URL", url);
        env.insert("SERVEZONE_CLUSTER_RELAY_AUTHORIZATION", "secret-canary-zz9");
        if (!port.isEmpty())
            env.insert("COREFLOW_RELAY_BIND_PORT", port);
        auto r = ConfigurationReader(env, "/nonexistent").read();
        QVERIFY(!r.ok());
        QVERIFY2(r.refusal().reason.contains(expected), qPrintable(r.refusal().reason));
        QVERIFY(!r.refusal().text().contains("secret-canary-zz9"));
    }

    void plainWsOnLoopbackIsAccepted()
    {
        QProcessEnvironment env;
        env.insert("CLOUDLY_URL", "ws://127.0.0.1:9000");
        env.insert("SERVEZONE_CLUSTER_RELAY_AUTHORIZATION", "b");
        QVERIFY(ConfigurationReader(env, "/nonexistent").read().ok());
    }
};

QTEST_GUILESS_MAIN(TstRelayConfiguration)
#include "tst_relayconfiguration.moc"
