#pragma once
// TestCertificateAuthority: a throw-away X.509 CA made at test time with the OpenSSL 3 C API.
//
// It signs the TLS certificates of the loopback peers (LoopbackCloudly's own listener certificate, the
// relay listener certificate LoopbackCloudly hands out through getClusterRelayCertificate) so that every
// TLS hop in a test is verified against one CA the test trusts explicitly — never against the system
// roots, never with verification switched off.
//
// Keys: EC P-256 by default (fast), RSA 2048 on request. Private keys are PKCS#8 PEM
// ("-----BEGIN PRIVATE KEY-----"). Certificates are X.509 v3 with SHA-256 signatures.
// Times are Unix epoch milliseconds (X.509 keeps whole seconds; the milliseconds are truncated).
//
// The object is a cheap, copyable handle: copies share the same CA key and certificate, so a
// LoopbackCloudly can keep its own copy while the test keeps another.
//
// Usage:
//   TestCertificateAuthority ca;
//   auto leaf = ca.issueLocalhost();               // DNS:localhost + IP:127.0.0.1, valid now ± 1 day
//   auto old  = ca.issueExpired("localhost", {"localhost"}, {QHostAddress::LocalHost});
//   auto bad  = ca.issueMismatched("localhost", {"localhost"}, {}, from, to); // key does not fit cert
//   ca.writeCaPem(dir + "/ca.pem");
#include <QByteArray>
#include <QHostAddress>
#include <QList>
#include <QSslCertificate>
#include <QSslConfiguration>
#include <QSslKey>
#include <QString>
#include <QStringList>
#include <memory>

namespace coreflow::peers {

// One issued leaf certificate with its key, in every form a test needs.
struct IssuedCertificate {
    QSslCertificate cert;           // the leaf
    QList<QSslCertificate> chain;   // leaf first, then the CA certificate
    QByteArray certPem;             // PEM of `chain`: leaf then CA (the getClusterRelayCertificate shape)
    QByteArray keyPem;              // PKCS#8 PEM private key (for issueMismatched: NOT the leaf's key)
    QSslKey key;                    // keyPem parsed as a QSslKey

    bool isNull() const { return cert.isNull(); }
};

class TestCertificateAuthority {
public:
    enum class KeyType { EcP256, Rsa2048 };

    // Creates a new self-signed CA (CA:TRUE, keyCertSign|cRLSign), valid from one hour ago for ten years.
    explicit TestCertificateAuthority(const QString &commonName = QStringLiteral("Coreflow Test CA"),
                                      KeyType keyType = KeyType::EcP256);

    // Issues a TLS leaf (CA:FALSE, digitalSignature|keyEncipherment, serverAuth+clientAuth) signed by
    // this CA. dnsNames and ips become subjectAltName entries (DNS:/IP:); commonName goes into the
    // subject (skipped when empty). notBeforeMs/notAfterMs: Unix epoch ms. Returns a null
    // IssuedCertificate (isNull()) only if OpenSSL fails, which is logged.
    IssuedCertificate issue(const QString &commonName, const QStringList &dnsNames, const QList<QHostAddress> &ips,
                            qint64 notBeforeMs, qint64 notAfterMs) const;

    // Like issue(), valid from (now - 1 hour) for lifetimeMs (default one day). An IP-address literal in
    // `host` becomes an IP SAN; "localhost" gets DNS:localhost plus IP:127.0.0.1 and IP:::1.
    IssuedCertificate issueForHost(const QString &host, qint64 lifetimeMs = 24 * 3600 * 1000) const;
    // issueForHost("localhost").
    IssuedCertificate issueLocalhost() const { return issueForHost(QStringLiteral("localhost")); }

    // A certificate whose validity ended one day ago (notBefore two days ago, notAfter one day ago).
    IssuedCertificate issueExpired(const QString &commonName, const QStringList &dnsNames,
                                   const QList<QHostAddress> &ips) const;

    // A certificate for the given names whose keyPem/key belong to a DIFFERENT, freshly made key pair:
    // the pair does not match (a TLS server cannot use it). cert/certPem/chain are fine on their own.
    IssuedCertificate issueMismatched(const QString &commonName, const QStringList &dnsNames,
                                      const QList<QHostAddress> &ips, qint64 notBeforeMs, qint64 notAfterMs) const;
    // issueMismatched for `host` (issueForHost's names), valid now - 1 h .. now + 1 day.
    IssuedCertificate issueMismatchedForHost(const QString &host) const;

    QSslCertificate caCertificate() const;
    QByteArray caPem() const;
    // Writes caPem() to path (creates or truncates). Returns false (and logs) on failure.
    bool writeCaPem(const QString &path) const;

    // A TLS server configuration presenting `leaf` (its chain and key), TLS 1.2 or later, not asking
    // for client certificates.
    static QSslConfiguration serverConfiguration(const IssuedCertificate &leaf);
    // A TLS client configuration that trusts exactly this CA (no system roots) and verifies the peer.
    QSslConfiguration clientConfiguration() const;

private:
    struct State;
    std::shared_ptr<const State> m_state;
};

} // namespace coreflow::peers
