#pragma once
// TlsClientContext: the OpenSSL client context for the relay's own outbound TLS connections (the
// Cloudly session, docs/contract.md §6.0.1, D-54: the relay dials out, nothing dials
// in from Cloudly's side).
//
// Trust: the system's CA store (OpenSSL's default paths; SSL_CERT_FILE / SSL_CERT_DIR honoured) plus
// the extra CA certificates the configuration names (the service's --ca-file). The peer is always verified:
// its chain against that trust, and its name against the host dialled (DNS name via SSL_set1_host,
// an IP literal via the certificate's IP addresses). There is no way to turn verification off.
// Settings: TLS 1.2 minimum, no renegotiation, no compression, record buffers released while idle,
// read-ahead into a 64 KiB read buffer (several records per system call: a registry blob arrives as
// 16 KiB records, and each read of one record alone also cost a window-update ACK), ALPN "http/1.1"
// (the WebSocket upgrade and the registry pulls are HTTP/1.1).
// create() fails with a Refusal naming what failed (never certificate or key bytes).
#include "shared/contract/result.h"

#include <QList>
#include <QSslCertificate>
#include <QString>

#include <memory>

typedef struct ssl_ctx_st SSL_CTX;
typedef struct ssl_st SSL;

namespace coreflow {

class TlsClientContext {
public:
    static contract::Result<std::shared_ptr<TlsClientContext>> create(const QList<QSslCertificate> &extraCaCertificates);
    ~TlsClientContext();
    TlsClientContext(const TlsClientContext &) = delete;
    TlsClientContext &operator=(const TlsClientContext &) = delete;

    // A client-side SSL on a connected socket, verifying the peer against host (a DNS name or an IP
    // literal; SNI is sent for names only). nullptr when OpenSSL refuses (out of memory, bad host).
    SSL *newConnection(int fd, const QString &host) const;

private:
    explicit TlsClientContext(SSL_CTX *context) : m_context(context) {}
    SSL_CTX *m_context;
};

} // namespace coreflow
