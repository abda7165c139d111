#include "service/transport/tlsclientcontext.h"

#include "shared/contract/refusalnames.h"

#include <QHostAddress>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

namespace coreflow {

namespace {
contract::Refusal failed(const QString &what)
{
    ERR_clear_error();
    return contract::Refusal{QString(contract::refusal::configurationInvalid), QStringLiteral("TLS client context: %1").arg(what)};
}
} // namespace

contract::Result<std::shared_ptr<TlsClientContext>> TlsClientContext::create(const QList<QSslCertificate> &extraCaCertificates)
{
    SSL_CTX *context = SSL_CTX_new(TLS_client_method());
    if (!context)
        return failed(QStringLiteral("out of memory"));
    std::shared_ptr<TlsClientContext> result(new TlsClientContext(context));
    SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION);
    SSL_CTX_set_options(context, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION);
    SSL_CTX_set_mode(context, SSL_MODE_RELEASE_BUFFERS | SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    SSL_CTX_set_read_ahead(context, 1);
    SSL_CTX_set_default_read_buffer_len(context, 64 * 1024);
    SSL_CTX_set_session_cache_mode(context, SSL_SESS_CACHE_OFF);
    SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nullptr);
    static const unsigned char alpn[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
    if (SSL_CTX_set_alpn_protos(context, alpn, sizeof alpn) != 0)
        return failed(QStringLiteral("ALPN"));
    // A machine without a system store still trusts the configured CAs; the failure to load one is
    // not an error here (verification then fails by name at the handshake).
    SSL_CTX_set_default_verify_paths(context);
    ERR_clear_error();
    X509_STORE *store = SSL_CTX_get_cert_store(context);
    for (const QSslCertificate &certificate : extraCaCertificates) {
        const QByteArray der = certificate.toDer();
        const auto *p = reinterpret_cast<const unsigned char *>(der.constData());
        X509 *x509 = d2i_X509(nullptr, &p, long(der.size()));
        if (!x509)
            return failed(QStringLiteral("a CA certificate does not load"));
        const int added = X509_STORE_add_cert(store, x509); // the store takes its own reference
        X509_free(x509);
        if (added != 1) {
            // Already present (the same CA twice, or in the system store) is fine.
            const unsigned long error = ERR_peek_last_error();
            if (ERR_GET_REASON(error) != X509_R_CERT_ALREADY_IN_HASH_TABLE)
                return failed(QStringLiteral("a CA certificate is not accepted"));
            ERR_clear_error();
        }
    }
    return result;
}

TlsClientContext::~TlsClientContext() { SSL_CTX_free(m_context); }

SSL *TlsClientContext::newConnection(int fd, const QString &host) const
{
    SSL *ssl = SSL_new(m_context);
    if (!ssl)
        return nullptr;
    const QByteArray hostBytes = host.toUtf8();
    const bool isAddress = !QHostAddress(host).isNull();
    bool ok = SSL_set_fd(ssl, fd) == 1;
    if (ok && isAddress) {
        ok = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), hostBytes.constData()) == 1;
    } else if (ok) {
        ok = SSL_set_tlsext_host_name(ssl, hostBytes.constData()) == 1 && SSL_set1_host(ssl, hostBytes.constData()) == 1;
    }
    if (!ok) {
        ERR_clear_error();
        SSL_free(ssl);
        return nullptr;
    }
    SSL_set_connect_state(ssl);
    return ssl;
}

} // namespace coreflow
