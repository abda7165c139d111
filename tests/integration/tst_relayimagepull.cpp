// Image pulls through a FULL running relay (docs/contract.md §17, §5): the in-process composition root
// (Coreflow) with its real listener, Cloudly session and registry proxy, a loopback Cloudly whose one origin
// serves the WebSocket session AND the registry (LoopbackCloudly with httpFront: /v2/ and the token realm
// path piped to tests/registry/peers/cloudly_registry_peer.py --plain, which signs pull tokens and forwards
// /v2/ to Debian's docker-registry with token auth), and skopeo pulling through the relay's listener.
// Rules: IP-01, IP-04, IP-07, IP-08, IP-09, IP-20, IP-22, CL-04; the node sessions on the same port
// keep working meanwhile (CL-02, CL-05).
//
// skopeo trusts the fixture's test CA, which also issued the loopback Cloudly's certificate; that the
// token came through the relay is shown by the relay's own log line for the token path and by the
// challenge the client sees (realm on the relay's origin).
//
// Needs: docker-registry, skopeo, openssl, /usr/bin/python3 (Debian packages docker-registry, skopeo,
// openssl, python3). Skips when docker-registry or skopeo is not installed.
#include "tests/support/epolltestmain.h"
#include "tests/integration/logcapture.h"
#include "tests/integration/relayfixture.h"
#include "tests/support/skiporfail.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QProcess>
#include <QSignalSpy>
#include <QSslSocket>
#include <QStandardPaths>
#include <QTcpServer>
#include <QTest>
#include <functional>
#include <memory>

using namespace coreflow;
using namespace coreflow::testing;

namespace {

const QString kPullUser = QStringLiteral("node");
const QString kPullPassword = QStringLiteral("SECRET-PULL-PASSWORD-4711");

QByteArray readFile(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

QByteArray sha256Hex(const QByteArray &data)
{
    return QCryptographicHash::hash(data, QCryptographicHash::Sha256).toHex();
}

bool spinUntil(const std::function<bool()> &done, int timeoutMs)
{
    return QTest::qWaitFor(done, timeoutMs);
}

} // namespace

class TstRelayImagePull : public QObject {
    Q_OBJECT
    LogCapture log;

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanupTestCase();
    void challengeRealmIsTheRelaysOrigin_IP08_IP09_CL04();
    void skopeoCopyThroughTheRunningRelay_IP01_IP04_IP07_IP08();
    void skopeoInspectThroughTheRunningRelay_IP01_IP07();
    void nodeSessionsKeepWorkingDuringAPull_CL02_CL05_IP13();

private:
    bool runProcess(const QString &program, const QStringList &args, QByteArray *output = nullptr,
                    int timeoutMs = 90000);
    void startProcess(QProcess &p, const QString &program, const QStringList &args);
    QString peerLog() const { return QString::fromUtf8(readFile(m_work.filePath(QStringLiteral("peer.log")))); }
    QString relayImage(const QString &name) const
    {
        return QStringLiteral("docker://localhost:%1/%2").arg(m_fixture->relayPort).arg(name);
    }
    // The relay's answer to GET /v2/ without a credential: its WWW-Authenticate values.
    QList<QByteArray> challengeThroughRelay();
    bool roundTrip(peers::SimulatedPalletNode &node);

    QTemporaryDir m_work;
    std::unique_ptr<RelayFixture> m_fixture;
    std::unique_ptr<peers::SimulatedPalletNode> m_node;
    QString m_certDir;
    QProcess m_peer;
    QProcess m_registry;
    quint16 m_registryPort = 0;
    QByteArray m_manifestDigest;
};

bool TstRelayImagePull::runProcess(const QString &program, const QStringList &args, QByteArray *output, int timeoutMs)
{
    QProcess p;
    p.start(program, args);
    if (!p.waitForStarted(10000))
        return false;
    if (!spinUntil([&] { return p.state() == QProcess::NotRunning; }, timeoutMs)) {
        p.kill();
        p.waitForFinished(5000);
        qWarning("%s timed out", qPrintable(program));
        return false;
    }
    const QByteArray out = p.readAllStandardOutput();
    if (output)
        *output = out;
    if (p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0) {
        qWarning("%s %s failed (%d): %s", qPrintable(program), qPrintable(args.value(0)), p.exitCode(),
                 p.readAllStandardError().constData());
        return false;
    }
    return true;
}

void TstRelayImagePull::initTestCase()
{
    const QString registryBin = QStandardPaths::findExecutable(QStringLiteral("docker-registry"));
    const QString skopeoBin = QStandardPaths::findExecutable(QStringLiteral("skopeo"));
    COREFLOW_SKIP_OR_FAIL(registryBin.isEmpty() || skopeoBin.isEmpty()
                              ? QStringLiteral("docker-registry and skopeo are not installed (Debian packages docker-registry, skopeo)")
                              : QString());
    QVERIFY2(QFile::exists(QStringLiteral("/usr/bin/python3")), "Debian package python3 is needed for the peers");
    QVERIFY2(!QStandardPaths::findExecutable(QStringLiteral("openssl")).isEmpty(), "Debian package openssl is needed");
    const QString peerDir = qEnvironmentVariable("COREFLOW_REGISTRY_PEER_DIR");
    QVERIFY2(QFile::exists(peerDir + QStringLiteral("/cloudly_registry_peer.py")), qPrintable(peerDir));
    QVERIFY(m_work.isValid());
    log.install();
    QLoggingCategory::setFilterRules(QStringLiteral("coreflow.registry.info=true"));

    // Cloudly's one origin: the session (WebSocket) and, behind the same TLS front, the registry.
    m_fixture = std::make_unique<RelayFixture>(true, [](peers::LoopbackCloudly::Options &o) { o.httpFront = true; });
    const QString cloudlyOrigin = QStringLiteral("localhost:%1").arg(m_fixture->cloudly->port());

    // The key the token peer signs with, and the certificate the registry trusts for it.
    const QString signerKey = m_work.filePath(QStringLiteral("signer.key"));
    const QString signerCert = m_work.filePath(QStringLiteral("signer.crt"));
    QVERIFY(runProcess(QStringLiteral("openssl"),
                       {QStringLiteral("req"), QStringLiteral("-x509"), QStringLiteral("-newkey"), QStringLiteral("rsa:2048"),
                        QStringLiteral("-nodes"), QStringLiteral("-keyout"), signerKey, QStringLiteral("-out"), signerCert,
                        QStringLiteral("-days"), QStringLiteral("1"), QStringLiteral("-subj"),
                        QStringLiteral("/CN=coreflow test token signer")}));

    // The token peer (plain HTTP behind the front), then the registry whose realm is Cloudly's origin.
    m_registryPort = RelayFixture::freePort();
    m_peer.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    m_peer.start(QStringLiteral("/usr/bin/python3"),
                 {peerDir + QStringLiteral("/cloudly_registry_peer.py"), QStringLiteral("--plain"),
                  QStringLiteral("--token-cert"), signerCert, QStringLiteral("--token-key"), signerKey,
                  QStringLiteral("--issuer"), QStringLiteral("coreflow-test-cloudly"), QStringLiteral("--registry-port"),
                  QString::number(m_registryPort), QStringLiteral("--log"), m_work.filePath(QStringLiteral("peer.log"))});
    QVERIFY(spinUntil([this] { return m_peer.canReadLine(); }, 15000));
    const QByteArray portLine = m_peer.readLine().trimmed();
    QVERIFY2(portLine.startsWith("PORT "), portLine.constData());
    m_fixture->cloudly->setHttpPassthrough(quint16(portLine.mid(5).toUInt()), {QStringLiteral("/token")});

    const QString config = QStringLiteral(
                               "version: 0.1\n"
                               "log:\n  level: info\n"
                               "storage:\n  filesystem:\n    rootdirectory: %1\n"
                               "http:\n  addr: 127.0.0.1:%2\n  secret: coreflow-test\n"
                               "auth:\n  token:\n    realm: https://%3/token\n    service: %3\n"
                               "    issuer: coreflow-test-cloudly\n    rootcertbundle: %4\n")
                               .arg(m_work.filePath(QStringLiteral("store")))
                               .arg(m_registryPort)
                               .arg(cloudlyOrigin, signerCert);
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

    // A small image built by hand, pushed straight to the registry (its token through Cloudly's front).
    QByteArray digest;
    QVERIFY(runProcess(QStringLiteral("/usr/bin/python3"),
                       {peerDir + QStringLiteral("/make_oci_layout.py"), m_work.filePath(QStringLiteral("small")),
                        QStringLiteral("v1"), QStringLiteral("3000000")},
                       &digest));
    m_manifestDigest = digest.trimmed();
    QVERIFY(m_manifestDigest.startsWith("sha256:"));
    QVERIFY(runProcess(QStringLiteral("skopeo"),
                       {QStringLiteral("copy"), QStringLiteral("--preserve-digests"), QStringLiteral("--dest-tls-verify=false"),
                        QStringLiteral("--dest-creds"), kPullUser + QLatin1Char(':') + kPullPassword,
                        QStringLiteral("oci:%1:v1").arg(m_work.filePath(QStringLiteral("small"))),
                        QStringLiteral("docker://127.0.0.1:%1/coreflow/small:v1").arg(m_registryPort)}));

    // The relay: the whole composition root, its Cloudly session through the same front.
    QVERIFY(m_fixture->startRelay());
    m_certDir = m_work.filePath(QStringLiteral("relay-certs"));
    QVERIFY(QDir().mkpath(m_certDir));
    QVERIFY(m_fixture->ca.writeCaPem(m_certDir + QStringLiteral("/ca.crt")));
    m_node = m_fixture->registeredNode(QStringLiteral("node-a"));
    QVERIFY(m_node && m_node->session());
}

void TstRelayImagePull::init()
{
    log.install();
}

void TstRelayImagePull::cleanupTestCase()
{
    m_node.reset();
    m_fixture.reset();
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
    QCOMPARE(log.count(kPullPassword), 0);
    QCOMPARE(log.count(basic), 0);
}

QList<QByteArray> TstRelayImagePull::challengeThroughRelay()
{
    QSslSocket s;
    QSslConfiguration conf = QSslConfiguration::defaultConfiguration();
    conf.setCaCertificates({m_fixture->ca.caCertificate()});
    s.setSslConfiguration(conf);
    s.connectToHostEncrypted(QStringLiteral("localhost"), m_fixture->relayPort);
    if (!spinUntil([&] { return s.isEncrypted(); }, 10000))
        return {};
    s.write("GET /v2/ HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    QByteArray answer;
    spinUntil([&] {
        answer += s.readAll();
        return s.state() != QAbstractSocket::ConnectedState || answer.contains("\r\n\r\n");
    }, 10000);
    QList<QByteArray> challenges;
    const QList<QByteArray> lines = answer.left(answer.indexOf("\r\n\r\n")).split('\n');
    if (lines.isEmpty() || !lines.first().contains(" 401 "))
        return {};
    for (const QByteArray &line : lines) {
        const qsizetype colon = line.indexOf(':');
        if (colon > 0 && line.left(colon).trimmed().toLower() == "www-authenticate")
            challenges.append(line.mid(colon + 1).trimmed());
    }
    return challenges;
}

bool TstRelayImagePull::roundTrip(peers::SimulatedPalletNode &node)
{
    bool answered = false;
    bool accepted = false;
    node.callWithSession(QStringLiteral("reportRuntimeAssignmentObservation"),
                         {{QStringLiteral("observation"), QJsonObject{{QStringLiteral("state"), QStringLiteral("pulling")}}}},
                         [&](const peers::PeerFrame &frame) {
                             answered = true;
                             accepted = !frame.hasError();
                         });
    // The fixture's clock is manual and stands still: a forwarded request cannot time out here.
    return spinUntil([&] { return answered; }, 5000) && accepted;
}

// IP-08/IP-09/CL-04: GET /v2/ on the relay's listener port is forwarded to Cloudly's origin (the
// registry behind it answers 401); the realm names the relay's origin, the service stays the
// registry's, byte for byte.
void TstRelayImagePull::challengeRealmIsTheRelaysOrigin_IP08_IP09_CL04()
{
    const QList<QByteArray> challenges = challengeThroughRelay();
    const QByteArray cloudlyService = "localhost:" + QByteArray::number(m_fixture->cloudly->port());
    QCOMPARE(challenges,
             QList<QByteArray>{"Bearer realm=\"https://localhost:" + QByteArray::number(m_fixture->relayPort)
                               + "/token\",service=\"" + cloudlyService + "\""});
    QVERIFY(m_fixture->cloudly->pipedHttpPaths().contains(QStringLiteral("/v2/")));
}

// IP-01/IP-04/IP-07/IP-08: skopeo copies the image through the relay, following the rewritten realm to
// the relay's token path (forwarded to Cloudly with the node's credential); the pulled manifest and
// every blob match their digests.
void TstRelayImagePull::skopeoCopyThroughTheRunningRelay_IP01_IP04_IP07_IP08()
{
    const int tokensBefore = int(peerLog().count(QStringLiteral("token path=/token")));
    const int tokenLinesBefore = log.count(QStringLiteral("GET token -> 200"));
    const QString out = m_work.filePath(QStringLiteral("pulled"));
    QVERIFY(runProcess(QStringLiteral("skopeo"),
                       {QStringLiteral("copy"), QStringLiteral("--src-cert-dir"), m_certDir, QStringLiteral("--src-creds"),
                        kPullUser + QLatin1Char(':') + kPullPassword, relayImage(QStringLiteral("coreflow/small:v1")),
                        QStringLiteral("dir:") + out}));

    QCOMPARE("sha256:" + sha256Hex(readFile(out + QStringLiteral("/manifest.json"))), m_manifestDigest);
    const QJsonObject manifest = QJsonDocument::fromJson(readFile(out + QStringLiteral("/manifest.json"))).object();
    QStringList digests{manifest.value(QStringLiteral("config")).toObject().value(QStringLiteral("digest")).toString()};
    for (const auto layer : manifest.value(QStringLiteral("layers")).toArray())
        digests.append(layer.toObject().value(QStringLiteral("digest")).toString());
    QCOMPARE(digests.size(), 2);
    for (const QString &d : digests) {
        const QByteArray blob = readFile(out + QLatin1Char('/') + d.mid(7));
        QVERIFY2(!blob.isEmpty(), qPrintable(d));
        QCOMPARE(QStringLiteral("sha256:") + QString::fromLatin1(sha256Hex(blob)), d);
    }
    // The token request went through the relay (its log line for the token path), reached Cloudly's
    // token endpoint with the node's credential (IP-04), and the blobs came through the relay too.
    QVERIFY(log.count(QStringLiteral("GET token -> 200")) > tokenLinesBefore);
    const QString peer = peerLog();
    QVERIFY2(peer.count(QStringLiteral("token path=/token")) > tokensBefore, qPrintable(peer));
    QVERIFY(peer.contains(QStringLiteral("authorization=present")));
    QVERIFY(log.count(QStringLiteral("GET blob -> 200")) >= 2);
    QVERIFY(log.count(QStringLiteral("GET manifest -> 200")) >= 1);
}

// IP-01/IP-07: skopeo inspect --raw through the relay returns the pushed manifest, byte for byte.
void TstRelayImagePull::skopeoInspectThroughTheRunningRelay_IP01_IP07()
{
    QByteArray raw;
    QVERIFY(runProcess(QStringLiteral("skopeo"),
                       {QStringLiteral("inspect"), QStringLiteral("--raw"), QStringLiteral("--cert-dir"), m_certDir,
                        QStringLiteral("--creds"), kPullUser + QLatin1Char(':') + kPullPassword,
                        relayImage(QStringLiteral("coreflow/small:v1"))},
                       &raw));
    QCOMPARE("sha256:" + sha256Hex(raw), m_manifestDigest);
}

// CL-02/CL-05 next to IP-13: while skopeo pulls on the listener's port, the registered node's
// WebSocket session on that same port keeps forwarding, and a second node connects and registers.
void TstRelayImagePull::nodeSessionsKeepWorkingDuringAPull_CL02_CL05_IP13()
{
    QVERIFY(roundTrip(*m_node));
    QProcess skopeo;
    const QString out = m_work.filePath(QStringLiteral("pulled-again"));
    skopeo.start(QStringLiteral("skopeo"),
                 {QStringLiteral("copy"), QStringLiteral("--src-cert-dir"), m_certDir, QStringLiteral("--src-creds"),
                  kPullUser + QLatin1Char(':') + kPullPassword, relayImage(QStringLiteral("coreflow/small:v1")),
                  QStringLiteral("dir:") + out});
    QVERIFY(skopeo.waitForStarted(10000));
    int roundTripsDuringPull = 0;
    std::unique_ptr<peers::SimulatedPalletNode> second;
    while (skopeo.state() != QProcess::NotRunning && roundTripsDuringPull < 200) {
        QVERIFY(roundTrip(*m_node));
        ++roundTripsDuringPull;
        if (!second)
            second = m_fixture->registeredNode(QStringLiteral("node-b"));
    }
    QVERIFY(spinUntil([&] { return skopeo.state() == QProcess::NotRunning; }, 90000));
    QCOMPARE(skopeo.exitCode(), 0);
    QVERIFY(roundTripsDuringPull >= 1);
    QVERIFY(second && second->session());
    QVERIFY(roundTrip(*second));
    QVERIFY(roundTrip(*m_node));
    QCOMPARE("sha256:" + sha256Hex(readFile(out + QStringLiteral("/manifest.json"))), m_manifestDigest);
    qInfo("%d forwarded round trips while skopeo pulled through the same port", roundTripsDuringPull);
}

COREFLOW_EPOLL_TEST_MAIN(TstRelayImagePull)
#include "tst_relayimagepull.moc"
