#include "tests/registry/testpki.h"

#include <QFile>
#include <QProcess>

namespace coreflow::test {

namespace {
QByteArray readAll(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}
} // namespace

TestPki::TestPki(const QString &name) : m_name(name)
{
    if (!m_dir.isValid()) {
        m_error = QStringLiteral("no temporary directory");
        return;
    }
    const QString key = m_dir.filePath(name + QStringLiteral("-ca.key"));
    const QString crt = caCertificatePath();
    m_ok = run({QStringLiteral("req"), QStringLiteral("-x509"), QStringLiteral("-newkey"), QStringLiteral("rsa:2048"),
                QStringLiteral("-nodes"), QStringLiteral("-keyout"), key, QStringLiteral("-out"), crt,
                QStringLiteral("-days"), QStringLiteral("1"), QStringLiteral("-subj"),
                QStringLiteral("/CN=coreflow test CA ") + name, QStringLiteral("-addext"),
                QStringLiteral("basicConstraints=critical,CA:TRUE"), QStringLiteral("-addext"),
                QStringLiteral("keyUsage=critical,keyCertSign,cRLSign,digitalSignature")});
    if (m_ok) {
        const auto certs = QSslCertificate::fromData(readAll(crt), QSsl::Pem);
        m_ok = !certs.isEmpty();
        if (m_ok)
            m_caCert = certs.first();
    }
}

QString TestPki::caCertificatePath() const { return m_dir.filePath(m_name + QStringLiteral("-ca.crt")); }

QString TestPki::caKeyPath() const { return m_dir.filePath(m_name + QStringLiteral("-ca.key")); }

bool TestPki::run(const QStringList &args)
{
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(QStringLiteral("openssl"), args);
    if (!p.waitForFinished(60000) || p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0) {
        m_error = QString::fromLocal8Bit(p.readAll());
        return false;
    }
    return true;
}

TestPki::Issued TestPki::issueServer(const QString &file)
{
    Issued out;
    const QString key = m_dir.filePath(file + QStringLiteral(".key"));
    const QString csr = m_dir.filePath(file + QStringLiteral(".csr"));
    const QString crt = m_dir.filePath(file + QStringLiteral(".crt"));
    const QString ext = m_dir.filePath(file + QStringLiteral(".ext"));
    {
        QFile f(ext);
        if (!f.open(QIODevice::WriteOnly))
            return out;
        f.write("basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
                "extendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n");
    }
    if (!run({QStringLiteral("req"), QStringLiteral("-newkey"), QStringLiteral("rsa:2048"), QStringLiteral("-nodes"),
              QStringLiteral("-keyout"), key, QStringLiteral("-out"), csr, QStringLiteral("-subj"),
              QStringLiteral("/CN=localhost")}))
        return out;
    if (!run({QStringLiteral("x509"), QStringLiteral("-req"), QStringLiteral("-in"), csr, QStringLiteral("-CA"),
              caCertificatePath(), QStringLiteral("-CAkey"), m_dir.filePath(m_name + QStringLiteral("-ca.key")),
              QStringLiteral("-CAcreateserial"), QStringLiteral("-out"), crt, QStringLiteral("-days"),
              QStringLiteral("1"), QStringLiteral("-extfile"), ext}))
        return out;
    const auto certs = QSslCertificate::fromData(readAll(crt), QSsl::Pem);
    if (certs.isEmpty())
        return out;
    out.certificate = certs.first();
    out.key = QSslKey(readAll(key), QSsl::Rsa, QSsl::Pem);
    out.certificatePath = crt;
    out.keyPath = key;
    return out;
}

} // namespace coreflow::test
