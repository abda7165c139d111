// peers_selftest: the loopback peers checked against each other, without the relay. A
// SimulatedPalletNode dials LoopbackCloudly directly (Cloudly serves the node methods too).
#include "tests/peers/loopbackcloudly.h"
#include "tests/peers/peercontractnames.h"
#include "tests/peers/simulatedpalletnode.h"
#include "tests/peers/testcertificateauthority.h"

#include <QDateTime>
#include <QJsonDocument>
#include <QSignalSpy>
#include <QSslSocket>
#include <QTemporaryDir>
#include <QTest>

#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

using namespace coreflow;
using namespace coreflow::peers;

namespace {

X509 *readCert(const QByteArray &pem)
{
    BIO *bio = BIO_new_mem_buf(pem.constData(), int(pem.size()));
    X509 *cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
    BIO_free(bio);
    return cert;
}

// X509_V_OK (0) when leafPem chains to caPem and names host; else the OpenSSL verify error.
int verifyWithOpenSsl(const QByteArray &leafPem, const QByteArray &caPem, const QString &host)
{
    X509 *leaf = readCert(leafPem);
    X509 *ca = readCert(caPem);
    X509_STORE *store = X509_STORE_new();
    X509_STORE_add_cert(store, ca);
    X509_STORE_CTX *ctx = X509_STORE_CTX_new();
    X509_STORE_CTX_init(ctx, store, leaf, nullptr);
    const QByteArray h = host.toUtf8();
    QHostAddress ip;
    if (ip.setAddress(host))
        X509_VERIFY_PARAM_set1_ip_asc(X509_STORE_CTX_get0_param(ctx), h.constData());
    else
        X509_VERIFY_PARAM_set1_host(X509_STORE_CTX_get0_param(ctx), h.constData(), size_t(h.size()));
    const int ok = X509_verify_cert(ctx);
    const int error = ok == 1 ? X509_V_OK : X509_STORE_CTX_get_error(ctx);
    X509_STORE_CTX_free(ctx);
    X509_STORE_free(store);
    X509_free(ca);
    X509_free(leaf);
    return error;
}

bool keyMatches(const QByteArray &certPem, const QByteArray &keyPem)
{
    X509 *cert = readCert(certPem);
    BIO *bio = BIO_new_mem_buf(keyPem.constData(), int(keyPem.size()));
    EVP_PKEY *key = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
    BIO_free(bio);
    const bool ok = cert && key && X509_check_private_key(cert, key) == 1;
    EVP_PKEY_free(key);
    X509_free(cert);
    return ok;
}

QJsonObject responseOf(const PeerFrame &frame)
{
    const auto r = frame.responseObject();
    return r ? r.value() : QJsonObject{};
}

} // namespace

class TestPeers : public QObject {
    Q_OBJECT

    // One CA for the whole test (key generation is the slow part).
    TestCertificateAuthority m_ca;

    SimulatedPalletNode::Options nodeOptions(const LoopbackCloudly &cloudly, const QString &nodeId) const
    {
        SimulatedPalletNode::Options o;
        o.nodeId = nodeId;
        o.bearer = "bearer-" + nodeId.toUtf8();
        o.url = cloudly.url();
        o.caCertificates = {m_ca.caCertificate()};
        return o;
    }

    LoopbackCloudly::Options cloudlyOptions() const
    {
        LoopbackCloudly::Options o;
        o.bearer = "relay-bearer";
        o.relayOrigin = QStringLiteral("https://localhost:4443");
        return o;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(QSslSocket::supportsSsl());
        QVERIFY(!m_ca.caCertificate().isNull());
        QVERIFY(m_ca.caPem().startsWith("-----BEGIN CERTIFICATE-----"));
    }

    void caIssuesCertificateThatVerifies()
    {
        const IssuedCertificate leaf = m_ca.issueLocalhost();
        QVERIFY(!leaf.isNull());
        QVERIFY(!leaf.key.isNull());
        QVERIFY(leaf.keyPem.startsWith("-----BEGIN PRIVATE KEY-----")); // PKCS#8
        QCOMPARE(leaf.chain.size(), 2);
        QCOMPARE(leaf.chain.at(1), m_ca.caCertificate());
        QVERIFY(leaf.certPem.endsWith(m_ca.caPem()));                     // leaf then CA
        QCOMPARE(leaf.cert.issuerInfo(QSslCertificate::CommonName), QStringList{QStringLiteral("Coreflow Test CA")});
        QCOMPARE(verifyWithOpenSsl(leaf.certPem, m_ca.caPem(), QStringLiteral("localhost")), X509_V_OK);
        QCOMPARE(verifyWithOpenSsl(leaf.certPem, m_ca.caPem(), QStringLiteral("127.0.0.1")), X509_V_OK);
        QVERIFY(verifyWithOpenSsl(leaf.certPem, m_ca.caPem(), QStringLiteral("relay.example")) != X509_V_OK);
        QVERIFY(keyMatches(leaf.certPem, leaf.keyPem));

        TestCertificateAuthority other(QStringLiteral("Other CA"), TestCertificateAuthority::KeyType::Rsa2048);
        const IssuedCertificate foreign = other.issueForHost(QStringLiteral("relay.example"));
        QVERIFY(!foreign.key.isNull());
        QCOMPARE(foreign.key.algorithm(), QSsl::Rsa);
        QCOMPARE(verifyWithOpenSsl(foreign.certPem, other.caPem(), QStringLiteral("relay.example")), X509_V_OK);
        QVERIFY(verifyWithOpenSsl(foreign.certPem, m_ca.caPem(), QStringLiteral("relay.example")) != X509_V_OK);

        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QVERIFY(m_ca.writeCaPem(dir.filePath(QStringLiteral("ca.pem"))));
        QCOMPARE(QSslCertificate::fromPath(dir.filePath(QStringLiteral("ca.pem"))), QList{m_ca.caCertificate()});
    }

    void expiredCertificateIsExpired()
    {
        const IssuedCertificate old =
            m_ca.issueExpired(QStringLiteral("localhost"), {QStringLiteral("localhost")}, {QHostAddress(QHostAddress::LocalHost)});
        QVERIFY(!old.isNull());
        QVERIFY(old.cert.expiryDate() < QDateTime::currentDateTimeUtc());
        QCOMPARE(verifyWithOpenSsl(old.certPem, m_ca.caPem(), QStringLiteral("localhost")), X509_V_ERR_CERT_HAS_EXPIRED);
    }

    void mismatchedKeyDoesNotMatch()
    {
        const IssuedCertificate bad = m_ca.issueMismatchedForHost(QStringLiteral("localhost"));
        QVERIFY(!bad.isNull());
        QVERIFY(!bad.key.isNull());
        QCOMPARE(verifyWithOpenSsl(bad.certPem, m_ca.caPem(), QStringLiteral("localhost")), X509_V_OK);
        QVERIFY(!keyMatches(bad.certPem, bad.keyPem));
    }

    void nodeRegistersAndReceivesBinding()
    {
        LoopbackCloudly cloudly(m_ca, cloudlyOptions());
        QVERIFY(cloudly.listen());
        QVERIFY(cloudly.port() != 0);
        QCOMPARE(cloudly.url(), QUrl(QStringLiteral("wss://localhost:%1/").arg(cloudly.port())));
        cloudly.setRelayRegistrationGeneration(7);
        QSignalSpy connectedSpy(&cloudly, &LoopbackCloudly::relayConnected);
        QSignalSpy boundSpy(&cloudly, &LoopbackCloudly::palletSessionRegistered);

        SimulatedPalletNode node(nodeOptions(cloudly, QStringLiteral("node-a")));
        QSignalSpy nodeConnected(&node, &SimulatedPalletNode::connected);
        QSignalSpy registered(&node, &SimulatedPalletNode::sessionRegistered);
        node.open();
        QTRY_COMPARE(nodeConnected.size(), 1);
        QTRY_COMPARE(connectedSpy.size(), 1);
        QVERIFY(node.sslErrors().isEmpty());

        std::optional<PeerFrame> answer;
        const QString id = node.registerSession([&](const PeerFrame &f) { answer = f; });
        QVERIFY(!id.isEmpty());
        QTRY_COMPARE(registered.size(), 1);
        QVERIFY(answer && !answer->hasError());
        QCOMPARE(answer->correlationId, id);
        QVERIFY(node.session());
        QCOMPARE(node.session()->nodeId, QStringLiteral("node-a"));
        QCOMPARE(node.session()->clusterId, QStringLiteral("cluster-1"));
        QCOMPARE(node.session()->relayRegistrationGeneration, 7);
        QVERIFY(!node.session()->sessionId.isEmpty());
        QCOMPARE(responseOf(*answer).value(QStringLiteral("offer")).toObject(),
                 (QJsonObject{{QStringLiteral("sessionKind"), QStringLiteral("palletRuntime")},
                              {QStringLiteral("release"), QStringLiteral("33.1.0")}}));

        QCOMPARE(cloudly.callCount(method::registerPalletRuntimeSession), 1);
        QCOMPARE(cloudly.lastRawRequest(method::registerPalletRuntimeSession), node.registrationRequest());
        const QJsonObject sent = QJsonDocument::fromJson(node.registrationRequest()).object();
        QCOMPARE(sent.value(QStringLiteral("nodeId")).toString(), QStringLiteral("node-a"));
        QCOMPARE(sent.value(QStringLiteral("authorization")).toString(), QStringLiteral("bearer-node-a"));
        QVERIFY(!sent.value(QStringLiteral("nodeInstanceNonce")).toString().isEmpty());
        QTRY_COMPARE(boundSpy.size(), 1);
        QCOMPARE(cloudly.bindingFor(QStringLiteral("node-a")), node.session());

        // The five other node methods are accepted by default; the session binding travels along.
        std::optional<PeerFrame> reported;
        node.callWithSession(method::reportRuntimeAssignmentObservation, {{QStringLiteral("observation"), 1}},
                             [&](const PeerFrame &f) { reported = f; });
        QTRY_VERIFY(reported.has_value());
        QCOMPARE(responseOf(*reported), (QJsonObject{{QStringLiteral("accepted"), true}}));
        const QJsonObject observed =
            QJsonDocument::fromJson(cloudly.lastRawRequest(method::reportRuntimeAssignmentObservation)).object();
        QCOMPARE(observed.value(QStringLiteral("session")).toObject(), node.sessionJson());
        QCOMPARE(observed.value(QStringLiteral("observation")).toInt(), 1);
    }

    void pushReachesNodeAndAckReturns()
    {
        LoopbackCloudly cloudly(m_ca, cloudlyOptions());
        QVERIFY(cloudly.listen());
        SimulatedPalletNode node(nodeOptions(cloudly, QStringLiteral("node-b")));
        QSignalSpy registered(&node, &SimulatedPalletNode::sessionRegistered);
        QSignalSpy pushed(&node, &SimulatedPalletNode::pushReceived);
        connect(&node, &SimulatedPalletNode::connected, &node, [&] { node.registerSession(); });
        node.open();
        QTRY_COMPARE(registered.size(), 1);

        const QByteArray raw = PeerEnvelope::compact(
            {{QStringLiteral("session"), node.sessionJson()},
             {QStringLiteral("assignment"), QJsonObject{{QStringLiteral("id"), QStringLiteral("a-1")}}}});
        std::optional<PeerFrame> ack;
        QSignalSpy answeredSpy(&cloudly, &LoopbackCloudly::pushAnswered);
        const QString id = cloudly.push(method::applyRuntimeAssignment, raw, [&](const PeerFrame &f) { ack = f; });
        QVERIFY(!id.isEmpty());
        QCOMPARE(cloudly.pendingPushCount(), 1);
        QTRY_COMPARE(pushed.size(), 1);
        QCOMPARE(pushed.at(0).at(0).toString(), QString(method::applyRuntimeAssignment));
        QCOMPARE(node.lastPushRawRequest(method::applyRuntimeAssignment), raw);
        QTRY_VERIFY(ack.has_value());
        QCOMPARE(answeredSpy.size(), 1);
        QCOMPARE(ack->correlationId, id);
        QVERIFY(!ack->hasError());
        QCOMPARE(responseOf(*ack), (QJsonObject{{QStringLiteral("acknowledged"), true},
                                                {QStringLiteral("nodeId"), QStringLiteral("node-b")}}));
        QCOMPARE(ack->request.toByteArray(), raw); // the answer echoes the request bytes
        QCOMPARE(cloudly.pendingPushCount(), 0);

        // Scripted push answers: a refusal, then silence.
        node.setPushAnswer(method::applyRuntimeNetworkProjection,
                           Answer::refuse(refusal::requestInvalid, QStringLiteral("scripted")));
        std::optional<PeerFrame> refused;
        cloudly.push(method::applyRuntimeNetworkProjection, QJsonObject{}, [&](const PeerFrame &f) { refused = f; });
        QTRY_VERIFY(refused.has_value());
        QVERIFY(refused->hasError());
        QCOMPARE(refused->errorRefusal(), (PeerRefusal{QString(refusal::requestInvalid), QStringLiteral("scripted")}));

        node.setPushAnswer(method::applyRuntimeNetworkDnsLeaseRenewal, Answer::silence());
        cloudly.push(method::applyRuntimeNetworkDnsLeaseRenewal, QJsonObject{});
        QTRY_COMPARE(node.pushCount(method::applyRuntimeNetworkDnsLeaseRenewal), 1);
        QCOMPARE(cloudly.pendingPushCount(), 1);

        // An unknown push is refused by name.
        std::optional<PeerFrame> unknown;
        cloudly.push(QStringLiteral("applySomethingElse"), QJsonObject{}, [&](const PeerFrame &f) { unknown = f; });
        QTRY_VERIFY(unknown.has_value());
        QCOMPARE(unknown->errorRefusal().name, QString(refusal::methodNotServed));
    }

    void cloudlySessionHandshake()
    {
        qint64 fakeNow = 1'700'000'000'000;
        LoopbackCloudly::Options options = cloudlyOptions();
        options.now = [&] { return fakeNow; };
        options.identityLifetimeMs = 60'000;
        LoopbackCloudly cloudly(m_ca, options);
        QVERIFY(cloudly.listen());
        // Any client will do: the node's socket plays the relay here.
        SimulatedPalletNode client(nodeOptions(cloudly, QStringLiteral("relay")));
        QSignalSpy up(&client, &SimulatedPalletNode::connected);
        client.open();
        QTRY_COMPARE(up.size(), 1);

        std::optional<PeerFrame> a;
        auto keep = [&](const PeerFrame &f) { a = f; };
        // The relay's offer on the Cloudly hop (docs/contract.md §2.1).
        const QJsonObject cloudlyOffer{{QStringLiteral("sessionKind"), QStringLiteral("cloudlyClient")},
                                       {QStringLiteral("release"), QStringLiteral("33.1.0")}};

        client.call(method::exchangeClusterRelayAuthorization, QJsonObject{{QStringLiteral("authorization"), QStringLiteral("wrong")}}, keep);
        QTRY_VERIFY(a.has_value());
        QCOMPARE(a->errorRefusal().name, QString(refusal::relayIdentityUnverified));

        a.reset();
        client.call(method::exchangeClusterRelayAuthorization, QByteArray(R"({"authorization":"relay-bearer"})"), keep);
        QTRY_VERIFY(a.has_value());
        QVERIFY(!a->hasError());
        const QJsonObject identity = responseOf(*a).value(QStringLiteral("identity")).toObject();
        // ClusterIdentity (docs/contract.md §4): exactly token (non-empty string), clusterId, expiresAt.
        QCOMPARE(identity.keys(), (QStringList{QStringLiteral("clusterId"), QStringLiteral("expiresAt"), QStringLiteral("token")}));
        QVERIFY(!identity.value(QStringLiteral("token")).toString().isEmpty());
        QCOMPARE(identity.value(QStringLiteral("clusterId")).toString(), QStringLiteral("cluster-1"));
        QCOMPARE(qint64(identity.value(QStringLiteral("expiresAt")).toDouble()), fakeNow + 60'000);
        const QString token = identity.value(QStringLiteral("token")).toString();

        QSignalSpy sessionSpy(&cloudly, &LoopbackCloudly::sessionRegistered);
        a.reset();
        client.call(method::registerCloudlyClientSession,
                    QJsonObject{{QStringLiteral("identity"), QJsonObject{{QStringLiteral("token"), token}}},
                                {QStringLiteral("offer"), cloudlyOffer}},
                    keep);
        QTRY_COMPARE(sessionSpy.size(), 1);
        QTRY_VERIFY(a.has_value());
        QCOMPARE(responseOf(*a).value(QStringLiteral("offer")).toObject(), cloudlyOffer);

        a.reset();
        client.call(method::refreshClusterIdentity,
                    QJsonObject{{QStringLiteral("identity"), QJsonObject{{QStringLiteral("token"), token}}}}, keep);
        QTRY_VERIFY(a.has_value());
        QVERIFY(!a->hasError());
        QVERIFY(responseOf(*a).value(QStringLiteral("identity")).toObject().value(QStringLiteral("token")).toString() != token);
        QCOMPARE(cloudly.issuedIdentities().size(), 2);

        // The token expires by Cloudly's clock.
        fakeNow += 60'000;
        a.reset();
        client.call(method::registerCloudlyClientSession,
                    QJsonObject{{QStringLiteral("identity"), QJsonObject{{QStringLiteral("token"), token}}},
                                {QStringLiteral("offer"), cloudlyOffer}},
                    keep);
        QTRY_VERIFY(a.has_value());
        QCOMPARE(a->errorRefusal().name, QString(refusal::relayIdentityUnverified));
        QCOMPARE(sessionSpy.size(), 1);

        a.reset();
        client.call(method::getClusterConfig, QByteArray("{}"), keep);
        QTRY_VERIFY(a.has_value());
        const QJsonObject cluster = responseOf(*a).value(QStringLiteral("cluster")).toObject();
        // ClusterConfig (docs/contract.md §4): exactly { id, name, relay: { origin } | null, nodes }.
        QCOMPARE(cluster.keys(), (QStringList{QStringLiteral("id"), QStringLiteral("name"), QStringLiteral("nodes"), QStringLiteral("relay")}));
        QCOMPARE(cluster.value(QStringLiteral("id")).toString(), QStringLiteral("cluster-1"));
        QVERIFY(cluster.value(QStringLiteral("name")).isString());
        QVERIFY(cluster.value(QStringLiteral("nodes")).isArray());
        QCOMPARE(cluster.value(QStringLiteral("relay")).toObject(),
                 (QJsonObject{{QStringLiteral("origin"), QStringLiteral("https://localhost:4443")}}));

        a.reset();
        client.call(method::getClusterRelayCertificate, QJsonObject{{QStringLiteral("domain"), QStringLiteral("localhost")}}, keep);
        QTRY_VERIFY(a.has_value());
        const QJsonObject certObject = responseOf(*a).value(QStringLiteral("certificate")).toObject();
        // RelayCertificateMaterial (docs/contract.md §4): exactly { domain, certificatePem, privateKeyPem }.
        QCOMPARE(certObject.keys(), (QStringList{QStringLiteral("certificatePem"), QStringLiteral("domain"), QStringLiteral("privateKeyPem")}));
        QCOMPARE(certObject.value(QStringLiteral("domain")).toString(), QStringLiteral("localhost"));
        const QByteArray certificatePem = certObject.value(QStringLiteral("certificatePem")).toString().toLatin1();
        const QByteArray privateKeyPem = certObject.value(QStringLiteral("privateKeyPem")).toString().toLatin1();
        QCOMPARE(verifyWithOpenSsl(certificatePem, m_ca.caPem(), QStringLiteral("localhost")), X509_V_OK);
        QCOMPARE(verifyWithOpenSsl(certificatePem, m_ca.caPem(), QStringLiteral("127.0.0.1")), X509_V_OK);
        QVERIFY(keyMatches(certificatePem, privateKeyPem));

        // Scripted certificate: an expired one for another domain.
        const IssuedCertificate expired = m_ca.issueExpired(QStringLiteral("other.example"), {QStringLiteral("other.example")}, {});
        cloudly.setRelayCertificate(expired, QStringLiteral("other.example"));
        a.reset();
        client.call(method::getClusterRelayCertificate, QJsonObject{{QStringLiteral("domain"), QStringLiteral("localhost")}}, keep);
        QTRY_VERIFY(a.has_value());
        QCOMPARE(responseOf(*a), LoopbackCloudly::certificateResponse(QStringLiteral("other.example"), expired));

        a.reset();
        client.call(QStringLiteral("noSuchMethod"), QByteArray("{}"), keep);
        QTRY_VERIFY(a.has_value());
        QCOMPARE(a->errorRefusal(), (PeerRefusal{QString(refusal::methodNotServed),
                                                        QStringLiteral("cloudly serves no method noSuchMethod")}));
        QCOMPARE(cloudly.callCount(QStringLiteral("noSuchMethod")), 1);
    }

    void scriptedAnswersAndSharedCorrelationIds()
    {
        LoopbackCloudly cloudly(m_ca, cloudlyOptions());
        QVERIFY(cloudly.listen());
        SimulatedPalletNode a(nodeOptions(cloudly, QStringLiteral("node-a")));
        SimulatedPalletNode b(nodeOptions(cloudly, QStringLiteral("node-b")));
        QSignalSpy upA(&a, &SimulatedPalletNode::connected);
        QSignalSpy upB(&b, &SimulatedPalletNode::connected);
        a.open();
        b.open();
        QTRY_COMPARE(upA.size(), 1);
        QTRY_COMPARE(upB.size(), 1);
        QTRY_COMPARE(cloudly.connectionCount(), 2);

        // Both nodes use the same correlation id; each gets its own answer.
        std::optional<PeerFrame> answerA, answerB;
        QCOMPARE(a.registerSession([&](const PeerFrame &f) { answerA = f; }, QStringLiteral("1")), QStringLiteral("1"));
        QCOMPARE(b.registerSession([&](const PeerFrame &f) { answerB = f; }, QStringLiteral("1")), QStringLiteral("1"));
        QTRY_VERIFY(answerA && answerB);
        QCOMPARE(a.session()->nodeId, QStringLiteral("node-a"));
        QCOMPARE(b.session()->nodeId, QStringLiteral("node-b"));
        QVERIFY(a.session()->sessionId != b.session()->sessionId);

        // Delayed answer wrapping the default; a fixed refusal; silence.
        cloudly.setHandler(method::getRuntimeRegistryCredential,
                           [&](const PeerFrame &f, const QJsonObject &r) { return cloudly.defaultAnswer(f, r).after(50); });
        cloudly.setAnswer(method::getRuntimeManagedVpnCredential,
                          Answer::refuse(refusal::relayVpnHubAbsent, QStringLiteral("no hub")));
        cloudly.setAnswer(method::reportRuntimeNetworkProtection, Answer::silence());
        std::optional<PeerFrame> delayed, refused;
        bool silentAnswered = false;
        const qint64 start = QDateTime::currentMSecsSinceEpoch();
        a.callWithSession(method::getRuntimeRegistryCredential, {}, [&](const PeerFrame &f) { delayed = f; });
        a.callWithSession(method::getRuntimeManagedVpnCredential, {}, [&](const PeerFrame &f) { refused = f; });
        a.callWithSession(method::reportRuntimeNetworkProtection, {}, [&](const PeerFrame &) { silentAnswered = true; });
        QTRY_VERIFY(delayed && refused);
        QVERIFY(QDateTime::currentMSecsSinceEpoch() - start >= 45);
        QCOMPARE(responseOf(*delayed), (QJsonObject{{QStringLiteral("accepted"), true}}));
        QCOMPARE(refused->errorRefusal().name, QString(refusal::relayVpnHubAbsent));
        QTRY_COMPARE(cloudly.callCount(method::reportRuntimeNetworkProtection), 1);
        QVERIFY(!silentAnswered);
        QCOMPARE(a.pendingCallCount(), 1);

        // A raw response is answered byte-for-byte.
        const QByteArray rawResponse = R"({ "accepted" : true, "z": [1, 2] })";
        cloudly.setAnswer(method::reportRuntimeAssignmentTerminalReceipt, Answer::respondRaw(rawResponse));
        std::optional<PeerFrame> rawAnswer;
        b.callWithSession(method::reportRuntimeAssignmentTerminalReceipt, {}, [&](const PeerFrame &f) { rawAnswer = f; });
        QTRY_VERIFY(rawAnswer.has_value());
        QCOMPARE(rawAnswer->response.toByteArray(), rawResponse);

        // Answer::dropConnection aborts the caller's socket.
        QSignalSpy downB(&b, &SimulatedPalletNode::disconnected);
        cloudly.setAnswer(method::getRuntimeRegistryCredential, Answer::dropConnection());
        b.callWithSession(method::getRuntimeRegistryCredential);
        QTRY_COMPARE(downB.size(), 1);
        QTRY_COMPARE(cloudly.connectionCount(), 1);
    }

    void listeningAndConnectionControl()
    {
        LoopbackCloudly cloudly(m_ca, cloudlyOptions());
        QVERIFY(cloudly.listen());
        const quint16 port = cloudly.port();
        SimulatedPalletNode node(nodeOptions(cloudly, QStringLiteral("node-a")));
        QSignalSpy up(&node, &SimulatedPalletNode::connected);
        QSignalSpy down(&node, &SimulatedPalletNode::disconnected);
        QSignalSpy failed(&node, &SimulatedPalletNode::connectionFailed);
        QSignalSpy cloudlyDown(&cloudly, &LoopbackCloudly::relayDisconnected);

        node.open();
        QTRY_COMPARE(up.size(), 1);
        cloudly.dropRelaySockets();
        QTRY_COMPARE(down.size(), 1);
        QTRY_COMPARE(cloudlyDown.size(), 1);

        cloudly.stopListening();
        QVERIFY(!cloudly.isListening());
        node.open();
        QTRY_COMPARE(failed.size(), 1);

        QVERIFY(cloudly.listen());
        QCOMPARE(cloudly.port(), port);
        node.open();
        QTRY_COMPARE(up.size(), 2);
        QCOMPARE(cloudly.totalConnections(), 2);

        cloudly.refuseConnections(true);
        node.open(); // the previous socket is replaced
        QTRY_COMPARE(failed.size(), 2);
        QCOMPARE(up.size(), 2);
        QVERIFY(!node.isConnected());
        QCOMPARE(cloudly.totalConnections(), 2);
        QCOMPARE(cloudly.push(method::applyRuntimeAssignment, QJsonObject{}), QString());
        cloudly.refuseConnections(false);
        node.open();
        QTRY_COMPARE(up.size(), 3);
    }

    void nodeRejectsUntrustedCloudlyCertificate()
    {
        LoopbackCloudly::Options options = cloudlyOptions();
        options.serverCertificate =
            m_ca.issueExpired(QStringLiteral("localhost"), {QStringLiteral("localhost")}, {QHostAddress(QHostAddress::LocalHost)});
        LoopbackCloudly cloudly(m_ca, options);
        QVERIFY(cloudly.listen());
        SimulatedPalletNode node(nodeOptions(cloudly, QStringLiteral("node-a")));
        QSignalSpy failed(&node, &SimulatedPalletNode::connectionFailed);
        node.open();
        QTRY_COMPARE(failed.size(), 1);
        QVERIFY(!node.sslErrors().isEmpty());
        QCOMPARE(cloudly.totalConnections(), 0);

        // A node trusting another CA refuses a good certificate too.
        LoopbackCloudly good(m_ca, cloudlyOptions());
        QVERIFY(good.listen());
        TestCertificateAuthority other(QStringLiteral("Other CA"));
        SimulatedPalletNode::Options o = nodeOptions(good, QStringLiteral("node-b"));
        o.caCertificates = {other.caCertificate()};
        SimulatedPalletNode stranger(o);
        QSignalSpy strangerFailed(&stranger, &SimulatedPalletNode::connectionFailed);
        stranger.open();
        QTRY_COMPARE(strangerFailed.size(), 1);
        QVERIFY(!stranger.sslErrors().isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestPeers)
#include "tst_peers.moc"
