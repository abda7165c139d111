#pragma once
// TestPki: a throwaway certificate authority and server certificates for loopback TLS in the registry
// tests, made with the openssl CLI (Debian package openssl) in a temporary directory.
// Each server certificate is for CN/SAN "localhost" and IP 127.0.0.1, valid for one day, RSA 2048.
#include <QSslCertificate>
#include <QSslKey>
#include <QString>
#include <QTemporaryDir>

namespace coreflow::test {

class TestPki {
public:
    struct Issued {
        QSslCertificate certificate;
        QSslKey key;
        QString certificatePath; // PEM
        QString keyPath;         // PEM, unencrypted PKCS#8
    };

    // Creates the CA named `name` (its files are <dir>/<name>-ca.{crt,key}). ok() tells whether it worked.
    explicit TestPki(const QString &name);
    bool ok() const { return m_ok; }
    QString error() const { return m_error; }
    QString directory() const { return m_dir.path(); }
    QSslCertificate caCertificate() const { return m_caCert; }
    QString caCertificatePath() const;
    QString caKeyPath() const;
    // A server certificate signed by this CA; `file` names its files in directory().
    Issued issueServer(const QString &file);

private:
    bool run(const QStringList &args);
    QTemporaryDir m_dir;
    QString m_name;
    QSslCertificate m_caCert;
    bool m_ok = false;
    QString m_error;
};

} // namespace coreflow::test
