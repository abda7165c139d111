#pragma once
// RelayCertificate: the listener's TLS material, obtained from Cloudly over the session and checked
// before any listener is built (docs/contract.md §6.5; rules LO-02..LO-07).
//
// fromMaterial() accepts the material only when: it is for the origin's domain; the PEM holds a leaf
// certificate (then its chain) and a private key; the leaf names exactly that domain (OpenSSL
// X509_check_host, no wildcards); it is valid now by the injected clock; the chain is complete
// (chainIncompleteness()); and the key matches the certificate (X509_check_private_key). Refusal name
// relay-certificate-invalid; the reason names the domain and the failed check, never the material.
#include "shared/contract/result.h"
#include "shared/contract/types.h"
#include "shared/secret.h"

#include <QSslCertificate>
#include <QSslConfiguration>
#include <QSslKey>
#include <optional>

namespace coreflow {

class RelayCertificate {
public:
    static contract::Result<RelayCertificate> fromMaterial(const contract::RelayCertificateMaterial &material,
                                                           const QString &domain, qint64 nowMs);

    // Complete (contract §6.5): every certificate of the PEM is issued by the one after it (names, key
    // identifiers, signature), and the last one is a self-signed root or is issued by a root of the
    // system trust store (OpenSSL's default paths). A leaf sent without the intermediates a node needs
    // to reach its root is incomplete. Returns why not, or nullopt.
    static std::optional<QString> chainIncompleteness(const QByteArray &certificatePem);

    const QList<QSslCertificate> &chain() const { return m_chain; }
    QSslConfiguration serverConfiguration() const;
    // The same identity for the VPN hub's QUIC listener (docs/contract.md §11.3): the chain as PEM
    // (leaf first) and the key as PEM in guarded memory (the intermediate QByteArray is wiped).
    QByteArray chainPem() const;
    Secret privateKeyPem() const;
    qint64 notAfterMs() const;

private:
    QList<QSslCertificate> m_chain;
    QSslKey m_key;
};

} // namespace coreflow
