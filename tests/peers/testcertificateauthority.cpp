#include "tests/peers/testcertificateauthority.h"

#include <QDateTime>
#include <QFile>
#include <QLoggingCategory>
#include <QRandomGenerator>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

Q_LOGGING_CATEGORY(lcPeersCa, "coreflow.peers.ca")

namespace coreflow::peers {

namespace {

struct PkeyFree { void operator()(EVP_PKEY *p) const { EVP_PKEY_free(p); } };
struct X509Free { void operator()(X509 *p) const { X509_free(p); } };
struct BioFree { void operator()(BIO *p) const { BIO_free(p); } };
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;
using X509Ptr = std::unique_ptr<X509, X509Free>;
using BioPtr = std::unique_ptr<BIO, BioFree>;

constexpr qint64 hourMs = 3600 * 1000;
constexpr qint64 dayMs = 24 * hourMs;

QString opensslErrors()
{
    QStringList out;
    while (unsigned long e = ERR_get_error()) {
        char buf[256];
        ERR_error_string_n(e, buf, sizeof buf);
        out << QString::fromLatin1(buf);
    }
    return out.isEmpty() ? QStringLiteral("(no OpenSSL error queued)") : out.join(QStringLiteral("; "));
}

PkeyPtr generateKey(TestCertificateAuthority::KeyType type)
{
    EVP_PKEY *key = nullptr;
    if (type == TestCertificateAuthority::KeyType::Rsa2048)
        key = EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", size_t(2048));
    else
        key = EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", const_cast<char *>("P-256"));
    if (!key)
        qCCritical(lcPeersCa) << "key generation failed:" << opensslErrors();
    return PkeyPtr(key);
}

QByteArray bioBytes(BIO *bio)
{
    char *data = nullptr;
    const long len = BIO_get_mem_data(bio, &data);
    return QByteArray(data, qsizetype(len));
}

QByteArray certPem(X509 *cert)
{
    BioPtr bio(BIO_new(BIO_s_mem()));
    if (!PEM_write_bio_X509(bio.get(), cert))
        return {};
    return bioBytes(bio.get());
}

QByteArray keyPkcs8Pem(EVP_PKEY *key)
{
    BioPtr bio(BIO_new(BIO_s_mem()));
    // PEM_write_bio_PrivateKey writes PKCS#8 ("BEGIN PRIVATE KEY") in OpenSSL 3.
    if (!PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr))
        return {};
    return bioBytes(bio.get());
}

bool addExtension(X509 *cert, X509 *issuer, int nid, const char *value)
{
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
    X509_EXTENSION *ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
    if (!ext) {
        qCCritical(lcPeersCa) << "extension" << OBJ_nid2sn(nid) << "failed:" << opensslErrors();
        return false;
    }
    const bool ok = X509_add_ext(cert, ext, -1) == 1;
    X509_EXTENSION_free(ext);
    return ok;
}

bool setName(X509_NAME *name, const QString &commonName, const char *organisation)
{
    if (organisation
        && !X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8,
                                       reinterpret_cast<const unsigned char *>(organisation), -1, -1, 0))
        return false;
    if (!commonName.isEmpty()) {
        const QByteArray cn = commonName.toUtf8();
        if (!X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                                        reinterpret_cast<const unsigned char *>(cn.constData()), int(cn.size()), -1, 0))
            return false;
    }
    return true;
}

// Builds and signs a certificate for `subjectKey`. issuer/issuerKey null: self-signed CA.
X509Ptr buildCertificate(EVP_PKEY *subjectKey, const QString &commonName, const QStringList &dnsNames,
                         const QList<QHostAddress> &ips, qint64 notBeforeMs, qint64 notAfterMs, X509 *issuer,
                         EVP_PKEY *issuerKey)
{
    const bool isCa = issuer == nullptr;
    X509Ptr cert(X509_new());
    if (!cert)
        return {};
    X509_set_version(cert.get(), 2); // v3
    const quint64 serial = QRandomGenerator::system()->generate64() >> 1; // positive, 63 bits
    ASN1_INTEGER_set_uint64(X509_get_serialNumber(cert.get()), serial ? serial : 1);
    if (!ASN1_TIME_set(X509_getm_notBefore(cert.get()), time_t(notBeforeMs / 1000))
        || !ASN1_TIME_set(X509_getm_notAfter(cert.get()), time_t(notAfterMs / 1000)))
        return {};
    if (!X509_set_pubkey(cert.get(), subjectKey))
        return {};
    if (!setName(X509_get_subject_name(cert.get()), commonName, "Coreflow loopback peers"))
        return {};
    if (!X509_set_issuer_name(cert.get(), isCa ? X509_get_subject_name(cert.get()) : X509_get_subject_name(issuer)))
        return {};

    X509 *issuerCert = isCa ? cert.get() : issuer;
    if (isCa) {
        if (!addExtension(cert.get(), issuerCert, NID_basic_constraints, "critical,CA:TRUE")
            || !addExtension(cert.get(), issuerCert, NID_key_usage, "critical,keyCertSign,cRLSign")
            || !addExtension(cert.get(), issuerCert, NID_subject_key_identifier, "hash")
            || !addExtension(cert.get(), issuerCert, NID_authority_key_identifier, "keyid:always"))
            return {};
    } else {
        if (!addExtension(cert.get(), issuerCert, NID_basic_constraints, "critical,CA:FALSE")
            || !addExtension(cert.get(), issuerCert, NID_key_usage, "critical,digitalSignature,keyEncipherment")
            || !addExtension(cert.get(), issuerCert, NID_ext_key_usage, "serverAuth,clientAuth")
            || !addExtension(cert.get(), issuerCert, NID_subject_key_identifier, "hash")
            || !addExtension(cert.get(), issuerCert, NID_authority_key_identifier, "keyid:always"))
            return {};
        QStringList san;
        for (const QString &dns : dnsNames)
            san << QStringLiteral("DNS:") + dns;
        for (const QHostAddress &ip : ips)
            san << QStringLiteral("IP:") + ip.toString();
        if (!san.isEmpty()
            && !addExtension(cert.get(), issuerCert, NID_subject_alt_name, san.join(QLatin1Char(',')).toUtf8().constData()))
            return {};
    }
    if (!X509_sign(cert.get(), isCa ? subjectKey : issuerKey, EVP_sha256())) {
        qCCritical(lcPeersCa) << "signing failed:" << opensslErrors();
        return {};
    }
    return cert;
}

QSsl::KeyAlgorithm algorithmOf(EVP_PKEY *key)
{
    return EVP_PKEY_get_base_id(key) == EVP_PKEY_RSA ? QSsl::Rsa : QSsl::Ec;
}

} // namespace

struct TestCertificateAuthority::State {
    KeyType keyType = KeyType::EcP256;
    PkeyPtr key;
    X509Ptr cert;
    QByteArray pem;
    QSslCertificate qcert;

    IssuedCertificate issue(const QString &cn, const QStringList &dns, const QList<QHostAddress> &ips,
                            qint64 notBeforeMs, qint64 notAfterMs, bool mismatched) const
    {
        PkeyPtr leafKey = generateKey(keyType);
        if (!leafKey)
            return IssuedCertificate();
        X509Ptr leaf = buildCertificate(leafKey.get(), cn, dns, ips, notBeforeMs, notAfterMs, cert.get(), key.get());
        if (!leaf) {
            qCCritical(lcPeersCa) << "issuing a certificate for" << cn << "failed:" << opensslErrors();
            return IssuedCertificate();
        }
        PkeyPtr otherKey;
        if (mismatched) {
            otherKey = generateKey(keyType);
            if (!otherKey)
                return IssuedCertificate();
        }
        EVP_PKEY *handedKey = mismatched ? otherKey.get() : leafKey.get();
        IssuedCertificate out;
        const QByteArray leafPem = certPem(leaf.get());
        out.certPem = leafPem + pem;
        out.keyPem = keyPkcs8Pem(handedKey);
        out.cert = QSslCertificate(leafPem, QSsl::Pem);
        out.chain = {out.cert, qcert};
        out.key = QSslKey(out.keyPem, algorithmOf(handedKey), QSsl::Pem, QSsl::PrivateKey);
        if (out.key.isNull())
            qCWarning(lcPeersCa) << "Qt could not read the issued PKCS#8 key";
        return out;
    }
};

TestCertificateAuthority::TestCertificateAuthority(const QString &commonName, KeyType keyType)
{
    auto state = std::make_shared<State>();
    state->keyType = keyType;
    state->key = generateKey(keyType);
    if (state->key) {
        const qint64 now = QDateTime::currentMSecsSinceEpoch();
        state->cert = buildCertificate(state->key.get(), commonName, {}, {}, now - hourMs, now + 3650 * dayMs, nullptr,
                                       nullptr);
    }
    if (state->cert) {
        state->pem = certPem(state->cert.get());
        state->qcert = QSslCertificate(state->pem, QSsl::Pem);
    } else {
        qCCritical(lcPeersCa) << "creating the test CA failed:" << opensslErrors();
    }
    m_state = std::move(state);
}

IssuedCertificate TestCertificateAuthority::issue(const QString &commonName, const QStringList &dnsNames,
                                                  const QList<QHostAddress> &ips, qint64 notBeforeMs,
                                                  qint64 notAfterMs) const
{
    return m_state->issue(commonName, dnsNames, ips, notBeforeMs, notAfterMs, false);
}

namespace {
void namesForHost(const QString &host, QStringList &dns, QList<QHostAddress> &ips)
{
    QHostAddress literal;
    if (literal.setAddress(host)) {
        ips << literal;
    } else {
        dns << host;
        if (host.compare(QLatin1String("localhost"), Qt::CaseInsensitive) == 0)
            ips << QHostAddress(QHostAddress::LocalHost) << QHostAddress(QHostAddress::LocalHostIPv6);
    }
}
} // namespace

IssuedCertificate TestCertificateAuthority::issueForHost(const QString &host, qint64 lifetimeMs) const
{
    QStringList dns;
    QList<QHostAddress> ips;
    namesForHost(host, dns, ips);
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    return issue(host, dns, ips, now - hourMs, now + lifetimeMs);
}

IssuedCertificate TestCertificateAuthority::issueExpired(const QString &commonName, const QStringList &dnsNames,
                                                         const QList<QHostAddress> &ips) const
{
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    return issue(commonName, dnsNames, ips, now - 2 * dayMs, now - dayMs);
}

IssuedCertificate TestCertificateAuthority::issueMismatched(const QString &commonName, const QStringList &dnsNames,
                                                            const QList<QHostAddress> &ips, qint64 notBeforeMs,
                                                            qint64 notAfterMs) const
{
    return m_state->issue(commonName, dnsNames, ips, notBeforeMs, notAfterMs, true);
}

IssuedCertificate TestCertificateAuthority::issueMismatchedForHost(const QString &host) const
{
    QStringList dns;
    QList<QHostAddress> ips;
    namesForHost(host, dns, ips);
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    return issueMismatched(host, dns, ips, now - hourMs, now + dayMs);
}

QSslCertificate TestCertificateAuthority::caCertificate() const { return m_state->qcert; }

QByteArray TestCertificateAuthority::caPem() const { return m_state->pem; }

bool TestCertificateAuthority::writeCaPem(const QString &path) const
{
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
        qCWarning(lcPeersCa) << "cannot write" << path << file.errorString();
        return false;
    }
    if (file.write(m_state->pem) != m_state->pem.size()) {
        qCWarning(lcPeersCa) << "short write to" << path;
        return false;
    }
    return true;
}

QSslConfiguration TestCertificateAuthority::serverConfiguration(const IssuedCertificate &leaf)
{
    QSslConfiguration conf = QSslConfiguration::defaultConfiguration();
    conf.setProtocol(QSsl::TlsV1_2OrLater);
    conf.setLocalCertificateChain(leaf.chain);
    conf.setPrivateKey(leaf.key);
    conf.setPeerVerifyMode(QSslSocket::VerifyNone);
    return conf;
}

QSslConfiguration TestCertificateAuthority::clientConfiguration() const
{
    QSslConfiguration conf = QSslConfiguration::defaultConfiguration();
    conf.setProtocol(QSsl::TlsV1_2OrLater);
    conf.setCaCertificates({m_state->qcert});
    conf.setPeerVerifyMode(QSslSocket::VerifyPeer);
    return conf;
}

} // namespace coreflow::peers
