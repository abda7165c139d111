#pragma once
// RelayConfiguration: the launch facts of one relay process (docs/contract.md §19.1, §19.3).
//
// ConfigurationReader reads every variable through one ConfigurationSources lookup (the environment,
// $CREDENTIALS_DIRECTORY/<NAME>, /run/secrets/<NAME>, and in a build tree the .nogit overlay; D-21,
// D-32). Values are taken byte for byte: a value with leading or trailing whitespace is refused by
// name, never trimmed.
//
// Required on every boot: CLOUDLY_URL, SERVEZONE_CLUSTER_RELAY_AUTHORIZATION, and whatever qenv.yml
// beside the executable lists under required: — a start without them is refused naming every missing
// one at once. Required only with a relay block (checked when the cluster config is read, §19.3):
// COREFLOW_NODE_ID, COREFLOW_RELAY_BIND_HOSTNAME, and the VPN pair both or neither
// (vpnHubRefusal()). COREFLOW_RELAY_BIND_PORT defaults to 8443. COREFLOW_INTERNAL_*,
// CORESTORE_CONTROL_URL, CORESTORE_API_TOKEN and JUMPCODE are never read.
//
// Every refusal is `configuration-invalid: <reason>` naming the variable (and a path where a file is
// concerned), never its value.
#include "service/app/configurationsources.h"
#include "shared/contract/result.h"
#include "shared/secret.h"

#include <QList>
#include <QProcessEnvironment>
#include <QSslCertificate>
#include <QUrl>
#include <optional>

namespace coreflow {

struct RelayConfiguration {
    QUrl cloudlyUrl;                  // normalised to ws:// or wss:// (https -> wss, http -> ws)
    Secret bearer;                    // SERVEZONE_CLUSTER_RELAY_AUTHORIZATION, byte for byte
    QString nodeId;                   // COREFLOW_NODE_ID (empty when unset)
    QString bindHostname;             // COREFLOW_RELAY_BIND_HOSTNAME (empty when unset)
    quint16 bindPort = 8443;          // COREFLOW_RELAY_BIND_PORT
    std::optional<QString> vpnBindHostname; // COREFLOW_VPN_BIND_HOSTNAME as given (checked by vpnHubRefusal())
    std::optional<QString> vpnQuicPort;     // COREFLOW_VPN_QUIC_PORT as given
    // Command-line facts (not variables): trust anchors added for the Cloudly connection, the status
    // socket path and the operator group admitted to it.
    QList<QSslCertificate> extraCaCertificates;
    QString statusSocketPath;
    QString operatorGroup;
    qint64 statusMaxQueuedBytes = 0; // per-client status queue bound; 0: StatusServerOptions' default (tests shrink it)
    // In-process tests only (no variable, option or file sets it): admits a loopback VPN hub address,
    // because the tests' network is loopback only. The environment's reader never sets it.
    bool vpnLoopbackForTests = false;

    // The VPN pair on a boot with a relay block (§19.1, D-20): both or neither (one alone is refused
    // naming the missing one), the address a unicast IPv4 literal (not 0.0.0.0, loopback, multicast or
    // broadcast), the port 1..65535. nullopt when the pair is valid or absent.
    std::optional<contract::Refusal> vpnHubRefusal() const;
};

class ConfigurationReader {
public:
    explicit ConfigurationReader(ConfigurationSources::Roots roots);
    // The environment and a Docker-secrets directory only (no qenv.yml, no overlay).
    ConfigurationReader(QProcessEnvironment environment, QString dockerSecretsDirectory = QStringLiteral("/run/secrets"));

    // A secret main() took out of the process environment before anything copied it
    // (EnvironmentSecret): it ranks as the environment does.
    void provideSecret(const QString &name, Secret value);
    // Reads and validates everything (refusals above).
    contract::Result<RelayConfiguration> read() const;

    static bool isLoopbackHost(const QString &host);

private:
    ConfigurationSources::Roots m_roots;
    QString m_providedName;
    std::optional<Secret> m_provided;
};

} // namespace coreflow
