// tst_registrypull: real components. Debian's docker-registry (distribution 2.8) on loopback with token
// auth whose realm is the token endpoint of a loopback Cloudly peer (peers/cloudly_registry_peer.py:
// Cloudly's origin, which issues RS256 tokens the registry trusts and forwards /v2/ to the registry);
// a small image built by hand (peers/make_oci_layout.py) and pushed with skopeo; then skopeo pulls
// through the relay (RelayListener + RegistryProxy), trusting only the relay's test CA, so a
// token fetched anywhere but through the relay's rewritten realm would fail TLS.
//
// Needs: docker-registry, skopeo, openssl, /usr/bin/python3 (Debian packages docker-registry, skopeo,
// openssl, python3). Skips when docker-registry or skopeo is not installed.
#include "tests/support/epolltestmain.h"
#include "tests/registry/rawhttpsclient.h"
#include "tests/peers/reservedloopbackport.h"
#include "tests/registry/testpki.h"
#include "tests/registry/testwait.h"
#include "tests/support/skiporfail.h"

#include "service/listener/relaylistener.h"
#include "service/registry/registryproxy.h"
#include "shared/util/clock.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QMutex>
#include <QProcess>
#include <QStandardPaths>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QTest>
#include <memory>

using namespace coreflow;
using namespace coreflow::test;

namespace {

const QString kPullUser = QStringLiteral("node");
const QString kPullPassword = QStringLiteral("SECRET-PULL-PASSWORD-0815");

QMutex g_logMutex;
QStringList g_logs;
QtMessageHandler g_previous = nullptr;

void captureMessages(QtMsgType type, const QMessageLogContext &context, const QString &message)
{
    {
        QMutexLocker lock(&g_logMutex);
        g_logs.append(QString::fromLatin1(context.category ? context.category : "") + QLatin1String(": ") + message);
    }
    if (g_previous)
        g_previous(type, context, message);
}

int countLogs(const QString &needle)
{
    QMutexLocker lock(&g_logMutex);
    int n = 0;
    for (const QString &l : std::as_const(g_logs))
        n += l.contains(needle) ? 1 : 0;
    return n;
}

quint16 freePort() { return reservedLoopbackPort(); }

QByteArray sha256Hex(const QByteArray &data)
{
    return QCryptographicHash::hash(data, QCryptographicHash::Sha256).toHex();
}

QByteArray readFile(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

} // namespace

class TstRegistryPull : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void skopeoCopyThroughRelayFollowsRewrittenRealm();
    void skopeoInspectThroughRelayMatchesDigest();
    void nodeLeavingMidBlobAbortsTheUpstream();
    void cloudlyDownIs502WithoutTheCredential();

private:
    // Runs a program to completion while the event loop (the relay) keeps running.
    bool runProcess(const QString &program, const QStringList &args, QByteArray *output = nullptr, int timeoutMs = 60000);
    QString peerLog() const { return QString::fromUtf8(readFile(m_work.filePath(QStringLiteral("peer.log")))); }
    QString relayImage(const QString &name) const
    {
        return QStringLiteral("docker://127.0.0.1:%1/%2").arg(m_listener->boundPort()).arg(name);
    }
    QStringList pullArgs() const
    {
        return {QStringLiteral("--src-cert-dir"), m_relayCertDir, QStringLiteral("--src-creds"),
                kPullUser + QLatin1Char(':') + kPullPassword};
    }

    QTemporaryDir m_work;
    std::unique_ptr<TestPki> m_relayPki;
    std::unique_ptr<TestPki> m_cloudlyPki;
    std::unique_ptr<TestPki> m_signerPki;
    QString m_relayCertDir;
    QProcess m_peer;
    QProcess m_registry;
    quint16 m_peerPort = 0;
    quint16 m_registryPort = 0;
    QByteArray m_manifestDigest;
    QByteArray m_bigBlobDigest;
    SystemClock m_clock;
    std::unique_ptr<RelayListener> m_listener;
    std::unique_ptr<RegistryProxy> m_proxy;
};

bool TstRegistryPull::runProcess(const QString &program, const QStringList &args, QByteArray *output, int timeoutMs)
{
    QProcess p;
    p.setProcessChannelMode(QProcess::SeparateChannels);
    p.start(program, args);
    if (!p.waitForStarted(10000))
        return false;
    const bool done = spinUntil([&] { return p.state() == QProcess::NotRunning; }, timeoutMs);
    if (!done) {
        p.kill();
        p.waitForFinished(5000);
        qWarning("%s timed out", qPrintable(program));
        return false;
    }
    const QByteArray out = p.readAllStandardOutput();
    const QByteArray err = p.readAllStandardError();
    if (output)
        *output = out;
    if (p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0) {
        qWarning("%s %s failed (%d): %s", qPrintable(program), qPrintable(args.value(0)), p.exitCode(), err.constData());
        return false;
    }
    return true;
}

void TstRegistryPull::initTestCase()
{
    const QString registryBin = QStandardPaths::findExecutable(QStringLiteral("docker-registry"));
    const QString skopeoBin = QStandardPaths::findExecutable(QStringLiteral("skopeo"));
    COREFLOW_SKIP_OR_FAIL(registryBin.isEmpty() || skopeoBin.isEmpty()
                              ? QStringLiteral("docker-registry and skopeo are not installed (Debian packages docker-registry, skopeo)")
                              : QString());
    QVERIFY2(QFile::exists(QStringLiteral("/usr/bin/python3")), "Debian package python3 is needed for the peers");
    const QString peerDir = qEnvironmentVariable("COREFLOW_REGISTRY_PEER_DIR",
                                                 QStringLiteral(QT_TESTCASE_SOURCEDIR "/peers"));
    QVERIFY2(QFile::exists(peerDir + QStringLiteral("/cloudly_registry_peer.py")), qPrintable(peerDir));

    g_previous = qInstallMessageHandler(captureMessages);
    QLoggingCategory::setFilterRules(QStringLiteral("coreflow.registry.info=true"));
    QVERIFY(m_work.isValid());

    m_relayPki = std::make_unique<TestPki>(QStringLiteral("relay"));
    m_cloudlyPki = std::make_unique<TestPki>(QStringLiteral("cloudly"));
    m_signerPki = std::make_unique<TestPki>(QStringLiteral("signer"));
    QVERIFY(m_relayPki->ok() && m_cloudlyPki->ok() && m_signerPki->ok());
    const TestPki::Issued relayCert = m_relayPki->issueServer(QStringLiteral("relay"));
    const TestPki::Issued cloudlyCert = m_cloudlyPki->issueServer(QStringLiteral("cloudly"));
    QVERIFY(!relayCert.certificate.isNull() && !cloudlyCert.certificate.isNull());
    // skopeo trusts the relay's CA only (containers/image reads *.crt in the cert dir as CAs).
    m_relayCertDir = m_work.filePath(QStringLiteral("relay-certs"));
    QVERIFY(QDir().mkpath(m_relayCertDir));
    QVERIFY(QFile::copy(m_relayPki->caCertificatePath(), m_relayCertDir + QStringLiteral("/ca.crt")));

    // Cloudly peer first: the registry's realm names its port.
    m_registryPort = freePort();
    m_peer.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    m_peer.start(QStringLiteral("/usr/bin/python3"),
                 {peerDir + QStringLiteral("/cloudly_registry_peer.py"), QStringLiteral("--cert"),
                  cloudlyCert.certificatePath, QStringLiteral("--key"), cloudlyCert.keyPath,
                  QStringLiteral("--token-cert"), m_signerPki->caCertificatePath(), QStringLiteral("--token-key"),
                  m_signerPki->caKeyPath(), QStringLiteral("--issuer"), QStringLiteral("coreflow-test-cloudly"),
                  QStringLiteral("--registry-port"), QString::number(m_registryPort), QStringLiteral("--log"),
                  m_work.filePath(QStringLiteral("peer.log"))});
    QVERIFY(spinUntil([this] { return m_peer.canReadLine(); }, 15000));
    const QByteArray portLine = m_peer.readLine().trimmed();
    QVERIFY2(portLine.startsWith("PORT "), portLine.constData());
    m_peerPort = quint16(portLine.mid(5).toUInt());

    const QString cloudlyOrigin = QStringLiteral("127.0.0.1:%1").arg(m_peerPort);
    const QString config = QStringLiteral(
                               "version: 0.1\n"
                               "log:\n  level: info\n"
                               "storage:\n  filesystem:\n    rootdirectory: %1\n  delete:\n    enabled: true\n"
                               "http:\n  addr: 127.0.0.1:%2\n  secret: coreflow-test\n"
                               "auth:\n  token:\n    realm: https://%3/token\n    service: %3\n"
                               "    issuer: coreflow-test-cloudly\n    rootcertbundle: %4\n")
                               .arg(m_work.filePath(QStringLiteral("store")))
                               .arg(m_registryPort)
                               .arg(cloudlyOrigin, m_signerPki->caCertificatePath());
    {
        QFile f(m_work.filePath(QStringLiteral("registry.yml")));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(config.toUtf8());
    }
    m_registry.setStandardOutputFile(m_work.filePath(QStringLiteral("registry.log")));
    m_registry.setStandardErrorFile(m_work.filePath(QStringLiteral("registry.log")), QIODevice::Append);
    m_registry.start(registryBin, {QStringLiteral("serve"), m_work.filePath(QStringLiteral("registry.yml"))});
    QVERIFY(m_registry.waitForStarted(10000));
    QVERIFY(spinUntil([this] {
        QTcpSocket s;
        s.connectToHost(QHostAddress::LocalHost, m_registryPort);
        return s.waitForConnected(200);
    }, 15000));

    // Two images: a small one pulled whole, and one with a 64 MiB layer for the leaving node.
    QByteArray digest;
    QVERIFY(runProcess(QStringLiteral("/usr/bin/python3"),
                       {peerDir + QStringLiteral("/make_oci_layout.py"), m_work.filePath(QStringLiteral("small")),
                        QStringLiteral("v1"), QStringLiteral("3000000")},
                       &digest));
    m_manifestDigest = digest.trimmed();
    QVERIFY(runProcess(QStringLiteral("/usr/bin/python3"),
                       {peerDir + QStringLiteral("/make_oci_layout.py"), m_work.filePath(QStringLiteral("big")),
                        QStringLiteral("v1"), QString::number(64 * 1024 * 1024)}));
    const QJsonObject bigManifest = QJsonDocument::fromJson(
        readFile(m_work.filePath(QStringLiteral("big/blobs/sha256/"))
                 + QString::fromUtf8(QJsonDocument::fromJson(readFile(m_work.filePath(QStringLiteral("big/index.json"))))
                                         .object().value(QStringLiteral("manifests")).toArray().at(0).toObject()
                                         .value(QStringLiteral("digest")).toString().mid(7).toUtf8())))
                                        .object();
    m_bigBlobDigest = bigManifest.value(QStringLiteral("layers")).toArray().at(0).toObject()
                          .value(QStringLiteral("digest")).toString().toUtf8();
    QVERIFY(m_bigBlobDigest.startsWith("sha256:"));
    for (const QString &name : {QStringLiteral("small"), QStringLiteral("big")}) {
        QVERIFY(runProcess(QStringLiteral("skopeo"),
                           {QStringLiteral("copy"), QStringLiteral("--preserve-digests"),
                            QStringLiteral("--dest-tls-verify=false"),
                            QStringLiteral("oci:%1:v1").arg(m_work.filePath(name)),
                            QStringLiteral("docker://127.0.0.1:%1/coreflow/%2:v1").arg(m_registryPort).arg(name)}));
    }

    // The relay: its listener, and the proxy whose CLOUDLY_URL is the peer.
    m_listener = std::make_unique<RelayListener>();
    QSslConfiguration tls = QSslConfiguration::defaultConfiguration();
    tls.setLocalCertificate(relayCert.certificate);
    tls.setPrivateKey(relayCert.key);
    tls.setPeerVerifyMode(QSslSocket::VerifyNone);
    const auto refusal = m_listener->listen(QStringLiteral("127.0.0.1"), 0, tls);
    QVERIFY2(!refusal, refusal ? qPrintable(refusal->text()) : "");
    QVERIFY(m_listener->boundPort() != 0);
    m_proxy = std::make_unique<RegistryProxy>(QUrl(QStringLiteral("wss://%1/").arg(cloudlyOrigin)),
                                              QUrl(QStringLiteral("https://127.0.0.1:%1").arg(m_listener->boundPort())),
                                              QList<QSslCertificate>{m_cloudlyPki->caCertificate()}, m_clock);
    m_listener->setHttpHandler(m_proxy.get());
}

void TstRegistryPull::cleanupTestCase()
{
    if (m_listener)
        m_listener->setHttpHandler(nullptr);
    m_proxy.reset();
    m_listener.reset();
    for (QProcess *p : {&m_registry, &m_peer}) {
        if (p->state() != QProcess::NotRunning) {
            p->terminate();
            if (!p->waitForFinished(5000)) {
                p->kill();
                p->waitForFinished(5000);
            }
        }
    }
    // IP-22: neither the pull password nor its Basic encoding ever reaches a log line.
    const QString basic = QString::fromLatin1((kPullUser + QLatin1Char(':') + kPullPassword).toUtf8().toBase64());
    QCOMPARE(countLogs(kPullPassword), 0);
    QCOMPARE(countLogs(basic), 0);
    qInstallMessageHandler(g_previous);
}

void TstRegistryPull::skopeoCopyThroughRelayFollowsRewrittenRealm()
{
    const int tokensBefore = int(peerLog().count(QStringLiteral("token path=/token")));
    const QString out = m_work.filePath(QStringLiteral("pulled"));
    QStringList args{QStringLiteral("copy")};
    args << pullArgs() << relayImage(QStringLiteral("coreflow/small:v1")) << QStringLiteral("dir:") + out;
    QVERIFY(runProcess(QStringLiteral("skopeo"), args));

    // The pulled manifest is the pushed one, byte for byte; every blob matches its digest.
    QCOMPARE("sha256:" + sha256Hex(readFile(out + QStringLiteral("/manifest.json"))), m_manifestDigest);
    const QJsonObject manifest = QJsonDocument::fromJson(readFile(out + QStringLiteral("/manifest.json"))).object();
    QStringList digests{manifest.value(QStringLiteral("config")).toObject().value(QStringLiteral("digest")).toString()};
    for (const auto layer : manifest.value(QStringLiteral("layers")).toArray())
        digests.append(layer.toObject().value(QStringLiteral("digest")).toString());
    for (const QString &d : digests) {
        const QByteArray blob = readFile(out + QLatin1Char('/') + d.mid(7));
        QVERIFY2(!blob.isEmpty(), qPrintable(d));
        QCOMPARE(QStringLiteral("sha256:") + QString::fromLatin1(sha256Hex(blob)), d);
    }

    // The token came through the relay's rewritten realm (skopeo trusts only the relay's CA), with
    // the node's credential, forwarded untouched.
    QCOMPARE(m_proxy->tokenRealmPaths(), QStringList{QStringLiteral("/token")});
    const QString log = peerLog();
    QVERIFY2(log.count(QStringLiteral("token path=/token")) > tokensBefore, qPrintable(log));
    QVERIFY(log.contains(QStringLiteral("authorization=present")));
    QVERIFY(countLogs(QStringLiteral("GET token -> 200")) >= 1);
    QVERIFY(countLogs(QStringLiteral("GET blob -> 200")) >= 2);
}

void TstRegistryPull::skopeoInspectThroughRelayMatchesDigest()
{
    QByteArray raw;
    const QStringList args{QStringLiteral("inspect"), QStringLiteral("--raw"), QStringLiteral("--cert-dir"),
                           m_relayCertDir, QStringLiteral("--creds"), kPullUser + QLatin1Char(':') + kPullPassword,
                           relayImage(QStringLiteral("coreflow/small:v1"))};
    QVERIFY(runProcess(QStringLiteral("skopeo"), args, &raw));
    QCOMPARE("sha256:" + sha256Hex(raw), m_manifestDigest);
}

void TstRegistryPull::nodeLeavingMidBlobAbortsTheUpstream()
{
    RawHttpsClient node(m_listener->boundPort(), m_relayPki->caCertificate());
    QVERIFY(node.connectAndWait());
    // The challenge, then the token through the relay, then the blob with it.
    node.sendRequest("GET", "/v2/");
    RawResponse challenge;
    QVERIFY(node.readResponse(challenge));
    QCOMPARE(challenge.status, 401);
    const QByteArray service = "127.0.0.1:" + QByteArray::number(m_peerPort);
    QCOMPARE(challenge.values("www-authenticate"),
             QList<QByteArray>{"Bearer realm=\"https://127.0.0.1:" + QByteArray::number(m_listener->boundPort())
                               + "/token\",service=\"" + service + "\""});
    node.sendRequest("GET", "/token?scope=repository%3Acoreflow%2Fbig%3Apull&service=" + service);
    RawResponse token;
    QVERIFY(node.readResponse(token));
    QCOMPARE(token.status, 200);
    const QByteArray bearer = QJsonDocument::fromJson(token.body).object().value(QStringLiteral("token")).toString().toUtf8();
    QVERIFY(!bearer.isEmpty());

    node.sendRequest("GET", "/v2/coreflow/big/blobs/" + m_bigBlobDigest, {{"Authorization", "Bearer " + bearer}});
    RawResponse headers;
    QVERIFY(node.waitForHeaders(headers));
    QCOMPARE(headers.status, 200);
    QVERIFY(headers.header("content-length").toLongLong() > 64 * 1024 * 1024);
    QCOMPARE(headers.header("docker-content-digest"), m_bigBlobDigest);
    const qint64 before = node.received();
    QVERIFY(spinUntil([&] { return node.received() > before + 1024 * 1024; }, 10000));
    node.pause();
    node.socket().abort();
    // The relay aborts its request at once; the peer, writing the rest, sees its client gone.
    QVERIFY2(spinUntil([this] { return peerLog().contains(QStringLiteral("v2 client-gone")); }, 10000),
             qPrintable(peerLog()));
    QVERIFY(countLogs(QStringLiteral("upstream request aborted")) >= 1);
    QCOMPARE(countLogs(QString::fromUtf8(bearer)), 0);
}

void TstRegistryPull::cloudlyDownIs502WithoutTheCredential()
{
    m_peer.terminate();
    QVERIFY(m_peer.waitForFinished(5000));
    RawHttpsClient node(m_listener->boundPort(), m_relayPki->caCertificate());
    QVERIFY(node.connectAndWait());
    const QByteArray basic = (kPullUser + QLatin1Char(':') + kPullPassword).toUtf8().toBase64();
    node.sendRequest("GET", "/v2/coreflow/small/manifests/v1", {{"Authorization", "Basic " + basic}});
    RawResponse r;
    QVERIFY(node.readResponse(r));
    QCOMPARE(r.status, 502);
    QVERIFY(r.body.contains("registry-unreachable"));
    QVERIFY(r.body.contains("ConnectionRefused"));
    QVERIFY(!r.body.contains(basic));
    QVERIFY(!r.body.contains(kPullPassword.toUtf8()));
    QVERIFY(countLogs(QStringLiteral("502 registry-unreachable (ConnectionRefused)")) >= 1);
}

COREFLOW_EPOLL_TEST_MAIN(TstRegistryPull)
#include "tst_registrypull.moc"
