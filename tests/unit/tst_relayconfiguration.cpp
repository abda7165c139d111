// Configuration (docs/contract.md §19.1, D-21, D-32): every variable through every source of the one
// reader, the precedence between them, qenv.yml's required:, the build tree's .nogit overlay, and the
// named refusals. Rules CF-01..CF-06, CF-08..CF-11, CF-14, CF-16, CF-22, CF-23, UC-06, ON-02.
#include "service/app/relayconfiguration.h"

#include <QDir>
#include <QTemporaryDir>
#include <QTest>
#include <sys/stat.h>

using namespace coreflow;

namespace {

const QByteArray kBearerCanary = "bearer-canary-7f3a91";

// One isolated set of sources: an environment, a credentials directory, a Docker-secrets directory, a
// working directory with .nogit, and a qenv.yml path. Nothing of the real /run/secrets is read.
struct Sources {
    QTemporaryDir root;
    QProcessEnvironment environment;
    bool buildTree = true;
    QString qenvFile;

    Sources() { QDir(root.path()).mkpath("creds"), QDir(root.path()).mkpath("secrets"), QDir(root.path()).mkpath("work/.nogit"); }
    QString path(const QString &relative) const { return root.filePath(relative); }
    void write(const QString &relative, const QByteArray &bytes) const
    {
        QFile f(path(relative));
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        f.write(bytes);
    }
    void credential(const QString &name, const QByteArray &bytes)
    {
        environment.insert("CREDENTIALS_DIRECTORY", path("creds"));
        write("creds/" + name, bytes);
    }
    void qenv(const QByteArray &yaml)
    {
        write("qenv.yml", yaml);
        qenvFile = path("qenv.yml");
    }
    // The baseline: both required variables in the environment.
    void baseline()
    {
        environment.insert("CLOUDLY_URL", "https://cloudly.example.com");
        environment.insert("SERVEZONE_CLUSTER_RELAY_AUTHORIZATION", QString::fromLatin1(kBearerCanary));
    }
    ConfigurationSources::Roots roots() const
    {
        ConfigurationSources::Roots r;
        r.environment = environment;
        r.dockerSecretsDirectory = path("secrets");
        r.qenvFile = qenvFile;
        r.overlayDirectory = buildTree ? path("work/.nogit") : QString();
        return r;
    }
    contract::Result<RelayConfiguration> read() const { return ConfigurationReader(roots()).read(); }
};

// The field a variable lands in, as bytes.
QByteArray fieldOf(const RelayConfiguration &c, const QString &name)
{
    if (name == "CLOUDLY_URL")
        return c.cloudlyUrl.toString().toUtf8();
    if (name == "SERVEZONE_CLUSTER_RELAY_AUTHORIZATION")
        return c.bearer.reveal().toByteArray();
    if (name == "COREFLOW_NODE_ID")
        return c.nodeId.toUtf8();
    if (name == "COREFLOW_RELAY_BIND_HOSTNAME")
        return c.bindHostname.toUtf8();
    if (name == "COREFLOW_RELAY_BIND_PORT")
        return QByteArray::number(c.bindPort);
    if (name == "COREFLOW_VPN_BIND_HOSTNAME")
        return c.vpnBindHostname.value_or(QString()).toUtf8();
    if (name == "COREFLOW_VPN_QUIC_PORT")
        return c.vpnQuicPort.value_or(QString()).toUtf8();
    return {};
}

struct Variable {
    const char *name;
    QByteArray given;    // the value placed in a source
    QByteArray expected; // what the configuration holds
};

const QList<Variable> kVariables{
    {"CLOUDLY_URL", "https://cloudly.test.example", "wss://cloudly.test.example"},
    {"SERVEZONE_CLUSTER_RELAY_AUTHORIZATION", "bearer-from-source-" + kBearerCanary, "bearer-from-source-" + kBearerCanary},
    {"COREFLOW_NODE_ID", "node-b", "node-b"},
    {"COREFLOW_RELAY_BIND_HOSTNAME", "192.0.2.17", "192.0.2.17"},
    {"COREFLOW_RELAY_BIND_PORT", "9443", "9443"},
    {"COREFLOW_VPN_BIND_HOSTNAME", "198.51.100.4", "198.51.100.4"},
    {"COREFLOW_VPN_QUIC_PORT", "4433", "4433"},
};

void place(Sources &s, const QString &source, const QString &name, const QByteArray &value)
{
    if (source == "env")
        s.environment.insert(name, QString::fromUtf8(value));
    else if (source == "credentials")
        s.credential(name, value);
    else if (source == "secrets")
        s.write("secrets/" + name, value);
    else if (source == "env.yml" || source == "env.yaml")
        s.write("work/.nogit/" + source, name.toUtf8() + ": \"" + value + "\"\n");
    else if (source == "env.json")
        s.write("work/.nogit/env.json", "{\"" + name.toUtf8() + "\": \"" + value + "\"}");
}

} // namespace

class TstRelayConfiguration : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // CF-01, CF-02, CF-03: every variable of §19.1 from every source, alone, byte for byte.
    void everyVariableFromEverySource_CF01_CF02_CF03_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("source");
        QTest::addColumn<QByteArray>("given");
        QTest::addColumn<QByteArray>("expected");
        for (const Variable &v : kVariables)
            for (const char *source : {"env", "credentials", "secrets", "env.yml", "env.yaml", "env.json"})
                QTest::newRow(qPrintable(QStringLiteral("%1 from %2").arg(QLatin1String(v.name), QLatin1String(source))))
                    << QString::fromLatin1(v.name) << QString::fromLatin1(source) << v.given << v.expected;
    }
    void everyVariableFromEverySource_CF01_CF02_CF03()
    {
        QFETCH(QString, name);
        QFETCH(QString, source);
        QFETCH(QByteArray, given);
        QFETCH(QByteArray, expected);
        Sources s;
        s.baseline();
        s.environment.remove(name);
        place(s, source, name, given);
        auto r = s.read();
        QVERIFY2(r.ok(), r.ok() ? "" : qPrintable(r.refusal().text()));
        QCOMPARE(fieldOf(r.value(), name), expected);
    }

    // D-21: environment > $CREDENTIALS_DIRECTORY > /run/secrets > overlay, for every variable.
    void precedence_CF01_D21_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<int>("removed"); // how many of the highest sources are left empty
        QTest::addColumn<QString>("winner");
        const QStringList order{"env", "credentials", "secrets", "env.yml"};
        for (const Variable &v : kVariables)
            for (int removed = 0; removed < order.size(); ++removed)
                QTest::newRow(qPrintable(QStringLiteral("%1: %2 wins").arg(QLatin1String(v.name), order.at(removed))))
                    << QString::fromLatin1(v.name) << removed << order.at(removed);
    }
    void precedence_CF01_D21()
    {
        QFETCH(QString, name);
        QFETCH(int, removed);
        QFETCH(QString, winner);
        // Distinct valid values per source, so the winner is visible in the field.
        const QHash<QString, QList<QByteArray>> values{
            {"CLOUDLY_URL", {"https://a.example", "https://b.example", "https://c.example", "https://d.example"}},
            {"SERVEZONE_CLUSTER_RELAY_AUTHORIZATION", {"bearer-a", "bearer-b", "bearer-c", "bearer-d"}},
            {"COREFLOW_NODE_ID", {"node-a", "node-b", "node-c", "node-d"}},
            {"COREFLOW_RELAY_BIND_HOSTNAME", {"192.0.2.1", "192.0.2.2", "192.0.2.3", "192.0.2.4"}},
            {"COREFLOW_RELAY_BIND_PORT", {"8001", "8002", "8003", "8004"}},
            {"COREFLOW_VPN_BIND_HOSTNAME", {"198.51.100.1", "198.51.100.2", "198.51.100.3", "198.51.100.4"}},
            {"COREFLOW_VPN_QUIC_PORT", {"4001", "4002", "4003", "4004"}},
        };
        const QStringList order{"env", "credentials", "secrets", "env.yml"};
        Sources s;
        s.baseline();
        s.environment.remove(name);
        for (int i = removed; i < order.size(); ++i)
            place(s, order.at(i), name, values.value(name).at(i));
        auto r = s.read();
        QVERIFY2(r.ok(), r.ok() ? "" : qPrintable(r.refusal().text()));
        QByteArray expected = values.value(name).at(removed);
        if (name == "CLOUDLY_URL")
            expected.replace("https://", "wss://");
        QCOMPARE(fieldOf(r.value(), name), expected);
        Q_UNUSED(winner);
    }

    // CF-02, UC-06: a credential file is read byte for byte (no trimming): what it holds is the bearer.
    void credentialByteForByte_UC06()
    {
        Sources s;
        s.baseline();
        s.environment.remove("SERVEZONE_CLUSTER_RELAY_AUTHORIZATION");
        const QByteArray odd = " leading-space\ttab-inside-" + kBearerCanary; // kept exactly
        s.credential("SERVEZONE_CLUSTER_RELAY_AUTHORIZATION", odd);
        auto r = s.read();
        QVERIFY2(r.ok(), r.ok() ? "" : qPrintable(r.refusal().text()));
        QCOMPARE(r->bearer.reveal().toByteArray(), odd);
    }

    // The named refusals, each naming the variable (or path) and never the bearer.
    void refusals_data()
    {
        QTest::addColumn<QString>("scenario");
        QTest::addColumn<QStringList>("expected"); // every one must appear in the reason
        QTest::newRow("CF-04/CF-08 nothing: both named at once")
            << "nothing" << QStringList{"missing required variables CLOUDLY_URL, SERVEZONE_CLUSTER_RELAY_AUTHORIZATION"};
        QTest::newRow("CF-05 bearer missing") << "no-bearer" << QStringList{"missing required variable SERVEZONE_CLUSTER_RELAY_AUTHORIZATION"};
        QTest::newRow("CF-04/CF-06 qenv.yml adds a required variable, named with the others")
            << "qenv-extra" << QStringList{"missing required variables SERVEZONE_CLUSTER_RELAY_AUTHORIZATION, COREFLOW_NODE_ID"};
        QTest::newRow("qenv.yml not YAML") << "qenv-broken" << QStringList{"qenv.yml", "is not YAML"};
        QTest::newRow("qenv.yml required: not a list") << "qenv-shape" << QStringList{"qenv.yml", "required:"};
        QTest::newRow("CREDENTIALS_DIRECTORY missing: path and errno")
            << "creds-missing" << QStringList{"CREDENTIALS_DIRECTORY", "/nonexistent-creds", "errno 2"};
        QTest::newRow("CREDENTIALS_DIRECTORY not a directory: path and errno")
            << "creds-file" << QStringList{"CREDENTIALS_DIRECTORY", "cannot be read", "errno 20"};
        QTest::newRow("credential file unreadable: path and errno")
            << "cred-unreadable" << QStringList{"SERVEZONE_CLUSTER_RELAY_AUTHORIZATION", "creds/SERVEZONE_CLUSTER_RELAY_AUTHORIZATION", "errno 21"};
        QTest::newRow("/run/secrets file unreadable: path and errno")
            << "secret-unreadable" << QStringList{"COREFLOW_NODE_ID", "secrets/COREFLOW_NODE_ID", "errno 21"};
        QTest::newRow("empty environment value over a credential file")
            << "empty-shadow" << QStringList{"SERVEZONE_CLUSTER_RELAY_AUTHORIZATION", "empty string", "creds/SERVEZONE_CLUSTER_RELAY_AUTHORIZATION"};
        QTest::newRow("empty environment value over a secret file")
            << "empty-shadow-plain" << QStringList{"COREFLOW_RELAY_BIND_PORT", "empty string", "secrets/COREFLOW_RELAY_BIND_PORT"};
        // Issue 24 ("credential errors say what was wrong ... not 'missing'"): a credential file that is
        // there but empty (touch, an empty systemd-creds payload) must be named by its path, not reported
        // as a missing variable (seen: "missing required variable SERVEZONE_CLUSTER_RELAY_AUTHORIZATION").
        QTest::newRow("issue 24 credential file present but empty: path named, not 'missing'")
            << "cred-empty" << QStringList{"SERVEZONE_CLUSTER_RELAY_AUTHORIZATION", "creds/SERVEZONE_CLUSTER_RELAY_AUTHORIZATION", "empty"};
        QTest::newRow("UC-06 bearer file ends in a newline")
            << "bearer-newline" << QStringList{"SERVEZONE_CLUSTER_RELAY_AUTHORIZATION", "ends in a newline", "creds/"};
        QTest::newRow("UC-06 bearer in the environment ends in CR LF") << "bearer-crlf-env" << QStringList{"SERVEZONE_CLUSTER_RELAY_AUTHORIZATION", "ends in a newline"};
        QTest::newRow("file value with a trailing newline is not trimmed") << "nodeid-newline" << QStringList{"COREFLOW_NODE_ID", "whitespace"};
        QTest::newRow("plain ws off loopback") << "ws" << QStringList{"CLOUDLY_URL", "only TLS"};
        QTest::newRow("ftp scheme") << "ftp" << QStringList{"CLOUDLY_URL", "scheme ftp"};
        QTest::newRow("CF-11 port 0") << "port0" << QStringList{"COREFLOW_RELAY_BIND_PORT", "1-65535"};
        QTest::newRow("CF-11 port 65536") << "port65536" << QStringList{"COREFLOW_RELAY_BIND_PORT"};
        QTest::newRow("CF-11 port with a sign") << "port+" << QStringList{"COREFLOW_RELAY_BIND_PORT"};
        QTest::newRow("overlay not YAML") << "overlay-broken" << QStringList{"overlay", "env.yml", "is not YAML"};
        QTest::newRow("overlay not flat") << "overlay-nested" << QStringList{"overlay", "NAME: value"};
        // A credential that is not a regular file of bounded size is refused at once (contract §19.1):
        // /dev/zero would grow the start without end, a FIFO would block it.
        QTest::newRow("credential is a device (/dev/zero)")
            << "cred-device" << QStringList{"SERVEZONE_CLUSTER_RELAY_AUTHORIZATION", "not a regular file"};
        QTest::newRow("credential is a FIFO") << "cred-fifo" << QStringList{"SERVEZONE_CLUSTER_RELAY_AUTHORIZATION", "not a regular file"};
        QTest::newRow("credential over 1 MiB") << "cred-huge" << QStringList{"SERVEZONE_CLUSTER_RELAY_AUTHORIZATION", "larger than 1048576 bytes"};
        QTest::newRow("qenv.yml required: entry is not a variable name")
            << "qenv-path" << QStringList{"qenv.yml", "not a variable name"};
    }
    void refusals()
    {
        QFETCH(QString, scenario);
        QFETCH(QStringList, expected);
        Sources s;
        if (scenario != "nothing")
            s.baseline();
        if (scenario == "no-bearer") {
            s.environment.remove("SERVEZONE_CLUSTER_RELAY_AUTHORIZATION");
        } else if (scenario == "qenv-extra") {
            s.environment.remove("SERVEZONE_CLUSTER_RELAY_AUTHORIZATION");
            s.qenv("required:\n  - CLOUDLY_URL\n  - SERVEZONE_CLUSTER_RELAY_AUTHORIZATION\n  - COREFLOW_NODE_ID\n");
        } else if (scenario == "qenv-broken") {
            s.qenv("required: [CLOUDLY_URL\n");
        } else if (scenario == "qenv-shape") {
            s.qenv("required: CLOUDLY_URL\n");
        } else if (scenario == "creds-missing") {
            s.environment.insert("CREDENTIALS_DIRECTORY", "/nonexistent-creds");
        } else if (scenario == "creds-file") {
            s.write("notadir", "x");
            s.environment.insert("CREDENTIALS_DIRECTORY", s.path("notadir"));
        } else if (scenario == "cred-unreadable") {
            s.environment.remove("SERVEZONE_CLUSTER_RELAY_AUTHORIZATION");
            s.environment.insert("CREDENTIALS_DIRECTORY", s.path("creds"));
            QDir().mkpath(s.path("creds/SERVEZONE_CLUSTER_RELAY_AUTHORIZATION")); // read(2) fails: EISDIR
        } else if (scenario == "secret-unreadable") {
            QDir().mkpath(s.path("secrets/COREFLOW_NODE_ID"));
        } else if (scenario == "empty-shadow") {
            s.credential("SERVEZONE_CLUSTER_RELAY_AUTHORIZATION", kBearerCanary);
            s.environment.insert("SERVEZONE_CLUSTER_RELAY_AUTHORIZATION", "");
        } else if (scenario == "empty-shadow-plain") {
            s.write("secrets/COREFLOW_RELAY_BIND_PORT", "9443");
            s.environment.insert("COREFLOW_RELAY_BIND_PORT", "");
        } else if (scenario == "cred-empty") {
            s.environment.remove("SERVEZONE_CLUSTER_RELAY_AUTHORIZATION");
            s.credential("SERVEZONE_CLUSTER_RELAY_AUTHORIZATION", QByteArray());
        } else if (scenario == "bearer-newline") {
            s.environment.remove("SERVEZONE_CLUSTER_RELAY_AUTHORIZATION");
            s.credential("SERVEZONE_CLUSTER_RELAY_AUTHORIZATION", kBearerCanary + "\n");
        } else if (scenario == "bearer-crlf-env") {
            s.environment.insert("SERVEZONE_CLUSTER_RELAY_AUTHORIZATION", QString::fromLatin1(kBearerCanary + "\r\n"));
        } else if (scenario == "nodeid-newline") {
            s.write("secrets/COREFLOW_NODE_ID", "node-a\n");
        } else if (scenario == "ws") {
            s.environment.insert("CLOUDLY_URL", "ws://cloudly.example.com");
        } else if (scenario == "ftp") {
            s.environment.insert("CLOUDLY_URL", "ftp://cloudly.example.com");
        } else if (scenario == "port0") {
            s.environment.insert("COREFLOW_RELAY_BIND_PORT", "0");
        } else if (scenario == "port65536") {
            s.environment.insert("COREFLOW_RELAY_BIND_PORT", "65536");
        } else if (scenario == "port+") {
            s.environment.insert("COREFLOW_RELAY_BIND_PORT", "+8443");
        } else if (scenario == "overlay-broken") {
            s.write("work/.nogit/env.yml", "CLOUDLY_URL: [\n");
        } else if (scenario == "overlay-nested") {
            s.write("work/.nogit/env.yml", "COREFLOW_NODE_ID:\n  nested: value\n");
        } else if (scenario == "cred-device") {
            s.environment.remove("SERVEZONE_CLUSTER_RELAY_AUTHORIZATION");
            s.environment.insert("CREDENTIALS_DIRECTORY", s.path("creds"));
            QVERIFY(QFile::link("/dev/zero", s.path("creds/SERVEZONE_CLUSTER_RELAY_AUTHORIZATION")));
        } else if (scenario == "cred-fifo") {
            s.environment.remove("SERVEZONE_CLUSTER_RELAY_AUTHORIZATION");
            s.environment.insert("CREDENTIALS_DIRECTORY", s.path("creds"));
            QCOMPARE(::mkfifo(QFile::encodeName(s.path("creds/SERVEZONE_CLUSTER_RELAY_AUTHORIZATION")).constData(), 0600), 0);
        } else if (scenario == "cred-huge") {
            s.environment.remove("SERVEZONE_CLUSTER_RELAY_AUTHORIZATION");
            s.credential("SERVEZONE_CLUSTER_RELAY_AUTHORIZATION", QByteArray(1024 * 1024 + 1, 'b'));
        } else if (scenario == "qenv-path") {
            s.qenv("required:\n  - CLOUDLY_URL\n  - \"../../../../etc/hostname\"\n");
        }
        auto r = s.read();
        QVERIFY2(!r.ok(), qPrintable(scenario));
        QCOMPARE(r.refusal().name, QStringLiteral("configuration-invalid"));
        for (const QString &part : expected)
            QVERIFY2(r.refusal().reason.contains(part), qPrintable(r.refusal().reason + " lacks " + part));
        QVERIFY2(!r.refusal().text().toUtf8().contains(kBearerCanary), qPrintable(r.refusal().text()));
    }

    // An empty environment value with no other source holding the variable reads as unset.
    void emptyEnvironmentValueAloneIsUnset()
    {
        Sources s;
        s.baseline();
        s.environment.insert("COREFLOW_NODE_ID", "");
        auto r = s.read();
        QVERIFY(r.ok());
        QCOMPARE(r->nodeId, QString());
        s.environment.insert("SERVEZONE_CLUSTER_RELAY_AUTHORIZATION", "");
        r = s.read();
        QVERIFY(!r.ok());
        QVERIFY(r.refusal().reason.contains("missing required variable SERVEZONE_CLUSTER_RELAY_AUTHORIZATION"));
    }

    // A secret main() took out of the environment ranks as the environment (and its emptiness too).
    void providedSecretRanksAsEnvironment()
    {
        Sources s;
        s.baseline();
        s.environment.remove("SERVEZONE_CLUSTER_RELAY_AUTHORIZATION");
        s.credential("SERVEZONE_CLUSTER_RELAY_AUTHORIZATION", "from-file");
        ConfigurationReader reader(s.roots());
        reader.provideSecret("SERVEZONE_CLUSTER_RELAY_AUTHORIZATION", Secret(QByteArrayLiteral("from-env")));
        auto r = reader.read();
        QVERIFY(r.ok());
        QCOMPARE(r->bearer.reveal().toByteArray(), QByteArray("from-env"));
        ConfigurationReader empty(s.roots());
        empty.provideSecret("SERVEZONE_CLUSTER_RELAY_AUTHORIZATION", Secret());
        r = empty.read();
        QVERIFY(!r.ok());
        QVERIFY2(r.refusal().reason.contains("empty string"), qPrintable(r.refusal().reason));
    }

    // CF-03: the overlay is env.yml, env.yaml or env.json (first found in that order), never a .env;
    // and it ranks lowest.
    void overlayFilesAndNeverDotEnv_CF03()
    {
        Sources s;
        s.write("work/.nogit/.env", "CLOUDLY_URL=https://dotenv.example\nSERVEZONE_CLUSTER_RELAY_AUTHORIZATION=x\n");
        s.write("work/.env", "CLOUDLY_URL=https://dotenv.example\nSERVEZONE_CLUSTER_RELAY_AUTHORIZATION=x\n");
        auto r = s.read();
        QVERIFY(!r.ok());
        QVERIFY(r.refusal().reason.contains("missing required variables CLOUDLY_URL, SERVEZONE_CLUSTER_RELAY_AUTHORIZATION"));
        s.write("work/.nogit/env.json", "{\"CLOUDLY_URL\": \"https://json.example\", \"SERVEZONE_CLUSTER_RELAY_AUTHORIZATION\": \"b\"}");
        r = s.read();
        QVERIFY2(r.ok(), r.ok() ? "" : qPrintable(r.refusal().text()));
        QCOMPARE(r->cloudlyUrl.host(), QStringLiteral("json.example"));
        s.write("work/.nogit/env.yml", "CLOUDLY_URL: https://yml.example\nSERVEZONE_CLUSTER_RELAY_AUTHORIZATION: b\n");
        r = s.read();
        QVERIFY(r.ok());
        QCOMPARE(r->cloudlyUrl.host(), QStringLiteral("yml.example"));
    }

    // D-32: outside a build tree no overlay is read, whatever the working directory holds.
    void noOverlayOutsideBuildTree_D32()
    {
        Sources s;
        s.buildTree = false;
        s.write("work/.nogit/env.yml", "CLOUDLY_URL: https://yml.example\nSERVEZONE_CLUSTER_RELAY_AUTHORIZATION: b\n");
        auto r = s.read();
        QVERIFY(!r.ok());
        QVERIFY(r.refusal().reason.contains("CLOUDLY_URL"));
    }

    // The roots of an executable: qenv.yml beside it when present; the overlay only beside the
    // build-tree marker; the working directory never holds qenv.yml for it.
    void rootsForExecutable_D32()
    {
        QTemporaryDir dir;
        QDir(dir.path()).mkpath("release");
        QDir(dir.path()).mkpath("cwd");
        QFile(dir.filePath("cwd/qenv.yml")).open(QIODevice::WriteOnly);
        auto roots = ConfigurationSources::rootsForExecutable(QProcessEnvironment(), dir.filePath("release"), dir.filePath("cwd"));
        QCOMPARE(roots.qenvFile, QString());
        QCOMPARE(roots.overlayDirectory, QString());
        QFile(dir.filePath("release/qenv.yml")).open(QIODevice::WriteOnly);
        roots = ConfigurationSources::rootsForExecutable(QProcessEnvironment(), dir.filePath("release"), dir.filePath("cwd"));
        QCOMPARE(roots.qenvFile, dir.filePath("release/qenv.yml"));
        QCOMPARE(roots.overlayDirectory, QString());
        QFile(dir.filePath("release/" + ConfigurationSources::buildTreeMarkerName())).open(QIODevice::WriteOnly);
        roots = ConfigurationSources::rootsForExecutable(QProcessEnvironment(), dir.filePath("release"), dir.filePath("cwd"));
        QCOMPARE(roots.overlayDirectory, dir.filePath("cwd/.nogit"));
    }

    // CF-22, CF-23, ON-02: the removed and foreign variables are never read: a deployment that still
    // sets them (even to garbage) boots unchanged; JUMPCODE does not stand in for the bearer.
    void removedVariablesAreIgnored_CF22_CF23_ON02()
    {
        Sources plain;
        plain.baseline();
        auto before = plain.read();
        QVERIFY(before.ok());
        Sources s;
        s.baseline();
        for (const char *name : {"COREFLOW_INTERNAL_HOSTNAME", "COREFLOW_INTERNAL_PORT", "CORESTORE_CONTROL_URL", "CORESTORE_API_TOKEN", "JUMPCODE"}) {
            s.environment.insert(name, " not a value \n");
            s.credential(name, "garbage\n");
        }
        auto after = s.read();
        QVERIFY2(after.ok(), after.ok() ? "" : qPrintable(after.refusal().text()));
        QCOMPARE(after->cloudlyUrl, before->cloudlyUrl);
        QCOMPARE(after->bindPort, before->bindPort);
        QCOMPARE(after->nodeId, before->nodeId);
        Sources swarm;
        swarm.environment.insert("CLOUDLY_URL", "https://cloudly.example.com");
        swarm.environment.insert("JUMPCODE", "jump");
        swarm.environment.insert("SERVEZONE_ENVIRONMENT", "production");
        auto r = swarm.read();
        QVERIFY(!r.ok());
        QVERIFY(r.refusal().reason.contains("SERVEZONE_CLUSTER_RELAY_AUTHORIZATION"));
        QVERIFY(!r.refusal().reason.contains("CLOUDLY_URL"));
    }

    // CF-11: the default port.
    void bindPortDefaults_CF11()
    {
        Sources s;
        s.baseline();
        auto r = s.read();
        QVERIFY(r.ok());
        QCOMPARE(r->bindPort, quint16(8443));
        QVERIFY(!r->vpnBindHostname && !r->vpnQuicPort);
    }

    void plainWsOnLoopbackIsAccepted()
    {
        Sources s;
        s.baseline();
        s.environment.insert("CLOUDLY_URL", "ws://127.0.0.1:9000");
        QVERIFY(s.read().ok());
    }

    // CF-12, CF-14, D-20: the VPN pair, checked on a boot with a relay block (vpnHubRefusal()).
    void vpnPair_CF12_CF14_data()
    {
        QTest::addColumn<QString>("host");
        QTest::addColumn<QString>("port");
        QTest::addColumn<QString>("expected"); // empty: accepted
        QTest::newRow("neither") << QString() << QString() << "";
        QTest::newRow("both") << "198.51.100.4" << "4433" << "";
        QTest::newRow("CF-14 host alone names the port") << "198.51.100.4" << QString() << "COREFLOW_VPN_QUIC_PORT is missing";
        QTest::newRow("CF-14 port alone names the host") << QString() << "4433" << "COREFLOW_VPN_BIND_HOSTNAME is missing";
        QTest::newRow("a name") << "hub.example.com" << "4433" << "COREFLOW_VPN_BIND_HOSTNAME is not an IPv4";
        QTest::newRow("IPv6") << "2001:db8::1" << "4433" << "COREFLOW_VPN_BIND_HOSTNAME is not an IPv4";
        QTest::newRow("short form") << "10.1" << "4433" << "COREFLOW_VPN_BIND_HOSTNAME is not an IPv4";
        QTest::newRow("wildcard") << "0.0.0.0" << "4433" << "COREFLOW_VPN_BIND_HOSTNAME is not a unicast";
        QTest::newRow("loopback") << "127.0.0.1" << "4433" << "COREFLOW_VPN_BIND_HOSTNAME is not a unicast";
        QTest::newRow("multicast") << "239.1.1.1" << "4433" << "COREFLOW_VPN_BIND_HOSTNAME is not a unicast";
        QTest::newRow("broadcast") << "255.255.255.255" << "4433" << "COREFLOW_VPN_BIND_HOSTNAME is not a unicast";
        QTest::newRow("port 0") << "198.51.100.4" << "0" << "COREFLOW_VPN_QUIC_PORT is not a port";
        QTest::newRow("port 65536") << "198.51.100.4" << "65536" << "COREFLOW_VPN_QUIC_PORT is not a port";
    }
    void vpnPair_CF12_CF14()
    {
        QFETCH(QString, host);
        QFETCH(QString, port);
        QFETCH(QString, expected);
        Sources s;
        s.baseline();
        if (!host.isNull())
            s.environment.insert("COREFLOW_VPN_BIND_HOSTNAME", host);
        if (!port.isNull())
            s.environment.insert("COREFLOW_VPN_QUIC_PORT", port);
        auto r = s.read();
        // CF-16: the reader itself never refuses the pair (a boot without a relay block reads neither).
        QVERIFY2(r.ok(), r.ok() ? "" : qPrintable(r.refusal().text()));
        const auto refusal = r->vpnHubRefusal();
        if (expected.isEmpty()) {
            QVERIFY2(!refusal, refusal ? qPrintable(refusal->text()) : "");
        } else {
            QVERIFY(refusal);
            QCOMPARE(refusal->name, QStringLiteral("configuration-invalid"));
            QVERIFY2(refusal->reason.contains(expected), qPrintable(refusal->reason));
        }
    }
};

QTEST_GUILESS_MAIN(TstRelayConfiguration)
#include "tst_relayconfiguration.moc"
