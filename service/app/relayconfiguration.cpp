#include "service/app/relayconfiguration.h"

#include <QFile>
#include <QHostAddress>

namespace coreflow {

namespace {
const QString kRefusal = QStringLiteral("configuration-invalid");
contract::Refusal invalid(const QString &reason) { return contract::Refusal{kRefusal, reason}; }
} // namespace

ConfigurationReader::ConfigurationReader(QProcessEnvironment environment, QString dockerSecretsDirectory)
    : m_environment(std::move(environment)),
      m_credentialsDirectory(m_environment.value(QStringLiteral("CREDENTIALS_DIRECTORY"))),
      m_dockerSecretsDirectory(std::move(dockerSecretsDirectory))
{
}

std::optional<QByteArray> ConfigurationReader::value(const QString &name) const
{
    if (m_environment.contains(name))
        return m_environment.value(name).toUtf8();
    for (const QString &dir : {m_credentialsDirectory, m_dockerSecretsDirectory}) {
        if (dir.isEmpty())
            continue;
        QFile file(dir + QLatin1Char('/') + name);
        if (file.exists() && file.open(QIODevice::ReadOnly))
            return file.readAll();
    }
    return std::nullopt;
}

void ConfigurationReader::provideSecret(const QString &name, Secret value)
{
    m_providedName = name;
    m_provided = std::move(value);
}

std::optional<Secret> ConfigurationReader::secretValue(const QString &name) const
{
    if (name == m_providedName && !m_provided.isEmpty())
        return m_provided;
    if (m_environment.contains(name))
        return Secret(m_environment.value(name).toUtf8());
    for (const QString &dir : {m_credentialsDirectory, m_dockerSecretsDirectory}) {
        if (dir.isEmpty())
            continue;
        QFile file(dir + QLatin1Char('/') + name);
        // Unbuffered: QFile's own read buffer would keep a copy; the one read buffer is wiped below.
        if (file.exists() && file.open(QIODevice::ReadOnly | QIODevice::Unbuffered)) {
            QByteArray bytes = file.readAll();
            Secret secret(bytes.isEmpty() ? QByteArrayView() : QByteArrayView(bytes));
            Secret::wipe(bytes);
            return secret;
        }
    }
    return std::nullopt;
}

bool ConfigurationReader::isLoopbackHost(const QString &host)
{
    if (host.compare(QLatin1String("localhost"), Qt::CaseInsensitive) == 0)
        return true;
    const QHostAddress address(host);
    return !address.isNull() && address.isLoopback();
}

contract::Result<RelayConfiguration> ConfigurationReader::read() const
{
    RelayConfiguration config;
    QStringList missing;
    const auto url = value(QStringLiteral("CLOUDLY_URL"));
    const auto bearer = secretValue(QStringLiteral("SERVEZONE_CLUSTER_RELAY_AUTHORIZATION"));
    if (!url || url->isEmpty())
        missing << QStringLiteral("CLOUDLY_URL");
    if (!bearer || bearer->isEmpty())
        missing << QStringLiteral("SERVEZONE_CLUSTER_RELAY_AUTHORIZATION");
    if (!missing.isEmpty())
        return invalid(QStringLiteral("missing required variable%1 %2")
                           .arg(missing.size() > 1 ? QStringLiteral("s") : QString(), missing.join(QStringLiteral(", "))));

    QUrl cloudly(QString::fromUtf8(*url).trimmed(), QUrl::StrictMode);
    const QString scheme = cloudly.scheme().toLower();
    if (!cloudly.isValid() || cloudly.host().isEmpty() || !cloudly.userInfo().isEmpty())
        return invalid(QStringLiteral("CLOUDLY_URL is not an absolute URL with a host"));
    if (scheme == QLatin1String("https"))
        cloudly.setScheme(QStringLiteral("wss"));
    else if (scheme == QLatin1String("http"))
        cloudly.setScheme(QStringLiteral("ws"));
    else if (scheme != QLatin1String("wss") && scheme != QLatin1String("ws"))
        return invalid(QStringLiteral("CLOUDLY_URL has scheme %1; expected https, wss (or http/ws on loopback)").arg(scheme));
    if (cloudly.scheme() == QLatin1String("ws") && !isLoopbackHost(cloudly.host()))
        return invalid(QStringLiteral("CLOUDLY_URL names plain ws/http for non-loopback host %1; only TLS is accepted off loopback")
                           .arg(cloudly.host()));
    config.cloudlyUrl = cloudly;
    config.bearer = *bearer;

    if (auto nodeId = value(QStringLiteral("COREFLOW_NODE_ID")))
        config.nodeId = QString::fromUtf8(*nodeId).trimmed();
    if (auto host = value(QStringLiteral("COREFLOW_RELAY_BIND_HOSTNAME")))
        config.bindHostname = QString::fromUtf8(*host).trimmed();
    if (auto port = value(QStringLiteral("COREFLOW_RELAY_BIND_PORT"))) {
        bool ok = false;
        const int p = QString::fromUtf8(*port).trimmed().toInt(&ok);
        if (!ok || p < 1 || p > 65535)
            return invalid(QStringLiteral("COREFLOW_RELAY_BIND_PORT is not a port number (1-65535)"));
        config.bindPort = quint16(p);
    }
    if (auto v = value(QStringLiteral("COREFLOW_VPN_BIND_HOSTNAME")))
        config.vpnBindHostname = QString::fromUtf8(*v).trimmed();
    if (auto v = value(QStringLiteral("COREFLOW_VPN_QUIC_PORT")))
        config.vpnQuicPort = QString::fromUtf8(*v).trimmed();
    return config;
}

} // namespace coreflow
