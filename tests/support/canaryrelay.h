#pragma once
// CanaryRelay: a relay of a RelayFixture started the way the secret canary tests need it (OV-05,
// OC-11): the listener certificate Cloudly serves is freshly issued so its key is a canary, the status
// socket is on (docs/contract.md §18), and two nodes (node-a, node-b, their bearers canaries) are
// registered. Shared by console_secrets and tst_statussocketcanary; each adds its own canaries.
#include "tests/integration/relayfixture.h"

#include <QByteArray>
#include <QList>
#include <QString>
#include <QTest>
#include <memory>

namespace coreflow::testing {

class CanaryRelay {
public:
    explicit CanaryRelay(RelayFixture &fixture) : m_f(fixture) {}

    // True once the relay is open and both nodes are registered.
    bool start()
    {
        listenerCert = m_f.ca.issueLocalhost();
        if (listenerCert.isNull())
            return false;
        m_f.cloudly->setRelayCertificate(listenerCert);
        RelayConfiguration config = m_f.configuration();
        config.statusSocketPath = statusSocketPath();
        m_f.makeRelay(config);
        if (!m_f.startRelay())
            return false;
        a = m_f.registeredNode(QStringLiteral("node-a"));
        b = m_f.registeredNode(QStringLiteral("node-b"));
        return a->session() && b->session();
    }

    QString statusSocketPath() const { return m_f.dir.filePath(QStringLiteral("status.sock")); }

    // The listener key as canaries: its DER and every base64 body line of its PEM (>= 32 bytes).
    QList<QByteArray> listenerKeyCanaries() const { return keyCanariesOf(listenerCert); }
    // The same of any issued certificate's key (a test that starts its relay itself).
    static QList<QByteArray> keyCanariesOf(const peers::IssuedCertificate &certificate)
    {
        QList<QByteArray> canaries{certificate.key.toDer()};
        for (const QByteArray &line : certificate.keyPem.split('\n'))
            if (line.size() >= 32 && !line.startsWith("-----"))
                canaries << line;
        return canaries;
    }

    peers::IssuedCertificate listenerCert;
    std::unique_ptr<peers::SimulatedPalletNode> a;
    std::unique_ptr<peers::SimulatedPalletNode> b;

private:
    RelayFixture &m_f;
};

} // namespace coreflow::testing
