// The credential publication's pure parts (docs/contract.md §12.4): the sealed envelope (context
// string, plaintext { context, material } opened here with libsodium's crypto_box_seal_open under a
// key pair this test makes, digest checked with Qt's own SHA-256), the material check, the exact readers
// of getSecretIngressRecipient and of the receipt, and the receipt validator's reasons and
// expected-vs-received lines.
// Rules: CS-34 (seal under the context), CS-35 (receipt validated against cluster and organization),
// CS-45 (every reason, each misstated member expected vs received), CS-46 (unusable material).
#include "service/bindings/ingressrecipient.h"
#include "service/bindings/publicationenvelope.h"
#include "service/bindings/publicationreceipt.h"
#include "service/bindings/publicationreceiptvalidator.h"

#include <QCryptographicHash>
#include <QJsonDocument>
#include <QTest>
#include <sodium.h>

using namespace coreflow;

namespace {

struct KeyPair {
    QByteArray publicKey{crypto_box_PUBLICKEYBYTES, '\0'};
    QByteArray secretKey{crypto_box_SECRETKEYBYTES, '\0'};
    KeyPair()
    {
        crypto_box_keypair(reinterpret_cast<unsigned char *>(publicKey.data()), reinterpret_cast<unsigned char *>(secretKey.data()));
    }
    QByteArray open(const QByteArray &sealed) const
    {
        if (sealed.size() < qsizetype(crypto_box_SEALBYTES))
            return {};
        QByteArray plain(sealed.size() - qsizetype(crypto_box_SEALBYTES), '\0');
        if (crypto_box_seal_open(reinterpret_cast<unsigned char *>(plain.data()), reinterpret_cast<const unsigned char *>(sealed.constData()),
                                 quint64(sealed.size()), reinterpret_cast<const unsigned char *>(publicKey.constData()),
                                 reinterpret_cast<const unsigned char *>(secretKey.constData()))
            != 0)
            return {};
        return plain;
    }
};

// Written as plain literals (moc does not read raw strings): a unicode escape and an escaped quote
// inside the password, so the material's own bytes are seen to travel verbatim.
const QByteArray kMaterial = "{\"capability\":\"database\",\"endpoint\":{\"host\":\"10.0.0.5\",\"port\":27017},"
                             "\"database\":\"app\",\"username\":\"u\",\"password\":\"canary-pw-\\u00e9\\\"x\","
                             "\"uri\":\"mongodb://u:canary-pw@10.0.0.5:27017/app\"}";

QJsonObject receiptResponse(const QJsonObject &replace = {})
{
    QJsonObject receipt{{"mutationId", "corestore-publication:op-1"}, {"organizationId", "org-1"}, {"clusterId", "cluster-1"},
                        {"serviceId", "svc-1"},   {"bindingName", "db"}, {"envelopeDigest", QString(64, QLatin1Char('a'))},
                        {"acceptedAt", 1700000000000.0}};
    for (auto it = replace.begin(); it != replace.end(); ++it)
        receipt.insert(it.key(), it.value());
    return QJsonObject{{"receipt", receipt}};
}

PublicationReceiptValidator::Expected expected()
{
    return {"corestore-publication:op-1", "org-1", "cluster-1", "svc-1", "db", QString(64, QLatin1Char('a'))};
}

} // namespace

class TstPublicationParts : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { QVERIFY(sodium_init() >= 0); }

    // CS-34: the context string is exactly the contract's.
    void contextIsTheContractsString_CS34()
    {
        QCOMPARE(PublicationEnvelope::contextFor("cluster-1", "org-1", "svc-1", "db", "corestore-publication:op-1"),
                 QStringLiteral("corestore-credential-material|cluster-1|org-1|svc-1|db|corestore-publication:op-1"));
    }

    // CS-34: the sealed bytes open to { context, material } with the material verbatim; the digest is
    // the SHA-256 of the decoded sealed bytes; two seals of the same material differ (fresh ephemeral key).
    void sealOpensToContextAndMaterial_CS34()
    {
        KeyPair keys;
        IngressRecipient recipient{"secret-ingress:1", keys.publicKey, 1};
        const QString context = PublicationEnvelope::contextFor("cluster-1", "org-1", "svc-1", "db", "corestore-publication:op-1");
        const auto sealed = PublicationEnvelope::seal(recipient, context, Secret(QByteArrayView(kMaterial)));
        QVERIFY(sealed.ok());
        QCOMPARE(sealed->recipientKeyId, QStringLiteral("secret-ingress:1"));
        QCOMPARE(sealed->context, context);
        const auto decoded = QByteArray::fromBase64Encoding(sealed->sealed, QByteArray::AbortOnBase64DecodingErrors);
        QVERIFY(decoded);
        QCOMPARE(sealed->digest, QString::fromLatin1(QCryptographicHash::hash(*decoded, QCryptographicHash::Sha256).toHex()));
        QVERIFY(!sealed->sealed.contains("canary"));
        const QByteArray plain = keys.open(*decoded);
        QVERIFY(!plain.isEmpty());
        QJsonParseError error;
        const QJsonObject opened = QJsonDocument::fromJson(plain, &error).object();
        QCOMPARE(error.error, QJsonParseError::NoError);
        QCOMPARE(opened.size(), 2);
        QCOMPARE(opened.value("context").toString(), context);
        QCOMPARE(opened.value("material").toObject(), QJsonDocument::fromJson(kMaterial).object());
        QVERIFY(plain.contains(kMaterial)); // the material's own bytes, escapes included
        const auto again = PublicationEnvelope::seal(recipient, context, Secret(QByteArrayView(kMaterial)));
        QVERIFY(again.ok());
        QVERIFY(again->sealed != sealed->sealed);
        QVERIFY(again->digest != sealed->digest);
        KeyPair other;
        QVERIFY(other.open(*decoded).isEmpty()); // sealed to the recipient only
    }

    // CS-46: material that is not one JSON object is unusable, named without a value.
    void unusableMaterialIsRefused_CS46_data()
    {
        QTest::addColumn<QByteArray>("material");
        QTest::newRow("empty") << QByteArray();
        QTest::newRow("array") << QByteArray(R"(["canary-pw"])");
        QTest::newRow("string") << QByteArray(R"("canary-pw")");
        QTest::newRow("unterminated") << QByteArray(R"({"password":"canary-pw")");
        QTest::newRow("two objects") << QByteArray(R"({"password":"canary-pw"}{})");
        QTest::newRow("trailing junk") << QByteArray(R"({"password":"canary-pw"} x)");
        QTest::newRow("not json") << QByteArray("canary-pw");
    }
    void unusableMaterialIsRefused_CS46()
    {
        QFETCH(QByteArray, material);
        KeyPair keys;
        const Secret secret{QByteArrayView(material)};
        QVERIFY(!PublicationEnvelope::isJsonObject(secret));
        const auto sealed = PublicationEnvelope::seal(IngressRecipient{"k", keys.publicKey, 1}, "ctx", secret);
        QVERIFY(!sealed.ok());
        QCOMPARE(sealed.refusal().name, QStringLiteral("publication-material-unusable"));
        QVERIFY(!sealed.refusal().text().contains("canary"));
    }
    void usableMaterialIsAnObject()
    {
        QVERIFY(PublicationEnvelope::isJsonObject(Secret(QByteArrayView(kMaterial))));
        QVERIFY(PublicationEnvelope::isJsonObject(Secret(QByteArrayView(" {\"a\":[1,{\"b\":null}]}\n"))));
    }

    void recipientIsReadExactly_data()
    {
        QTest::addColumn<QByteArray>("response");
        QTest::addColumn<QString>("problem"); // "" = accepted
        const QString key = QString::fromLatin1(QByteArray(32, '\x07').toBase64());
        auto body = [&](const QString &inner) { return QStringLiteral("{\"recipient\":{%1}}").arg(inner).toUtf8(); };
        QTest::newRow("ok") << body(QStringLiteral("\"keyId\":\"k1\",\"publicKey\":\"%1\",\"generation\":3").arg(key)) << QString();
        QTest::newRow("short key") << body(QStringLiteral("\"keyId\":\"k1\",\"publicKey\":\"%1\",\"generation\":3")
                                               .arg(QString::fromLatin1(QByteArray(31, 'x').toBase64())))
                                   << QStringLiteral("response.recipient.publicKey");
        QTest::newRow("not base64") << body(QStringLiteral("\"keyId\":\"k1\",\"publicKey\":\"***\",\"generation\":3"))
                                    << QStringLiteral("response.recipient.publicKey");
        QTest::newRow("no generation") << body(QStringLiteral("\"keyId\":\"k1\",\"publicKey\":\"%1\"").arg(key))
                                       << QStringLiteral("response.recipient.generation");
        QTest::newRow("empty keyId") << body(QStringLiteral("\"keyId\":\"\",\"publicKey\":\"%1\",\"generation\":3").arg(key))
                                     << QStringLiteral("response.recipient.keyId");
        QTest::newRow("extra member") << body(QStringLiteral("\"keyId\":\"k1\",\"publicKey\":\"%1\",\"generation\":3,\"x\":1").arg(key))
                                      << QStringLiteral("response.recipient.x");
        QTest::newRow("no recipient") << QByteArray("{}") << QStringLiteral("response.recipient");
    }
    void recipientIsReadExactly()
    {
        QFETCH(QByteArray, response);
        QFETCH(QString, problem);
        const auto read = IngressRecipient::read(QJsonDocument::fromJson(response).object());
        if (problem.isEmpty()) {
            QVERIFY2(read.ok(), qPrintable(read.ok() ? QString() : read.refusal().text()));
            QCOMPARE(read->keyId, QStringLiteral("k1"));
            QCOMPARE(read->publicKey, QByteArray(32, '\x07'));
            QCOMPARE(read->generation, 3);
        } else {
            QVERIFY(!read.ok());
            QCOMPARE(read.refusal().name, QStringLiteral("publication-answer-invalid"));
            QVERIFY2(read.refusal().reason.contains(problem), qPrintable(read.refusal().reason));
        }
    }

    void receiptIsReadExactly()
    {
        const auto read = PublicationReceipt::read(receiptResponse());
        QVERIFY(read.ok());
        QCOMPARE(read->mutationId, QStringLiteral("corestore-publication:op-1"));
        QCOMPARE(read->acceptedAtMs, 1700000000000LL);
        QVERIFY(PublicationReceiptValidator::check(expected(), read.value()).valid());
        QJsonObject extra = receiptResponse();
        QJsonObject inner = extra.value("receipt").toObject();
        inner.insert("material", "x");
        extra.insert("receipt", inner);
        QVERIFY(!PublicationReceipt::read(extra).ok());
        inner.remove("material");
        inner.remove("envelopeDigest");
        extra.insert("receipt", inner);
        const auto missing = PublicationReceipt::read(extra);
        QVERIFY(!missing.ok());
        QVERIFY(missing.refusal().reason.contains("envelopeDigest"));
        QVERIFY(!PublicationReceipt::read(receiptResponse({{"acceptedAt", "soon"}})).ok());
    }

    // CS-35, CS-45: every misstated member is a reason and an expected-vs-received line, in order.
    void validatorNamesEveryMisstatedMember_CS35_CS45()
    {
        const auto read = PublicationReceipt::read(receiptResponse({{"mutationId", "corestore-publication:op-2"},
                                                                     {"organizationId", "org-2"},
                                                                     {"clusterId", "cluster-2"},
                                                                     {"envelopeDigest", QString(64, QLatin1Char('b'))}}));
        QVERIFY(read.ok());
        const auto verdict = PublicationReceiptValidator::check(expected(), read.value());
        QVERIFY(!verdict.valid());
        QCOMPARE(verdict.reasons.size(), 4);
        QCOMPARE(verdict.misstatements,
                 (QStringList{"mutationId expected corestore-publication:op-1 received corestore-publication:op-2",
                              "organizationId expected org-1 received org-2", "clusterId expected cluster-1 received cluster-2",
                              "envelopeDigest expected " + QString(64, QLatin1Char('a')) + " received " + QString(64, QLatin1Char('b'))}));
        // A received value a log line must not repeat is described by its length.
        const auto odd = PublicationReceipt::read(receiptResponse({{"clusterId", "cluster 1\n\"x\""}}));
        QVERIFY(odd.ok());
        const auto oddVerdict = PublicationReceiptValidator::check(expected(), odd.value());
        QCOMPARE(oddVerdict.misstatements, QStringList{"clusterId expected cluster-1 received (a value of 13 characters)"});
    }
};

QTEST_GUILESS_MAIN(TstPublicationParts)
#include "tst_publicationparts.moc"
