#include "service/listener/relaycertificate.h"

#include "service/transport/opensslwipingallocator.h"
#include "shared/contract/refusalnames.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>
#include <vector>

namespace coreflow {

namespace {

contract::Refusal invalid(const QString &domain, const QString &reason)
{
    return contract::Refusal{QString(contract::refusal::relayCertificateInvalid),
                             QStringLiteral("certificate for %1 %2").arg(domain, reason)};
}

struct BioFree { void operator()(BIO *b) const { BIO_free(b); } };
struct X509Free { void operator()(X509 *x) const { X509_free(x); } };
struct PkeyFree { void operator()(EVP_PKEY *k) const { EVP_PKEY_free(k); } };

struct StoreFree { void operator()(X509_STORE *s) const { X509_STORE_free(s); } };
struct StoreCtxFree { void operator()(X509_STORE_CTX *c) const { X509_STORE_CTX_free(c); } };

// Whether `issuer` issued `subject`: names and key identifiers agree (X509_check_issued) and the
// signature verifies with the issuer's key.
bool issued(X509 *issuer, X509 *subject)
{
    if (X509_check_issued(issuer, subject) != X509_V_OK)
        return false;
    EVP_PKEY *key = X509_get0_pubkey(issuer);
    return key && X509_verify(subject, key) == 1;
}

// The system trust store (OpenSSL's default paths) holds the issuer of `last`.
bool systemStoreIssues(X509 *last)
{
    std::unique_ptr<X509_STORE, StoreFree> store(X509_STORE_new());
    if (!store || X509_STORE_set_default_paths(store.get()) != 1)
        return false;
    std::unique_ptr<X509_STORE_CTX, StoreCtxFree> ctx(X509_STORE_CTX_new());
    if (!ctx || X509_STORE_CTX_init(ctx.get(), store.get(), last, nullptr) != 1)
        return false;
    X509 *issuer = nullptr;
    if (X509_STORE_CTX_get1_issuer(&issuer, ctx.get(), last) != 1 || !issuer)
        return false;
    const bool ok = issued(issuer, last);
    X509_free(issuer);
    return ok;
}

} // namespace

std::optional<QString> RelayCertificate::chainIncompleteness(const QByteArray &certificatePem)
{
    std::vector<std::unique_ptr<X509, X509Free>> chain;
    std::unique_ptr<BIO, BioFree> bio(BIO_new_mem_buf(certificatePem.constData(), int(certificatePem.size())));
    while (X509 *cert = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr))
        chain.emplace_back(cert);
    ERR_clear_error(); // the read that ends the loop leaves "no start line" behind
    if (chain.empty())
        return QStringLiteral("is incomplete: the certificate PEM holds no certificate");
    for (size_t i = 0; i + 1 < chain.size(); ++i)
        if (!issued(chain[i + 1].get(), chain[i].get()))
            return QStringLiteral("is incomplete: certificate %1 of the PEM is not issued by the one after it").arg(i + 1);
    X509 *last = chain.back().get();
    if (issued(last, last) || systemStoreIssues(last))
        return std::nullopt;
    return QStringLiteral("is incomplete: its chain ends at a certificate no trusted root issued (the PEM lacks the intermediate "
                          "certificates after the leaf)");
}

contract::Result<RelayCertificate> RelayCertificate::fromMaterial(const contract::RelayCertificateMaterial &material,
                                                                  const QString &domain, qint64 nowMs)
{
    if (material.domain.compare(domain, Qt::CaseInsensitive) != 0)
        return invalid(domain, QStringLiteral("was answered for another domain (%1)").arg(material.domain));
    if (material.certificatePem.isEmpty())
        return invalid(domain, QStringLiteral("is incomplete: no certificate"));
    if (material.privateKeyPem.isEmpty())
        return invalid(domain, QStringLiteral("is incomplete: no private key"));

    const QList<QSslCertificate> chain = QSslCertificate::fromData(material.certificatePem, QSsl::Pem);
    if (chain.isEmpty() || chain.first().isNull())
        return invalid(domain, QStringLiteral("is incomplete: the certificate PEM holds no certificate"));

    std::unique_ptr<BIO, BioFree> certBio(BIO_new_mem_buf(material.certificatePem.constData(), int(material.certificatePem.size())));
    std::unique_ptr<X509, X509Free> leaf(PEM_read_bio_X509(certBio.get(), nullptr, nullptr, nullptr));
    if (!leaf)
        return invalid(domain, QStringLiteral("is incomplete: the leaf certificate does not parse"));
    // OpenSSL's decoders copy the key's DER into heap blocks they free unwiped: wiped here (§19.4).
    const OpenSslWipingAllocator::Scope wipeFreedKeyCopies;
    const QByteArrayView keyPem = material.privateKeyPem.reveal(); // read in place: no copy of the key
    std::unique_ptr<BIO, BioFree> keyBio(BIO_new_mem_buf(keyPem.constData(), int(keyPem.size())));
    std::unique_ptr<EVP_PKEY, PkeyFree> key(PEM_read_bio_PrivateKey(keyBio.get(), nullptr, nullptr, nullptr));
    if (!key)
        return invalid(domain, QStringLiteral("is incomplete: the private key does not parse"));

    const QByteArray host = domain.toUtf8();
    if (X509_check_host(leaf.get(), host.constData(), size_t(host.size()), X509_CHECK_FLAG_NO_WILDCARDS, nullptr) != 1)
        return invalid(domain, QStringLiteral("does not name that domain"));

    const QSslCertificate &qleaf = chain.first();
    if (qleaf.effectiveDate().toMSecsSinceEpoch() > nowMs)
        return invalid(domain, QStringLiteral("is not valid yet (valid from %1)").arg(qleaf.effectiveDate().toString(Qt::ISODate)));
    if (qleaf.expiryDate().toMSecsSinceEpoch() <= nowMs)
        return invalid(domain, QStringLiteral("is expired (expired %1)").arg(qleaf.expiryDate().toString(Qt::ISODate)));

    if (auto incomplete = chainIncompleteness(material.certificatePem))
        return invalid(domain, *incomplete);

    if (X509_check_private_key(leaf.get(), key.get()) != 1)
        return invalid(domain, QStringLiteral("does not match its private key"));

    switch (EVP_PKEY_get_base_id(key.get())) {
    case EVP_PKEY_RSA:
    case EVP_PKEY_EC: break;
    default: return invalid(domain, QStringLiteral("uses a key type the listener does not serve (RSA or EC expected)"));
    }
    // The key OpenSSL already decoded is handed over as it is (QSslKey takes the handle): no second
    // decoding of the PEM through Qt's buffers (contract §19.4).
    QSslKey qkey(Qt::HANDLE(key.release()), QSsl::PrivateKey);
    if (qkey.isNull())
        return invalid(domain, QStringLiteral("has a private key TLS cannot load"));

    RelayCertificate cert;
    cert.m_chain = chain;
    cert.m_key = qkey;
    return cert;
}

QSslConfiguration RelayCertificate::serverConfiguration() const
{
    QSslConfiguration config = QSslConfiguration::defaultConfiguration();
    config.setLocalCertificateChain(m_chain);
    config.setPrivateKey(m_key);
    config.setPeerVerifyMode(QSslSocket::VerifyNone);
    config.setProtocol(QSsl::TlsV1_2OrLater);
    return config;
}

QByteArray RelayCertificate::chainPem() const
{
    QByteArray pem;
    for (const QSslCertificate &certificate : m_chain)
        pem += certificate.toPem();
    return pem;
}

Secret RelayCertificate::privateKeyPem() const
{
    QByteArray pem = m_key.toPem();
    Secret key{QByteArrayView(pem)};
    Secret::wipe(pem);
    return key;
}

qint64 RelayCertificate::notAfterMs() const
{
    return m_chain.isEmpty() ? 0 : m_chain.first().expiryDate().toMSecsSinceEpoch();
}

} // namespace coreflow
