#include "service/transport/tlsservercontext.h"

#include "shared/contract/refusalnames.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <sodium.h>

#include <QSslKey>

namespace coreflow {

namespace {
contract::Refusal failed(const QString &what)
{
    ERR_clear_error(); // OpenSSL's queue can name file and line of key parsing; never surfaced
    return contract::Refusal{QString(contract::refusal::listenerBindFailed), QStringLiteral("TLS context: %1").arg(what)};
}

X509 *toX509(const QSslCertificate &certificate)
{
    const QByteArray der = certificate.toDer();
    const auto *p = reinterpret_cast<const unsigned char *>(der.constData());
    return d2i_X509(nullptr, &p, long(der.size()));
}
} // namespace

contract::Result<std::shared_ptr<TlsServerContext>> TlsServerContext::create(const QSslConfiguration &configuration)
{
    QList<QSslCertificate> chain = configuration.localCertificateChain();
    if (chain.isEmpty() && !configuration.localCertificate().isNull())
        chain.append(configuration.localCertificate());
    if (chain.isEmpty())
        return failed(QStringLiteral("no certificate"));
    if (configuration.privateKey().isNull())
        return failed(QStringLiteral("no private key"));

    SSL_CTX *context = SSL_CTX_new(TLS_server_method());
    if (!context)
        return failed(QStringLiteral("out of memory"));
    std::shared_ptr<TlsServerContext> result(new TlsServerContext(context));
    SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION);
    SSL_CTX_set_options(context, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION | SSL_OP_CIPHER_SERVER_PREFERENCE);
    SSL_CTX_set_mode(context, SSL_MODE_RELEASE_BUFFERS | SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    SSL_CTX_set_session_cache_mode(context, SSL_SESS_CACHE_OFF);
    // Read ahead: one read() takes every record the socket holds, instead of a header read and a
    // body read per record (two syscalls per frame on the node lane's hot path).
    SSL_CTX_set_read_ahead(context, 1);
    // No TLS 1.3 session tickets: issuing two per handshake (OpenSSL's default) costs each connection
    // ticket encryption and an SSL_SESSION kept for it, and node clients do not resume sessions.
    SSL_CTX_set_num_tickets(context, 0);
    SSL_CTX_set_verify(context, SSL_VERIFY_NONE, nullptr);

    X509 *leaf = toX509(chain.first());
    if (!leaf || SSL_CTX_use_certificate(context, leaf) != 1) {
        X509_free(leaf);
        return failed(QStringLiteral("the certificate does not load"));
    }
    X509_free(leaf);
    for (qsizetype i = 1; i < chain.size(); ++i) {
        X509 *link = toX509(chain.at(i));
        if (!link || SSL_CTX_add0_chain_cert(context, link) != 1) { // takes ownership on success
            X509_free(link);
            return failed(QStringLiteral("the certificate chain does not load"));
        }
    }

    QByteArray pem = configuration.privateKey().toPem();
    BIO *bio = BIO_new_mem_buf(pem.constData(), int(pem.size()));
    EVP_PKEY *key = bio ? PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr) : nullptr;
    BIO_free(bio);
    sodium_memzero(pem.data(), size_t(pem.size()));
    if (!key || SSL_CTX_use_PrivateKey(context, key) != 1) {
        EVP_PKEY_free(key);
        return failed(QStringLiteral("the private key does not load"));
    }
    EVP_PKEY_free(key);
    if (SSL_CTX_check_private_key(context) != 1)
        return failed(QStringLiteral("the private key does not match the certificate"));
    return result;
}

TlsServerContext::~TlsServerContext() { SSL_CTX_free(m_context); }

SSL *TlsServerContext::newConnection(int fd) const
{
    SSL *ssl = SSL_new(m_context);
    if (!ssl)
        return nullptr;
    if (SSL_set_fd(ssl, fd) != 1) {
        SSL_free(ssl);
        return nullptr;
    }
    SSL_set_accept_state(ssl);
    return ssl;
}

} // namespace coreflow
