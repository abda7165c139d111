#include "service/app/relayconfiguration.h"

#include <QHostAddress>
#include <arpa/inet.h>

namespace coreflow {

namespace {

const QString kRefusal = QStringLiteral("configuration-invalid");
const QString kBearer = QStringLiteral("SERVEZONE_CLUSTER_RELAY_AUTHORIZATION");
const QString kVpnHost = QStringLiteral("COREFLOW_VPN_BIND_HOSTNAME");
const QString kVpnPort = QStringLiteral("COREFLOW_VPN_QUIC_PORT");
contract::Refusal invalid(const QString &reason) { return contract::Refusal{kRefusal, reason}; }

bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

// A plain (non-secret) value: valid UTF-8 without surrounding whitespace; a file value is not trimmed,
// so a stray newline is named instead of silently changing what is read.
contract::Result<QString> plainValue(const QString &name, const ConfigurationSources::Found &found)
{
    const QByteArray &b = found.bytes;
    if (!b.isEmpty() && (isSpace(b.front()) || isSpace(b.back())))
        return invalid(QStringLiteral("%1 in %2 has leading or trailing whitespace (values are read byte for byte)").arg(name, found.where));
    if (!QUtf8StringView(b).isValidUtf8())
        return invalid(QStringLiteral("%1 in %2 is not UTF-8").arg(name, found.where));
    return QString::fromUtf8(b);
}

// 1..65535, decimal digits only.
std::optional<quint16> portNumber(const QString &text)
{
    if (text.isEmpty() || text.size() > 5)
        return std::nullopt;
    for (QChar c : text)
        if (c < QLatin1Char('0') || c > QLatin1Char('9'))
            return std::nullopt;
    const int p = text.toInt();
    if (p < 1 || p > 65535)
        return std::nullopt;
    return quint16(p);
}

} // namespace

std::optional<contract::Refusal> RelayConfiguration::vpnHubRefusal() const
{
    if (!vpnBindHostname && !vpnQuicPort)
        return std::nullopt;
    if (!vpnBindHostname || !vpnQuicPort)
        return invalid(QStringLiteral("%1 is missing: %2 and %3 are given both or neither")
                           .arg(vpnBindHostname ? kVpnPort : kVpnHost, kVpnHost, kVpnPort));
    // inet_pton: a strict dotted quad (QHostAddress would also take "1" or "0x7f.1").
    in_addr raw {};
    const QByteArray host = vpnBindHostname->toLatin1();
    if (::inet_pton(AF_INET, host.constData(), &raw) != 1)
        return invalid(QStringLiteral("%1 is not an IPv4 address literal").arg(kVpnHost));
    const QHostAddress address(*vpnBindHostname);
    if ((address.isLoopback() && !vpnLoopbackForTests) || address.isMulticast() || address.isBroadcast() || address == QHostAddress(QHostAddress::AnyIPv4))
        return invalid(QStringLiteral("%1 is not a unicast address (not 0.0.0.0, loopback, multicast or broadcast)").arg(kVpnHost));
    if (!portNumber(*vpnQuicPort))
        return invalid(QStringLiteral("%1 is not a port number (1-65535)").arg(kVpnPort));
    return std::nullopt;
}

ConfigurationReader::ConfigurationReader(ConfigurationSources::Roots roots) : m_roots(std::move(roots)) {}

ConfigurationReader::ConfigurationReader(QProcessEnvironment environment, QString dockerSecretsDirectory)
{
    m_roots.environment = std::move(environment);
    m_roots.dockerSecretsDirectory = std::move(dockerSecretsDirectory);
}

void ConfigurationReader::provideSecret(const QString &name, Secret value)
{
    m_providedName = name;
    m_provided = std::move(value);
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
    auto opened = ConfigurationSources::open(m_roots);
    if (!opened)
        return opened.refusal();
    const ConfigurationSources &sources = opened.value();

    // Every required variable is looked up before any is judged, so all missing ones are named at once.
    QStringList required{QStringLiteral("CLOUDLY_URL"), kBearer};
    for (const QString &name : sources.qenvRequired())
        if (!required.contains(name))
            required << name;
    // A file that exists but holds no bytes is named as such (§19.1), not reported as missing: the
    // operator sees which file to fill. An empty environment variable counts as unset.
    QStringList missing;
    QStringList emptyFiles;
    for (const QString &name : required) {
        if (name == kBearer) {
            auto bearer = sources.findSecret(name, name == m_providedName ? m_provided : std::nullopt);
            if (!bearer)
                return bearer.refusal();
            if (bearer.value() && bearer.value()->value.isEmpty() && bearer.value()->fromFile)
                emptyFiles << QStringLiteral("%1 (%2)").arg(name, bearer.value()->where);
            else if (!bearer.value() || bearer.value()->value.isEmpty())
                missing << name;
            continue;
        }
        auto found = sources.find(name);
        if (!found)
            return found.refusal();
        if (found.value() && found.value()->bytes.isEmpty() && found.value()->where != QLatin1String("the environment"))
            emptyFiles << QStringLiteral("%1 (%2)").arg(name, found.value()->where);
        else if (!found.value() || found.value()->bytes.isEmpty())
            missing << name;
    }
    if (!missing.isEmpty() || !emptyFiles.isEmpty()) {
        QStringList parts;
        if (!missing.isEmpty())
            parts << QStringLiteral("missing required variable%1 %2")
                         .arg(missing.size() > 1 ? QStringLiteral("s") : QString(), missing.join(QStringLiteral(", ")));
        if (!emptyFiles.isEmpty())
            parts << QStringLiteral("required variable%1 %2: the file exists but is empty")
                         .arg(emptyFiles.size() > 1 ? QStringLiteral("s") : QString(), emptyFiles.join(QStringLiteral(", ")));
        return invalid(parts.join(QStringLiteral("; ")));
    }

    RelayConfiguration config;
    // A plain variable: nullopt when no source holds it, a refusal when a source holds it unreadably.
    auto plain = [&sources](const QString &name) -> contract::Result<std::optional<QString>> {
        auto found = sources.find(name);
        if (!found)
            return found.refusal();
        if (!found.value())
            return std::optional<QString>();
        auto text = plainValue(name, *found.value());
        if (!text)
            return text.refusal();
        return std::optional<QString>(text.value());
    };

    auto url = plain(QStringLiteral("CLOUDLY_URL"));
    if (!url)
        return url.refusal();
    QUrl cloudly(*url.value(), QUrl::StrictMode);
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

    auto bearer = sources.findSecret(kBearer, kBearer == m_providedName ? m_provided : std::nullopt);
    if (!bearer)
        return bearer.refusal();
    const QByteArrayView bytes = bearer.value()->value.reveal();
    // A stored bearer ends where its bytes end: a newline (echo, an editor) would be sent as part of it.
    if (bytes.endsWith('\n') || bytes.endsWith('\r'))
        return invalid(QStringLiteral("%1 in %2 ends in a newline; store the bearer without one (e.g. printf '%s' ... | systemd-creds encrypt)")
                           .arg(kBearer, bearer.value()->where));
    config.bearer = bearer.value()->value;

    auto nodeId = plain(QStringLiteral("COREFLOW_NODE_ID"));
    if (!nodeId)
        return nodeId.refusal();
    config.nodeId = nodeId.value().value_or(QString());
    auto host = plain(QStringLiteral("COREFLOW_RELAY_BIND_HOSTNAME"));
    if (!host)
        return host.refusal();
    config.bindHostname = host.value().value_or(QString());
    auto port = plain(QStringLiteral("COREFLOW_RELAY_BIND_PORT"));
    if (!port)
        return port.refusal();
    if (port.value()) {
        const auto p = portNumber(*port.value());
        if (!p)
            return invalid(QStringLiteral("COREFLOW_RELAY_BIND_PORT is not a port number (1-65535)"));
        config.bindPort = *p;
    }
    auto vpnHost = plain(kVpnHost);
    if (!vpnHost)
        return vpnHost.refusal();
    config.vpnBindHostname = vpnHost.value();
    auto vpnPort = plain(kVpnPort);
    if (!vpnPort)
        return vpnPort.refusal();
    config.vpnQuicPort = vpnPort.value();
    return config;
}

} // namespace coreflow
