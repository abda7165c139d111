#pragma once
// TlsServerContext: the one OpenSSL server context every listener connection shares
// (docs/contract.md §5, §6.5: one TLS port, one certificate from Cloudly; D-53).
//
// Why not QSslServer: Qt 6.4 builds an SSL_CTX per accepted socket and keeps OpenSSL's 16 KiB
// record buffers for the socket's life, so an idle node cost ~80 KiB (bench/README.md). Here the
// context (certificate chain, key, protocol settings) exists once, and connections release their
// record buffers while idle (SSL_MODE_RELEASE_BUFFERS).
//
// Settings: TLS 1.2 minimum, no renegotiation, no compression, no session cache and no TLS 1.3
// tickets (nodes do not resume), read-ahead, partial writes with a moving write buffer
// (TlsConnection keeps unsent bytes in its own queue). The private key passes through a
// wiped temporary only. create() failures name what failed (listener-bind-failed at the caller),
// never key material.
#include "shared/contract/result.h"

#include <QSslConfiguration>

typedef struct ssl_ctx_st SSL_CTX;
typedef struct ssl_st SSL;

namespace coreflow {

class TlsServerContext {
public:
    static contract::Result<std::shared_ptr<TlsServerContext>> create(const QSslConfiguration &configuration);
    ~TlsServerContext();
    TlsServerContext(const TlsServerContext &) = delete;
    TlsServerContext &operator=(const TlsServerContext &) = delete;

    // A new server-side SSL for one accepted socket, or nullptr when OpenSSL is out of memory.
    SSL *newConnection(int fd) const;

private:
    explicit TlsServerContext(SSL_CTX *context) : m_context(context) {}
    SSL_CTX *m_context;
};

} // namespace coreflow
