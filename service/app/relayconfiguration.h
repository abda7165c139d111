#pragma once
// RelayConfiguration: the launch facts of one relay process (docs/contract.md §19.1, §19.3).
//
// Sources, highest precedence first (Decision D-21): the process environment,
// $CREDENTIALS_DIRECTORY/<NAME> (systemd credentials, read byte for byte, no trimming), and
// /run/secrets/<NAME> (Docker secrets). One reader serves every variable.
//
// Required on every boot: CLOUDLY_URL, SERVEZONE_CLUSTER_RELAY_AUTHORIZATION — a start without them is
// refused naming every missing one at once. Required only with a relay block (checked when the
// cluster config is read): COREFLOW_NODE_ID, COREFLOW_RELAY_BIND_HOSTNAME. COREFLOW_RELAY_BIND_PORT
// defaults to 8443. COREFLOW_INTERNAL_*, CORESTORE_CONTROL_URL, CORESTORE_API_TOKEN and JUMPCODE are
// never read.
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
    std::optional<QString> vpnBindHostname; // COREFLOW_VPN_BIND_HOSTNAME (read, validated with a relay block)
    std::optional<QString> vpnQuicPort;     // COREFLOW_VPN_QUIC_PORT
    // Command-line facts (not variables): trust anchors added for the Cloudly connection, the status
    // socket path and the operator group admitted to it.
    QList<QSslCertificate> extraCaCertificates;
    QString statusSocketPath;
    QString operatorGroup;
    qint64 statusMaxQueuedBytes = 0; // per-client status queue bound; 0: StatusServerOptions' default (tests shrink it)
};

class ConfigurationReader {
public:
    ConfigurationReader(QProcessEnvironment environment, QString dockerSecretsDirectory = QStringLiteral("/run/secrets"));

    // The value of one variable from the first source that has it, or nullopt.
    std::optional<QByteArray> value(const QString &name) const;
    // A secret variable: a value given with provideSecret() first, then the same sources as value(),
    // each read straight into guarded memory (a credential file is read unbuffered and its read
    // buffer wiped; contract §19.4).
    std::optional<Secret> secretValue(const QString &name) const;
    // A secret main() took out of the process environment before anything copied it
    // (EnvironmentSecret): it ranks as the environment does.
    void provideSecret(const QString &name, Secret value);
    // Reads and validates everything. Refusal name "configuration-invalid"; the reason names every
    // missing required variable at once, or the first invalid one, never a value.
    contract::Result<RelayConfiguration> read() const;

    static bool isLoopbackHost(const QString &host);

private:
    QProcessEnvironment m_environment;
    QString m_credentialsDirectory;
    QString m_dockerSecretsDirectory;
    QString m_providedName;
    Secret m_provided;
};

} // namespace coreflow
